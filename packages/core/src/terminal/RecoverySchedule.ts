/**
 * The pace at which a terminal catches up: its recovery loop resends an undelivered
 * result every 5 s for the first 100 s after completion, then waits 8 s, 16 s, 32 s …
 * (spec section 6). tillflow waits on the same rhythm wherever it waits for a terminal
 * (a busy or offline terminal, a result still IN_PROGRESS, a NOT FOUND inside the 90 s
 * window), so it asks again about when the terminal would have answered anyway. The
 * rhythm is given both as a pure function of the step number (what durable workflow loops
 * need: a recorded step number and no hidden state) and as an Effect `Schedule`. Beside it,
 * the cadence of the terminal-less lifecycles, which wait for no terminal.
 */
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"

/** The fast phase: one resend every 5 s … */
export const fastInterval: Duration.Duration = Duration.seconds(5)

/** … for the first 100 s. */
export const fastPhase: Duration.Duration = Duration.seconds(100)

/** The first wait after the fast phase; each later wait doubles it. */
export const firstSlowInterval: Duration.Duration = Duration.seconds(8)

const fastSteps = Math.round(Duration.toMillis(fastPhase) / Duration.toMillis(fastInterval))

/** Options of {@link delay} and {@link schedule}. */
export interface Options {
  /** The longest single wait (default: none, as the terminal's own loop). */
  readonly cap?: Duration.DurationInput | undefined
}

/**
 * The wait before retry number `step` (0-based): 5 s for steps 0–19 (the first 100 s),
 * then 8 s, 16 s, 32 s … capped by `options.cap`.
 *
 * @example
 * RecoverySchedule.delay(0) // 5 seconds
 * RecoverySchedule.delay(20) // 8 seconds
 * RecoverySchedule.delay(22, { cap: "20 seconds" }) // 20 seconds (32 s capped)
 */
export const delay = (step: number, options: Options = {}): Duration.Duration => {
  const n = Math.max(0, Math.floor(step))
  const base =
    n < fastSteps
      ? fastInterval
      : Duration.millis(Duration.toMillis(firstSlowInterval) * 2 ** Math.min(n - fastSteps, 40))
  return options.cap === undefined ? base : Duration.min(base, Duration.decode(options.cap))
}

/** The total time waited before retry number `step` (the sum of the delays before it). */
export const elapsedBefore = (step: number, options: Options = {}): Duration.Duration => {
  let total = 0
  for (let i = 0; i < Math.max(0, Math.floor(step)); i++) total += Duration.toMillis(delay(i, options))
  return Duration.millis(total)
}

/**
 * The same rhythm as a `Schedule` (recurs forever; output: the delay just waited), for
 * plain Effect retries outside workflows.
 *
 * @example
 * effect.pipe(Effect.retry(RecoverySchedule.schedule().pipe(Schedule.upTo("5 minutes"))))
 */
export const schedule = (options: Options = {}): Schedule.Schedule<Duration.Duration> =>
  Schedule.forever.pipe(
    Schedule.addDelay((n) => delay(n, options)),
    Schedule.map((n) => delay(n, options))
  )

/**
 * The cadence at which the terminal-less lifecycles reconcile (`reconcileByStatus` of the
 * lifecycle layer, and the batch close's check): the status endpoint asked every
 * {@link terminalLessInterval}, for at most {@link terminalLessBudget} after the request.
 *
 * It is not {@link delay}'s rhythm on purpose. The payment protocol waits on a terminal,
 * whose own recovery loop may still hold the result and resend it on that rhythm, and it
 * waits durably (the workflow suspends) for as long as its `reconcileTimeout`. A
 * terminal-less request involves no terminal to catch up with, and it is reconciled inside
 * the one activity that sent it, sleeping in memory: so at the fast phase's pace, for a
 * bounded time — longer than the NOT FOUND window (`Reconciliation.notFoundWindow`), so
 * that "not applied" can be concluded — after which its outcome is recorded unknown.
 */
export const terminalLessInterval: Duration.Duration = fastInterval

/** How long the terminal-less lifecycles keep asking before they call the outcome unknown. */
export const terminalLessBudget: Duration.Duration = Duration.minutes(3)
