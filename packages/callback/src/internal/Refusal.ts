/**
 * A refused callback delivery: recorded as a security event (`CallbackRefused`, never with
 * the token presented) and answered with the status its reason calls for.
 */
import { CallbackRegistration } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { isAttemptId } from "./AttemptStream.js"

/** The status a refusal is answered with. */
export const status = (reason: CallbackRegistration.RefusalReason): 400 | 401 | 403 | 413 =>
  reason === "UnknownAttempt" || reason === "MissingToken"
    ? 401
    : reason === "WrongToken"
      ? 403
      : reason === "TooLarge"
        ? 413
        : 400

/** Appends the refusal to the security stream and logs it (the reason only). */
export const record = (
  store: EventStore.Service,
  attemptId: string,
  reason: CallbackRegistration.RefusalReason,
  remoteAddress: string | undefined
) =>
  Effect.gen(function* () {
    const at = yield* Clock.currentTimeMillis
    const event = yield* CallbackRegistration.events.encode(
      CallbackRegistration.CallbackRefused.make({
        attemptId: isAttemptId(attemptId) ? attemptId.toLowerCase() : "<not an attempt id>",
        reason,
        ...(remoteAddress === undefined ? {} : { remoteAddress }),
        at
      })
    )
    yield* store.append(CallbackRegistration.securityStream, EventStore.AnyVersion, [event])
    yield* Effect.logWarning("callback delivery refused").pipe(Effect.annotateLogs({ reason }))
  })
