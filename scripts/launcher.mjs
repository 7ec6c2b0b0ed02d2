/**
 * The launchers' shared half (`apps/worker/bin/start.mjs`, `apps/cli/bin/tillflow.mjs`): an
 * app's TypeScript entry bundled by esbuild into one module and run by plain Node, with
 * source maps on so stack traces name the TypeScript sources.
 *
 * Why not `tsx src/main.ts`: every module then goes through tsx's loader hooks, which Node
 * 20 runs on a separate thread, one round trip per module. Measured by the cold-start
 * benchmark (docs/performance.md): the worker's start beyond PGlite's own took 1.7 s
 * through tsx on an idle host and 3.3–5.5 s on a loaded one, against ~0.4 s bundled; the
 * command line's `--help` took 2.3–3.4 s through tsx.
 *
 * The bundle is rebuilt only when it is missing or older than one of the files it was built
 * from (esbuild's metafile lists them, `node_modules` included), so a start costs one `stat`
 * per input; a first start after a change pays the build (~1 s). The new bundle is written
 * beside the old one and renamed over it, so two processes starting at once never run half
 * a file. PGlite stays external: it loads its WASM and data files from its own folder.
 *
 * It lives at the repository's root, not in an app (an app never imports another app's
 * files) nor in a package (packages are TypeScript libraries, and this runs before anything
 * is compiled, in plain Node).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import process from "node:process"
import { fileURLToPath, pathToFileURL, URL } from "node:url"

/** The repository root, which esbuild's metafile paths are relative to. */
export const repository = fileURLToPath(new URL("../", import.meta.url))

/** True when the bundle exists and none of its inputs changed since it was built. */
const upToDate = (outFile, metaFile) => {
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

const bundle = async (entry, outFile, metaFile) => {
  // The bundle is dated from the build's start: a source saved while esbuild ran is newer.
  const startedAt = new Date()
  // Loaded only to build: a start with an up-to-date bundle does not load esbuild at all.
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
    // The workspace's packages from their TypeScript sources (their `@tillflow/source` export
    // condition), not from a `dist/` that `npm run build` may not have made or may have left stale.
    conditions: ["@tillflow/source"],
    // Bundled CommonJS dependencies call `require`.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    metafile: true,
    write: false,
    logLevel: "warning"
  })
  fs.mkdirSync(path.dirname(outFile), { recursive: true })
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

/**
 * Makes sure `outDir/main.mjs` is `entry` (a path from the repository root) bundled from its
 * current inputs, building it when it is not. Resolves with the bundle's path and whether it
 * was already up to date.
 */
export const ensureBundle = async ({ entry, outDir }) => {
  const outFile = path.join(outDir, "main.mjs")
  const metaFile = path.join(outDir, "main.meta.json")
  const fresh = upToDate(outFile, metaFile)
  if (!fresh) await bundle(entry, outFile, metaFile)
  return { outFile, fresh }
}

/** Runs a bundle made by `ensureBundle` in this process, stack traces mapped to the sources. */
export const runBundle = async (outFile) => {
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(outFile).href)
}
