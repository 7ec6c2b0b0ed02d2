#!/usr/bin/env node
/**
 * `tillflow` (`npx tillflow …` in the repository, `npm run -s tillflow -- …`): the command
 * line (`src/main.ts`) bundled into `apps/cli/build/` and run by plain Node, rebuilt only
 * when one of its inputs changed (`scripts/launcher.mjs` says how and why). `npm run
 * tillflow:dev -- …` runs the sources through tsx.
 *
 * Two things keep a start short (docs/performance.md, "CLI start-up"):
 * - `--help` of a command (`tillflow executions list --help`) is answered from `help.json`,
 *   every command's help rendered by the bundle right after it is built, without loading
 *   the command line at all. Anything else (help with other arguments) goes to the bundle.
 * - The bundle is a CommonJS script run with a V8 code cache beside it (`runCached`), and
 *   the parts only a command in this process needs (the store, PGlite, the simulator, the
 *   worker) are evaluated only when it runs one: talking to a running worker loads neither.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import process from "node:process"
import { bundleIdentity, ensureBundle, repository, runCached } from "../../../scripts/launcher.mjs"

// Elsewhere for tests, which must not race the repository's own bundle.
const outDir = process.env.TILLFLOW_CLI_BUILD_DIR ?? path.join(repository, "apps/cli/build")
const { outFile } = await ensureBundle({ entry: "apps/cli/src/main.ts", outDir, format: "cjs" })

/** The command whose help the arguments ask for when they name nothing else (`executions list`). */
const helpKey = (args) => {
  const end = args.indexOf("--")
  const own = end < 0 ? args : args.slice(0, end)
  const rest = own.filter((arg) => arg !== "--help" && arg !== "-h")
  return rest.length < own.length && rest.every((arg) => !arg.startsWith("-")) ? rest.join(" ") : undefined
}

/** `help.json` for this build of the bundle, written by the bundle itself when missing. */
const helpIndex = () => {
  const file = path.join(outDir, "help.json")
  const identity = bundleIdentity(outFile)
  const read = () => {
    try {
      const index = JSON.parse(fs.readFileSync(file, "utf8"))
      return index.bundle === identity ? index.help : undefined
    } catch {
      return undefined
    }
  }
  const found = read()
  if (found !== undefined) return found
  spawnSync(process.execPath, [outFile], {
    env: { ...process.env, TILLFLOW_CLI_HELP_INDEX: file, TILLFLOW_CLI_BUNDLE_IDENTITY: identity },
    stdio: ["ignore", "ignore", "inherit"]
  })
  return read()
}

const key = helpKey(process.argv.slice(2))
const help = key === undefined ? undefined : helpIndex()?.[key]
if (help !== undefined) {
  // As `Help.colourFor` decides: colour on a terminal, unless NO_COLOR is set.
  const colour = process.stdout.isTTY === true && (process.env.NO_COLOR ?? "") === ""
  process.stdout.write(`${colour ? help.colour : help.plain}\n`)
} else {
  runCached(outFile)
}
