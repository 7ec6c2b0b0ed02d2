/**
 * The console's built assets (`npm run build:console` writes them to
 * `packages/console/assets/`; `npm start` and CI build them when missing), read once when the
 * worker starts and answered from memory: three small files. The script that logs in and
 * the style sheet are public; the console's own script is answered only to a session.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

/** One asset, in memory. */
export interface Asset {
  readonly bytes: Uint8Array
  readonly contentType: string
  /** Answered without a session (the login page needs it). */
  readonly public: boolean
}

/** The assets found, and what was missing if the build has not run. */
export interface Assets {
  readonly files: ReadonlyMap<string, Asset>
  readonly missing: string | undefined
}

/** The assets the console needs, by file name. */
export const expected: ReadonlyArray<{
  readonly name: string
  readonly contentType: string
  readonly public: boolean
}> = [
  { name: "console.js", contentType: "text/javascript; charset=utf-8", public: false },
  { name: "login.js", contentType: "text/javascript; charset=utf-8", public: true },
  { name: "console.css", contentType: "text/css; charset=utf-8", public: true }
]

/**
 * `packages/console/assets`, found through the package's own name, so the worker finds it
 * from its sources and from its bundle alike.
 */
export const defaultDirectory = (): string =>
  path.join(path.dirname(createRequire(import.meta.url).resolve("@tillflow/console/package.json")), "assets")

/** The page answered when the assets were not built. */
export const missingPage = (missing: string): string =>
  [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><title>tillflow console</title></head><body>',
    "<h1>The console is not built</h1>",
    `<p>Missing: ${missing.replace(/[^A-Za-z0-9_./ -]/g, "?")}. Run <code>npm run build:console</code> (npm start does it for you).</p>`,
    "</body></html>"
  ].join("")

/** Reads the assets from `directory` (the default when absent). */
export const load = Effect.fn("ConsoleAssets.load")(function* (directory?: string | undefined) {
  const dir = directory ?? (yield* Effect.sync(defaultDirectory))
  const files = new Map<string, Asset>()
  const missing: Array<string> = []
  for (const asset of expected) {
    const bytes = yield* Effect.try(() => new Uint8Array(fs.readFileSync(path.join(dir, asset.name)))).pipe(
      Effect.option
    )
    if (bytes._tag === "Some") files.set(asset.name, { ...asset, bytes: bytes.value })
    else missing.push(asset.name)
  }
  if (missing.length > 0) {
    yield* Effect.logWarning(
      `console: ${missing.join(", ")} not found in ${dir}: run npm run build:console (npm start builds them)`
    )
  }
  return { files, missing: missing.length === 0 ? undefined : missing.join(", ") } satisfies Assets
})
