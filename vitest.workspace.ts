/**
 * The projects of the workspace: every package and app has its own `vitest.config.ts`
 * (merging `vitest.shared.ts`), so a package can be tested alone
 * (`npx vitest run --project core`). The root `vitest.config.ts` reads this list
 * (vitest 3.2 takes projects from the root config's `test.projects`; a workspace file read
 * on its own is deprecated there).
 */
export default ["packages/*", "apps/*"]
