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
import { createRequire } from "node:module"
import * as path from "node:path"
import process from "node:process"
import { fileURLToPath, pathToFileURL, URL } from "node:url"
import * as vm from "node:vm"

/** The repository root, which esbuild's metafile paths are relative to. */
export const repository = fileURLToPath(new URL("../", import.meta.url))

/**
 * The inputs' paths beside the metafile: reading the full metafile (1 MB for the command
 * line) took 40 ms of a start, a third of what `--help` may take.
 */
const inputsFileOf = (metaFile) => metaFile.replace(/\.meta\.json$/, ".inputs.json")

/** True when the bundle exists and none of its inputs changed since it was built. */
const upToDate = (outFile, metaFile) => {
  try {
    const builtAt = fs.statSync(outFile).mtimeMs
    // The metafile must be there too: removing it is how a rebuild is asked for.
    fs.statSync(metaFile)
    const inputs = JSON.parse(fs.readFileSync(inputsFileOf(metaFile), "utf8"))
    return (
      inputs.length > 0 &&
      inputs.every((input) => fs.statSync(path.join(repository, input)).mtimeMs <= builtAt)
    )
  } catch {
    return false
  }
}

const bundle = async (entry, outFile, metaFile, format) => {
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
    format,
    target: "node20",
    // Stack traces name the sources' files and lines; the map leaves out their text (the
    // repository has it), which halves the build and its 12 MB of map.
    sourcemap: "linked",
    sourcesContent: false,
    external: ["@electric-sql/pglite", "pg-native"],
    // The workspace's packages from their TypeScript sources (their `@tillflow/source` export
    // condition), not from a `dist/` that `npm run build` may not have made or may have left stale.
    conditions: ["@tillflow/source"],
    // Bundled CommonJS dependencies call `require` (a CommonJS bundle has its own).
    ...(format === "esm"
      ? {
          banner: {
            js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
          }
        }
      : {
          // `import.meta.url` is empty in CommonJS: the bundle's own file URL stands in for it
          // (the console's assets and the reference page's script are found from it).
          banner: { js: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
          define: { "import.meta.url": "__importMetaUrl" }
        }),
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
  write(inputsFileOf(metaFile), JSON.stringify(Object.keys(result.metafile.inputs)))
  for (const file of result.outputFiles) if (file.path !== outFile) write(file.path, file.contents)
  for (const file of result.outputFiles) if (file.path === outFile) write(file.path, file.contents)
}

/**
 * Makes sure `outDir/main.mjs` is `entry` (a path from the repository root) bundled from its
 * current inputs, building it when it is not. Resolves with the bundle's path and whether it
 * was already up to date. With `format: "cjs"` the bundle is `outDir/main.cjs`, a CommonJS
 * script for `runCached`.
 */
export const ensureBundle = async ({ entry, outDir, format = "esm" }) => {
  const outFile = path.join(outDir, format === "cjs" ? "main.cjs" : "main.mjs")
  const metaFile = path.join(outDir, "main.meta.json")
  const fresh = upToDate(outFile, metaFile)
  if (!fresh) await bundle(entry, outFile, metaFile, format)
  return { outFile, fresh }
}

/** Runs a bundle made by `ensureBundle` in this process, stack traces mapped to the sources. */
export const runBundle = async (outFile) => {
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(outFile).href)
}

/**
 * The identity of a bundle as built: a rebuild renames a new file into place (a new inode)
 * and dates it from the build's start. V8 checks a code cache against its source's length
 * only, so a cache is kept under the identity of the bundle it was made from.
 */
export const bundleIdentity = (file) => {
  const stat = fs.statSync(file)
  return `${stat.ino}-${Math.trunc(stat.mtimeMs)}-${stat.size}`
}

/**
 * Runs a CommonJS bundle made by `ensureBundle({ format: "cjs" })` in this process with a V8
 * code cache beside it (`main.cjs.<identity>.cache`), the way Node 22's compile cache does
 * for modules (Node 20 has none): compiling the 3.6 MB command line took a third of its
 * start. The first run after a build compiles it and, as the process exits, writes what V8
 * compiled by then (the functions that ran included); later runs read it instead of
 * compiling. A cache V8 refuses (another Node version) is written anew. Stack traces name
 * the bundle's lines; `node --enable-source-maps` maps them to the sources (at ~0.1 s).
 */
export const runCached = (file) => {
  const identity = bundleIdentity(file)
  const cacheFile = `${file}.${identity}.cache`
  let cachedData
  try {
    cachedData = fs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const source = fs.readFileSync(file, "utf8")
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData,
    importModuleDynamically:
      vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER ?? ((specifier) => import(specifier))
  })
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once("exit", () => {
      try {
        const suffix = `.${process.pid}.tmp`
        fs.writeFileSync(cacheFile + suffix, script.createCachedData())
        fs.renameSync(cacheFile + suffix, cacheFile)
        // Caches of earlier builds go.
        const base = path.basename(file)
        for (const name of fs.readdirSync(path.dirname(file))) {
          if (name.startsWith(`${base}.`) && name.endsWith(".cache") && name !== path.basename(cacheFile))
            fs.rmSync(path.join(path.dirname(file), name), { force: true })
        }
      } catch {
        // A cache is an optimisation: a read-only folder only costs the compile next time.
      }
    })
  }
  const module = { exports: {} }
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file))
}
