import { describe, expect, it } from "@effect/vitest"
import { BatchWorkflow, Identifiers, LifecycleEvent, Lifecycles, Money } from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { stepClock, atStart, environment, inEnvironment, typesOf } from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))
const control = ScriptedTerminalLessCloud.ScriptedControl
const terminal = {
  serialNumber: Identifiers.SerialNumber.make("T-1"),
  terminalType: Identifiers.TerminalType.make("A920"),
  batchNumber: Identifiers.BatchNumber.make("42")
}

describe("BatchWorkflow", () => {
  it.effect(
    "a summary is typed: the net amount parsed into Money, the count an integer, custom fields kept",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          yield* (yield* control).batchAnswers({
            summary: {
              batchNumber: "42",
              batchStatus: "OPEN",
              batchSummaryGuid: "bs-1",
              transactionCount: "3",
              netAmount: "-12.50",
              customFields: {
                entry: [
                  { key: "sales", value: "2" },
                  { key: "refunds", value: 1 }
                ]
              },
              customerReference: {},
              httpStatus: "200"
            }
          })
          const summary = yield* BatchWorkflow.ReadSummary.execute({
            requestId: "s-1",
            ...terminal,
            currency: "EUR"
          })
          expect(summary.netAmount).toEqual(Money.make(-1250n, "EUR"))
          expect(summary.transactionCount).toBe(3)
          expect(summary.customFields).toEqual([
            { key: "sales", value: "2" },
            { key: "refunds", value: "1" }
          ])
        })
      )
  )

  it.effect(
    "a detail is typed: each line's major-unit amount parsed into Money in the terminal's currency",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          yield* (yield* control).batchAnswers({
            detail: {
              batchNumber: "42",
              batchStatus: "CLOSED",
              closedAt: "20250301220000000",
              details: [
                {
                  transactionType: "SALE",
                  retrievalReferenceNumber: "123456789012",
                  amount: "10.50",
                  batchDetailElementGuid: "e-1"
                },
                { transactionType: "REFUND", amount: "1000", batchDetailElementGuid: "e-2" }
              ]
            }
          })
          const eur = yield* BatchWorkflow.ReadDetail.execute({
            requestId: "d-1",
            ...terminal,
            currency: "EUR"
          })
          expect(eur.lines.map((l) => l.amount)).toEqual([
            Money.make(1050n, "EUR"),
            Money.make(100000n, "EUR")
          ])
          // "10.50" is not a JPY amount (no decimals): a typed error rather than a guess.
          const jpy = yield* Effect.flip(
            BatchWorkflow.ReadDetail.execute({ requestId: "d-2", ...terminal, currency: "JPY" })
          )
          expect(jpy._tag).toBe("InvalidAmount")
          expect(jpy.message).toContain("line 1 of the batch is not a JPY amount")
        })
      )
  )

  it.effect("a detail's customerReference may be an object (the spec: string or object), sent as given", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const customerReference = { till: "7", shift: { id: 3 } }
        yield* BatchWorkflow.ReadDetail.execute({
          requestId: "d-obj",
          ...terminal,
          currency: "EUR",
          customerReference
        })
        const sent = (yield* (yield* control).calls).filter((c) => c.endpoint === "batchDetail")
        expect(sent.map((c) => (c.request as { customerReference?: unknown }).customerReference)).toEqual([
          customerReference
        ])
      })
    )
  )

  it.effect(
    "a batch closes once; the close is recorded and a summary reading CLOSED records the close too",
    () =>
      run(
        Effect.gen(function* () {
          yield* atStart
          const closed = yield* BatchWorkflow.Close.execute({ requestId: "c-1", ...terminal })
          expect(closed.reconciled).toBe(false)
          const again = yield* Effect.flip(BatchWorkflow.Close.execute({ requestId: "c-2", ...terminal }))
          expect(again._tag).toBe("OperationNotApplicable")
          expect(yield* (yield* control).count("batchClose")).toBe(1)
          yield* (yield* control).batchAnswers({
            summary: { batchNumber: "43", batchStatus: "CLOSED", netAmount: "0.00" }
          })
          yield* BatchWorkflow.ReadSummary.execute({
            requestId: "s-43",
            ...terminal,
            batchNumber: Identifiers.BatchNumber.make("43"),
            currency: "EUR"
          })
          expect(yield* typesOf(LifecycleEvent.batchStream("T-1"))).toEqual([
            "BatchCloseRequested",
            "BatchClosed",
            "OperationRefused",
            "BatchClosed"
          ])
        })
      )
  )

  it.effect("a 5xx on close is reconciled through the batch summary", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        const c = yield* control
        yield* c.next("batchClose", { _tag: "NotApplied503" })
        yield* c.batchAnswers({ summary: { batchNumber: "42", batchStatus: "CLOSED", netAmount: "1.00" } })
        const fiber = yield* Effect.fork(BatchWorkflow.Close.execute({ requestId: "c-1", ...terminal }))
        yield* stepClock("1 seconds")
        const closed = yield* Fiber.join(fiber)
        expect(closed.reconciled).toBe(true)
        expect(yield* c.count("batchClose")).toBe(1)
      })
    )
  )
})
