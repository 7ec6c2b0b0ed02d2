import { describe, expect, it } from "@effect/vitest"
import {
  PaymentEvents,
  Ledger,
  LifecycleEvent,
  Money,
  TerminalOutcomeRecorder,
  TransactionHistory
} from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import type { OperationOutcome } from "@tillflow/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const at = Date.UTC(2026, 2, 1, 10, 0, 0)

const facts = (overrides: Partial<OperationOutcome.Facts>): OperationOutcome.Facts => ({
  operation: "sale",
  serialNumber: "T1",
  terminalType: "PAXA920",
  attempt: 1,
  attemptId: "0c2b2f31-0a1d-4baf-81fc-84328263f3ef",
  finStatus: "AUTHORISED",
  source: "callback",
  totalAmount: Money.make(2500n, "EUR"),
  cardSchemeName: "VISA",
  ...overrides
})

const appendOutcome = (stream: string, f: OperationOutcome.Facts, declined = false) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const event = declined
      ? PaymentEvents.PaymentDeclined.make({ facts: f, at })
      : PaymentEvents.PaymentAuthorised.make({ facts: f, at })
    yield* store.append(stream, EventStore.AnyVersion, [yield* PaymentEvents.events.encode(event)])
  })

describe("TerminalOutcomeRecorder", () => {
  it.effect(
    "approved sales and pre-authorizations made on terminals open their histories, once, from a checkpoint",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        yield* appendOutcome("payment-a", facts({ efttransactionID: "g-sale" }))
        yield* appendOutcome(
          "payment-b",
          facts({
            operation: "preAuthorization",
            efttransactionID: "g-pre",
            totalAmount: Money.make(10000n, "EUR")
          })
        )
        yield* appendOutcome(
          "payment-c",
          facts({ finStatus: "DECLINED", efttransactionID: "g-declined" }),
          true
        )
        yield* appendOutcome("payment-d", facts({ operation: "pingDevice", efttransactionID: "g-ping" }))
        const options = { mcc: Option.some("7011") }
        expect(yield* TerminalOutcomeRecorder.catchUp(options)).toBe(2)
        const sale = yield* TransactionHistory.load(store, "g-sale")
        expect(Option.isSome(sale.state)).toBe(true)
        const pre = yield* store.readStream(LifecycleEvent.transactionStream("g-pre"))
        expect(pre.map((e) => e.type)).toEqual(["PreAuthorizationOpened"])
        expect(pre[0]?.data).toMatchObject({
          mcc: "7011",
          scheme: "VISA",
          amount: { amount: "10000", currency: "EUR" }
        })
        expect(yield* store.streamVersion(LifecycleEvent.transactionStream("g-declined"))).toBe(0)
        // Nothing new: nothing recorded again, and a replay from the start records nothing twice.
        expect(yield* TerminalOutcomeRecorder.catchUp(options)).toBe(0)
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100 })
        for (const event of page.events) {
          expect(yield* TerminalOutcomeRecorder.recordEvent(event, options)).not.toBe("recorded")
        }
        // A later sale is picked up from the checkpoint.
        yield* appendOutcome("payment-e", facts({ efttransactionID: "g-later" }))
        expect(yield* TerminalOutcomeRecorder.catchUp(options)).toBe(1)
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect(
    "without the merchant's MCC a pre-authorization is not opened (its capture rules would be guessed)",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        yield* appendOutcome("payment-b", facts({ operation: "preAuthorization", efttransactionID: "g-pre" }))
        expect(yield* TerminalOutcomeRecorder.catchUp({ mcc: Option.none() })).toBe(0)
        expect(yield* store.streamVersion(LifecycleEvent.transactionStream("g-pre"))).toBe(0)
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})

