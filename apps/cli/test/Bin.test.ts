/**
 * The `tillflow` executable (`apps/cli/bin/tillflow.mjs`, what `npx tillflow` runs): the
 * command line bundled like the worker (`scripts/launcher.mjs`, whose rebuild rules the
 * worker's `Launcher.test.ts` covers), here into a build folder of the test's own.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Bin from "./support/Bin.js"

describe("the tillflow executable", () => {
  it("bundles the command line on first use and answers --help with usage lines that start with tillflow", () => {
    const buildDir = Bin.testBuildDir()
    try {
      const help = Bin.run(buildDir, ["--help"])
      expect(help.status, help.stderr).toBe(0)
      expect(Fs.existsSync(Path.join(buildDir, "main.mjs"))).toBe(true)
      expect(Fs.existsSync(Path.join(buildDir, "main.mjs.map"))).toBe(true)
      const meta = JSON.parse(Fs.readFileSync(Path.join(buildDir, "main.meta.json"), "utf8")) as {
        readonly inputs: Record<string, unknown>
      }
      expect(Object.keys(meta.inputs)).toContain("apps/cli/src/main.ts")
      const usage = Bin.usageLines(help.stdout)
      expect(usage.length).toBeGreaterThan(0)
      for (const line of usage) expect(line).toMatch(/^\$ tillflow\b/)
    } finally {
      Fs.rmSync(buildDir, { recursive: true, force: true })
    }
  }, 240_000)
})
