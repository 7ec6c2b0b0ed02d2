/**
 * The ledger's golden day (issue 28, "Proof"): a scripted day of every operation kind on one
 * terminal of the simulator — sales, a decline, a tip, a linked refund, a MOTO sale and its
 * terminal-less refund, a terminal-less reversal, a refund reversed, a pre-authorization
 * increased and captured, one released, one captured and its capture reversed — produces a
 * ledger whose every row adds up (net = sales + captures + refund reversals + tips − refunds
 * − reversals; holds, increases, releases and declines move nothing), with the day's net
 * known in advance. Checked in the intake's answer (`GET /v1/audit/ledger`, JSON), the CLI's
 * exports (`tillflow audit ledger --format csv|json`: `Ledger.toCsv`/`toJson` of the
 * intake's rows) and the console's CSV export (`web/ledger.ts`).
 */
import {
  Identifiers,
  Ledger,
  Money,
  MotoWorkflow,
  PreAuthorizationWorkflow,
  ReversalWorkflow
} from "@tillflow/core"
import { TerminalOperations, TerminalOutcomeRecorder, TipAdjustmentWorkflow } from "@tillflow/core"
import { Intake } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Device } from "../src/index.js"
import type * as Services from "../src/internal/Services.js"
import { admin, eventually, type Harness, harness, runEffect } from "./support.js"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const guid = (value: string) => Identifiers.Guid.make(value)
let n = 0
const polling = () => ({ idempotencyKey: `golden-${++n}`, delivery: "polling" as const })

/** What the console's CSV export is (web/ledger.ts, bundled for the browser: loaded from its source). */
interface ConsoleLedger {
  readonly toCsv: (rows: ReadonlyArray<unknown>) => string
}

/** The CSV's rows as records of their header's columns. */
const parseCsv = (csv: string): ReadonlyArray<Record<string, string>> => {
  const [header, ...lines] = csv.trimEnd().split("\n")
  const columns = (header ?? "").split(",")
  return lines.map((line) => Object.fromEntries(line.split(",").map((cell, i) => [columns[i] ?? "", cell])))
}

/** Minor units of a decimal string of EUR ("12.34" → 1234n). */
const minorOf = (decimal: string): bigint => {
  const negative = decimal.startsWith("-")
  const [whole = "0", fraction = ""] = (negative ? decimal.slice(1) : decimal).split(".")
  const minor = BigInt(whole) * 100n + BigInt(fraction.padEnd(2, "0"))
  return negative ? -minor : minor
}

/** Whether a row adds up: its net is the signed sum of its kinds' amounts. */
const addsUp = (amountOf: (kind: Ledger.Kind) => bigint, net: bigint): boolean =>
  Ledger.kinds.reduce((sum, kind) => sum + Ledger.netSign[kind] * amountOf(kind), 0n) === net

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")

/**
 * Runs the real `tillflow` executable (`apps/cli/bin/tillflow.mjs`, bundled into a build
 * folder of this test's own) as a child process on `databaseUrl`; its stdout.
 */
const tillflow = (buildDir: string, databaseUrl: string, args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const key of Object.keys(env)) if (key.startsWith("TILLFLOW_")) delete env[key]
    const child = spawn(process.execPath, ["apps/cli/bin/tillflow.mjs", ...args], {
      cwd: root,
      env: { ...env, TILLFLOW_CLI_BUILD_DIR: buildDir, DATABASE_URL: databaseUrl, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 240_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status) =>
      status === 0
        ? resolve(stdout)
        : reject(new Error(`tillflow ${args.join(" ")} exited ${status}: ${stderr}`))
    )
  })

/** The day's golden totals: what every output must say of it. */
const golden = {
  counts: {
    sale: 6,
    refund: 3,
    reversal: 2,
    refundReversal: 1,
    preAuthorization: 3,
    increase: 1,
    release: 2,
    capture: 2,
    decline: 1,
    tip: 1
  },
  net: "333.00"
}

