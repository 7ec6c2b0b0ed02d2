/**
 * Options shared by every project of the workspace. Each package's `vitest.config.ts`
 * merges them, so a package can be tested alone (`npx vitest run --project core`).
 */
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fakeTimers: { toFake: undefined },
    sequence: { concurrent: false }
  }
})
