import { describe, expect, it } from "@effect/vitest"
import {
  BatchWorkflow,
  Identifiers,
  LifecycleEvent,
  Lifecycles,
  MotoWorkflow,
  PreAuthorizationWorkflow,
  ReversalWorkflow,
  TransactionHistory
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import {
  advance,
  atStart,
  environment,
  eur,
  eventsOf,
  inEnvironment,
  openPreAuth,
  recordTxn,
  usd
} from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))
const withCapabilities = (capabilities: { partialReversal: boolean; captureReversal: boolean }) =>
  inEnvironment(
    environment(
      Lifecycles.layer.pipe(Layer.provide(Layer.succeed(ReversalWorkflow.AcquirerCapabilities, capabilities)))
    )
  )
const control = ScriptedTerminalLessCloud.ScriptedControl
const { Reverse } = ReversalWorkflow
const stateOf = (guid: string) =>
  Effect.map(eventsOf(LifecycleEvent.transactionStream(guid)), (events) =>
    Option.getOrThrow(TransactionHistory.fold(events))
  )

describe("ReversalWorkflow", () => {
  it.effect("reversing an open pre-authorization releases the whole hold; a second reversal is refused", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const guid = Identifiers.Guid.make("pa-1")
        yield* openPreAuth({ guid, amount: eur(10000n), scheme: "Visa", mcc: "7011" })
        const done = yield* Reverse.execute({ requestId: "rev-1", originalGuid: guid })
        expect(done.target).toBe("hold")
        expect(done.amount).toEqual(eur(10000n))
        const state = yield* stateOf(guid)
        expect(state.preAuthorization?.status).toBe("RELEASED")
        expect(state.preAuthorization?.hold).toEqual(eur(0n))
        const request = (yield* (yield* control).calls).find((c) => c.endpoint === "reversal")?.request
        expect(request).toEqual({ originalGuid: guid, messageReasonCode: "CUSTOMER_CANCELLATION" })
        const again = yield* Effect.flip(Reverse.execute({ requestId: "rev-2", originalGuid: guid }))
        expect(again._tag).toBe("ReversalNotAllowed")
        const capture = yield* Effect.flip(
          PreAuthorizationWorkflow.Capture.execute({
            requestId: "cap-1",
            originalGuid: guid,
            amount: eur(100n)
          })
        )
        expect(capture._tag).toBe("PreAuthorizationNotOpen")
        expect(yield* (yield* control).count("reversal")).toBe(1)
      })
    )
  )

  it.effect(
    "reversing a captured pre-authorization before settlement returns it to AUTHORISED; it is not captured again",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const guid = Identifiers.Guid.make("pa-2")
          yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
          yield* PreAuthorizationWorkflow.Capture.execute({
            requestId: "cap-1",
            originalGuid: guid,
            amount: eur(9000n)
          })
          const done = yield* Reverse.execute({ requestId: "rev-1", originalGuid: guid })
          expect(done.target).toBe("capture")
          expect(done.amount).toEqual(eur(9000n))
          const state = yield* stateOf(guid)
          expect(state.preAuthorization?.status).toBe("AUTHORISED")
          expect(state.preAuthorization?.captureReversedAt).toBeDefined()
          const recapture = yield* Effect.flip(
            PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-2",
              originalGuid: guid,
              amount: eur(9000n)
            })
          )
          expect(recapture._tag).toBe("CaptureAlreadyDone")
          expect(recapture.message).toContain("that capture was reversed")
        })
      )
  )

  it.effect(
    "a capture cannot be reversed once its batch has closed (settled), nor where the acquirer does not support it",
    () =>
      Effect.gen(function* () {
        yield* run(
          Effect.gen(function* () {
            yield* atStart
            const guid = Identifiers.Guid.make("pa-3")
            yield* openPreAuth({
              guid,
              amount: eur(10000n),
              scheme: "MasterCard",
              mcc: "7011",
              serialNumber: "T-1"
            })
            yield* PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-1",
              originalGuid: guid,
              amount: eur(9000n)
            })
            yield* advance("2 hours")
            yield* BatchWorkflow.Close.execute({
              requestId: "close-1",
              serialNumber: Identifiers.SerialNumber.make("T-1"),
              terminalType: Identifiers.TerminalType.make("A920"),
              batchNumber: Identifiers.BatchNumber.make("7")
            })
            const error = yield* Effect.flip(Reverse.execute({ requestId: "rev-1", originalGuid: guid }))
            expect(error._tag).toBe("ReversalNotAllowed")
            expect(error.message).toContain("settled with batch 7")
            expect(yield* (yield* control).count("reversal")).toBe(0)
          })
        )
        yield* withCapabilities({ partialReversal: false, captureReversal: false })(
          Effect.gen(function* () {
            yield* atStart
            const guid = Identifiers.Guid.make("pa-4")
            yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
            yield* PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-1",
              originalGuid: guid,
              amount: eur(9000n)
            })
            const error = yield* Effect.flip(Reverse.execute({ requestId: "rev-1", originalGuid: guid }))
            expect(error.message).toContain("does not support reversing a capture")
          })
        )
      })
  )

  it.effect("a pre-authorization is reversed whole: a partial amount is refused (decrease instead)", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const guid = Identifiers.Guid.make("pa-5")
        yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
        const error = yield* Effect.flip(
          Reverse.execute({ requestId: "rev-1", originalGuid: guid, amount: eur(100n) })
        )
        expect(error._tag).toBe("ReversalNotAllowed")
        expect(error.message).toContain("decrease the hold")
      })
    )
  )

  it.effect(
    "a sale is reversed in full by default; a partial reversal needs an acquirer that supports it",
    () =>
      Effect.gen(function* () {
        yield* run(
          Effect.gen(function* () {
            yield* atStart
            const sale = Identifiers.Guid.make("sale-1")
            yield* recordTxn({ guid: sale, kind: "sale", amount: eur(5000n) })
            const partial = yield* Effect.flip(
              Reverse.execute({ requestId: "rev-1", originalGuid: sale, amount: eur(1000n) })
            )
            expect(partial._tag).toBe("ReversalNotAllowed")
            expect(partial.message).toContain("does not support partial reversals")
            const full = yield* Reverse.execute({ requestId: "rev-2", originalGuid: sale })
            expect(full.amount).toEqual(eur(5000n))
            expect(full.target).toBe("transaction")
          })
        )
        yield* withCapabilities({ partialReversal: true, captureReversal: true })(
          Effect.gen(function* () {
            yield* atStart
            const sale = Identifiers.Guid.make("sale-2")
            yield* recordTxn({ guid: sale, kind: "sale", amount: eur(5000n) })
            const part = yield* Reverse.execute({
              requestId: "rev-1",
              originalGuid: sale,
              amount: eur(1000n),
              messageReasonCode: "DUPLICATE"
            })
            expect(part.amount).toEqual(eur(1000n))
            const request = (yield* (yield* control).calls).find((c) => c.endpoint === "reversal")?.request
            expect(request).toEqual({
              originalGuid: sale,
              amount: eur(1000n),
              messageReasonCode: "DUPLICATE"
            })
            const over = yield* Effect.flip(
              Reverse.execute({ requestId: "rev-2", originalGuid: sale, amount: eur(4001n) })
            )
            expect(over.message).toContain("above the 40.00 EUR left")
            const currency = yield* Effect.flip(
              Reverse.execute({ requestId: "rev-3", originalGuid: sale, amount: usd(100n) })
            )
            expect(currency._tag).toBe("CurrencyNotOfTransaction")
            const rest = yield* Reverse.execute({ requestId: "rev-4", originalGuid: sale })
            expect(rest.amount).toEqual(eur(4000n))
          })
        )
      })
  )

  it.effect(
    "each merchant's acquirer: the execution's merchant decides with its registered capabilities, the others with the deployment's",
    () =>
      Effect.gen(function* () {
        const asked: Array<string> = []
        const registered = (merchant: string) =>
          Effect.sync(() => {
            asked.push(merchant)
            return merchant === "split-bar"
              ? Option.some({ partialReversal: true, captureReversal: undefined })
              : Option.none()
          })
        yield* inEnvironment(
          environment(
            Lifecycles.layer.pipe(
              Layer.provide(Layer.succeed(ReversalWorkflow.MerchantAcquirers, { of: registered }))
            )
          )
        )(
          Effect.gen(function* () {
            yield* atStart
            const split = Identifiers.Guid.make("sale-split")
            const whole = Identifiers.Guid.make("sale-whole")
            yield* recordTxn({ guid: split, kind: "sale", amount: eur(5000n) })
            yield* recordTxn({ guid: whole, kind: "sale", amount: eur(5000n) })
            const part = yield* Reverse.execute({
              requestId: "rev-1",
              originalGuid: split,
              amount: eur(1000n)
            }).pipe(Tenant.within("split-bar"))
            expect(part.amount).toEqual(eur(1000n))
            const refused = yield* Effect.flip(
              Reverse.execute({ requestId: "rev-1", originalGuid: whole, amount: eur(1000n) }).pipe(
                Tenant.within("whole-inn")
              )
            )
            expect(refused).toMatchObject({ _tag: "ReversalNotAllowed", rule: "acquirer-partial-reversal" })
            // The deployment's own merchant (no tenant) keeps the deployment's: not asked.
            const own = yield* Effect.flip(
              Reverse.execute({ requestId: "rev-2", originalGuid: whole, amount: eur(1000n) })
            )
            expect(own).toMatchObject({ _tag: "ReversalNotAllowed", rule: "acquirer-partial-reversal" })
            expect(asked).toEqual(["split-bar", "whole-inn"])
          })
        )
      })
  )

  it.effect(
    "after a partial refund, a reversal of all that is left is sent with its amount: a whole reversal would credit the refunded part again (found by the model-based test)",
    () =>
      Effect.gen(function* () {
        // The gateway reverses a whole transaction by what it approved less what was
        // reversed, not less what was refunded: sent without an amount, a reversal of the
        // 16.18 left of a 32.36 sale refunded 16.18 reverses 32.36 there.
        yield* withCapabilities({ partialReversal: true, captureReversal: true })(
          Effect.gen(function* () {
            yield* atStart
            const sale = Identifiers.Guid.make("moto-1")
            yield* recordTxn({ guid: sale, kind: "moToSale", amount: eur(3236n) })
            yield* MotoWorkflow.Refund.execute({ requestId: "ref-1", originalGuid: sale, amount: eur(1618n) })
            const rest = yield* Reverse.execute({
              requestId: "rev-1",
              originalGuid: sale,
              amount: eur(1618n)
            })
            expect(rest.amount).toEqual(eur(1618n))
            const request = (yield* (yield* control).calls).find((c) => c.endpoint === "reversal")?.request
            expect(request).toMatchObject({ originalGuid: sale, amount: eur(1618n) })
            // Without an amount it would be a whole reversal: refused, naming what is left,
            // and nothing sent (sent whole, the gateway would reverse the refunded part too).
            const other = Identifiers.Guid.make("moto-3")
            yield* recordTxn({ guid: other, kind: "moToSale", amount: eur(3236n) })
            yield* MotoWorkflow.Refund.execute({
              requestId: "ref-3",
              originalGuid: other,
              amount: eur(1618n)
            })
            const sentBefore = yield* (yield* control).count("reversal")
            const whole = yield* Effect.flip(Reverse.execute({ requestId: "rev-3", originalGuid: other }))
            expect(whole).toMatchObject({
              _tag: "ReversalNotAllowed",
              message: expect.stringContaining("16.18")
            })
            expect(yield* (yield* control).count("reversal")).toBe(sentBefore)
          })
        )
        // Where the acquirer takes no partial reversal, it cannot be reversed: refund it instead.
        yield* run(
          Effect.gen(function* () {
            yield* atStart
            const sale = Identifiers.Guid.make("moto-2")
            yield* recordTxn({ guid: sale, kind: "moToSale", amount: eur(3236n) })
            yield* MotoWorkflow.Refund.execute({ requestId: "ref-1", originalGuid: sale, amount: eur(1618n) })
            const refused = yield* Effect.flip(
              Reverse.execute({ requestId: "rev-1", originalGuid: sale, amount: eur(1618n) })
            )
            expect(refused).toMatchObject({ _tag: "ReversalNotAllowed", rule: "acquirer-partial-reversal" })
            const whole = yield* Effect.flip(Reverse.execute({ requestId: "rev-2", originalGuid: sale }))
            expect(whole._tag).toBe("ReversalNotAllowed")
            expect(yield* (yield* control).count("reversal")).toBe(0)
          })
        )
      })
  )

  it.effect("a MOTO sale reversed through /reversal keeps the 24-hour window", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const moto = Identifiers.Guid.make("moto-1")
        yield* recordTxn({ guid: moto, kind: "moToSale", amount: eur(5000n) })
        yield* advance("24 hours")
        yield* advance("1 seconds")
        const error = yield* Effect.flip(Reverse.execute({ requestId: "rev-1", originalGuid: moto }))
        expect(error._tag).toBe("ReversalWindowClosed")
        expect(yield* (yield* control).count("reversal")).toBe(0)
      })
    )
  )
})
