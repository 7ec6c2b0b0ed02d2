/**
 * The line of recorded results awaiting their forwarding, taken by a fixed number of
 * forwarders on the receiver's scope: a burst of deliveries does not put its forwardings'
 * statements ahead of the next deliveries' appends, a full line makes the replies wait,
 * a result this process forwards already is not put in line again, and shutdown waits
 * (bounded) for the line to drain.
 */
import type { CallbackRegistration } from "@tillflow/core"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { Forward } from "./Forward.js"
import type { Received } from "./ResultBody.js"

/** A recorded result awaiting its forwarding. */
interface Job {
  readonly registered: CallbackRegistration.Registration
  readonly received: Received
  /** Its version in the attempt's stream when this delivery appended it; none for a duplicate. */
  readonly version: number | undefined
  /** Its key among the results forwarded or being forwarded. */
  readonly key: string
  /** When its write resolved the deferred too: what wakes the execution. */
  readonly landed: Effect.Effect<void> | undefined
}

/** The line, as the receiver uses it. */
export interface ForwardLine {
  /** Puts a recorded result in line, unless this process forwards it already; waits while the line is full. */
  readonly start: (
    registered: CallbackRegistration.Registration,
    received: Received,
    version: number | undefined,
    landed?: Effect.Effect<void> | undefined
  ) => Effect.Effect<void>
  /** Waits until every result put in line so far has been forwarded (or given up on). */
  readonly forwarded: Effect.Effect<void>
}

/** How the line is sized and drained. */
export interface Options {
  /** At most this many results in line; more make `start` wait. */
  readonly capacity: number
  /** How many forwarders take from the line. */
  readonly concurrency: number
  /** How long closing the scope waits for the line to drain. */
  readonly shutdownTimeout: Duration.DurationInput
}

// Results this process forwarded or is forwarding (bounded): a resend of one of them is
// not forwarded again. A forwarding given up is forgotten, so a resend tries again.
const maxForwardedKeys = 10_000

/** Starts the forwarders on the scope; closing it waits for the line, then interrupts them. */
export const make = (forward: Forward, options: Options): Effect.Effect<ForwardLine, never, Scope.Scope> =>
  Effect.gen(function* () {
    // Finalizers run in reverse order: the wait for the line to drain, then the
    // forwarders' interruption, then the line's shutdown.
    const line = yield* Effect.acquireRelease(Queue.bounded<Job>(options.capacity), Queue.shutdown)
    // Results offered and not yet done with; `idle` is open when there are none.
    let outstanding = 0
    const idle = Effect.unsafeMakeLatch(true)
    const settle = Effect.sync(() => {
      outstanding--
      if (outstanding === 0) idle.unsafeOpen()
    })
    const forwardedKeys = new Set<string>()

    const start: ForwardLine["start"] = (registered, received, version, landed) =>
      Effect.suspend(() => {
        const key = `${registered.attemptId}/${received.resultHash}`
        if (forwardedKeys.has(key)) return Effect.void
        forwardedKeys.add(key)
        if (forwardedKeys.size > maxForwardedKeys) {
          const oldest = forwardedKeys.values().next()
          if (oldest.done !== true) forwardedKeys.delete(oldest.value)
        }
        outstanding++
        idle.unsafeClose()
        // Waits while the line is full (the reply waits with it); interrupted, it was not offered.
        return Queue.offer(line, { registered, received, version, key, landed }).pipe(
          Effect.onInterrupt(() =>
            Effect.zipRight(
              Effect.sync(() => forwardedKeys.delete(key)),
              settle
            )
          ),
          Effect.asVoid
        )
      })

    // The forwarders, on the receiver's own scope (not a request's): interrupted when it
    // closes, after the wait below; a result left in the line is found by its workflow.
    // A forwarding that ends in any other way than done (given up, or interrupted from
    // within) is forgotten and the forwarder goes on with the next.
    const forwarder = Effect.forever(
      Effect.flatMap(Queue.take(line), (job) =>
        Effect.exit(forward(job.registered, job.received, job.version, job.landed)).pipe(
          Effect.flatMap((exit) =>
            Exit.isSuccess(exit) && exit.value
              ? Effect.void
              : Effect.sync(() => forwardedKeys.delete(job.key))
          ),
          Effect.onInterrupt(() => Effect.sync(() => forwardedKeys.delete(job.key))),
          Effect.ensuring(settle)
        )
      )
    )
    for (let i = 0; i < options.concurrency; i++) yield* Effect.forkScoped(forwarder)
    yield* Effect.addFinalizer(() =>
      idle.await.pipe(
        Effect.timeoutOption(options.shutdownTimeout),
        Effect.flatMap((done) =>
          Option.isNone(done)
            ? Effect.logWarning(
                "callback results still being forwarded at shutdown: their workflows will find them in their attempts' streams"
              )
            : Effect.void
        )
      )
    )
    return { start, forwarded: idle.await }
  })
