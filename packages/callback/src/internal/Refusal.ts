/**
 * A refused callback delivery: counted in `counter` by reason, every one of them, and
 * recorded as a security event (`CallbackRefused`, never with the token presented) only
 * while its reason's sample has room: refusals are what an unauthenticated caller can make
 * as many of as it likes, so writing one event each would let it fill the log.
 */
import { CallbackRegistration } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { isAttemptId } from "./AttemptStream.js"

/** Every refused delivery, by reason (label `reason`). */
export const counter = Metric.counter("tillflow_callback_refusals_total", {
  description: "callback deliveries refused by this process, by reason (each one, recorded or not)",
  incremental: true
})

/** How many refusals of one reason are recorded as events per window. */
export interface SampleOptions {
  readonly perReason: number
  readonly window: Duration.DurationInput
}

/** The status a refusal is answered with. */
export const status = (reason: CallbackRegistration.RefusalReason): 400 | 401 | 403 | 413 =>
  reason === "UnknownAttempt" || reason === "MissingToken"
    ? 401
    : reason === "WrongToken"
      ? 403
      : reason === "TooLarge"
        ? 413
        : 400

/** What the sample says of one more refusal: record it, drop it, or drop it as the first over the bound. */
type Take = "record" | "drop" | "firstDropped"

/**
 * The refusals of one process, counted and sampled. The sample's memory is one window per
 * reason (five reasons), whatever the caller sends: a bound per attempt id would not do,
 * as an unauthenticated caller chooses a new id per request.
 */
export const make = (store: EventStore.Service, options: SampleOptions) => {
  const window = Duration.toMillis(Duration.decode(options.window))
  const windows = new Map<CallbackRegistration.RefusalReason, { start: number; taken: number }>()

  const take = (reason: CallbackRegistration.RefusalReason, now: number): Take => {
    const current = windows.get(reason)
    if (current === undefined || now - current.start >= window) {
      windows.set(reason, { start: now, taken: 1 })
      return options.perReason >= 1 ? "record" : "firstDropped"
    }
    current.taken++
    return current.taken <= options.perReason
      ? "record"
      : current.taken === options.perReason + 1
        ? "firstDropped"
        : "drop"
  }

  /** Counts the refusal, and appends it to the security stream and logs it (the reason only) if sampled. */
  const record = (
    attemptId: string,
    reason: CallbackRegistration.RefusalReason,
    remoteAddress: string | undefined
  ) =>
    Effect.gen(function* () {
      yield* Metric.increment(Metric.tagged(counter, "reason", reason))
      const at = yield* Clock.currentTimeMillis
      const taken = take(reason, at)
      if (taken === "firstDropped") {
        yield* Effect.logWarning(
          "callback deliveries refused beyond the sample: counted in tillflow_callback_refusals_total only, for the rest of the window"
        ).pipe(Effect.annotateLogs({ reason, perReason: options.perReason }))
      }
      if (taken !== "record") return
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

  return { record }
}
