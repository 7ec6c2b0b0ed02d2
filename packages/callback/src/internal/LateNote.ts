/**
 * The noting of a late result by the callback receiver: a result its attempt's conclusion
 * did not weigh is noted in the payment's stream (`LateResults`), and an error is logged
 * when it disagrees with the outcome recorded. The protocol's settle step notes the same
 * results; this is the receiver's half of that race.
 */
import { type CallbackRegistration, LateResults } from "@tillflow/core"
import { type EventStore } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Received } from "./ResultBody.js"

/**
 * Notes the result in the payment's stream if its attempt was concluded without it:
 * a conclusion is recorded there, and the result's version in the attempt's stream is
 * above the conclusion's horizon (`LateResults`). The protocol's settle step reads the
 * attempt's stream again after its conclusion has landed and notes such a result too:
 * whichever of the two looks last sees the other's append, so one of them notes it
 * (the argument is written at `PaymentProtocol`'s settle), and the notes' ids make the
 * other's a no-op. A result the conclusion weighed is not late: its mismatch, if any,
 * was raised with the conclusion. Whether it noted one.
 */
export const record = (
  store: EventStore.Service,
  registered: CallbackRegistration.Registration,
  received: Received,
  version: number,
  duplicate: boolean
) =>
  Effect.gen(function* () {
    const attemptId = registered.attemptId
    const events = yield* store.readStream(registered.paymentStream)
    // A note with this hash is not written again.
    if (LateResults.isNoted(events, attemptId, received.resultHash)) return false
    const conclusion = LateResults.conclusionOf(events, attemptId)
    if (Option.isNone(conclusion) || !LateResults.isLate(conclusion.value, version)) return false
    // An outcome recorded before horizons were says nothing of what it weighed: a resend
    // is not taken as late against it (its first delivery was, if it was).
    if (duplicate && conclusion.value.horizon === undefined) return false
    const recorded = conclusion.value.recorded
    // Noted for the payment's merchant (the tenant its stream's events name), as the
    // execution notes them, so that merchant's log and live feed carry them.
    const tenant = events.map((event) => Tenant.ofMetadata(event.metadata)).find((t) => t !== undefined)
    const notes = yield* LateResults.notesOf({
      executionId: registered.executionId,
      attemptId,
      recorded,
      result: received
    }).pipe(Tenant.within(tenant))
    if (LateResults.disagrees(recorded, received.finStatus)) {
      yield* Effect.logError("a late result disagrees with the recorded outcome").pipe(
        Effect.annotateLogs({ attemptId, recorded, received: received.finStatus ?? "UNDEFINED" })
      )
    }
    yield* LateResults.appendEach(store, registered.paymentStream, notes)
    return true
  })
