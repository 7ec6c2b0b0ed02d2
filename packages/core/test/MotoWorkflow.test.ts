import { describe, expect, it } from "@effect/vitest"
import {
  BatchWorkflow,
  DeferredTokenizationWorkflow,
  Identifiers,
  Ledger,
  LifecycleEvent,
  Lifecycles,
  Money,
  Moto,
  MotoWorkflow,
  ReversalWorkflow
} from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import {
  advance,
  stepClock,
  atStart,
  environment,
  eur,
  inEnvironment,
  recordTxn,
  typesOf,
  usd
} from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))
const control = ScriptedTerminalLessCloud.ScriptedControl
const token = Identifiers.CardToken.make("tok_4f2a9c")
const reference = Schema.decodeSync(Identifiers.TransactionReference)("0b7c6a52-3c1e-4f0a-8d2b-5e9a1c3f7d64")

const authorisedSale = (amount: Money.Money, requestId = "sale-1") =>
  Effect.gen(function* () {
    const outcome = yield* MotoWorkflow.Sale.execute({ requestId, cardToken: token, amount })
    expect(outcome.status).toBe("AUTHORISED")
    return Identifiers.Guid.make(outcome.guid ?? "")
  })

describe("MotoWorkflow", () => {
  it.effect("a MOTO sale on a card token is recorded before it is sent and opens the sale's history", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const outcome = yield* MotoWorkflow.Sale.execute({
          requestId: "sale-1",
          cardToken: token,
          amount: eur(1050n),
          transactionReference: reference
        })
        expect(outcome).toMatchObject({
          status: "AUTHORISED",
          transactionReference: reference,
          amount: eur(1050n)
        })
        expect(yield* typesOf(LifecycleEvent.motoSaleStream(reference))).toEqual([
          "MotoSaleRequested",
          "MotoSaleApproved"
        ])
        expect(yield* typesOf(LifecycleEvent.transactionStream(outcome.guid ?? ""))).toEqual([
          "TransactionRecorded"
        ])
      })
    )
  )

  it.effect("the /moto/sale amount is written in one form only: major-unit decimals derived from Money", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        yield* authorisedSale(eur(1050n))
        yield* authorisedSale(Money.make(1050n, "JPY"), "sale-jpy")
        yield* authorisedSale(Money.make(1050n, "BHD"), "sale-bhd")
        const sent = (yield* (yield* control).calls).filter((c) => c.endpoint === "motoSale")
        const wire = sent.map((c) => Schema.encodeUnknownSync(Moto.MotoSaleRequest)(c.request))
        expect(Moto.AMOUNT_FORM).toBe("major")
        expect(wire.map((w) => [w.amount, w.currency])).toEqual([
          ["10.50", "EUR"],
          ["1050", "JPY"],
          ["1.050", "BHD"]
        ])
        // The minor-unit integer form cannot be given by mistake: "1050" EUR is not read as 1050 minor units.
        const misread = Schema.decodeUnknownSync(Moto.MotoSaleRequest)({
          cardToken: token,
          amount: "1050",
          currency: "EUR"
        })
        expect(misread.amount).toEqual(eur(105000n))
      })
    )
  )

  it.effect(
    "an account that requires the security code answers 3107: a typed SecurityCodeRequired, recorded, no charge",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          yield* (yield* control).requireSecurityCode(true)
          const error = yield* Effect.flip(
            MotoWorkflow.Sale.execute({
              requestId: "sale-1",
              cardToken: token,
              amount: eur(1050n),
              transactionReference: reference
            })
          )
          expect(error._tag).toBe("SecurityCodeRequired")
          expect(yield* typesOf(LifecycleEvent.motoSaleStream(reference))).toEqual([
            "MotoSaleRequested",
            "OperationFailed"
          ])
        })
      )
  )

  it.effect("a declined MOTO sale is booked on the terminal it was sent on", () =>
    run(
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        yield* atStart
        const at = yield* DateTime.now
        yield* store.append(
          LifecycleEvent.motoSaleStream(reference),
          EventStore.AnyVersion,
          yield* LifecycleEvent.registry.encodeAll([
            LifecycleEvent.MotoSaleDeclined.make({
              requestId: "sale-1",
              at,
              finStatus: "DECLINED",
              reason: "insufficient funds",
              reconciled: false,
              serialNumber: "V-1"
            })
          ])
        )
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100 })
        const { entries } = yield* Ledger.entriesOf(page.events)
        expect(entries.map((e) => [e.kind, e.terminal])).toEqual([["decline", "V-1"]])
      })
    )
  )

  it.effect("a 5xx on a MOTO sale is reconciled through the status endpoint by its reference", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const c = yield* control
        yield* c.next("motoSale", { _tag: "AppliedThen503" })
        const outcome = yield* MotoWorkflow.Sale.execute({
          requestId: "sale-1",
          cardToken: token,
          amount: eur(1050n),
          transactionReference: reference
        })
        expect(outcome).toMatchObject({ status: "AUTHORISED", reconciled: true })
        expect(outcome.guid).toBeDefined()
        expect(yield* c.count("motoSale")).toBe(1)
      })
    )
  )

  it.effect(
    "a 5xx on a MOTO sale the gateway never saw is NotCharged once the reference is unknown for 90 s",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const c = yield* control
          yield* c.next("motoSale", { _tag: "NotApplied503" })
          const fiber = yield* Effect.fork(
            Effect.flip(
              MotoWorkflow.Sale.execute({
                requestId: "sale-1",
                cardToken: token,
                amount: eur(1050n),
                transactionReference: reference
              })
            )
          )
          yield* stepClock("95 seconds")
          const error = yield* Fiber.join(fiber)
          expect(error._tag).toBe("NotCharged")
          expect(yield* c.count("motoSale")).toBe(1)
        })
      )
  )

  it.effect("a MOTO sale's billing (address verification) reaches /moto/sale as given", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        yield* MotoWorkflow.Sale.execute({
          requestId: "sale-billing",
          cardToken: token,
          amount: eur(1050n),
          billing: { zipCode: "28013", address: "Calle Mayor 1" }
        })
        const sent = (yield* (yield* control).calls).filter((c) => c.endpoint === "motoSale")
        const wire = sent.map((c) => Schema.encodeUnknownSync(Moto.MotoSaleRequest)(c.request))
        expect(wire.map((w) => w.billing)).toEqual([{ zipCode: "28013", address: "Calle Mayor 1" }])
      })
    )
  )

  it.effect("a MOTO refund's optional transactionReference reaches /moto/refund as given", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const sale = yield* authorisedSale(eur(5000n))
        yield* MotoWorkflow.Refund.execute({
          requestId: "ref-with-reference",
          originalGuid: sale,
          amount: eur(1000n),
          transactionReference: reference
        })
        const sent = (yield* (yield* control).calls).filter((c) => c.endpoint === "motoRefund")
        const wire = sent.map((c) => Schema.encodeUnknownSync(Moto.MotoRefundRequest)(c.request))
        expect(wire.map((w) => w.transactionReference)).toEqual([reference])
      })
    )
  )

  it.effect("refunds add up to at most the sale, in the sale's currency", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const sale = yield* authorisedSale(eur(5000n))
        const first = yield* MotoWorkflow.Refund.execute({
          requestId: "ref-1",
          originalGuid: sale,
          amount: eur(3000n)
        })
        expect(first.refundedSoFar).toEqual(eur(3000n))
        const over = yield* Effect.flip(
          MotoWorkflow.Refund.execute({ requestId: "ref-2", originalGuid: sale, amount: eur(2001n) })
        )
        expect(over._tag).toBe("RefundExceedsSale")
        expect(over.message).toContain("50.01 EUR, above the sale's 50.00 EUR")
        const currency = yield* Effect.flip(
          MotoWorkflow.Refund.execute({ requestId: "ref-3", originalGuid: sale, amount: usd(100n) })
        )
        expect(currency._tag).toBe("CurrencyNotOfTransaction")
        const rest = yield* MotoWorkflow.Refund.execute({
          requestId: "ref-4",
          originalGuid: sale,
          amount: eur(2000n)
        })
        expect(rest.refundedSoFar).toEqual(eur(5000n))
        expect(yield* (yield* control).count("motoRefund")).toBe(2)
        // The refund has its own history: it can be tokenized.
        const token = yield* DeferredTokenizationWorkflow.Tokenize.execute({
          requestId: "tok-1",
          originalGuid: Identifiers.Guid.make(rest.refundGuid ?? "")
        })
        expect(token.cardToken).toMatch(/^tok_/)
      })
    )
  )

  it.effect(
    "row 1 of issue 28: a MOTO sale refunded in full cannot be reversed as well, through either reversal endpoint, nothing sent",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const sale = yield* authorisedSale(eur(5101n))
          yield* MotoWorkflow.Refund.execute({ requestId: "ref-1", originalGuid: sale, amount: eur(5101n) })
          const moto = yield* Effect.flip(
            MotoWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: sale })
          )
          expect(moto).toMatchObject({ _tag: "ReversalNotAllowed", rule: "credited-not-above-charged" })
          const plain = yield* Effect.flip(
            ReversalWorkflow.Reverse.execute({ requestId: "rev-2", originalGuid: sale })
          )
          expect(plain).toMatchObject({ _tag: "ReversalNotAllowed", rule: "credited-not-above-charged" })
          expect(yield* (yield* control).count("motoReversal")).toBe(0)
          expect(yield* (yield* control).count("reversal")).toBe(0)
        })
      )
  )

  it.effect("a refund applies to a MOTO sale only", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const sale = Identifiers.Guid.make("card-present-sale")
        yield* recordTxn({ guid: sale, kind: "sale", amount: eur(5000n) })
        const error = yield* Effect.flip(
          MotoWorkflow.Refund.execute({ requestId: "ref-1", originalGuid: sale, amount: eur(100n) })
        )
        expect(error._tag).toBe("OperationNotApplicable")
      })
    )
  )

  it.effect(
    "a MOTO reversal within 24 h of the recorded sale time is sent; after it, ReversalWindowClosed without a call",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const early = yield* authorisedSale(eur(5000n), "sale-early")
          const late = yield* authorisedSale(eur(5000n), "sale-late")
          yield* advance("23 hours")
          yield* advance("59 minutes")
          const done = yield* MotoWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: early })
          expect(done.amount).toEqual(eur(5000n))
          yield* advance("1 minutes")
          yield* advance("1 seconds")
          const error = yield* Effect.flip(
            MotoWorkflow.Reverse.execute({ requestId: "rev-2", originalGuid: late })
          )
          expect(error._tag).toBe("ReversalWindowClosed")
          expect(error.message).toContain("closed at 2025-03-02T10:00:00.000Z")
          expect(yield* (yield* control).count("motoReversal")).toBe(1)
          const again = yield* Effect.flip(
            MotoWorkflow.Refund.execute({ requestId: "ref-1", originalGuid: early, amount: eur(100n) })
          )
          expect(again._tag).toBe("RefundExceedsSale")
        })
      )
  )

  it.effect("a request whose record would hold a card number is refused by the store: nothing is sent", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const error = yield* Effect.flip(
          MotoWorkflow.Sale.execute({
            requestId: "sale-1",
            cardToken: token,
            amount: eur(1050n),
            transactionReference: reference,
            customerReference: "card 4111 1111 1111 1111"
          })
        )
        expect(error._tag).toBe("EventStoreError")
        expect(error.message).toContain("SensitiveDataRefused")
        expect(yield* (yield* control).count("motoSale")).toBe(0)
        expect(yield* typesOf(LifecycleEvent.motoSaleStream(reference))).toEqual([])
      })
    )
  )

  it.effect(
    "a terminal-less MOTO sale is recorded with its (virtual) terminal: its reversal is allowed before that terminal's batch closes and refused after, on /moto/reversal and /reversal alike; the ledger puts it on its terminal",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const virtual = Identifiers.SerialNumber.make("V-1")
          const sale = (requestId: string) =>
            Effect.map(
              MotoWorkflow.Sale.execute({
                requestId,
                cardToken: token,
                amount: eur(1050n),
                serialNumber: virtual
              }),
              (outcome) => Identifiers.Guid.make(outcome.guid ?? "")
            )
          const before = yield* sale("sale-1")
          const after = yield* sale("sale-2")
          const reversed = yield* MotoWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: before })
          expect(reversed.target).toBe("transaction")
          yield* BatchWorkflow.Close.execute({
            requestId: "close-1",
            serialNumber: virtual,
            terminalType: Identifiers.TerminalType.make("VIRTUAL"),
            batchNumber: Identifiers.BatchNumber.make("1")
          })
          const moto = yield* Effect.flip(
            MotoWorkflow.Reverse.execute({ requestId: "rev-2", originalGuid: after })
          )
          expect(moto).toMatchObject({ _tag: "ReversalNotAllowed", rule: "moto-reversal-before-batch" })
          const plain = yield* Effect.flip(
            ReversalWorkflow.Reverse.execute({ requestId: "rev-3", originalGuid: after })
          )
          expect(plain).toMatchObject({ _tag: "ReversalNotAllowed", rule: "moto-reversal-before-batch" })
          expect(yield* (yield* control).count("motoReversal")).toBe(1)
          expect(yield* (yield* control).count("reversal")).toBe(0)

          const store = yield* EventStore.EventStore
          const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
          const { entries } = yield* Ledger.entriesOf(page.events)
          const sales = entries.filter((e) => e.operation === "moto/sale")
          expect(sales.map((e) => e.terminal)).toEqual(["V-1", "V-1"])
        })
      )
  )
})
