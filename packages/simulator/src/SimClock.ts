/**
 * The simulator's clock: Effect's `Clock` plus an offset that can be advanced on demand.
 *
 * Every timed behaviour of the simulator (step timing, the 90 s window, the callback
 * recovery loop, 24 h / 12 month windows) reads time and sleeps through this service.
 * Tests in the same process drive it with `TestClock`; tests in another process call
 * `POST /_sim/clock/advance`, which bumps the offset and wakes every sleeper so it
 * re-checks its deadline against the new simulated time.
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"

/** The simulator's notion of "now" and of sleeping, controllable from outside. */
export interface SimClockService {
  /** Simulated epoch milliseconds, read synchronously (for use inside state updates). */
  readonly unsafeNow: () => number
  /** Simulated epoch milliseconds. */
  readonly now: Effect.Effect<number>
  /** The offset added to the underlying `Clock`, in milliseconds. */
  readonly offset: Effect.Effect<number>
  /** Moves simulated time forward by `ms` and wakes every sleeper. */
  readonly advance: (ms: number) => Effect.Effect<number>
  /** Sleeps until simulated time reaches `epochMillis` (returns at once if it has). */
  readonly sleepUntil: (epochMillis: number) => Effect.Effect<void>
  /** Sleeps `ms` of simulated time. */
  readonly sleep: (ms: number) => Effect.Effect<void>
  /** Puts the offset back to its initial value. */
  readonly reset: Effect.Effect<void>
}

/** The clock every simulator behaviour reads. */
export class SimClock extends Context.Tag("tillflow/SimClock")<SimClock, SimClockService>() {}

/** Options of the clock. */
export interface Options {
  /** Start simulated time at this epoch (ms) instead of the underlying clock's time. */
  readonly startAt?: number | undefined
}

/**
 * Builds the clock over the `Clock` of the running fiber (the real clock, or `TestClock`
 * inside `it.effect`).
 */
export const make = (options: Options = {}): Effect.Effect<SimClockService> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const initialOffset =
      options.startAt === undefined ? 0 : options.startAt - clock.unsafeCurrentTimeMillis()
    let offset = initialOffset
    // Replaced on every advance: sleepers race their timer against it and re-check.
    let advanced = Deferred.unsafeMake<void>(FiberId.none)
    const unsafeNow = () => clock.unsafeCurrentTimeMillis() + offset
    const wake = () => {
      const previous = advanced
      advanced = Deferred.unsafeMake<void>(FiberId.none)
      Deferred.unsafeDone(previous, Effect.void)
    }
    const sleepUntil = (epochMillis: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        const remaining = epochMillis - unsafeNow()
        if (remaining <= 0) return Effect.void
        const signal = advanced
        return Effect.raceFirst(clock.sleep(Duration.millis(remaining)), Deferred.await(signal)).pipe(
          Effect.zipRight(sleepUntil(epochMillis))
        )
      })
    return {
      unsafeNow,
      now: Effect.sync(unsafeNow),
      offset: Effect.sync(() => offset),
      advance: (ms) =>
        Effect.sync(() => {
          if (ms > 0) offset += ms
          wake()
          return unsafeNow()
        }),
      sleepUntil,
      sleep: (ms) => (ms <= 0 ? Effect.void : Effect.suspend(() => sleepUntil(unsafeNow() + ms))),
      reset: Effect.sync(() => {
        offset = initialOffset
        wake()
      })
    } satisfies SimClockService
  })

/** The clock as a layer. */
export const layer = (options: Options = {}): Layer.Layer<SimClock> => Layer.effect(SimClock, make(options))
