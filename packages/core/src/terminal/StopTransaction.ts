/**
 * The body of the `StopCurrentTransaction` workflow: one POST of stopCurrentTransaction,
 * recorded as `StopAccepted` or `StopRefused`, never retried and never reconciled (a stop
 * that comes late is worth nothing). The stopped operation ends CANCELLED through its own
 * result.
 */
import * as Effect from "effect/Effect"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as EventStore from "@tillflow/engine/EventStore"
import * as TerminalCloud from "../model/TerminalCloud.js"
import * as PaymentEvents from "./PaymentEvents.js"
import * as OperationOutcome from "./OperationOutcome.js"
import { StopAccepted, type StopCurrentTransaction } from "./ProtocolWorkflows.js"
import { Accepted, outcomeOfFailure, SendOutcome } from "./SendAttempt.js"
import { appendPaymentEvents, now } from "./internal/step.js"

/** The `stop` step, its schemas built once. */
const stopStep = DurableStep.make({ name: "stop", success: SendOutcome })

/** Sends the stop, records what became of it, and answers `StopAccepted` or a typed error. */
export const stop = (payload: typeof StopCurrentTransaction.payloadSchema.Type, executionId: string) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const store = yield* EventStore.EventStore
    const { serialNumber, terminalType } = payload
    const sent = yield* stopStep(
      Effect.gen(function* () {
        const answer = yield* Effect.either(
          cloud.sendTransaction({ operation: "stopCurrentTransaction", serialNumber, terminalType })
        )
        const at = yield* now
        const outcome: SendOutcome =
          answer._tag === "Right" ? new Accepted({ at }) : outcomeOfFailure(answer.left, at)
        yield* appendPaymentEvents(store, executionId, "stop", [
          outcome._tag === "Accepted"
            ? PaymentEvents.StopAccepted.make({ serialNumber, at })
            : PaymentEvents.StopRefused.make({
                serialNumber,
                at,
                message: outcome._tag === "Rejected" ? outcome.error.message : outcome.message
              })
        ])
        return outcome
      })
    )
    switch (sent._tag) {
      case "Accepted":
        return new StopAccepted({ serialNumber, at: sent.at })
      case "NotProcessed":
        return yield* new OperationOutcome.TerminalUnavailable({
          message: `terminal ${serialNumber} did not take the stop: ${sent.message}`,
          serialNumber,
          attempts: 1,
          lastReason: sent.reason
        })
      case "Unknown":
        return yield* new OperationOutcome.OutcomeUnresolved({
          message: `whether terminal ${serialNumber} took the stop is unknown: ${sent.message}`,
          attemptId: executionId,
          reason: "NoReference"
        })
      case "Rejected":
        return sent.error._tag === "CancelNotAllowed"
          ? yield* new OperationOutcome.StopRefused({
              message: `terminal ${serialNumber} cannot stop its operation at its present step`,
              serialNumber
            })
          : yield* new OperationOutcome.OperationRejected({
              message: `the service refused the stop: ${sent.error.message}`,
              error: sent.error
            })
    }
  })
