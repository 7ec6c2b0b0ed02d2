/**
 * The root vitest configuration: every project listed in `vitest.workspace.ts` is run, in
 * parallel, by `npm test`. Shared options live in `vitest.shared.ts`, merged by each
 * project's config.
 */
import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.js"

export default defineConfig({
  test: { projects }
})
