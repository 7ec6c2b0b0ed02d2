import { describe, expect, it } from "@effect/vitest"
import {
  BatchWorkflow,
  Identifiers,
  LifecycleEvent,
  Lifecycles,
  RemoteError,
  TipAdjustmentWorkflow,
  TransactionHistory
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import {
  advance,
  stepClock,
  atStart,
  environment,
  eur,
  eventsOf,
  inEnvironment,
  recordTxn,
  usd
} from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))
const control = ScriptedTerminalLessCloud.ScriptedControl
const { Adjust } = TipAdjustmentWorkflow
const sale = Identifiers.Guid.make("sale-1")

describe("TipAdjustmentWorkflow", () => {
  it.effect(
    "the latest adjustment replaces the earlier ones; the history keeps every one and says which stands",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          yield* recordTxn({ guid: sale, kind: "sale", amount: eur(4000n) })
          const first = yield* Adjust.execute({ requestId: "tip-1", originalGuid: sale, tip: eur(300n) })
          expect(first.replaces).toBeUndefined()
          const second = yield* Adjust.execute({ requestId: "tip-2", originalGuid: sale, tip: eur(525n) })
          expect(second.replaces).toEqual(eur(300n))
          const state = Option.getOrThrow(
            TransactionHistory.fold(yield* eventsOf(LifecycleEvent.transactionStream(sale)))
          )
          expect(
            TipAdjustmentWorkflow.tipAdjustments(state).map((t) => [
              t.requestId,
              t.tip.toString(),
              t.standing
            ])
          ).toEqual([
            ["tip-1", "3.00 EUR", false],
            ["tip-2", "5.25 EUR", true]
          ])
          const bodies = (yield* (yield* control).calls).map((c) => c.request)
          expect(bodies).toEqual([
            { guid: sale, body: expect.objectContaining({ amount: "3.00" }) },
            { guid: sale, body: expect.objectContaining({ amount: "5.25" }) }
          ])
          expect((yield* (yield* control).txn(sale))?.tip).toBe(525n)
        })
      )
  )

  it.effect("a tip adjusts a sale only: a refund or a pre-authorization is refused before sending", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const refund = Identifiers.Guid.make("refund-1")
        yield* recordTxn({ guid: refund, kind: "refund", amount: eur(4000n) })
        const error = yield* Effect.flip(
          Adjust.execute({ requestId: "tip-1", originalGuid: refund, tip: eur(300n) })
        )
        expect(error._tag).toBe("TipAdjustmentNotAllowed")
        expect(error.message).toContain("rule sales-only")
        const capture = Identifiers.Guid.make("capture-1")
        yield* recordTxn({ guid: capture, kind: "preAuthorizationCapture", amount: eur(4000n) })
        const captureError = yield* Effect.flip(
          Adjust.execute({ requestId: "tip-2", originalGuid: capture, tip: eur(300n) })
        )
        expect(captureError._tag).toBe("TipAdjustmentNotAllowed")
        expect(yield* (yield* control).count("tipAdjustment")).toBe(0)
      })
    )
  )

  it.effect("after the terminal's batch closes, a tip adjustment is refused naming the batch", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        yield* recordTxn({
          guid: sale,
          kind: "sale",
          amount: eur(4000n),
          serialNumber: "T-9",
          batchNumber: "12"
        })
        yield* Adjust.execute({ requestId: "tip-1", originalGuid: sale, tip: eur(300n) })
        yield* advance("8 hours")
        yield* BatchWorkflow.Close.execute({
          requestId: "close-12",
          serialNumber: Identifiers.SerialNumber.make("T-9"),
          terminalType: Identifiers.TerminalType.make("A920"),
          batchNumber: Identifiers.BatchNumber.make("12")
        })
        const error = yield* Effect.flip(
          Adjust.execute({ requestId: "tip-2", originalGuid: sale, tip: eur(500n) })
        )
        expect(error._tag).toBe("TipAdjustmentNotAllowed")
        expect(error.message).toContain("rule before-batch-close")
        expect(error.message).toContain("batch 12 of terminal T-9")
        expect(yield* (yield* control).count("tipAdjustment")).toBe(1)
      })
    )
  )

  it.effect("a tip in another currency than the sale's, or negative, is refused", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        yield* recordTxn({ guid: sale, kind: "sale", amount: eur(4000n) })
        const currency = yield* Effect.flip(
          Adjust.execute({ requestId: "tip-1", originalGuid: sale, tip: usd(300n) })
        )
        expect(currency._tag).toBe("CurrencyNotOfTransaction")
        // A negative tip is no payload of the workflow: refused before it starts, nothing sent.
        const negative = yield* Effect.exit(
          Adjust.execute({ requestId: "tip-2", originalGuid: sale, tip: eur(-1n) })
        )
        expect(Exit.isFailure(negative) && Cause.pretty(negative.cause)).toContain(
          "the amount must not be negative"
        )
        expect(yield* (yield* control).count("tipAdjustment")).toBe(0)
      })
    )
  )

  it.effect("a 5xx on a tip adjustment is resent (the latest replaces, so resending is harmless)", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        yield* recordTxn({ guid: sale, kind: "sale", amount: eur(4000n) })
        const c = yield* control
        yield* c.next("tipAdjustment", { _tag: "AppliedThen503" })
        const fiber = yield* Effect.fork(
          Adjust.execute({ requestId: "tip-1", originalGuid: sale, tip: eur(300n) })
        )
        yield* stepClock("2 seconds")
        const set = yield* Fiber.join(fiber)
        expect(set.tip).toEqual(eur(300n))
        expect(yield* c.count("tipAdjustment")).toBe(2)
      })
    )
  )

  it.effect(
    "the gateway's 400 (for instance an already batched sale) is a typed rejection and is recorded",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          yield* recordTxn({ guid: sale, kind: "sale", amount: eur(4000n) })
          yield* (yield* control).next("tipAdjustment", {
            _tag: "Fail",
            error: RemoteError.fromResponse(
              400,
              JSON.stringify({
                error: { statusCode: 400, name: "BadRequestError", message: "already batched" }
              })
            )
          })
          const error = yield* Effect.flip(
            Adjust.execute({ requestId: "tip-1", originalGuid: sale, tip: eur(300n) })
          )
          expect(error._tag).toBe("GatewayRejected")
          const last = (yield* eventsOf(LifecycleEvent.transactionStream(sale))).at(-1)
          expect(last).toMatchObject({
            type: "OperationFailed",
            data: { operation: "tipAdjustment", error: "GatewayRejected" }
          })
        })
      )
  )
})
