/**
 * The rows of issue 28 on the terminal path (the rules are `MoneyRules`): a linked refund or MOTO refund sent to a
 * terminal is decided from its original's money and folded into it, a partial
 * `saleReversal` reduces what is left by its amount, and what was credited in full can be
 * neither reversed nor tipped. Each refusal names its rule and nothing is sent.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  Ledger,
  LifecycleEvent,
  Money,
  ReversalWorkflow,
  TerminalCloud,
  TerminalOperations,
  TipAdjustmentWorkflow,
  TransactionHistory,
  type TipAdjustment
} from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
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
const tipAnswered: Partial<TerminalCloud.Service> = {
  tipAdjustment: () => Effect.succeed({} as TipAdjustment.TipAdjustmentResponse)
}
const harness = layer({ linkedRules: rules, terminalLess: tipAnswered })

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
    return Identifiers.Guid.make(guid)
  })

const sends = Effect.map(Cloud, (cloud) => cloud.recorded.sends.length)

const linkedRefund = (key: string, original: Identifiers.Guid, amount: Money.Money) =>
  runToEnd(
    TerminalOperations.linkedRefund({ ...terminal, originalTransactionId: original, amount }, polling(key))
  )

const saleReversal = (key: string, original: Identifiers.Guid, amount: Money.Money) =>
  runToEnd(
    TerminalOperations.saleReversal({ ...terminal, originalTransactionId: original, amount }, polling(key))
  )

const stateOf = (guid: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    return Option.getOrThrow((yield* TransactionHistory.load(store, guid)).state)
  })

describe("issue 28 rows on the terminal path", () => {
  it.effect(
    "row 2: a linked refund above the sale, in another currency or of a refund is refused, nothing sent; one within the sale is folded into the sale",
    () =>
      Effect.gen(function* () {
        const sale = yield* record("sale-41", "sale", eur(4101n))
        const refund = yield* record("refund-9", "refund", eur(900n))
        expect(refusalOf(yield* linkedRefund("r1", sale, eur(8202n)))).toMatchObject({
          _tag: "OperationRefused",
          error: "RefundExceedsSale",
          rule: "refund-not-above-sale"
        })
        expect(refusalOf(yield* linkedRefund("r2", sale, usd(100n)))).toMatchObject({
          _tag: "OperationRefused",
          error: "CurrencyNotOfTransaction"
        })
        expect(refusalOf(yield* linkedRefund("r3", refund, eur(100n)))).toMatchObject({
          _tag: "OperationRefused",
          rule: "no-refund-of-a-refund"
        })
        expect(yield* sends).toBe(0)
        expect(Exit.isSuccess(yield* linkedRefund("r4", sale, eur(4000n)))).toBe(true)
        // The two refusals on the sale are audited there; the refund is requested, then folded.
        expect(yield* typesOf(LifecycleEvent.transactionStream(sale))).toEqual([
          "TransactionRecorded",
          "OperationRefused",
          "OperationRefused",
          "RefundRequested",
          "Refunded"
        ])
        expect(TransactionHistory.refunded(yield* stateOf(sale))).toEqual(eur(4000n))
        // 40.00 refunded of 41.01: 1.02 is more than is left.
        expect(refusalOf(yield* linkedRefund("r5", sale, eur(102n)))).toMatchObject({
          rule: "refund-not-above-sale"
        })
        expect(yield* sends).toBe(1)
      }).pipe(Effect.provide(harness))
  )

  it.effect("row 2: a linked MOTO refund is decided from and folded into its MOTO sale", () =>
    Effect.gen(function* () {
      const sale = yield* record("moto-20", "moToSale", eur(2000n))
      const motoRefund = (key: string, amount: Money.Money) =>
        runToEnd(
          TerminalOperations.linkedMotoRefund(
            { ...terminal, originalTransactionId: sale, amount },
            polling(key)
          )
        )
      expect(Exit.isSuccess(yield* motoRefund("m1", eur(2000n)))).toBe(true)
      expect(refusalOf(yield* motoRefund("m2", eur(1n)))).toMatchObject({ rule: "refund-not-above-sale" })
      expect(yield* sends).toBe(1)
    }).pipe(Effect.provide(harness))
  )

  it.effect(
    "row 1: after a linked refund in full, a saleReversal or a terminal-less reversal is refused, nothing sent",
    () =>
      Effect.gen(function* () {
        const sale = yield* record("sale-51", "sale", eur(5101n))
        expect(Exit.isSuccess(yield* linkedRefund("r1", sale, eur(5101n)))).toBe(true)
        expect(refusalOf(yield* saleReversal("v1", sale, eur(5101n)))).toMatchObject({
          _tag: "OperationRefused",
          rule: "credited-not-above-charged"
        })
        const terminalLess = yield* Effect.flip(
          ReversalWorkflow.Reverse.execute({ requestId: "tl-1", originalGuid: sale })
        )
        expect(terminalLess).toMatchObject({
          _tag: "ReversalNotAllowed",
          rule: "credited-not-above-charged"
        })
        expect(yield* sends).toBe(1)
      }).pipe(Effect.provide(harness))
  )

  it.effect(
    "row 3: a partial saleReversal reduces what is left by its amount: what is left can be reversed, no more",
    () =>
      Effect.gen(function* () {
        const sale = yield* record("sale-50", "sale", eur(5066n))
        expect(Exit.isSuccess(yield* saleReversal("v1", sale, eur(1000n)))).toBe(true)
        const after = yield* stateOf(sale)
        expect(after.reversed).toEqual(eur(1000n))
        expect(after.fullyReversedAt).toBeUndefined()
        expect(refusalOf(yield* saleReversal("v2", sale, eur(4067n)))).toMatchObject({
          rule: "reversal-not-above-remaining"
        })
        expect(Exit.isSuccess(yield* saleReversal("v3", sale, eur(4066n)))).toBe(true)
        expect((yield* stateOf(sale)).reversed).toEqual(eur(5066n))
        expect(yield* sends).toBe(2)
      }).pipe(
        Effect.provide(harness),
        Effect.provideService(ReversalWorkflow.AcquirerCapabilities, {
          partialReversal: true,
          captureReversal: true
        })
      )
  )

  it.effect("row 10: a tip on a sale refunded in full through the terminal is refused, nothing sent", () =>
    Effect.gen(function* () {
      const sale = yield* record("sale-23", "sale", eur(2345n))
      expect(Exit.isSuccess(yield* linkedRefund("r1", sale, eur(2345n)))).toBe(true)
      const tip = yield* Effect.flip(
        TipAdjustmentWorkflow.Adjust.execute({ requestId: "tip-1", originalGuid: sale, tip: eur(500n) })
      )
      expect(tip).toMatchObject({ _tag: "TipAdjustmentNotAllowed" })
      expect(tip.message).toContain("rule nothing-credited-back")
      expect(yield* sends).toBe(1)
    }).pipe(Effect.provide(harness))
  )

  it.effect(
    "row 8: the ledger books a terminal reversal of a captured pre-authorization as the capture's reversal: the net is 0",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const preAuth = Identifiers.Guid.make("pa-8")
        yield* TransactionHistory.openPreAuthorization(store, {
          guid: preAuth,
          amount: eur(9000n),
          authorisedAt: yield* DateTime.now,
          scheme: "Visa",
          mcc: "7011",
          serialNumber: terminal.serialNumber
        })
        const linked = { ...terminal, originalTransactionId: preAuth }
        expect(
          Exit.isSuccess(
            yield* runToEnd(
              TerminalOperations.preAuthorizationIncrease({ ...linked, amount: eur(1000n) }, polling("i1"))
            )
          )
        ).toBe(true)
        expect(
          Exit.isSuccess(
            yield* runToEnd(
              TerminalOperations.preAuthorizationCapture({ ...linked, amount: eur(11000n) }, polling("c1"))
            )
          )
        ).toBe(true)
        expect(
          Exit.isSuccess(yield* runToEnd(TerminalOperations.preAuthorizationReversal(linked, polling("v1"))))
        ).toBe(true)
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
        const { entries } = yield* Ledger.entriesOf(page.events)
        const rows = Ledger.summarize(Ledger.addEntries(Ledger.empty, entries), [])
        const euro = rows.filter((row) => row.currency === "EUR")
        expect(euro.map((row) => row.net)).toEqual([0n])
      }).pipe(Effect.provide(harness))
  )
})
