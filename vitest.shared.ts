/**
 * Options shared by every project of the workspace. Each package's `vitest.config.ts`
 * merges them, so a package can be tested alone (`npx vitest run --project core`).
 */
import { defineConfig } from "vitest/config"

/**
 * The workspace's packages export their TypeScript sources under the `@tillflow/source`
 * condition (and their built `dist/` under `types`/`import`): tests always run the sources,
 * whether or not `npm run build` has run. Setting the conditions replaces Vite's defaults for
 * Node, so those follow (Vite's `defaultServerConditions`).
 */
const conditions = ["@tillflow/source", "module", "node", "development|production"]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fakeTimers: { toFake: undefined },
    sequence: { concurrent: false },
    // CI retries a failed test twice. Some protocol and end-to-end tests drive a TestClock in
    // steps while real promises (hashing, sockets) settle; on a loaded 2-core machine the
    // workflow can lag the clock. A broken behaviour still fails all three runs; a retried
    // pass is reported by vitest ("retry x1") so it stays visible.
    retry: process.env["CI"] ? 2 : 0
  }
})
