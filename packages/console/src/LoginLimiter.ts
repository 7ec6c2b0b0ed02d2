/**
 * Guessing is slowed down: after {@link maxFailures} wrong logins within {@link window} for
 * one name, or from one client address, that name or address is locked out for
 * {@link lockout} — every login for it is refused unchecked, with the time it may try again.
 * A lock-out is logged (WARN, with the name and the address, never a secret) and counted
 * (`tillflow_console_login_lockouts_total`); every refused login is counted too
 * (`tillflow_console_login_failures_total{reason}`). A good login clears the name's and
 * the address's failures. Held in the process's memory, like the sessions.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"

/** Wrong logins allowed within the window before a lock-out. */
export const maxFailures = 5
/** The window the failures are counted in. */
export const window: Duration.Duration = Duration.minutes(15)
/** How long a lock-out lasts. */
export const lockout: Duration.Duration = Duration.minutes(15)

/** Logins refused, by reason (`wrong` credentials, `locked` out). */
export const failures = Metric.counter("tillflow_console_login_failures_total", {
  description: "console logins refused, by reason: wrong credentials, or locked out",
  incremental: true
})

/** Lock-outs started. */
export const lockouts = Metric.counter("tillflow_console_login_lockouts_total", {
  description: "console lock-outs started after repeated wrong logins (by name or client address)",
  incremental: true
})

/**
 * What a limiter guards: how many failures within which window start a lock-out of how
 * long, the counters it reports to, and what its log line calls a failure. The console's
 * login is {@link consoleLogin}; the intake uses another for wrong bearer tokens.
 */
export interface Policy {
  readonly what: string
  readonly maxFailures: number
  readonly window: Duration.Duration
  readonly lockout: Duration.Duration
  readonly failures: Metric.Metric.Counter<number>
  readonly lockouts: Metric.Metric.Counter<number>
}

/** The console's login: {@link maxFailures} within {@link window}, locked out for {@link lockout}. */
export const consoleLogin: Policy = {
  what: "console login",
  maxFailures,
  window,
  lockout,
  failures,
  lockouts
}

/** Who is trying: the name given (empty for a token login) and the client's address. */
export interface Attempt {
  readonly name: string
  readonly client: string
}

/** The limiter. */
export interface Service {
  /** When the attempt may be checked again (epoch ms), if it is locked out now. */
  readonly lockedUntil: (attempt: Attempt) => Effect.Effect<number | undefined>
  /** Records a wrong login; when it starts a lock-out, returns its end. */
  readonly failed: (attempt: Attempt) => Effect.Effect<number | undefined>
  /** Records a good login: the name's and the address's failures are forgotten. */
  readonly succeeded: (attempt: Attempt) => Effect.Effect<void>
}

interface Counter {
  readonly failures: Array<number>
  lockedUntil: number | undefined
}

/** The most names and addresses tracked at once; the oldest is forgotten first. */
const maxTracked = 10_000

/** A limiter over a clock in milliseconds (for tests), for the console's login unless `policy` says. */
export const make = (now: () => number = Date.now, policy: Policy = consoleLogin): Service => {
  const counters = new Map<string, Counter>()
  const keysOf = (attempt: Attempt) => [
    ...(attempt.name === "" ? [] : [`name:${attempt.name.toLowerCase()}`]),
    `client:${attempt.client}`
  ]
  const counterOf = (key: string): Counter => {
    let counter = counters.get(key)
    if (counter === undefined) {
      if (counters.size >= maxTracked) {
        const oldest = counters.keys().next()
        if (oldest.done !== true) counters.delete(oldest.value)
      }
      counter = { failures: [], lockedUntil: undefined }
      counters.set(key, counter)
    }
    return counter
  }
  const lockedUntil = (attempt: Attempt) =>
    Effect.sync(() => {
      const at = now()
      let until: number | undefined
      for (const key of keysOf(attempt)) {
        const end = counters.get(key)?.lockedUntil
        if (end !== undefined && end > at) until = Math.max(until ?? 0, end)
      }
      return until
    })
  return {
    lockedUntil: (attempt) =>
      Effect.tap(lockedUntil(attempt), (until) =>
        until === undefined
          ? Effect.void
          : Metric.increment(Metric.tagged(policy.failures, "reason", "locked"))
      ),
    failed: (attempt) =>
      Effect.gen(function* () {
        yield* Metric.increment(Metric.tagged(policy.failures, "reason", "wrong"))
        const at = now()
        let started: number | undefined
        for (const key of keysOf(attempt)) {
          const counter = counterOf(key)
          const since = at - Duration.toMillis(policy.window)
          const recent = counter.failures.filter((t) => t > since)
          recent.push(at)
          counter.failures.splice(0, counter.failures.length, ...recent)
          if (
            recent.length >= policy.maxFailures &&
            (counter.lockedUntil === undefined || counter.lockedUntil <= at)
          ) {
            counter.lockedUntil = at + Duration.toMillis(policy.lockout)
            counter.failures.splice(0)
            started = counter.lockedUntil
            yield* Metric.increment(policy.lockouts)
            yield* Effect.logWarning(
              `${policy.what} locked out for ${Duration.format(policy.lockout)} after ${policy.maxFailures} failures within ${Duration.format(policy.window)}`
            ).pipe(
              Effect.annotateLogs({
                lockedOut: key.startsWith("name:") ? "name" : "client",
                operator: attempt.name,
                client: attempt.client,
                until: new Date(counter.lockedUntil).toISOString()
              })
            )
          }
        }
        return started
      }),
    succeeded: (attempt) =>
      Effect.sync(() => {
        for (const key of keysOf(attempt)) counters.delete(key)
      })
  }
}
