/**
 * `npm start`: the worker (`src/main.ts`) bundled by esbuild into one module under
 * `apps/worker/build/` and run by plain Node, with source maps on so stack traces name the
 * TypeScript sources.
 *
 * Why not `tsx src/main.ts`: every module then goes through tsx's loader hooks, which Node
 * 20 runs on a separate thread, one round trip per module. Measured by the cold-start
 * benchmark (docs/performance.md): the worker's start beyond PGlite's own took 1.7 s
 * through tsx on an idle host and 3.3–5.5 s on a loaded one, against ~0.4 s bundled.
 *
 * The bundle is rebuilt only when it is missing or older than one of the files it was built
 * from (esbuild's metafile lists them, `node_modules` included), so a restart costs one
 * `stat` per input; a first start after a change pays the build (~1 s). The new bundle is
 * written beside the old one and renamed over it, so two workers starting at once never run
 * half a file. PGlite stays external: it loads its WASM and data files from its own folder.
 * `npm run build:worker` only builds (`--build-only`); `npm run start:dev` runs the sources
 * through tsx.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import process from "node:process"
import { fileURLToPath, pathToFileURL, URL } from "node:url"

const repository = fileURLToPath(new URL("../../../", import.meta.url))
const entry = "apps/worker/src/main.ts"
// Elsewhere for tests, which must not race the repository's own bundle; inside the
// repository all the same, where Node finds PGlite (external) in its node_modules.
const outDir = process.env.TILLFLOW_WORKER_BUILD_DIR ?? path.join(repository, "apps/worker/build")
const outFile = path.join(outDir, "main.mjs")
const metaFile = path.join(outDir, "main.meta.json")

/** True when the bundle exists and none of its inputs changed since it was built. */
const upToDate = () => {
  try {
    const builtAt = fs.statSync(outFile).mtimeMs
    const inputs = Object.keys(JSON.parse(fs.readFileSync(metaFile, "utf8")).inputs)
    return (
      inputs.length > 0 &&
      inputs.every((input) => fs.statSync(path.join(repository, input)).mtimeMs <= builtAt)
    )
  } catch {
    return false
  }
}

const bundle = async () => {
  // The bundle is dated from the build's start: a source saved while esbuild ran is newer.
  const startedAt = new Date()
  // Loaded only to build: a restart does not load esbuild at all.
  const { build } = await import("esbuild")
  const result = await build({
    absWorkingDir: repository,
    entryPoints: [entry],
    outfile: outFile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Stack traces name the sources' files and lines; the map leaves out their text (the
    // repository has it), which halves the build and its 12 MB of map.
    sourcemap: "linked",
    sourcesContent: false,
    external: ["@electric-sql/pglite", "pg-native"],
    // Bundled CommonJS dependencies call `require`.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    metafile: true,
    write: false,
    logLevel: "warning"
  })
  fs.mkdirSync(outDir, { recursive: true })
  const suffix = `.${process.pid}.tmp`
  const write = (file, contents) => {
    fs.writeFileSync(file + suffix, contents)
    fs.utimesSync(file + suffix, startedAt, startedAt)
    fs.renameSync(file + suffix, file)
  }
  // The map and the metafile first: the bundle renamed into place is what marks the build done.
  write(metaFile, JSON.stringify(result.metafile))
  for (const file of result.outputFiles) if (file.path !== outFile) write(file.path, file.contents)
  for (const file of result.outputFiles) if (file.path === outFile) write(file.path, file.contents)
}

const fresh = upToDate()
if (!fresh) await bundle()
if (process.argv.includes("--build-only")) {
  // `npm run build:worker`: a deployment builds once, and every start after finds it up to date.
  process.stdout.write(`${fresh ? "up to date" : "built"} ${path.relative(process.cwd(), outFile)}\n`)
} else {
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(outFile).href)
}
