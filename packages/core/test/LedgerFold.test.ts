/**
 * The ledger books a transaction's history by folding it through the state the money rules
 * decide from (`LedgerFold`): what an event moved is what it changed in that state.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ledger, LedgerFold, LifecycleEvent, Money } from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const when = DateTime.unsafeMake(Date.UTC(2026, 10, 28, 10, 0, 0))
const eur = (minor: bigint) => Money.make(minor, "EUR")

const append = (stream: string, events: ReadonlyArray<LifecycleEvent.Event>) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const encoded = yield* LifecycleEvent.registry.encodeAll(events)
    yield* store.append(stream, EventStore.AnyVersion, encoded)
  })

const log = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 }), (page) => page.events)
)

const sale = (guid: string, amount: bigint) =>
  LifecycleEvent.TransactionRecorded.make({
    guid,
    kind: "sale",
    amount: eur(amount),
    at: when,
    serialNumber: "T1"
  })

const tip = (requestId: string, minor: bigint, replaces?: bigint) =>
  LifecycleEvent.TipAdjusted.make({
    requestId,
    at: when,
    tip: eur(minor),
    ...(replaces === undefined ? {} : { replaces: eur(replaces) })
  })

const summary = (entries: ReadonlyArray<Ledger.Entry>) =>
  entries.map((e) => [e.kind, e.amount?.minorUnits, e.terminal])

const inMemory = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore>) =>
  effect.pipe(Effect.provide(MemoryEventStore.layer()))

describe("LedgerFold: the ledger is the fold of the rules' state", () => {
  it.effect(
    "a second tip moves the net by the difference even when its fact does not name the tip it replaced",
    () =>
      inMemory(
        Effect.gen(function* () {
          // `replaces` is optional in the stored form: a log written without it must still
          // book the difference, as the rules read it (the standing tip is the last one).
          yield* append("txn-s1", [sale("s1", 4000n), tip("t1", 300n), tip("t2", 500n)])
          const { entries, undecodable } = yield* Ledger.entriesOf(yield* log)
          expect(undecodable).toEqual([])
          expect(summary(entries.filter((e) => e.kind === "tip"))).toEqual([
            ["tip", 300n, "T1"],
            ["tip", 200n, "T1"]
          ])
        })
      )
  )

  it.effect(
    "an operator's applied resolution of a tip in doubt books the difference from the standing tip",
    () =>
      inMemory(
        Effect.gen(function* () {
          yield* append("txn-s2", [
            sale("s2", 4000n),
            tip("t1", 300n),
            LifecycleEvent.TipAdjustmentRequested.make({ requestId: "t2", at: when, tip: eur(500n) }),
            LifecycleEvent.OperationInDoubt.make({
              requestId: "t2",
              at: when,
              operation: "tipAdjustment",
              message: "5xx"
            }),
            // Written before resolutions named the tip they replaced.
            LifecycleEvent.InDoubtResolved.make({
              requestId: "t2",
              at: when,
              operation: "tipAdjustment",
              resolution: "applied",
              operator: "maria",
              reason: "the gateway shows 5.00",
              amount: eur(500n)
            })
          ])
          const { entries } = yield* Ledger.entriesOf(yield* log)
          expect(summary(entries.filter((e) => e.kind === "tip"))).toEqual([
            ["tip", 300n, "T1"],
            ["tip", 200n, "T1"]
          ])
        })
      )
  )

  it.effect(
    "partial reversals, refunds, captures, hold changes and releases are what they changed in the state",
    () =>
      inMemory(
        Effect.gen(function* () {
          yield* append("txn-s3", [
            sale("s3", 5000n),
            LifecycleEvent.Refunded.make({
              requestId: "f1",
              at: when,
              amount: eur(1000n),
              reconciled: false
            }),
            LifecycleEvent.Reversed.make({
              requestId: "r1",
              at: when,
              target: "transaction",
              amount: eur(1500n),
              reconciled: false
            })
          ])
          const opened = (guid: string, minor: bigint) =>
            LifecycleEvent.PreAuthorizationOpened.make({
              guid,
              via: "moToPreAuthorization",
              amount: eur(minor),
              at: when,
              scheme: "VISA",
              mcc: "7011"
            })
          yield* append("txn-p1", [
            opened("p1", 9000n),
            LifecycleEvent.HoldIncreased.make({
              requestId: "i1",
              at: when,
              delta: eur(1000n),
              hold: eur(10000n),
              reconciled: false
            }),
            LifecycleEvent.PreAuthorizationCaptured.make({
              requestId: "c1",
              at: when,
              total: eur(9500n),
              reconciled: false
            }),
            // The capture reversed: it leaves the net (a reversal of the capture's total).
            LifecycleEvent.Reversed.make({
              requestId: "r2",
              at: when,
              target: "capture",
              amount: eur(9500n),
              reconciled: false
            })
          ])
          yield* append("txn-p2", [
            opened("p2", 700n),
            LifecycleEvent.Reversed.make({
              requestId: "r3",
              at: when,
              target: "hold",
              amount: eur(700n),
              reconciled: false
            })
          ])
          const { entries, undecodable } = yield* Ledger.entriesOf(yield* log)
          expect(undecodable).toEqual([])
          expect(entries.map((e) => [e.original, e.kind, e.amount?.minorUnits])).toEqual([
            ["s3", "refund", 1000n],
            ["s3", "reversal", 1500n],
            ["p1", "increase", 1000n],
            ["p1", "capture", 9500n],
            ["p1", "reversal", 9500n],
            ["p2", "release", 700n]
          ])
        })
      )
  )

  it.effect(
    "a read that starts in the middle of a history folds its beginning first: the same entries as a whole read",
    () =>
      inMemory(
        Effect.gen(function* () {
          yield* append("txn-s4", [sale("s4", 4000n), tip("t1", 300n)])
          yield* append("txn-s5", [sale("s5", 1000n)])
          yield* append("txn-s4", [tip("t2", 450n)])
          yield* append("txn-s5", [
            LifecycleEvent.Refunded.make({ requestId: "f1", at: when, amount: eur(400n), reconciled: false })
          ])
          const events = yield* log
          const whole = yield* Ledger.entriesOf(events)
          for (let cut = 1; cut < events.length; cut++) {
            // A fresh cache for the second page: as a projection resumed from a snapshot.
            const first = yield* Ledger.entriesOf(events.slice(0, cut))
            const second = yield* Ledger.entriesOf(events.slice(cut))
            expect(summary([...first.entries, ...second.entries])).toEqual(summary(whole.entries))
          }
          expect(summary(whole.entries)).toEqual([
            ["tip", 300n, "T1"],
            ["tip", 150n, "T1"],
            ["refund", 400n, "T1"]
          ])
        })
      )
  )

  it.effect("a money fact in a history that was never opened is reported, not booked", () =>
    inMemory(
      Effect.gen(function* () {
        yield* append("txn-orphan", [
          LifecycleEvent.Refunded.make({ requestId: "f1", at: when, amount: eur(200n), reconciled: false })
        ])
        const { entries, undecodable } = yield* Ledger.entriesOf(yield* log)
        expect(entries).toEqual([])
        expect(undecodable).toEqual([
          "txn-orphan@1: a fact in a transaction's history that was never opened: not booked"
        ])
      })
    )
  )

  it("the cache keeps at most its limit of histories, dropping the least recently used", () => {
    const cache = new LedgerFold.Cache(2)
    const folded = { version: 1, state: Option.none() }
    cache.set("a", folded)
    cache.set("b", folded)
    expect(cache.get("a")).toBe(folded)
    cache.set("c", folded)
    expect(cache.size).toBe(2)
    expect(cache.get("b")).toBeUndefined()
    expect(cache.get("a")).toBe(folded)
    expect(cache.get("c")).toBe(folded)
  })
})
