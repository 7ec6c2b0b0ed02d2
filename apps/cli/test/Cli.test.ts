import { describe, expect, it } from "@effect/vitest"
import { parseAmount } from "@tillflow/cli/Commands"
import * as Output from "@tillflow/cli/Output"
import { Operators } from "@tillflow/console"
import type { Intake } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { run } from "./support/Run.js"

const failure = <A, E>(effect: Effect.Effect<A, E>) => {
  const exit = Effect.runSyncExit(effect)
  return Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
}

const view = (
  report?: Intake.ExecutionView["report"],
  status: Intake.ExecutionView["status"] = "succeeded"
): Intake.ExecutionView => ({
  executionId: "e",
  workflow: "TerminalOperation",
  status,
  attributes: {},
  createdAt: 0,
  updatedAt: 0,
  ...(report === undefined ? {} : { report })
})

describe("tillflow: amounts", () => {
  it("reads major units with the currency's exponent into the service's minor units", () => {
    expect(Effect.runSync(parseAmount("10.50", "EUR"))).toEqual({ amount: "1050", currency: "EUR" })
    expect(Effect.runSync(parseAmount("100", "jpy"))).toEqual({ amount: "100", currency: "JPY" })
    expect(Effect.runSync(parseAmount("1.250", "BHD"))).toEqual({ amount: "1250", currency: "BHD" })
    expect(Effect.runSync(parseAmount("-5.00", "EUR", { signed: true }))).toEqual({
      amount: "-500",
      currency: "EUR"
    })
  })

  it("says what was wrong and what is allowed", () => {
    expect(failure(parseAmount("10,50", "EUR"))?.message).toContain(
      "with at most 2 decimals and a dot separator"
    )
    expect(failure(parseAmount("10.5", "JPY"))?.message).toContain("JPY has no decimals")
    expect(failure(parseAmount("1.2345", "BHD"))?.message).toContain("too many decimals (4)")
    expect(failure(parseAmount("0", "EUR"))?.message).toContain("must be positive")
    expect(failure(parseAmount("10.00", "EURO"))?.message).toContain("not an ISO 4217 currency code")
  })

  it("refuses an amount above twelve digits of minor units before anything starts, naming the limit", () => {
    expect(failure(parseAmount("90071992547409.93", "EUR"))?.message).toContain(
      "--amount: the amount 90071992547409.93 EUR is above the limit: at most 999999999999 minor units (9999999999.99 EUR)"
    )
    expect(failure(parseAmount("-10000000000", "EUR", { signed: true }))?.message).toContain(
      "at most 999999999999 minor units"
    )
    expect(Effect.runSync(parseAmount("9999999999.99", "EUR"))).toEqual({
      amount: "999999999999",
      currency: "EUR"
    })
  })
})

describe("tillflow: exit codes", () => {
  it("distinguish approved, reconciled, declined, partial, failed, unknown and usage", () => {
    const report = (verdict: NonNullable<Intake.ExecutionView["report"]>["verdict"], reconciled = false) =>
      view({ verdict, reconciled, summary: "" })
    expect(Output.exitCodeOf(report("approved"))).toBe(0)
    expect(Output.exitCodeOf(report("approved", true))).toBe(5)
    expect(Output.exitCodeOf(report("declined"))).toBe(3)
    expect(Output.exitCodeOf(report("partially-approved"))).toBe(7)
    expect(Output.exitCodeOf(report("cancelled"))).toBe(4)
    expect(Output.exitCodeOf(report("not-charged", true))).toBe(4)
    expect(Output.exitCodeOf(report("unresolved"))).toBe(6)
    expect(Output.exitCodeOf(view(undefined, "suspended"))).toBe(6)
    expect(Output.exitCodeOfError(new Output.UsageError({ message: "" }))).toBe(2)
  })
})

describe("tillflow as a process", () => {
  it("a bad amount, an unknown option, an empty --key and a negative --wait end with exit 2 and a message, before any store is opened", async () => {
    const dataDir = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-")), "data")
    const ran = (args: ReadonlyArray<string>) => run(args, { TILLFLOW_DATA_DIR: dataDir })
    const amount = await ran(["sale", "--serial", "X1", "--amount", "10,50"])
    expect(amount.status).toBe(2)
    expect(amount.stderr).toContain('--amount: "10,50" is not a valid EUR amount')
    const option = await ran(["sale", "--serial", "X1", "--amount", "1.00", "--colour", "red"])
    expect(option.status).toBe(2)
    const key = await ran(["sale", "--serial", "X1", "--amount", "1.00", "--key", ""])
    expect(key.status, key.stderr).toBe(2)
    expect(key.stderr).toContain("--key must not be empty")
    const original = await ran(["tip-adjust", "--original-transaction-id", "../x?y", "--tip", "1.00"])
    expect(original.status, original.stderr).toBe(2)
    expect(original.stderr).toContain("--original-transaction-id: a transaction guid is 1 to 128 letters")
    const wait = await ran(["sale", "--serial", "X1", "--amount", "1.00", "--wait", "-5"])
    expect(wait.status, wait.stderr).toBe(2)
    expect(wait.stderr).toContain("--wait must be 0 or more seconds")
    const lifecycleWait = await ran(["batch", "close", "--serial", "X1", "--wait", "-5"])
    expect(lifecycleWait.status, lifecycleWait.stderr).toBe(2)
    expect(lifecycleWait.stderr).toContain("--wait must be 0 or more seconds")
    expect(Fs.existsSync(dataDir)).toBe(false)
  }, 240_000)
})

describe("tillflow operators hash", () => {
  const hash = (input: string) => run(["operators", "hash"], {}, input)

  it("prints the hash of the secret read from standard input, which verifies it and never shows it", async () => {
    const made = await hash("a secret long enough\n")
    expect(made.status).toBe(0)
    const printed = made.stdout.trim()
    expect(printed).toMatch(/^pbkdf2-sha256\$600000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
    expect(made.stdout + made.stderr).not.toContain("a secret long enough")
    expect(await Effect.runPromise(Operators.verify("a secret long enough", printed))).toBe(true)
    const short = await hash("too short\n")
    expect(short.status).toBe(2)
    expect(short.stderr).toContain("the secret has 9 characters: at least 12 are needed")
  }, 120_000)
})
