/**
 * The ledger tells the whole story of what was done without a terminal to a terminal's
 * transactions: the real workflows run on the scripted service, and their facts are folded
 * from the log as an audit folds them. A transaction's facts are the merchant's (tenant)
 * its history's opening names, whoever wrote them.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  Ledger,
  LedgerProjection,
  Lifecycles,
  ReversalWorkflow,
  TipAdjustmentWorkflow
} from "@tillflow/core"
import { EventStore, Tenant } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import { atStart, environment, eur, inEnvironment, recordTxn } from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))

/** The ledger folded from the whole log, and its entries. */
const audit = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
  const ledger = yield* Ledger.foldRecorded(Ledger.empty, page.events)
  const { entries } = yield* Ledger.entriesOf(page.events)
  return { ledger, entries }
})

describe("the ledger of terminal-less operations on a terminal's transactions", () => {
  it.effect("a terminal-less reversal of a terminal sale is counted on the sale's terminal, not on '-'", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const sale = Identifiers.Guid.make("sale-on-T7")
        yield* recordTxn({ guid: sale, kind: "sale", amount: eur(4000n), serialNumber: "T7" })
        yield* ReversalWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: sale })
        const { entries, ledger } = yield* audit
        const reversal = entries.filter((e) => e.kind === "reversal")
        expect(reversal.map((e) => [e.terminal, e.amount])).toEqual([["T7", eur(4000n)]])
        const rows = Ledger.summarize(ledger, ["terminal"])
        expect(rows.map((r) => [r.terminal, r.tallies.reversal.count])).toEqual([["T7", 1]])
      })
    )
  )

  it.effect("tip adjustments are in the ledger: each counted, the net moved by what it changed", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const sale = Identifiers.Guid.make("sale-with-tip")
        yield* recordTxn({ guid: sale, kind: "sale", amount: eur(4000n), serialNumber: "T7" })
        yield* TipAdjustmentWorkflow.Adjust.execute({
          requestId: "tip-1",
          originalGuid: sale,
          tip: eur(300n)
        })
        // The second replaces the first: the tip now stands at 5.25, 2.25 more.
        yield* TipAdjustmentWorkflow.Adjust.execute({
          requestId: "tip-2",
          originalGuid: sale,
          tip: eur(525n)
        })
        const { entries, ledger } = yield* audit
        const tips = entries.filter((e) => e.kind === "tip")
        expect(tips.map((e) => [e.terminal, e.operation, e.amount])).toEqual([
          ["T7", "tip-adjustment", eur(300n)],
          ["T7", "tip-adjustment", eur(225n)]
        ])
        const [row] = Ledger.summarize(ledger, ["terminal"])
        expect(row?.tallies.tip).toEqual({ count: 2, amount: 525n })
        expect(row?.net).toBe(525n)
      })
    )
  )

  it.effect(
    "a fact of a transaction's history is the tenant's its opening names: a merchant's ledger holds its own only",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const opened = [
            ["cafe-sol", "sale-of-cafe", "CAFE-1"],
            ["tea-house", "sale-of-tea", "TEA-1"],
            [undefined, "sale-of-own", "T7"]
          ] as const
          for (const [tenant, guid, serialNumber] of opened) {
            yield* recordTxn({ guid, kind: "sale", amount: eur(4000n), serialNumber }).pipe(
              Tenant.within(tenant)
            )
          }
          // Reversed by no merchant's request (the platform's): still the transaction's merchant's.
          for (const [, guid] of opened) {
            yield* ReversalWorkflow.Reverse.execute({
              requestId: `rev-${guid}`,
              originalGuid: Identifiers.Guid.make(guid)
            })
          }
          const store = yield* EventStore.EventStore
          const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
          const terminalsOf = (only: string | undefined, events = page.events) =>
            Effect.map(Ledger.entriesOf(events, undefined, only), ({ entries }) =>
              entries.map((e) => [e.kind, e.terminal, e.tenant])
            )
          expect(yield* terminalsOf("cafe-sol")).toEqual([["reversal", "CAFE-1", "cafe-sol"]])
          expect(yield* terminalsOf("tea-house")).toEqual([["reversal", "TEA-1", "tea-house"]])
          expect(yield* terminalsOf(undefined)).toEqual([
            ["reversal", "CAFE-1", "cafe-sol"],
            ["reversal", "TEA-1", "tea-house"],
            ["reversal", "T7", undefined]
          ])
          // Read from the middle of the log (the openings not in the page): the same.
          const reversals = page.events.filter((e) => e.type !== "TransactionRecorded")
          expect(yield* terminalsOf("cafe-sol", reversals)).toEqual([["reversal", "CAFE-1", "cafe-sol"]])
          const ledger = yield* LedgerProjection.replay({ only: "tea-house" })
          expect(Ledger.summarize(ledger, ["terminal"]).map((r) => r.terminal)).toEqual(["TEA-1"])
        })
      )
  )
})
