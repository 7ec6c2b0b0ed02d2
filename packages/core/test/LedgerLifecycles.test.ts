/**
 * The ledger tells the whole story of what was done without a terminal to a terminal's
 * transactions: the real workflows run on the scripted service, and their facts are folded
 * from the log as an audit folds them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Identifiers, Ledger, Lifecycles, ReversalWorkflow, TipAdjustmentWorkflow } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
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
})