describe("the ledger's golden day: every operation kind, every row adds up in every output", () => {
  let h: Harness
  let terminal: Device

  beforeAll(async () => {
    h = await harness({ merchantMcc: "7011" })
    terminal = (await h.tf.devices())[0] as Device
    await admin(h.tf, "PATCH", `/terminals/${terminal.serialNumber}`, { duplicateAnswer: "continue" })
  })
  afterAll(async () => {
    await h?.release()
  })

  const on = () => ({
    serialNumber: Identifiers.SerialNumber.make(terminal.serialNumber),
    terminalType: Identifiers.TerminalType.make(terminal.terminalType)
  })
  const run = async <A, E>(effect: Effect.Effect<A, E, Services.Services>): Promise<A> => {
    const exit = await runEffect(h.tf, effect)
    if (Exit.isFailure(exit)) throw new Error(`the scripted day failed: ${String(exit.cause)}`)
    return exit.value
  }
  /** An original on the terminal, approved (or declined, when `declined`): its guid. */
  const original = async (
    operation: "sale" | "motoSale" | "preAuthorization",
    minor: bigint,
    expected = "Approved"
  ): Promise<string> => {
    const input = { ...on(), amount: eur(minor) }
    const outcome = await run(
      operation === "sale"
        ? TerminalOperations.sale(input, polling())
        : operation === "motoSale"
          ? TerminalOperations.motoSale(input, polling())
          : TerminalOperations.preAuthorization(input, polling())
    )
    expect(outcome._tag).toBe(expected)
    return outcome.facts.efttransactionID ?? ""
  }
  const approved = async (effect: Effect.Effect<{ readonly _tag: string }, unknown, Services.Services>) =>
    expect((await run(effect))._tag).toBe("Approved")
  /** A terminal-less workflow as the intake starts it: the original's history caught up first. */
  const terminalLess = <A, E>(original: string, workflow: Effect.Effect<A, E, Services.Services>) =>
    run(
      Effect.zipRight(
        TerminalOutcomeRecorder.catchUpFor({ mcc: Option.some("7011") }, original, "30 seconds"),
        workflow
      )
    )
  const linked = (original: string) => ({ ...on(), originalTransactionId: guid(original) })

  it("sales, a decline, a tip, refunds, reversals, a refund reversal, holds, captures and releases: net 333.00", async () => {
    await original("sale", 10000n)
    await original("sale", 3784n, "Declined")
    const tipped = await original("sale", 2000n)
    await terminalLess(
      tipped,
      TipAdjustmentWorkflow.Adjust.execute({ requestId: "tip", originalGuid: guid(tipped), tip: eur(300n) })
    )
    const refunded = await original("sale", 5000n)
    await approved(TerminalOperations.linkedRefund({ ...linked(refunded), amount: eur(2000n) }, polling()))
    const moto = await original("motoSale", 3000n)
    await terminalLess(
      moto,
      MotoWorkflow.Refund.execute({ requestId: "moto-refund", originalGuid: guid(moto), amount: eur(1000n) })
    )
    const reversed = await original("sale", 4000n)
    await terminalLess(
      reversed,
      ReversalWorkflow.Reverse.execute({ requestId: "rev", originalGuid: guid(reversed) })
    )
    const refundedThenRestored = await original("sale", 6000n)
    const refund = await run(
      TerminalOperations.linkedRefund({ ...linked(refundedThenRestored), amount: eur(6000n) }, polling())
    )
    expect(refund._tag).toBe("Approved")
    await approved(
      TerminalOperations.refundReversal(
        { ...linked(refund.facts.efttransactionID ?? ""), amount: eur(6000n) },
        polling()
      )
    )
    const hold = await original("preAuthorization", 9000n)
    await terminalLess(
      hold,
      PreAuthorizationWorkflow.Increase.execute({
        requestId: "inc",
        originalGuid: guid(hold),
        amount: eur(1000n)
      })
    )
    await terminalLess(
      hold,
      PreAuthorizationWorkflow.Capture.execute({
        requestId: "cap",
        originalGuid: guid(hold),
        amount: eur(10000n)
      })
    )
    const released = await original("preAuthorization", 2500n)
    await approved(TerminalOperations.preAuthorizationReversal(linked(released), polling()))
    const captureReversed = await original("preAuthorization", 4000n)
    await approved(
      TerminalOperations.preAuthorizationCapture(
        { ...linked(captureReversed), amount: eur(4000n) },
        polling()
      )
    )
    await approved(TerminalOperations.preAuthorizationReversal(linked(captureReversed), polling()))

    // The intake's answer, as GET /v1/audit/ledger sends it (the log may show the last facts a moment late).
    const encode = Schema.encodeSync(Intake.LedgerView)
    let view: Intake.LedgerView | undefined
    await eventually(async () => {
      view = await run(Effect.flatMap(Intake.Intake, (intake) => intake.ledger({ source: "replay" })))
      return view.entries >= 22
    })
    const json = JSON.parse(JSON.stringify(encode(view as Intake.LedgerView))) as {
      readonly entries: number
      readonly rows: ReadonlyArray<{
        readonly terminal: string
        readonly currency: string
        readonly tallies: Record<Ledger.Kind, { readonly count: number; readonly amount: string }>
        readonly net: string
      }>
    }
    expect(json.entries).toBe(22)
    expect(json.rows.map((r) => [r.terminal, r.currency])).toEqual([[terminal.serialNumber, "EUR"]])
    const [row] = json.rows
    if (row === undefined) throw new Error("no ledger row")
    const counts = Object.fromEntries(Ledger.kinds.map((k) => [k, row.tallies[k].count]))
    expect(counts).toEqual(golden.counts)
    expect(row.net).toBe("33300")
    for (const r of json.rows) expect(addsUp((k) => BigInt(r.tallies[k].amount), BigInt(r.net))).toBe(true)

    // The CLI's exports (tillflow audit ledger --format csv | json) of the intake's rows, by day.
    const summary = Ledger.summarize(Ledger.fromRows((view as Intake.LedgerView).rows), ["day"])
    const cliCsv = parseCsv(Ledger.toCsv(summary))
    expect(cliCsv).toHaveLength(1)
    for (const r of cliCsv) {
      expect(r["net"]).toBe("333.00")
      expect(addsUp((k) => minorOf(r[`${k}_amount`] ?? "x"), minorOf(r["net"] ?? "x"))).toBe(true)
    }
    const cliJson = Ledger.toJson(summary) as ReadonlyArray<Record<string, unknown>>
    for (const r of cliJson) {
      expect(r["net"]).toBe("333.00")
      const amountOf = (k: Ledger.Kind) => minorOf((r[k] as { readonly amount: string }).amount)
      expect(addsUp(amountOf, minorOf(r["net"] as string))).toBe(true)
    }

    // The console's CSV export of the same answer: every kind has its columns, and they add up.
    const consoleLedger = (await import(
      new URL("../../console/web/ledger.ts", import.meta.url).href
    )) as ConsoleLedger
    const consoleCsv = parseCsv(consoleLedger.toCsv(json.rows))
    expect(consoleCsv).toHaveLength(1)
    for (const r of consoleCsv) {
      for (const k of Ledger.kinds) expect(Object.keys(r)).toContain(`${k}_amount`)
      expect(r["net"]).toBe("333.00")
      expect(addsUp((k) => minorOf(r[`${k}_amount`] ?? "x"), minorOf(r["net"] ?? "x"))).toBe(true)
    }
  }, 120_000)

  // The same day through the real command line, a process of its own on the day's database
  // (PostgreSQL: the embedded store is held by this process).
  it.skipIf(process.env["DATABASE_URL"] === undefined || process.env["DATABASE_URL"] === "")(
    "the tillflow process's `audit ledger` CSV and JSON of the day equal the golden totals, every row adding up",
    async () => {
      const databaseUrl = h.databaseUrl
      if (databaseUrl === undefined) throw new Error("the harness runs on the embedded store")
      const buildDir = Fs.mkdtempSync(Path.join(root, "apps/cli/build-golden-"))
      try {
        const csv = parseCsv(await tillflow(buildDir, databaseUrl, ["audit", "ledger", "--format", "csv"]))
        expect(csv).toHaveLength(1)
        for (const r of csv) {
          expect(Object.fromEntries(Ledger.kinds.map((k) => [k, Number(r[`${k}_count`])]))).toEqual(
            golden.counts
          )
          expect(r["net"]).toBe(golden.net)
          expect(addsUp((k) => minorOf(r[`${k}_amount`] ?? "x"), minorOf(r["net"] ?? "x"))).toBe(true)
        }
        const json = JSON.parse(
          await tillflow(buildDir, databaseUrl, [
            "audit",
            "ledger",
            "--format",
            "json",
            "--by",
            "day,terminal"
          ])
        ) as { readonly entries: number; readonly rows: ReadonlyArray<Record<string, unknown>> }
        expect(json.entries).toBe(22)
        expect(json.rows).toHaveLength(1)
        for (const r of json.rows) {
          expect(r["terminal"]).toBe(terminal.serialNumber)
          expect(r["net"]).toBe(golden.net)
          const tally = (k: Ledger.Kind) => r[k] as { readonly count: number; readonly amount: string }
          expect(Object.fromEntries(Ledger.kinds.map((k) => [k, tally(k).count]))).toEqual(golden.counts)
          expect(addsUp((k) => minorOf(tally(k).amount), minorOf(r["net"] as string))).toBe(true)
        }
      } finally {
        Fs.rmSync(buildDir, { recursive: true, force: true })
      }
    },
    300_000
  )
})
