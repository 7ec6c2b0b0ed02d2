/**
 * A reversal, refund, capture or tip of a transaction the log shows declined (or cancelled,
 * or failed) on its terminal: refused at once, the refusal naming why (nothing was charged,
 * so there is nothing to act on), not after waiting for a history that never comes.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  Money,
  PaymentEvents,
  TerminalOperations,
  TerminalOutcomeRecorder,
  TipAdjustmentWorkflow,
  type OperationOutcome
} from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Cloud, layer, runToEnd } from "./support/protocol.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const eur = (minor: bigint) => Money.make(minor, "EUR")
const rules = { mcc: Option.some("7011") }
const declinedGuid = Identifiers.Guid.make("g-declined")

const facts: OperationOutcome.Facts = {
  operation: "sale",
  serialNumber: terminal.serialNumber,
  terminalType: terminal.terminalType,
  attempt: 1,
  attemptId: "0c2b2f31-0a1d-4baf-81fc-84328263f3ef",
  finStatus: "DECLINED",
  source: "callback",
  totalAmount: eur(2500n),
  efttransactionID: declinedGuid
}

const appendDeclined = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const event = PaymentEvents.PaymentDeclined.make({ facts, at: 0 })
  yield* store.append("payment-declined-1", EventStore.AnyVersion, [
    yield* PaymentEvents.events.encode(event)
  ])
})

const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))

describe("an original the log shows declined", () => {
  it.effect("catchUpFor answers at once: no wait for a history that will never open", () =>
    Effect.gen(function* () {
      yield* appendDeclined
      const fiber = yield* Effect.fork(TerminalOutcomeRecorder.catchUpFor({ mcc: rules.mcc }, declinedGuid))
      // The test clock does not move: a wait would never end.
      for (let i = 0; i < 20; i++) yield* settle
      expect(Option.isSome(yield* Fiber.poll(fiber))).toBe(true)
    }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect("a linked saleReversal is refused, nothing sent, the refusal saying the sale was declined", () =>
    Effect.gen(function* () {
      yield* appendDeclined
      const exit = yield* runToEnd(
        TerminalOperations.saleReversal(
          { ...terminal, originalTransactionId: declinedGuid, amount: eur(2500n) },
          { idempotencyKey: "rev-1", delivery: "polling" }
        )
      )
      const refusal = Exit.isFailure(exit)
        ? Option.getOrUndefined(Cause.failureOption(exit.cause))
        : undefined
      expect(refusal).toMatchObject({ _tag: "OperationRefused", rule: "original-not-charged" })
      expect((refusal as { readonly message: string }).message).toContain("DECLINED")
      expect((yield* Cloud).recorded.sends).toHaveLength(0)
    }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect("a terminal-less tip is refused with TransactionNotRecorded naming the decline", () =>
    Effect.gen(function* () {
      yield* appendDeclined
      yield* TerminalOutcomeRecorder.catchUp({ mcc: rules.mcc })
      const refusal = yield* Effect.flip(
        TipAdjustmentWorkflow.Adjust.execute({
          requestId: "tip-1",
          originalGuid: declinedGuid,
          tip: eur(300n)
        })
      )
      expect(refusal).toMatchObject({ _tag: "TransactionNotRecorded", rule: "original-not-charged" })
      expect(refusal.message).toContain("declined")
      expect(refusal.message).toContain("nothing to")
    }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )
})
