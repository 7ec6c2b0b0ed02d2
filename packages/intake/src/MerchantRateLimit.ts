/**
 * A merchant's rate limit (issue 32's fair shares): how many operations a merchant may
 * start, per second or per minute, with a burst — its own, registered
 * (`MerchantRegistry.RateLimit`, `tillflow merchants rate-limit`), else the deployment's
 * (`TILLFLOW_MERCHANT_RATE_LIMIT` and `TILLFLOW_MERCHANT_RATE_BURST`), else none. A token bucket per merchant: it holds `burst` operations when
 * full, each operation started takes one, and it fills again at the rate. An operation
 * refused takes nothing and starts nothing: the intake answers 429 with `Retry-After`, the
 * seconds until the bucket holds one again.
 *
 * The bucket is kept in integers: its level is counted in units of which one operation
 * costs `intervalMillis` and `count` flow in each millisecond, so `20/s` fills 20 units a
 * millisecond and an operation costs 1000 — no fraction of an operation is ever rounded.
 * Time is Effect's `Clock` (a `TestClock` in tests). The buckets live in one worker's
 * memory: each worker applies the limit on its own, so N workers behind a load balancer
 * let a merchant start up to N times the rate.
 */
import { MerchantRegistry } from "@tillflow/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"

/** A rate limit: `count` operations per `intervalMillis`, at most `burst` at once (the registry's schema). */
export type RateLimit = MerchantRegistry.RateLimit

/** The largest count of operations per second or per minute a limit may name. */
export const maxCount = MerchantRegistry.maxRateCount

const units = { s: 1_000, min: 60_000 } as const

/** The limit as configured: `20/s (burst 20)`. */
export const format = (limit: RateLimit): string =>
  `${limit.count}/${limit.intervalMillis === units.min ? "min" : "s"} (burst ${limit.burst})`

/** The burst of a limit whose burst is not given: one second's operations, at least one. */
export const defaultBurst = (count: number, intervalMillis: number): number =>
  Math.max(1, Math.ceil((count * 1_000) / intervalMillis))

/** Where a limit was read from, as its refusals name it. */
export interface Names {
  readonly limit: string
  readonly burst: string
}

const environment: Names = { limit: "TILLFLOW_MERCHANT_RATE_LIMIT", burst: "TILLFLOW_MERCHANT_RATE_BURST" }

/**
 * Reads a limit: `20/s`, `600/min`, or `20` (per second), a whole number of operations
 * from 1 to {@link maxCount}; `burst` (a whole number from 1 to {@link maxCount}) or one
 * second's operations. A bad value is refused with what is allowed, naming where it was
 * read (`names`: the environment's variables unless told).
 */
export const parse = (
  text: string,
  burst?: string,
  names: Names = environment
): Either.Either<RateLimit, string> => {
  const match = /^\s*(\d{1,6})\s*(?:\/\s*(s|min))?\s*$/.exec(text)
  const count = match?.[1] === undefined ? NaN : Number(match[1])
  if (match === null || !(count >= 1 && count <= maxCount)) {
    return Either.left(
      `${names.limit} must be operations started per second or per minute, as 20/s, 600/min or 20 (per second), a whole number from 1 to ${maxCount}; got "${text}"`
    )
  }
  const intervalMillis = units[match[2] === "min" ? "min" : "s"]
  if (burst === undefined)
    return Either.right({ count, intervalMillis, burst: defaultBurst(count, intervalMillis) })
  const size = /^\s*\d{1,6}\s*$/.test(burst) ? Number(burst) : NaN
  if (!(size >= 1 && size <= maxCount)) {
    return Either.left(
      `${names.burst} must be a whole number of operations from 1 to ${maxCount}; got "${burst}"`
    )
  }
  return Either.right({ count, intervalMillis, burst: size })
}

/** A merchant's bucket: its level (in units, see the module) at `at` (epoch ms). */
export interface Bucket {
  readonly level: number
  readonly at: number
}

/** What {@link decide} answers: started (the bucket after it), or refused for `retryAfterMillis`. */
export type Decision =
  | { readonly _tag: "Allowed"; readonly bucket: Bucket }
  | { readonly _tag: "Refused"; readonly bucket: Bucket; readonly retryAfterMillis: number }

/**
 * The token bucket's decision at `now` for one more operation: allowed when the bucket
 * (full when there is none yet, filled since its `at`) holds one, which it then gives;
 * refused otherwise, with the milliseconds until it holds one. Pure.
 */
export const decide = (limit: RateLimit, bucket: Bucket | undefined, now: number): Decision => {
  const capacity = limit.burst * limit.intervalMillis
  const elapsed = bucket === undefined ? 0 : Math.max(0, now - bucket.at)
  const level = bucket === undefined ? capacity : Math.min(capacity, bucket.level + elapsed * limit.count)
  if (level >= limit.intervalMillis) {
    return { _tag: "Allowed", bucket: { level: level - limit.intervalMillis, at: now } }
  }
  return {
    _tag: "Refused",
    bucket: { level, at: now },
    retryAfterMillis: Math.ceil((limit.intervalMillis - level) / limit.count)
  }
}

/** Operations refused to a merchant for its rate limit (`tillflow_merchant_rate_limited_total{merchant}`). */
export const rateLimited = Metric.counter("tillflow_merchant_rate_limited_total", {
  description:
    "operations refused to a merchant for its rate limit (its own in the registry, else TILLFLOW_MERCHANT_RATE_LIMIT; 429 with Retry-After), counted by the worker that refused them",
  incremental: true
})

/** The counter of one merchant's refusals. */
export const rateLimitedOf = (merchant: string) => Metric.tagged(rateLimited, "merchant", merchant)

/** One bucket per merchant, each under the limit it is taken with. */
export interface Limiter {
  /**
   * Takes one operation from `merchant`'s bucket under `limit` (the merchant's own or the
   * deployment's) at the `Clock`'s time: allowed, or refused (counted in
   * {@link rateLimited}) with the milliseconds until the bucket holds one. A bucket taken
   * with another limit than before starts again full under the new one.
   */
  readonly take: (merchant: string, limit: RateLimit) => Effect.Effect<Decision>
}

const sameLimit = (a: RateLimit, b: RateLimit) =>
  a.count === b.count && a.intervalMillis === b.intervalMillis && a.burst === b.burst

/**
 * A limiter in this process's memory. Its buckets are the merchants that started something
 * (the intake asks it only for registered merchants, so they are as many as those).
 */
export const make: Effect.Effect<Limiter> = Effect.sync(() => {
  const buckets = new Map<string, { readonly limit: RateLimit; readonly bucket: Bucket }>()
  return {
    take: (merchant, limit) =>
      Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Decision> => {
        // Read and written in one synchronous step: two requests cannot take the same operation.
        const kept = buckets.get(merchant)
        const decision = decide(
          limit,
          kept !== undefined && sameLimit(kept.limit, limit) ? kept.bucket : undefined,
          now
        )
        buckets.set(merchant, { limit, bucket: decision.bucket })
        return decision._tag === "Refused"
          ? Effect.as(Metric.increment(rateLimitedOf(merchant)), decision)
          : Effect.succeed(decision)
      })
  }
})
