/**
 * Step 6 of the payment protocol: the outcome recorded in the payment's stream, with a
 * `ResultMismatch` for every delivered result that disagrees, and the results the callback
 * receiver recorded meanwhile noted as late (`LateResults`). Here too the second look a
 * not-charged conclusion takes at the attempt's stream. Why that second look closes the
 * race with the receiver is argued at `settle`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as DurableStep from "@tillflow/engine/DurableStep"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as CallbackRegistration from "./CallbackRegistration.js"
import * as PaymentEvents from "./PaymentEvents.js"
import * as LateResults from "./LateResults.js"
import type * as OperationOutcome from "./OperationOutcome.js"
import type { Execution } from "./ProtocolWorkflows.js"
import type { AttemptInfo } from "./SendAttempt.js"
import { now, retryStore, withStepIds } from "./internal/step.js"

/** `attempt-N/settle`, its schemas built once. */
const settleStep = DurableStep.family()

/**
 * Step 6, `attempt-N/settle`: the outcome events, a `ResultMismatch` for every delivered
 * result it weighs that disagrees, then the notes of any result recorded while it concluded.
 *
 * This is the ordering point of a race with the callback receiver. The receiver appends a
 * result R to the attempt's stream, then reads the payment's stream for a conclusion to
 * note R against; settle reads the attempt's stream, appends the outcome to the payment's,
 * then reads the attempt's stream again (`noteLateResults`). Appends and reads of a stream
 * are linearizable, so either R's append precedes that second read, which finds R, or it
 * follows it, hence follows the outcome's append, and the receiver's read, after R's
 * append, finds the outcome. Either way R is noted; both sides may note it, and the notes'
 * ids make the second writer's a no-op (`LateResults`). With the first read alone, settle
 * could read before R was appended and the receiver read before the outcome was: R, a
 * charge perhaps, would be noted by neither.
 *
 * The version of the first read is the outcome's horizon, recorded in the metadata of the
 * events appended here: a result at or below it is weighed by the outcome (a mismatch when
 * it disagrees, and it is not late); one above it is late, whichever side notes it. Run
 * again after a crash, the step finds its events stored already: the horizon is then the
 * one the first run recorded, read back, and whatever that run did not note is noted now.
 */
export const settle = (
  { executionId, store }: Execution,
  attempt: AttemptInfo,
  outcome: OperationOutcome.Outcome
) => {
  const step = `attempt-${attempt.attempt}/settle`
  return settleStep(step)(
    Effect.gen(function* () {
      const at = yield* now
      const attemptId = attempt.attemptId
      const paymentStream = PaymentEvents.paymentStream(executionId)
      const recorded = outcome.facts.finStatus
      // Unreadable, the attempt's stream is weighed as empty: horizon 0, and any result in it
      // is noted as late by the second read.
      const first = yield* store
        .readStream(CallbackRegistration.attemptStream(attemptId))
        .pipe(Effect.orElseSucceed((): ReadonlyArray<EventStore.RecordedEvent> => []))
      const horizon = first.at(-1)?.version ?? 0
      const disagreeing = (yield* LateResults.resultsIn(first)).filter((result) =>
        LateResults.disagrees(recorded, result.finStatus)
      )
      const outcomeEvents = yield* withStepIds(
        executionId,
        step,
        PaymentEvents.outcomeEventsOf(outcome, at),
        {
          [LateResults.horizonKey]: horizon
        }
      )
      const mismatches = yield* Effect.forEach(disagreeing, (result) =>
        LateResults.mismatchOf({ executionId, attemptId, recorded, result })
      )
      yield* logMismatches(attemptId, recorded, disagreeing)
      const landed = yield* retryStore(
        LateResults.appendEach(store, paymentStream, [...outcomeEvents, ...mismatches])
      ).pipe(Effect.orDie)
      const settledHorizon = landed
        ? horizon
        : yield* retryStore(store.readStream(paymentStream)).pipe(
            Effect.orDie,
            Effect.map((events) =>
              Option.match(LateResults.conclusionOf(events, attemptId), {
                onNone: () => horizon,
                onSome: (conclusion) => conclusion.horizon ?? horizon
              })
            )
          )
      yield* noteLateResults(store, executionId, attemptId, recorded, settledHorizon)
    })
  )
}

/**
 * Proved not charged, an attempt's conclusion weighed no result: its horizon is 0, and
 * every result of the attempt, delivered before or after it, is late (`settle` says why
 * they are read once the conclusion has landed).
 */
export const noteNotCharged = (
  { executionId, store }: Execution,
  attemptId: string
): Effect.Effect<{ readonly disagreeing: number }> =>
  noteLateResults(store, executionId, attemptId, LateResults.notCharged, 0)

/**
 * After a conclusion about an attempt has landed in the payment's stream: reads the
 * attempt's stream again and notes every result recorded above the conclusion's horizon
 * (`LateResults.notesOf`, the same events the receiver would write). Why this closes the
 * race with the receiver: see `settle`. A store that stays down is a defect of the step,
 * which then runs again, notes included.
 */
const noteLateResults = (
  store: EventStore.Service,
  executionId: string,
  attemptId: string,
  recorded: string,
  horizon: number
): Effect.Effect<{ readonly disagreeing: number }> =>
  Effect.gen(function* () {
    const events = yield* retryStore(store.readStream(CallbackRegistration.attemptStream(attemptId)))
    const late = (yield* LateResults.resultsIn(events)).filter((result) => result.version > horizon)
    if (late.length === 0) return { disagreeing: 0 }
    const notes = yield* Effect.forEach(late, (result) =>
      LateResults.notesOf({ executionId, attemptId, recorded, result })
    )
    const disagreeing = late.filter((result) => LateResults.disagrees(recorded, result.finStatus))
    yield* logMismatches(attemptId, recorded, disagreeing)
    yield* retryStore(LateResults.appendEach(store, PaymentEvents.paymentStream(executionId), notes.flat()))
    return { disagreeing: disagreeing.length }
  }).pipe(Effect.orDie)

const logMismatches = (attemptId: string, recorded: string, results: ReadonlyArray<LateResults.Result>) =>
  Effect.forEach(
    results,
    (result) =>
      Effect.logError("a delivered result disagrees with the recorded outcome").pipe(
        Effect.annotateLogs({ attemptId, recorded, received: result.finStatus ?? "UNDEFINED" })
      ),
    { discard: true }
  )