describe("Ledger: terminal-less facts", () => {
  it.effect(
    "MOTO sales, captures, reversals, refunds and hold changes count under no terminal, recorded sales do not count twice",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const when = DateTime.unsafeMake(at)
        const eur = (minor: bigint) => Money.make(minor, "EUR")
        const append = (stream: string, events: ReadonlyArray<LifecycleEvent.Event>) =>
          Effect.flatMap(LifecycleEvent.registry.encodeAll(events), (encoded) =>
            store.append(stream, EventStore.AnyVersion, encoded)
          )
        yield* append("txn-g1", [
          // A terminal sale's history: already counted by its PaymentAuthorised.
          LifecycleEvent.TransactionRecorded.make({ guid: "g1", kind: "sale", amount: eur(2500n), at: when }),
          LifecycleEvent.Reversed.make({
            requestId: "r1",
            at: when,
            target: "transaction",
            amount: eur(2500n),
            reconciled: false
          })
        ])
        // Histories as the rules write them: each opened first (the ledger folds the
        // transaction's state, and a fact in a history never opened is not booked).
        const opened = (guid: string, amount: bigint) =>
          LifecycleEvent.PreAuthorizationOpened.make({
            guid,
            via: "moToPreAuthorization",
            amount: eur(amount),
            at: when,
            scheme: "VISA",
            mcc: "5812"
          })
        yield* append("txn-g2", [
          opened("g2", 10000n),
          LifecycleEvent.HoldIncreased.make({
            requestId: "i1",
            at: when,
            delta: eur(1000n),
            hold: eur(11000n),
            reconciled: false
          }),
          LifecycleEvent.HoldDecreased.make({
            requestId: "d1",
            at: when,
            delta: eur(300n),
            hold: eur(10700n),
            reconciled: false
          }),
          LifecycleEvent.PreAuthorizationCaptured.make({
            requestId: "c1",
            at: when,
            total: eur(10000n),
            reconciled: true
          })
        ])
        yield* append("txn-g4", [
          opened("g4", 700n),
          LifecycleEvent.Reversed.make({
            requestId: "r2",
            at: when,
            target: "hold",
            amount: eur(700n),
            reconciled: false
          })
        ])
        yield* append("moto-sale-ref", [
          LifecycleEvent.MotoSaleApproved.make({
            requestId: "m1",
            at: when,
            guid: "g3",
            amount: eur(1200n),
            reconciled: false
          })
        ])
        yield* append("txn-g3", [
          LifecycleEvent.TransactionRecorded.make({
            guid: "g3",
            kind: "moToSale",
            amount: eur(1200n),
            at: when
          }),
          LifecycleEvent.Refunded.make({ requestId: "f1", at: when, amount: eur(200n), reconciled: false })
        ])
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100 })
        const ledger = yield* Ledger.foldRecorded(Ledger.empty, page.events)
        const [row] = Ledger.summarize(ledger, ["terminal"])
        expect(row?.terminal).toBe("-")
        expect(row?.tallies.sale).toEqual({ count: 1, amount: 1200n })
        expect(row?.tallies.reversal).toEqual({ count: 1, amount: 2500n })
        expect(row?.tallies.release).toEqual({ count: 1, amount: 700n })
        expect(row?.tallies.increase).toEqual({ count: 2, amount: 700n })
        expect(row?.tallies.capture).toEqual({ count: 1, amount: 10000n })
        expect(row?.tallies.refund).toEqual({ count: 1, amount: 200n })
        expect(row?.net).toBe(1200n + 10000n - 2500n - 200n)
        expect(ledger.entries).toBe(7)
        expect(ledger.undecodable).toEqual([])
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.live(
    "followed as the log grows: a terminal sale's history opens without any later operation asking, and the checkpoint is stored",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        yield* appendOutcome("payment-before", facts({ efttransactionID: "g-before" }))
        const opened = (guid: string) =>
          Effect.gen(function* () {
            for (let i = 0; i < 200; i++) {
              if ((yield* store.streamVersion(LifecycleEvent.transactionStream(guid))) > 0) return true
              yield* Effect.sleep("10 millis")
            }
            return false
          })
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* TerminalOutcomeRecorder.follow({
              mcc: Option.some("7011"),
              checkpointEvery: "20 millis",
              pollInterval: "10 millis"
            })
            expect(yield* opened("g-before")).toBe(true)
            // A sale approved while the worker runs: its history opens by itself.
            yield* appendOutcome("payment-live", facts({ efttransactionID: "g-live" }))
            expect(yield* opened("g-live")).toBe(true)
            yield* Effect.sleep("60 millis")
          })
        )
        // Stored, so a restart resumes after what was recorded.
        const stored = yield* TerminalOutcomeRecorder.checkpoint
        expect(stored.version).toBeGreaterThan(0)
        const last = (yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100 })).events.filter(
          (e) => e.streamId === "payment-live"
        )[0]
        expect(EventStore.checkpointOrder(stored.checkpoint, last!.checkpoint)).toBeGreaterThanOrEqual(0)
        expect(yield* TerminalOutcomeRecorder.catchUp({ mcc: Option.some("7011") })).toBe(0)
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})
