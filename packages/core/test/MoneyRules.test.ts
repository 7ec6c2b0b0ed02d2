/**
 * The money rules of one original transaction hold on every path, terminal and
 * terminal-less mixed on the same original: what is credited back (refunds and reversals,
 * each partial one by its amount) never exceeds what was charged, a refund of a refund is
 * refused, and a tip goes only on a sale nothing was credited back from. Each refusal is
 * made before anything is sent.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  Ledger,
  LifecycleEvent,
  Money,
  MoneyRules,
  MotoWorkflow,
  ReversalWorkflow,
  TerminalOperations,
  TerminalOutcomeRecorder,
  TipAdjustmentWorkflow,
  TransactionHistory,
  type Moto,
  type Reversal,
  type TipAdjustment
} from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { Cloud, layer, runToEnd, typesOf } from "./support/protocol.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const eur = (minor: bigint) => Money.make(minor, "EUR")
const usd = (minor: bigint) => Money.make(minor, "USD")
const rules = { mcc: Option.some("7011") }
const polling = (idempotencyKey: string) => ({ idempotencyKey, delivery: "polling" as const })

/** The terminal-less endpoints, approving, each call counted by endpoint. */
const counted = () => {
  const calls: Array<string> = []
  const service = {
    reversal: () => Effect.sync(() => (calls.push("reversal"), {} as Reversal.ReversalResponse)),
    motoReversal: () =>
      Effect.sync(() => (calls.push("motoReversal"), { transactionID: "moto-rev" } as Moto.MotoResponse)),
    motoRefund: () =>
      Effect.sync(() => (calls.push("motoRefund"), { transactionID: "moto-ref" } as Moto.MotoResponse)),
    tipAdjustment: () =>
      Effect.sync(() => (calls.push("tipAdjustment"), {} as TipAdjustment.TipAdjustmentResponse))
  }
  return { calls, service }
}

const refusalOf = <A, E>(exit: Exit.Exit<A, E>) => {
  if (Exit.isSuccess(exit)) return undefined
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure)
    ? (failure.value as { readonly _tag: string; readonly error?: string; readonly rule?: string })
    : undefined
}

const record = (guid: string, kind: LifecycleEvent.TransactionKind, amount: Money.Money) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    yield* TransactionHistory.record(store, {
      guid,
      kind,
      amount,
      at: yield* DateTime.now,
      serialNumber: terminal.serialNumber
    })
  })

const sends = Effect.map(Cloud, (cloud) => cloud.recorded.sends.length)
const guid = (value: string) => Identifiers.Guid.make(value)

const linkedRefund = (key: string, original: string, amount: Money.Money) =>
  runToEnd(
    TerminalOperations.linkedRefund(
      { ...terminal, originalTransactionId: guid(original), amount },
      polling(key)
    )
  )

const saleReversal = (key: string, original: string, amount: Money.Money) =>
  runToEnd(
    TerminalOperations.saleReversal(
      { ...terminal, originalTransactionId: guid(original), amount },
      polling(key)
    )
  )

const stateOf = (original: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    return Option.getOrThrow((yield* TransactionHistory.load(store, original)).state)
  })

