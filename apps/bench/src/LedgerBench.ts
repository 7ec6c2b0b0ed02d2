/**
 * Rebuilding the audit ledger from the log: `Ledger.foldRecorded` over every page of a log
 * of transactions' histories (each folded through `TransactionHistory`'s state, the state
 * the money rules decide from: `LedgerFold`), beside decoding the same events alone (the
 * least any reading of the facts costs), interleaved round by round; and the same fold
 * resumed in the middle of the log with nothing kept, as a projection resumed from its
 * snapshot is (each history's earlier part read from the store first). The log is in
 * memory (`MemoryEventStore`), so the figures are the fold's CPU, not a database's.
 */
import { Ledger, LedgerFold, LifecycleEvent, Money } from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { performance } from "node:perf_hooks"
import * as Measure from "./internal/Measure.js"
import type * as Section from "./internal/Section.js"

const page = 1000

/** One sale's history: opened, tipped twice, partly refunded, partly reversed (6 events). */
const history = (n: number): ReadonlyArray<LifecycleEvent.Event> => {
  const at = DateTime.unsafeMake(Date.UTC(2026, 10, 1) + n * 1000)
  const eur = (minor: bigint) => Money.make(minor, "EUR")
  const amount = 1000n + BigInt(n % 9000)
  return [
    LifecycleEvent.TransactionRecorded.make({
      guid: `g${n}`,
      kind: "sale",
      amount: eur(amount),
      at,
      serialNumber: `T${n % 10}`,
      merchant: "M1"
    }),
    LifecycleEvent.TipAdjusted.make({ requestId: `t1-${n}`, at, tip: eur(100n) }),
    LifecycleEvent.TipAdjusted.make({ requestId: `t2-${n}`, at, tip: eur(150n), replaces: eur(100n) }),
    LifecycleEvent.RefundRequested.make({ requestId: `f-${n}`, at, amount: eur(200n) }),
    LifecycleEvent.Refunded.make({ requestId: `f-${n}`, at, amount: eur(200n), reconciled: false }),
    LifecycleEvent.Reversed.make({
      requestId: `r-${n}`,
      at,
      target: "transaction",
      amount: eur(300n),
      reconciled: false
    })
  ]
}

export const section: Section.Section = {
  name: "ledger",
  title: "Ledger rebuild: the fold of transactions' histories",
  run: async (context) => {
    const transactions = context.quick ? 5_000 : 20_000
    const rounds = context.rounds
    const runtime = ManagedRuntime.make(MemoryEventStore.layer())
    try {
      context.log(`ledger: writing ${transactions} histories (6 events each)`)
      const events = await runtime.runPromise(
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          for (let n = 0; n < transactions; n++) {
            const encoded = yield* LifecycleEvent.registry.encodeAll(history(n))
            // Two appends per history, interleaved with other histories': a page boundary
            // falls inside histories, as in a real log.
            yield* store.append(
              LifecycleEvent.transactionStream(`g${n}`),
              EventStore.AnyVersion,
              encoded.slice(0, 3)
            )
          }
          for (let n = 0; n < transactions; n++) {
            const encoded = yield* LifecycleEvent.registry.encodeAll(history(n))
            yield* store.append(
              LifecycleEvent.transactionStream(`g${n}`),
              EventStore.AnyVersion,
              encoded.slice(3)
            )
          }
          const all: Array<EventStore.RecordedEvent> = []
          let checkpoint = EventStore.Checkpoint.start
          while (true) {
            const read = yield* store.readAll(checkpoint, { maxCount: page })
            all.push(...read.events)
            checkpoint = read.next
            if (read.caughtUp) return all
          }
        })
      )
      const pages: Array<ReadonlyArray<EventStore.RecordedEvent>> = []
      for (let i = 0; i < events.length; i += page) pages.push(events.slice(i, i + page))
      const half = Math.floor(pages.length / 2)

      const timed = async (count: number, body: Effect.Effect<void, unknown, EventStore.EventStore>) => {
        const started = performance.now()
        await runtime.runPromise(body)
        return count / ((performance.now() - started) / 1000)
      }
      const decodeOnly = () =>
        timed(
          events.length,
          Effect.gen(function* () {
            for (const p of pages) for (const e of p) yield* LifecycleEvent.registry.decode(e)
          })
        )
      const fold = (from: number) =>
        timed(
          pages.slice(from).reduce((n, p) => n + p.length, 0),
          Effect.gen(function* () {
            const cache = new LedgerFold.Cache()
            let ledger = Ledger.empty
            for (const p of pages.slice(from)) ledger = yield* Ledger.foldRecorded(ledger, p, cache)
            const net = Ledger.summarize(ledger, []).reduce((sum, row) => sum + row.net, 0n)
            // Each history books its tips (+150), its refund (-200) and its reversal (-300).
            const expected = -350n * BigInt(transactions)
            if (from === 0 && net !== expected) {
              return yield* Effect.die(new Error(`ledger fold: net ${net}, expected ${expected}`))
            }
          })
        )
      const values = await Measure.interleave(
        rounds,
        [
          { name: "decode only", run: decodeOnly },
          { name: "ledger fold", run: () => fold(0) },
          { name: "ledger fold resumed mid-log", run: () => fold(half) }
        ],
        context.log,
        { warmup: 1 }
      )
      const get = (name: string) => values.get(name) ?? []
      const baseline = { name: "decoding the same events alone", rounds: get("decode only") }
      const figures: Array<Measure.Figure> = [
        {
          section: "ledger",
          name: `ledger rebuild over ${events.length} events (${transactions} histories)`,
          unit: "events/s",
          rounds: get("ledger fold"),
          baseline
        },
        {
          section: "ledger",
          name: "ledger fold resumed mid-log, nothing kept (earlier parts read from the store)",
          unit: "events/s",
          rounds: get("ledger fold resumed mid-log"),
          baseline
        }
      ]
      const details = [
        `${transactions} sales' histories of six events each (opened, two tips, a refund asked and made, ` +
          `a partial reversal) in an in-memory store, written in two appends per history so pages of ${page} ` +
          "cut through histories. `ledger fold` is `Ledger.foldRecorded` page by page with one " +
          "`LedgerFold.Cache` (as `LedgerProjection.replay` does); `resumed mid-log` folds the second half " +
          "with an empty cache, so each history's first part is read from the store and folded first. The " +
          `cache holds 10,000 histories${transactions > 10_000 ? `, fewer than the ${transactions} whose halves are ${transactions} appends apart, so in the whole fold too most second halves find their history evicted and read it again: the figure is the fold's worst case, not its common one (a live projection meets each history's events within seconds)` : ""}. The ` +
          `baseline decodes every event with the lifecycle registry and nothing else. Rounds interleaved, ` +
          `one warm-up round; every whole fold's net is checked (each history books +1.50 of tips, -2.00 ` +
          "refunded and -3.00 reversed).",
        "",
        Measure.roundsTable(figures)
      ].join("\n")
      return { figures, details }
    } finally {
      await runtime.dispose()
    }
  }
}
