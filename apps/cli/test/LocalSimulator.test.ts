/**
 * The command line without a worker: each command runs in its own process with its own
 * built-in simulator, so a follow-up of an operation another command made fails there with
 * "Transaction … not found"; the command says why and what to do.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Bin from "./support/Bin.js"

const buildDir = Bin.testBuildDir()
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-local-"))
afterAll(() => {
  Fs.rmSync(buildDir, { recursive: true, force: true })
  Fs.rmSync(dir, { recursive: true, force: true })
})

describe("tillflow without a worker", () => {
  it("a follow-up of another process's built-in-simulator transaction is unknown to this one's simulator, and says why (exit 4)", async () => {
    // Its own embedded store: processes without a worker, and no other test's worker (with a
    // built-in simulator of its own) claiming their executions from a shared database.
    const env = { TILLFLOW_DATA_DIR: Path.join(dir, "data"), DATABASE_URL: "" }
    const sale = await Bin.run(
      buildDir,
      ["sale", "--serial", "0404090209", "--amount", "20.00", "--json"],
      env
    )
    expect(sale.status, sale.stderr).toBe(0)
    expect(sale.stderr).toContain("the built-in simulator (in this process, not a real payment service)")
    const guid = String((JSON.parse(sale.stdout) as Record<string, unknown>)["transactionId"])
    const tip = await Bin.run(
      buildDir,
      ["tip-adjust", "--original-transaction-id", guid, "--tip", "1.00"],
      env
    )
    expect(tip.status).toBe(4)
    expect(tip.stdout).toMatch(/not found|invalid guid/i)
    expect(tip.stderr).toContain("ran on a built-in simulator of its own")
    expect(tip.stderr).toContain("npm start or tillflow worker")
  }, 300_000)
})
