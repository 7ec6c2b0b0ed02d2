/**
 * Money conservation per transaction, as `audit verify` checks it: a log written straight to
 * the store (bypassing every rule) whose transactions credit back more than they charged —
 * in total, or in a currency they never charged in — is reported transaction by transaction;
 * a log that conserves money is clean.
 */
import { describe, expect, it } from "@effect/vitest"
import { Conservation, LifecycleEvent, Money } from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const usd = (minor: bigint) => Money.make(minor, "USD")
const at = DateTime.unsafeMake("2026-03-01T10:00:00Z")

/** Appends lifecycle events to a transaction's stream, as a hand-made repair would. */
const write = (guid: string, events: ReadonlyArray<LifecycleEvent.Event>) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const encoded = yield* Effect.forEach(events, (e) => LifecycleEvent.registry.encode(e))
    yield* store.append(LifecycleEvent.transactionStream(guid), EventStore.AnyVersion, encoded)
  })

const sale = (guid: string, amount: Money.Money) =>
  LifecycleEvent.TransactionRecorded.make({ guid, kind: "sale", amount, at })
const refunded = (requestId: string, amount: Money.Money) =>
  LifecycleEvent.Refunded.make({ requestId, at, amount, reconciled: false })
const reversed = (requestId: string, amount: Money.Money) =>
  LifecycleEvent.Reversed.make({ requestId, at, target: "transaction", amount, reconciled: false })
const tipped = (requestId: string, tip: Money.Money) =>
  LifecycleEvent.TipAdjusted.make({ requestId, at, tip })

describe("money conservation per transaction (audit verify)", () => {
  it.effect(
    "a log whose transactions credit back more than they charged is reported, each by guid and currency",
    () =>
      Effect.gen(function* () {
        // Refunded in full, then reversed in full: 51.01 charged, 102.02 credited back.
        yield* write("twice", [
          sale("twice", eur(5101n)),
          refunded("r1", eur(5101n)),
          reversed("v1", eur(5101n))
        ])
        // A refund in a currency the sale never charged in.
        yield* write("other-currency", [sale("other-currency", eur(4101n)), refunded("r2", usd(100n))])
        // Conserved: a partial refund and a reversal of what was left, the tip included.
        yield* write("fine", [
          sale("fine", eur(2000n)),
          tipped("t1", eur(300n)),
          refunded("r3", eur(1000n)),
          reversed("v3", eur(1300n))
        ])
        const store = yield* EventStore.EventStore
        const report = yield* Conservation.checkStore(store)
        expect(report.transactionsChecked).toBe(3)
        expect(report.broken).toEqual([
          { guid: "twice", currency: "EUR", charged: 5101n, credited: 10202n },
          { guid: "other-currency", currency: "USD", charged: 0n, credited: 100n }
        ])
        expect(report.broken.map(Conservation.describe)).toEqual([
          "transaction twice credited back 102.02 EUR, above the 51.01 EUR it charged",
          "transaction other-currency credited back 1.00 USD, above the 0.00 USD it charged"
        ])
        // One stream only.
        expect(
          (yield* Conservation.checkStore(store, LifecycleEvent.transactionStream("fine"))).broken
        ).toEqual([])
        expect(
          (yield* Conservation.checkStore(store, LifecycleEvent.transactionStream("twice"))).broken
        ).toHaveLength(1)
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect(
    "a pre-authorization charges what its capture totalled: refunded in full, then its capture reversed too, it is credited back twice",
    () =>
      Effect.gen(function* () {
        yield* write("pa", [
          LifecycleEvent.PreAuthorizationOpened.make({
            guid: "pa",
            via: "preAuthorization",
            amount: eur(9000n),
            at,
            scheme: "VISA",
            mcc: "7011"
          }),
          LifecycleEvent.PreAuthorizationCaptured.make({
            requestId: "c1",
            at,
            total: eur(8000n),
            reconciled: false
          }),
          refunded("r1", eur(8000n))
        ])
        const store = yield* EventStore.EventStore
        expect((yield* Conservation.checkStore(store)).broken).toEqual([])
        yield* write("pa", [
          LifecycleEvent.Reversed.make({
            requestId: "v1",
            at,
            target: "capture",
            amount: eur(8000n),
            reconciled: false
          })
        ])
        expect((yield* Conservation.checkStore(store)).broken).toEqual([
          { guid: "pa", currency: "EUR", charged: 8000n, credited: 16000n }
        ])
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect(
    "a fact stating another amount than its history says it moved is a disagreement: release, capture reversal, hold change, replaced tip",
    () =>
      Effect.gen(function* () {
        const opened = (guid: string) =>
          LifecycleEvent.PreAuthorizationOpened.make({
            guid,
            via: "preAuthorization",
            amount: eur(9000n),
            at,
            scheme: "VISA",
            mcc: "7011"
          })
        const increased = (requestId: string, delta: Money.Money, hold: Money.Money, tip?: Money.Money) =>
          LifecycleEvent.HoldIncreased.make({
            requestId,
            at,
            delta,
            hold,
            reconciled: false,
            ...(tip === undefined ? {} : { tip })
          })
        // The hold grew to 100.00 though the increase says 5.00; released as 90.00.
        yield* write("hold", [
          opened("hold"),
          increased("i1", eur(500n), eur(10000n)),
          LifecycleEvent.Reversed.make({
            requestId: "v1",
            at,
            target: "hold",
            amount: eur(9000n),
            reconciled: false
          })
        ])
        // Captured 80.00, its reversal says 70.00.
        yield* write("cap", [
          opened("cap"),
          LifecycleEvent.PreAuthorizationCaptured.make({
            requestId: "c1",
            at,
            total: eur(8000n),
            reconciled: false
          }),
          LifecycleEvent.Reversed.make({
            requestId: "v2",
            at,
            target: "capture",
            amount: eur(7000n),
            reconciled: false
          })
        ])
        // A tip that says it replaces 2.00 where 3.00 stands.
        yield* write("tip", [
          sale("tip", eur(2000n)),
          tipped("t1", eur(300n)),
          LifecycleEvent.TipAdjusted.make({ requestId: "t2", at, tip: eur(500n), replaces: eur(200n) })
        ])
        // Agreeing facts: an increase whose delta is the difference, a release of the hold as it stood.
        yield* write("agrees", [
          opened("agrees"),
          increased("i2", eur(1000n), eur(10000n)),
          // An increase with a tip raises the hold by both: 8.00 + 2.00 from 100.00 to 110.00.
          increased("i3", eur(800n), eur(11000n), eur(200n)),
          LifecycleEvent.Reversed.make({
            requestId: "v3",
            at,
            target: "hold",
            amount: eur(11000n),
            reconciled: false
          })
        ])
        const report = yield* Conservation.checkStore(yield* EventStore.EventStore)
        expect(report.broken).toEqual([])
        expect(report.disagreements.map(Conservation.describeDisagreement)).toEqual([
          "transaction hold: the hold increase at version 2 (HoldIncreased) states 5.00 EUR, where the history says 10.00 EUR",
          "transaction hold: the release at version 3 (Reversed) states 90.00 EUR, where the history says 100.00 EUR",
          "transaction cap: the capture reversal at version 3 (Reversed) states 70.00 EUR, where the history says 80.00 EUR",
          "transaction tip: the replaced tip at version 3 (TipAdjusted) states 2.00 EUR, where the history says 3.00 EUR"
        ])
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})
