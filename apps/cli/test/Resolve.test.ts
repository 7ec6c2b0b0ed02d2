/**
 * `tillflow transactions resolve` as an operator runs it (a process, this process's store):
 * a request in doubt resolved with the operator's name and a reason, recorded in the
 * transaction's history; exactly one of --applied / --not-applied (exit 2 otherwise); a
 * second resolution refused naming the rule. The seeded store is PostgreSQL's (the
 * embedded one allows one process at a time): without DATABASE_URL only the usage case runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ledger, LifecycleEvent, Money, PaymentEvents, TransactionHistory } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { TestDatabase } from "@tillflow/store-sql"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { cli, run as runCli } from "./support/Run.js"

const eur = (minor: bigint) => Money.make(minor, "EUR")

const resolveArgs = (guid: string, resolution: ReadonlyArray<string>) => [
  "transactions",
  "resolve",
  guid,
  "--request",
  "terminal-r1",
  ...resolution,
  "--reason",
  "the terminal's receipt shows the refund",
  "--operator",
  "alice",
  "--json"
]

describe("tillflow transactions resolve", () => {
  it("needs exactly one of --applied and --not-applied (exit 2, nothing opened)", async () => {
    const dataDir = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-")), "data")
    const both = await runCli(resolveArgs("sale-1", ["--applied", "--not-applied"]), {
      TILLFLOW_DATA_DIR: dataDir
    })
    expect(both.status, both.stderr).toBe(2)
    expect(both.stdout + both.stderr).toContain("exactly one of --applied or --not-applied")
    expect(Fs.existsSync(dataDir)).toBe(false)
  }, 120_000)

  it.effect(
    "resolves a refund in doubt as applied, recorded in the history; a second time is refused naming the rule",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = { DATABASE_URL: Redacted.value(database.url.value) }
        const store = yield* EventStore.EventStore
        const at = yield* DateTime.now
        yield* TransactionHistory.record(store, { guid: "sale-1", kind: "sale", amount: eur(5000n), at })
        yield* store.append(
          LifecycleEvent.transactionStream("sale-1"),
          EventStore.AnyVersion,
          yield* LifecycleEvent.registry.encodeAll([
            LifecycleEvent.RefundRequested.make({ requestId: "terminal-r1", at, amount: eur(2000n) }),
            LifecycleEvent.OperationInDoubt.make({
              requestId: "terminal-r1",
              at,
              operation: "refund",
              message: "reconciliation inconclusive"
            })
          ])
        )
        const run = yield* cli(resolveArgs("sale-1", ["--applied"]), env)
        expect(run.status, run.stderr).toBe(0)
        expect(JSON.parse(run.stdout)).toMatchObject({
          guid: "sale-1",
          requestId: "terminal-r1",
          operation: "refund",
          resolution: "applied",
          amount: "20.00",
          currency: "EUR"
        })
        const state = Option.getOrThrow((yield* TransactionHistory.load(store, "sale-1")).state)
        expect(state.pending).toBeUndefined()
        expect(TransactionHistory.refunded(state)).toEqual(eur(2000n))
        const again = yield* cli(resolveArgs("sale-1", ["--not-applied"]), env)
        expect(again.status).not.toBe(0)
        expect(again.stdout + again.stderr).toContain("resolve-only-in-doubt")
      }).pipe(Effect.provide(TestDatabase.layer)),
    240_000
  )
})

const attemptArgs = (on: ReadonlyArray<string>, resolution: ReadonlyArray<string>) => [
  "attempts",
  "resolve",
  ...on,
  "--request",
  "close-1",
  ...resolution,
  "--reason",
  "no close on the acquirer's report",
  "--operator",
  "alice",
  "--json"
]

describe("tillflow attempts resolve", () => {
  it("needs exactly one attempt (--batch, --moto-sale or --device): exit 2, nothing opened", async () => {
    const dataDir = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-")), "data")
    const two = await runCli(attemptArgs(["--batch", "T-1", "--device", "T-1"], ["--not-applied"]), {
      TILLFLOW_DATA_DIR: dataDir
    })
    expect(two.status, two.stderr).toBe(2)
    expect(two.stdout + two.stderr).toContain("exactly one of --batch")
    const none = await runCli(attemptArgs([], ["--not-applied"]), { TILLFLOW_DATA_DIR: dataDir })
    expect(none.status, none.stderr).toBe(2)
    expect(Fs.existsSync(dataDir)).toBe(false)
  }, 120_000)

  it.effect(
    "resolves a batch close in doubt as not applied on the terminal's batch stream; a second time is refused naming the rule",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = { DATABASE_URL: Redacted.value(database.url.value) }
        const store = yield* EventStore.EventStore
        const at = yield* DateTime.now
        yield* store.append(
          LifecycleEvent.batchStream("T-1"),
          EventStore.AnyVersion,
          yield* LifecycleEvent.registry.encodeAll([
            LifecycleEvent.BatchCloseRequested.make({ requestId: "close-1", at, batchNumber: "7" }),
            LifecycleEvent.OperationInDoubt.make({
              requestId: "close-1",
              at,
              operation: "batchClose",
              message: "reconciliation inconclusive"
            })
          ])
        )
        const run = yield* cli(attemptArgs(["--batch", "T-1"], ["--not-applied"]), env)
        expect(run.status, run.stderr).toBe(0)
        expect(JSON.parse(run.stdout)).toMatchObject({
          streamId: "batch-T-1",
          requestId: "close-1",
          operation: "batchClose",
          resolution: "notApplied"
        })
        const events = yield* LifecycleEvent.registry.decodeAll(
          yield* store.readStream(LifecycleEvent.batchStream("T-1"))
        )
        expect(events.at(-1)).toMatchObject({ type: "InDoubtResolved", data: { operator: "alice" } })
        const again = yield* cli(attemptArgs(["--batch", "T-1"], ["--applied"]), env)
        expect(again.status).not.toBe(0)
        expect(again.stdout + again.stderr).toContain("resolve-only-in-doubt")
      }).pipe(Effect.provide(TestDatabase.layer)),
    240_000
  )

  it.effect(
    "resolves a terminal sale left unresolved as applied with its guid and the amount it moved; the ledger books it",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url)) return
        const env = { DATABASE_URL: Redacted.value(database.url.value) }
        const store = yield* EventStore.EventStore
        const at = Date.now()
        yield* store.append(
          PaymentEvents.paymentStream("exec-t1"),
          EventStore.NoStream,
          yield* PaymentEvents.events.encodeAll([
            PaymentEvents.OperationRequested.make({
              executionId: "exec-t1",
              operation: "sale",
              serialNumber: "T-2",
              terminalType: "A920",
              amount: eur(2500n),
              delivery: "polling",
              requestedAt: at,
              deadlineAt: at + 60_000,
              at
            }),
            PaymentEvents.AttemptRecorded.make({ attempt: 1, attemptId: "exec-t1-1", at }),
            PaymentEvents.OutcomeUnresolved.make({
              attempt: 1,
              attemptId: "exec-t1-1",
              at,
              message: "reconciliation ran out of time",
              reason: "ReconcileTimeout"
            })
          ])
        )
        const args = [
          "attempts",
          "resolve",
          "--terminal",
          "exec-t1",
          "--request",
          "exec-t1",
          "--applied",
          "--guid",
          "guid-t1",
          "--amount",
          "27.00",
          "--currency",
          "EUR",
          "--reason",
          "the terminal's journal shows it approved with a tip",
          "--operator",
          "alice",
          "--json"
        ]
        const run = yield* cli(args, env)
        expect(run.status, run.stderr).toBe(0)
        expect(JSON.parse(run.stdout)).toMatchObject({
          streamId: "execution-actions-exec-t1",
          requestId: "exec-t1-1",
          operation: "sale",
          resolution: "applied",
          guid: "guid-t1",
          amount: "27.00",
          currency: "EUR"
        })
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
        const sales = (yield* Ledger.entriesOf(page.events)).entries.filter((e) => e.terminal === "T-2")
        expect(sales.map((e) => [e.kind, e.amount])).toEqual([["sale", eur(2700n)]])
        const again = yield* cli(args, env)
        expect(again.status).not.toBe(0)
        expect(again.stdout + again.stderr).toContain("resolve-only-in-doubt")
      }).pipe(Effect.provide(TestDatabase.layer)),
    240_000
  )
})

describe("tillflow executions retry", () => {
  it("is not sent unless confirmed: without a terminal or --yes it says so (exit 2, nothing opened)", async () => {
    const dataDir = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-")), "data")
    const run = await runCli(["executions", "retry", "0123456789abcdef", "--reason", "back online"], {
      TILLFLOW_DATA_DIR: dataDir
    })
    expect(run.status, run.stderr).toBe(2)
    expect(run.stdout + run.stderr).toContain("not confirmed; add --yes to send it")
    expect(Fs.existsSync(dataDir)).toBe(false)
  }, 120_000)
})
