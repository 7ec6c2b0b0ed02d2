/**
 * The root vitest configuration: every package and app is a project, run in parallel by
 * `npm test`. Shared options live in `vitest.shared.ts`, merged by each project's config.
 */
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*"]
  }
})
