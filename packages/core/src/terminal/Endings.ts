/**
 * How a `TerminalOperation` execution ends without an outcome: the terminal was not
 * available before the deadline, the operation was proved not charged and no new attempt
 * follows, or its outcome stays unresolved. Each ending is recorded as its event by an
 * activity of its own (once, however often the workflow replays), then raised as the typed
 * error of `OperationOutcome`.
 */
import * as Effect from "effect/Effect"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as PaymentEvents from "./PaymentEvents.js"
import * as OperationOutcome from "./OperationOutcome.js"
import type { Execution, Plan } from "./ProtocolWorkflows.js"
import type { AttemptInfo } from "./SendAttempt.js"
import { now } from "./internal/step.js"

/** The ending steps (`end/…`, `attempt-N/end-…`), their schemas built once. */
const endingStep = DurableStep.family()

/** `end/terminal-unavailable`: busy, offline or queued until the caller's deadline. */
export const terminalUnavailable = (
  { payload, emit }: Execution,
  plan: Plan,
  attempts: number,
  lastReason: string
) =>
  Effect.gen(function* () {
    const serialNumber = payload.request.serialNumber
    yield* endingStep("end/terminal-unavailable")(
      Effect.flatMap(now, (at) =>
        emit("end/terminal-unavailable", [
          PaymentEvents.TerminalUnavailable.make({ attempts, lastReason, deadlineAt: plan.deadlineAt, at })
        ])
      )
    )
    return yield* new OperationOutcome.TerminalUnavailable({
      message: `terminal ${serialNumber} was not available before the deadline (${lastReason})`,
      serialNumber,
      attempts,
      lastReason
    })
  })

/** `attempt-N/end-not-charged`: proved not charged, and no new attempt follows. */
export const notCharged = ({ payload, emit }: Execution, attempt: AttemptInfo) =>
  Effect.gen(function* () {
    const n = attempt.attempt
    const request = payload.request
    yield* endingStep(`attempt-${n}/end-not-charged`)(
      Effect.flatMap(now, (at) =>
        emit(`attempt-${n}/end-not-charged`, [
          PaymentEvents.PaymentNotCharged.make({
            attempt: n,
            attemptId: attempt.attemptId,
            at,
            attempts: n,
            ...(attempt.transactionReference === undefined
              ? {}
              : { transactionReference: attempt.transactionReference })
          })
        ])
      )
    )
    return yield* new OperationOutcome.NotCharged({
      message: `${request.operation} on terminal ${request.serialNumber} never reached the gateway: nothing was charged`,
      transactionReference: attempt.transactionReference ?? payload.originalTransactionReference ?? "",
      attempts: n
    })
  })

/** `attempt-N/end-unresolved`: the outcome cannot be known here; a person looks at the terminal. */
export const unresolved = (
  { emit }: Execution,
  attempt: AttemptInfo,
  message: string,
  reason: OperationOutcome.UnresolvedReason
) =>
  Effect.gen(function* () {
    const n = attempt.attempt
    yield* endingStep(`attempt-${n}/end-unresolved`)(
      Effect.flatMap(now, (at) =>
        emit(`attempt-${n}/end-unresolved`, [
          PaymentEvents.OutcomeUnresolved.make({
            attempt: n,
            attemptId: attempt.attemptId,
            at,
            message,
            reason
          })
        ])
      )
    )
    return yield* new OperationOutcome.OutcomeUnresolved({ message, attemptId: attempt.attemptId, reason })
  })
