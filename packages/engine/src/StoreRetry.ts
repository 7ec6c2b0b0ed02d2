/**
 * How tillflow retries what an event store may answer transiently (a dropped connection, a
 * failover, a serialization failure reported as `EventStoreError`): the one policy every
 * caller of a store uses, in two paces.
 *
 * - `quick` — someone is waiting (a durable step on the hot path, an HTTP request whose reply
 *   waits for the append): 50 ms, then doubling, at most 6 retries (about 3 s in all), then
 *   the error is the caller's to report (the engine runs the step again; a sender told 503
 *   sends again).
 * - `patient` — work that must land but that nobody waits on (a workflow's business events,
 *   the forwarding of a received message to its workflow): 100 ms doubling to at most 5 s
 *   apart, at most 12 retries (about 40 s), then the caller gives up in its own way (a
 *   defect that makes the engine run the step again; a log line, the workflow finding the
 *   message itself).
 *
 * `retry` builds the schedule only once a first try has failed: most calls succeed at
 * once, and a schedule driver per durable step is measurable.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

/** Someone is waiting: 50 ms × 2ⁿ, at most 6 retries. */
export const quick: Schedule.Schedule<unknown> = Schedule.exponential("50 millis", 2).pipe(
  Schedule.intersect(Schedule.recurs(6))
)

/** Nobody is waiting, but it must land: 100 ms × 2ⁿ, at most 5 s apart, at most 12 retries. */
export const patient: Schedule.Schedule<unknown> = Schedule.exponential("100 millis", 2).pipe(
  Schedule.union(Schedule.spaced("5 seconds")),
  Schedule.intersect(Schedule.recurs(12))
)

/** The failure a store reports for what may succeed when tried again. */
export const isTransient = (error: { readonly _tag: string }): boolean => error._tag === "EventStoreError"

/**
 * Retries `effect` on the errors `retryable` accepts (by default the store's transient
 * failure), on `schedule`; the first try runs without any schedule.
 *
 * @example
 * yield* StoreRetry.retry(store.append(stream, EventStore.AnyVersion, events), StoreRetry.patient)
 */
export const retry = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>,
  schedule: Schedule.Schedule<unknown>,
  retryable: (error: E) => boolean = isTransient
): Effect.Effect<A, E, R> =>
  Effect.catchIf(effect, retryable, (first) => {
    // The first failure is handed to the schedule as its first try, so the next try comes
    // after the schedule's first delay (not at once) and the number of tries is the same as
    // `Effect.retry(effect, { schedule })` would make.
    let replayed = false
    const again = Effect.suspend(() => {
      if (replayed) return effect
      replayed = true
      return Effect.fail(first)
    })
    return Effect.retry(again, { schedule, while: retryable })
  })