describe("one original, every path: what is credited back never exceeds what was charged", () => {
  it.effect(
    "a MOTO sale refunded in full is not reversed after: MOTO and gateway reversals are refused, nothing sent",
    () => {
      const cloud = counted()
      return Effect.gen(function* () {
        yield* record("moto-1", "moToSale", eur(5101n))
        const refund = yield* MotoWorkflow.Refund.execute({
          requestId: "ref-1",
          originalGuid: guid("moto-1"),
          amount: eur(5101n)
        })
        expect(refund.refundedSoFar).toEqual(eur(5101n))
        const moto = yield* Effect.flip(
          MotoWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid("moto-1") })
        )
        expect(moto).toMatchObject({ _tag: "ReversalNotAllowed", rule: "credited-not-above-charged" })
        const gateway = yield* Effect.flip(
          ReversalWorkflow.Reverse.execute({ requestId: "rev-2", originalGuid: guid("moto-1") })
        )
        expect(gateway).toMatchObject({ _tag: "ReversalNotAllowed", rule: "credited-not-above-charged" })
        expect(gateway.message).toContain("51.01 EUR")
        expect(cloud.calls).toEqual(["motoRefund"])
      }).pipe(Effect.provide(layer({ linkedRules: rules, terminalLess: cloud.service })))
    }
  )

  it.effect(
    "a sale refunded in full through the terminal (linked refund) is not reversed after, on either path, nothing sent",
    () => {
      const cloud = counted()
      return Effect.gen(function* () {
        yield* record("sale-1", "sale", eur(5101n))
        const refund = yield* linkedRefund("f1", "sale-1", eur(5101n))
        expect(Exit.isSuccess(refund) && refund.value._tag).toBe("Approved")
        expect(yield* typesOf(LifecycleEvent.transactionStream("sale-1"))).toEqual([
          "TransactionRecorded",
          "RefundRequested",
          "Refunded"
        ])
        expect(refusalOf(yield* saleReversal("r1", "sale-1", eur(5101n)))).toMatchObject({
          _tag: "OperationRefused",
          rule: "credited-not-above-charged"
        })
        const gateway = yield* Effect.flip(
          ReversalWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid("sale-1") })
        )
        expect(gateway).toMatchObject({ _tag: "ReversalNotAllowed", rule: "credited-not-above-charged" })
        expect(yield* sends).toBe(1)
        expect(cloud.calls).toEqual([])
      }).pipe(Effect.provide(layer({ linkedRules: rules, terminalLess: cloud.service })))
    }
  )

  it.effect(
    "a linked terminal refund is decided from its original: not above what is left, in its currency, never of a refund; nothing sent when refused",
    () =>
      Effect.gen(function* () {
        yield* record("sale-1", "sale", eur(4101n))
        yield* record("refund-1", "refund", eur(1000n))
        const above = refusalOf(yield* linkedRefund("f1", "sale-1", eur(8202n)))
        expect(above).toMatchObject({ _tag: "OperationRefused", error: "RefundExceedsSale" })
        expect((above as unknown as { message: string }).message).toContain("above the sale's 41.01 EUR")
        expect(refusalOf(yield* linkedRefund("f2", "sale-1", usd(100n)))).toMatchObject({
          _tag: "OperationRefused",
          error: "CurrencyNotOfTransaction"
        })
        expect(refusalOf(yield* linkedRefund("f3", "refund-1", eur(100n)))).toMatchObject({
          _tag: "OperationRefused",
          error: "OperationNotApplicable",
          rule: "no-refund-of-a-refund"
        })
        expect(yield* sends).toBe(0)
        // Partial refunds add up to the sale, and no further.
        expect(Exit.isSuccess(yield* linkedRefund("f4", "sale-1", eur(4000n)))).toBe(true)
        expect(Exit.isSuccess(yield* linkedRefund("f5", "sale-1", eur(101n)))).toBe(true)
        expect(refusalOf(yield* linkedRefund("f6", "sale-1", eur(1n)))).toMatchObject({
          _tag: "OperationRefused",
          error: "RefundExceedsSale"
        })
        expect(TransactionHistory.refunded(yield* stateOf("sale-1"))).toEqual(eur(4101n))
        expect(yield* sends).toBe(2)
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "a partial terminal sale reversal is folded by its amount: what is left can still be reversed, a tip is refused as credited back",
    () =>
      Effect.gen(function* () {
        yield* record("sale-1", "sale", eur(5066n))
        expect(Exit.isSuccess(yield* saleReversal("r1", "sale-1", eur(1000n)))).toBe(true)
        const partly = yield* stateOf("sale-1")
        expect(partly.reversed).toEqual(eur(1000n))
        expect(partly.fullyReversedAt).toBeUndefined()
        // More than what is left is refused, nothing sent.
        expect(refusalOf(yield* saleReversal("r2", "sale-1", eur(4067n)))).toMatchObject({
          _tag: "OperationRefused",
          rule: "reversal-not-above-remaining"
        })
        expect(Exit.isSuccess(yield* saleReversal("r3", "sale-1", eur(4066n)))).toBe(true)
        const whole = yield* stateOf("sale-1")
        expect(whole.reversed).toEqual(eur(5066n))
        expect(whole.fullyReversedAt).toBeDefined()
        expect(yield* sends).toBe(2)
      }).pipe(
        Effect.provide(layer({ linkedRules: rules })),
        Effect.provideService(ReversalWorkflow.AcquirerCapabilities, {
          partialReversal: true,
          captureReversal: true
        })
      )
  )

  it.effect("a tip on a sale refunded through the terminal is refused, nothing sent", () => {
    const cloud = counted()
    return Effect.gen(function* () {
      yield* record("sale-1", "sale", eur(2345n))
      expect(Exit.isSuccess(yield* linkedRefund("f1", "sale-1", eur(2345n)))).toBe(true)
      const tip = yield* Effect.flip(
        TipAdjustmentWorkflow.Adjust.execute({
          requestId: "tip-1",
          originalGuid: guid("sale-1"),
          tip: eur(500n)
        })
      )
      expect(tip._tag).toBe("TipAdjustmentNotAllowed")
      expect(tip.message).toContain("refunded")
      expect(cloud.calls).toEqual([])
    }).pipe(Effect.provide(layer({ linkedRules: rules, terminalLess: cloud.service })))
  })

  it.effect("a linked MOTO refund sent to a terminal is decided from and folded into its MOTO sale", () =>
    Effect.gen(function* () {
      yield* record("moto-20", "moToSale", eur(2000n))
      const motoRefund = (key: string, amount: Money.Money) =>
        runToEnd(
          TerminalOperations.linkedMotoRefund(
            { ...terminal, originalTransactionId: guid("moto-20"), amount },
            polling(key)
          )
        )
      expect(Exit.isSuccess(yield* motoRefund("m1", eur(2000n)))).toBe(true)
      expect(refusalOf(yield* motoRefund("m2", eur(1n)))).toMatchObject({ rule: "refund-not-above-sale" })
      expect(yield* sends).toBe(1)
    }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "the ledger books a terminal reversal of a captured pre-authorization as the capture's reversal: the net is 0",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const preAuth = guid("pa-8")
        yield* TransactionHistory.openPreAuthorization(store, {
          guid: preAuth,
          amount: eur(9000n),
          authorisedAt: yield* DateTime.now,
          scheme: "Visa",
          mcc: "7011",
          serialNumber: terminal.serialNumber
        })
        const linked = { ...terminal, originalTransactionId: preAuth }
        const approved = <A, E>(exit: Exit.Exit<A, E>) => expect(Exit.isSuccess(exit)).toBe(true)
        approved(
          yield* runToEnd(
            TerminalOperations.preAuthorizationIncrease({ ...linked, amount: eur(1000n) }, polling("i1"))
          )
        )
        approved(
          yield* runToEnd(
            TerminalOperations.preAuthorizationCapture({ ...linked, amount: eur(11000n) }, polling("c1"))
          )
        )
        approved(yield* runToEnd(TerminalOperations.preAuthorizationReversal(linked, polling("v1"))))
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
        const { entries } = yield* Ledger.entriesOf(page.events)
        const rows = Ledger.summarize(Ledger.addEntries(Ledger.empty, entries), [])
        expect(rows.filter((row) => row.currency === "EUR").map((row) => row.net)).toEqual([0n])
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "a terminal-less reversal of a terminal sale is booked on that terminal's and merchant's ledger row, not on merchant '-'",
    () => {
      const cloud = counted()
      return Effect.gen(function* () {
        const handle = yield* Cloud
        handle.script({ result: { mid: "MID-7" } })
        const sale = yield* runToEnd(
          TerminalOperations.sale({ ...terminal, amount: eur(2000n) }, polling("sale-mid"))
        )
        expect(Exit.isSuccess(sale) && sale.value._tag).toBe("Approved")
        const saleGuid = Exit.isSuccess(sale) ? (sale.value.facts.efttransactionID ?? "") : ""
        yield* TerminalOutcomeRecorder.catchUp({ mcc: Option.some("7011") })
        yield* ReversalWorkflow.Reverse.execute({ requestId: "rev-mid", originalGuid: guid(saleGuid) })
        const store = yield* EventStore.EventStore
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
        const { entries } = yield* Ledger.entriesOf(page.events)
        const rows = Ledger.summarize(Ledger.addEntries(Ledger.empty, entries), ["terminal", "merchant"])
        expect(rows.map((row) => [row.terminal, row.merchant, row.net])).toEqual([
          [terminal.serialNumber, "MID-7", 0n]
        ])
        expect(cloud.calls).toEqual(["reversal"])
      }).pipe(Effect.provide(layer({ linkedRules: rules, terminalLess: cloud.service })))
    }
  )

  it.effect(
    "a pre-authorization charges what its capture totalled (not the hold), and a reversed capture credits it back",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const at = DateTime.unsafeMake("2026-11-28T10:00:00Z")
        const guid = "preauth-charged-1"
        const stream = LifecycleEvent.transactionStream(guid)
        const stateAfter = (events: ReadonlyArray<LifecycleEvent.Event>) =>
          Effect.gen(function* () {
            const encoded = yield* Effect.forEach(events, (event) => LifecycleEvent.registry.encode(event))
            yield* store.append(stream, EventStore.AnyVersion, encoded)
            const { state } = yield* TransactionHistory.load(store, guid)
            return Option.getOrThrow(state)
          })
        const opened = yield* stateAfter([
          LifecycleEvent.PreAuthorizationOpened.make({
            guid,
            via: "preAuthorization",
            amount: eur(9000n),
            at,
            scheme: "Visa",
            mcc: "7011"
          })
        ])
        // A hold is no charge.
        expect(MoneyRules.charged(opened)).toEqual(eur(0n))
        const captured = yield* stateAfter([
          LifecycleEvent.PreAuthorizationCaptured.make({
            requestId: "cap-1",
            at,
            total: eur(11000n),
            reconciled: false
          })
        ])
        expect(MoneyRules.charged(captured)).toEqual(eur(11000n))
        expect(MoneyRules.credited(captured)).toEqual(eur(0n))
        const reversed = yield* stateAfter([
          LifecycleEvent.Reversed.make({
            requestId: "rev-1",
            at,
            target: "capture",
            amount: eur(11000n),
            reconciled: false
          })
        ])
        expect(MoneyRules.charged(reversed)).toEqual(eur(11000n))
        expect(MoneyRules.credited(reversed)).toEqual(eur(11000n))
        expect(MoneyRules.left(reversed)).toEqual(eur(0n))
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})
