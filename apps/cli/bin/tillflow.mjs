#!/usr/bin/env node
/**
 * `tillflow` (`npx tillflow …` in the repository, `npm run -s tillflow -- …`): the command
 * line (`src/main.ts`) bundled into `apps/cli/build/` and run by plain Node, rebuilt only
 * when one of its inputs changed (`scripts/launcher.mjs` says how and why), so `--help`
 * answers without loading TypeScript. `npm run tillflow:dev -- …` runs the sources through tsx.
 */
import * as path from "node:path"
import process from "node:process"
import { ensureBundle, repository, runBundle } from "../../../scripts/launcher.mjs"

const { outFile } = await ensureBundle({
  entry: "apps/cli/src/main.ts",
  // Elsewhere for tests, which must not race the repository's own bundle.
  outDir: process.env.TILLFLOW_CLI_BUILD_DIR ?? path.join(repository, "apps/cli/build")
})
await runBundle(outFile)
