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

    // A refund on the terminal, linked to that sale: declined by this process's simulator,
    // and the human output says why, then what to do.
    const refund = await Bin.run(
      buildDir,
      ["refund", "--serial", "0404090209", "--amount", "20.00", "--original-transaction-id", guid],
      env
    )
    expect(refund.status).toBe(3)
    expect(refund.stdout).toMatch(/^DECLINED .*Original transaction \S+ not found/m)
    expect(refund.stderr).toContain("ran on a built-in simulator of its own")
  }, 300_000)

  it("a decline says why in the human output; --json shows the stored result as plain JSON, no runtime internals", async () => {
    const env = { TILLFLOW_DATA_DIR: Path.join(dir, "declines"), DATABASE_URL: "" }
    // 37.84 is the sandbox's trigger amount for issuer response 05.
    const human = await Bin.run(buildDir, ["sale", "--serial", "0404090209", "--amount", "37.84"], env)
    expect(human.status, human.stderr).toBe(3)
    expect(human.stdout).toMatch(/^DECLINED .*Do not honour \(issuer response 05\)/m)
    const json = await Bin.run(
      buildDir,
      ["sale", "--serial", "0404090209", "--amount", "37.84", "--json"],
      env
    )
    expect(json.status, json.stderr).toBe(3)
    const document = JSON.parse(json.stdout) as Record<string, unknown>
    expect(document).toMatchObject({ status: "declined", reason: "Do not honour (issuer response 05)" })
    expect(json.stdout).not.toMatch(/_op|effect_instruction/)
    expect(document["result"]).toMatchObject({ _tag: "Declined", facts: { finStatus: "DECLINED" } })
    const id = String(document["executionId"])
    const shown = await Bin.run(buildDir, ["executions", "show", id, "--json"], env)
    expect(shown.stdout).not.toMatch(/_op|effect_instruction/)
    expect(JSON.parse(shown.stdout)).toMatchObject({
      executionId: id,
      reason: "Do not honour (issuer response 05)"
    })
  }, 300_000)
})
