/**
 * The root vitest configuration: every project listed in `vitest.workspace.ts` is run by
 * `npm test`. Shared options live in `vitest.shared.ts`, merged by each project's config.
 *
 * Test files run in parallel, at least three at a time. Vitest's default on a 2-core machine
 * is one file at a time (cores − 1): the suite's files mostly wait — on sockets, timers,
 * PostgreSQL, a browser, a child process — so one at a time left the cores idle and CI took
 * 49 minutes; each file has its own database or schema, its own ports (0: the system's
 * choice) and its own temporary folders and browser profiles, so they do not meet.
 * `npx vitest run --maxWorkers=1` runs them one at a time again.
 */
import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.js"

export default defineConfig({
  test: { projects, maxWorkers: Math.max(3, availableParallelism()), minWorkers: 1 }
})
