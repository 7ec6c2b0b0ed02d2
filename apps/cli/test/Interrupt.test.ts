/**
 * `tillflow` stopped by a signal while it follows an operation, as an operator's Ctrl-C or a
 * supervisor's SIGTERM stops it: the process exits as shells report a signal (130, 143),
 * never 0, which means approved, and says on stderr where the operation stands.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Bin from "./support/Bin.js"

const buildDir = Bin.testBuildDir()
const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-interrupt-"))
afterAll(() => {
  Fs.rmSync(buildDir, { recursive: true, force: true })
  Fs.rmSync(folder, { recursive: true, force: true })
})

// The built-in simulator's acquirer answers 37.68 only after a 30 s timeout: the sale is
// still running when the signal comes.
const slowAmount = "37.68"

const interrupted = async (signal: "SIGINT" | "SIGTERM") => {
  const env = { TILLFLOW_DATA_DIR: Path.join(folder, signal) }
  const devices = await Bin.run(buildDir, ["devices", "--json"], env)
  expect(devices.status, devices.stderr).toBe(0)
  const [terminal] = JSON.parse(devices.stdout) as ReadonlyArray<{ readonly serialNumber: string }>
  expect(terminal).toBeDefined()
  const sale = Bin.start(buildDir, ["sale", "--serial", terminal!.serialNumber, "--amount", slowAmount], env)
  const [, executionId] = await sale.waitForStderr(/started execution (\w+)/)
  process.kill(sale.pid!, signal)
  const ended = await sale.ended
  return { ...ended, executionId: executionId! }
}

describe("tillflow interrupted while it follows a sale", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143]
  ] as const)(
    "by %s exits %i and says the execution stays and how to follow it",
    async (signal, code) => {
      const run = await interrupted(signal)
      expect(run.status, run.stderr).toBe(code)
      expect(run.stderr).toContain(`execution ${run.executionId} stays in the store`)
      expect(run.stderr).toContain(`tillflow executions show ${run.executionId}`)
    },
    240_000
  )
})
