/**
 * One forwarding of a recorded result to its workflow, run after the reply: a late result
 * noted in the payment's stream (`LateNote`), then the waiting workflow's `DurableDeferred`
 * resolved and its execution woken (only woken when the delivery's write resolved it). Store failures are retried; a forwarding given up is
 * logged, and the workflow still finds the result in the attempt's stream.
 */
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { CallbackRegistration } from "@tillflow/core"
import { type EventStore, StoreRetry } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { AttemptStream } from "./AttemptStream.js"
import * as LateNote from "./LateNote.js"
import type { Received } from "./ResultBody.js"

/** Forwards one recorded result; whether it was done (false: given up, logged). */
export type Forward = (
  registered: CallbackRegistration.Registration,
  received: Received,
  /** Its version in the attempt's stream when this delivery appended it; none for a duplicate. */
  version: number | undefined,
  /** When the delivery's write resolved the deferred too: what wakes the execution. */
  landed?: Effect.Effect<void> | undefined
) => Effect.Effect<boolean>

/**
 * What a forwarding works with. Nobody waits on it (the terminal has had its 2xx), so it
 * keeps trying while the store fails at the store's patient pace (`StoreRetry.patient`).
 */
export interface Options {
  readonly store: EventStore.Service
  readonly engine: Context.Tag.Service<WorkflowEngine>
  readonly attemptStream: AttemptStream
}

export const make = ({ store, engine, attemptStream }: Options): Forward => {
  // Resolved with the result as the JSON it was decoded from (`resultDeferredJson`): the
  // engine stores the exit encoded, and encoding the decoded result back would only
  // rebuild that JSON. The workflow decodes it as `resultDeferred`'s `DeliveredResult`.
  const resolve = (registered: CallbackRegistration.Registration, received: Received) =>
    engine.deferredDone(CallbackRegistration.resultDeferredJson(registered.attemptId), {
      workflowName: registered.workflowName,
      executionId: registered.executionId,
      deferredName: registered.deferredName,
      exit: Exit.succeed({
        result: received.result,
        resultHash: received.resultHash,
        receivedAt: received.receivedAt
      })
    })

  /**
   * A late result noted in the payment's stream (once: the notes' ids are the same whoever
   * writes them), then the deferred resolved (the first resolution wins) and the execution
   * woken. Retried while the store fails; given up with an error log, in which case the
   * workflow still finds the result in the attempt's stream.
   */
  return (registered, received, version, landed) =>
    Effect.gen(function* () {
      // A duplicate is weighed at the version its first delivery was recorded at: a
      // result received in time is not late, and one whose first forwarding was lost
      // (the process stopped after its 2xx) is noted now, on its resend.
      const at =
        version ??
        (yield* StoreRetry.retry(
          attemptStream.recordedVersion(registered.attemptId, received.resultHash),
          StoreRetry.patient
        ))
      if (at !== undefined) {
        yield* StoreRetry.retry(
          LateNote.record(store, registered, received, at, version === undefined),
          StoreRetry.patient
        )
      }
      // Resolved by the delivery's own write already: only the execution to wake. The
      // engine dies on a store failure: resolving (and waking) is idempotent, so any
      // failure is retried.
      yield* (landed ?? resolve(registered, received)).pipe(
        Effect.sandbox,
        Effect.retry({ schedule: StoreRetry.patient, while: (cause) => !Cause.isInterruptedOnly(cause) }),
        Effect.unsandbox
      )
      return true
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logError(
          "could not forward a recorded callback result: its workflow will find it in the attempt's stream",
          cause
        ).pipe(Effect.annotateLogs({ attemptId: registered.attemptId }), Effect.as(false))
      ),
      Effect.withSpan("CallbackReceiver.forward", { captureStackTrace: false })
    )
}
