/**
 * Builds the console's static assets into `packages/console/assets/` with esbuild (already the
 * bundler of the worker and the command line): `web/console.ts` and `web/login.ts` into one
 * minified module each, and the style sheet copied. `npm run build:console` runs it; the
 * worker's launcher (`npm start`) and CI call `ensureAssets`, which rebuilds only when an
 * asset is missing or older than a source under `web/`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import process from "node:process"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const web = path.join(here, "web")
/** Where the assets are written. */
export const dist = path.join(here, "assets")
const outputs = ["console.js", "login.js", "console.css"]

const newest = (dir) =>
  Math.max(
    ...fs.readdirSync(dir, { withFileTypes: true }).map((entry) => {
      const file = path.join(dir, entry.name)
      return entry.isDirectory() ? newest(file) : fs.statSync(file).mtimeMs
    })
  )

const upToDate = () => {
  try {
    const sources = newest(web)
    return outputs.every((name) => fs.statSync(path.join(dist, name)).mtimeMs >= sources)
  } catch {
    return false
  }
}

/** Builds the assets. */
export const buildAssets = async () => {
  const { build } = await import("esbuild")
  await build({
    absWorkingDir: here,
    entryPoints: { console: "web/console.ts", login: "web/login.ts" },
    outdir: dist,
    bundle: true,
    format: "esm",
    target: ["chrome120", "firefox115", "safari16"],
    minify: true,
    legalComments: "none",
    logLevel: "warning"
  })
  fs.copyFileSync(path.join(web, "console.css"), path.join(dist, "console.css"))
}

/** Builds the assets when one is missing or older than its sources; true when it built. */
export const ensureAssets = async () => {
  if (upToDate()) return false
  await buildAssets()
  return true
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = await ensureAssets()
  process.stdout.write(`${built ? "built" : "up to date"} ${path.relative(process.cwd(), dist)}\n`)
}
