/**
 * The API's reference page: Scalar's API reference over the OpenAPI document, as
 * @effect/platform's `HttpApiScalar` serves it, with its script served by the worker too
 * (no CDN). The difference: the script (Scalar's standalone bundle, 3.4 MB, which
 * @effect/platform ships as a string for `HttpApiScalar`) is served at its own path and
 * read from the installed package on its first request, instead of being inlined in the
 * page and so in every bundle that holds the server (the worker's and the command line's,
 * whose start-up would parse it on every call).
 */
import type * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import * as path from "node:path"

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** JSON that may sit inside a `<script>` element: no `<` to close it early. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, "\\u003c")

/** Scalar's settings: its default web fonts are off, so the page loads nothing from elsewhere. */
const configuration = { _integration: "html", withDefaultFonts: false }

/** The page, with the document embedded and the script at `scriptPath`. */
export const html = (spec: OpenApi.OpenAPISpec, scriptPath: string): string => `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(spec.info.title)}</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">${scriptJson(spec)}</script>
    <script>
      document.getElementById("api-reference").dataset.configuration = JSON.stringify(${scriptJson(configuration)})
    </script>
    <script src="${escapeHtml(scriptPath)}"></script>
  </body>
</html>
`

/**
 * Scalar's script as @effect/platform ships it (`internal/httpApiScalar.js`, beside the
 * `HttpApiScalar` module the package exports), loaded once. Its specifier is computed, so
 * a bundler leaves it out and Node resolves it from `node_modules` when it is first asked for.
 */
export const script: Effect.Effect<Effect.Effect<string, Error>> = Effect.cached(
  Effect.tryPromise({
    try: async () => {
      // Required, not imported: a dynamic import() does not work in the command line's
      // CommonJS bundle run from V8's code cache, and the CommonJS build of the module is the
      // one `require.resolve` finds.
      const require = createRequire(import.meta.url)
      const entry = require.resolve("@effect/platform/HttpApiScalar")
      const loaded: unknown = require(path.join(path.dirname(entry), "internal", "httpApiScalar.js"))
      const source =
        typeof loaded === "object" && loaded !== null && "javascript" in loaded
          ? loaded.javascript
          : undefined
      if (typeof source !== "string") throw new Error("no javascript export")
      return source
    },
    catch: (cause) =>
      new Error(
        `the reference page's script could not be read from @effect/platform: ${cause instanceof Error ? cause.message : String(cause)}`
      )
  })
)
