/**
 * `npm start`: the worker (`src/main.ts`) bundled into `apps/worker/build/` and run by plain
 * Node, rebuilt only when one of its inputs changed (`scripts/launcher.mjs` says how and why).
 * `npm run build:worker` only builds (`--build-only`); `npm run start:dev` runs the sources
 * through tsx.
 */
import * as path from "node:path"
import process from "node:process"
import { ensureBundle, repository, runBundle } from "../../../scripts/launcher.mjs"
import { ensureAssets } from "../../../packages/console/build.mjs"

// The web console's static assets, built when missing or older than their sources.
const assetsBuilt = await ensureAssets()

const { outFile, fresh } = await ensureBundle({
  entry: "apps/worker/src/main.ts",
  // Elsewhere for tests, which must not race the repository's own bundle; inside the
  // repository all the same, where Node finds PGlite (external) in its node_modules.
  outDir: process.env.TILLFLOW_WORKER_BUILD_DIR ?? path.join(repository, "apps/worker/build")
})
if (process.argv.includes("--build-only")) {
  // `npm run build:worker`: a deployment builds once, and every start after finds it up to date.
  process.stdout.write(`${fresh ? "up to date" : "built"} ${path.relative(process.cwd(), outFile)}\n`)
  process.stdout.write(`${assetsBuilt ? "built" : "up to date"} packages/console/assets\n`)
} else {
  await runBundle(outFile)
}
