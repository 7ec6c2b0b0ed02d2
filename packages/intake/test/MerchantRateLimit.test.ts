/**
 * A merchant's rate limit (issue 32's fair shares): the token bucket's decisions, in
 * integers, on Effect's clock (a `TestClock`); and on a running worker, a merchant's burst
 * past its limit refused with 429 and `Retry-After`, nothing started, counted in a metric,
 * while another merchant (and the deployment's own) still starts. A merchant's own limit in
 * the registry (`POST /v1/merchants/{id}/rate-limit`) holds over the deployment's, and
 * where the deployment sets none.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { MerchantRegistry } from "@tillflow/core"
import { Stack } from "@tillflow/intake"
import * as MerchantRateLimit from "@tillflow/intake/MerchantRateLimit"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { call, running, simulatedMerchant } from "./support.js"

const perSecond = (count: number, burst: number): MerchantRateLimit.RateLimit => ({
  count,
  intervalMillis: 1_000,
  burst
})

describe("MerchantRateLimit", () => {
  it("reads 20/s, 600/min and 20; refuses what is not a rate, saying what is allowed", () => {
    expect(MerchantRateLimit.parse("20/s")).toEqual(Either.right(perSecond(20, 20)))
    expect(MerchantRateLimit.parse("20")).toEqual(Either.right(perSecond(20, 20)))
    expect(MerchantRateLimit.parse("600/min")).toEqual(
      Either.right({ count: 600, intervalMillis: 60_000, burst: 10 })
    )
    expect(MerchantRateLimit.parse("1/min")).toEqual(
      Either.right({ count: 1, intervalMillis: 60_000, burst: 1 })
    )
    expect(MerchantRateLimit.parse("5/s", "40")).toEqual(Either.right(perSecond(5, 40)))
    for (const bad of ["0", "0/s", "2.5/s", "20/h", "-3", "fast", "", "100001/s"]) {
      const refused = MerchantRateLimit.parse(bad)
      expect(Either.isLeft(refused), bad).toBe(true)
      expect(Either.getLeft(refused).pipe(Option.getOrElse(() => ""))).toContain(
        "as 20/s, 600/min or 20 (per second)"
      )
    }
    for (const bad of ["0", "1.5", "x", "100001"]) {
      expect(Either.getLeft(MerchantRateLimit.parse("5/s", bad)).pipe(Option.getOrElse(() => ""))).toContain(
        "TILLFLOW_MERCHANT_RATE_BURST must be a whole number of operations from 1 to 100000"
      )
    }
  })

  it("the bucket: full at first, one operation a token, filled again at the rate, never above the burst", () => {
    const limit = perSecond(2, 3)
    let bucket: MerchantRateLimit.Bucket | undefined
    const at = (now: number) => {
      const decision = MerchantRateLimit.decide(limit, bucket, now)
      bucket = decision.bucket
      return decision._tag === "Allowed" ? "allowed" : `refused ${decision.retryAfterMillis} ms`
    }
    // The burst at once, then the fourth waits for half a second (2/s).
    expect([at(0), at(0), at(0), at(0)]).toEqual(["allowed", "allowed", "allowed", "refused 500 ms"])
    // A refusal takes nothing: 200 ms later, 300 ms to go.
    expect(at(200)).toBe("refused 300 ms")
    expect([at(500), at(500)]).toEqual(["allowed", "refused 500 ms"])
    // An hour idle fills the bucket to its burst, no more.
    expect([at(3_600_000), at(3_600_000), at(3_600_000), at(3_600_000)]).toEqual([
      "allowed",
      "allowed",
      "allowed",
      "refused 500 ms"
    ])
    // A clock that goes back takes nothing and gives nothing.
    expect(at(3_599_000)).toBe("refused 500 ms")
  })

  it.effect("per merchant, on Effect's clock: one merchant's burst leaves another's bucket full", () =>
    Effect.gen(function* () {
      const limiter = yield* MerchantRateLimit.make
      const perMinute = { count: 1, intervalMillis: 60_000, burst: 2 } as const
      const take = (merchant: string) => Effect.map(limiter.take(merchant, perMinute), (d) => d._tag)
      expect([yield* take("a"), yield* take("a"), yield* take("a")]).toEqual([
        "Allowed",
        "Allowed",
        "Refused"
      ])
      expect([yield* take("b"), yield* take("b")]).toEqual(["Allowed", "Allowed"])
      const refused = yield* limiter.take("a", perMinute)
      expect(refused._tag === "Refused" ? refused.retryAfterMillis : 0).toBe(60_000)
      yield* TestClock.adjust("59 seconds")
      expect(yield* take("a")).toBe("Refused")
      yield* TestClock.adjust("1 second")
      expect([yield* take("a"), yield* take("a")]).toEqual(["Allowed", "Refused"])
      // The merchant's limit changed (its own set, or unset): its bucket starts again, full, under the new one.
      const changed = Effect.map(limiter.take("a", perSecond(5, 1)), (d) => d._tag)
      expect([yield* changed, yield* changed]).toEqual(["Allowed", "Refused"])
    })
  )
})

// A key-encryption key for the test: the registry seals the merchants' keys under it.
const kek = `kek-test:${Buffer.alloc(32, 7).toString("base64")}`

// The KEK over the environment's configuration (DATABASE_URL: the tests' PostgreSQL).
const withKek = ConfigProvider.fromMap(new Map([["TILLFLOW_KEK", kek]])).pipe(
  ConfigProvider.orElse(() => ConfigProvider.fromEnv())
)

// One operation a minute, two at once: a third within the minute is refused.
const limit: MerchantRateLimit.RateLimit = { count: 1, intervalMillis: 60_000, burst: 2 }
const stack = running(23, {}, { merchantRateLimit: Option.some(limit) }).pipe(
  Layer.provide(Layer.setConfigProvider(withKek))
)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const merchant = simulatedMerchant

// Every sale of another amount: the simulator cancels a duplicate payment (same card and amount).
let amount = 3_310
const sale = (serial: string, key: string, headers: Record<string, string> = {}) =>
  call("POST", "/v1/operations", {
    headers,
    body: JSON.stringify({
      idempotencyKey: key,
      waitSeconds: 60,
      request: { operation: "sale", serial_number: serial, amount: String(amount++), currency: "EUR" }
    })
  })

describe("a merchant's rate limit on a running worker", () => {
  layer(stack, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect(
      "a merchant's burst past its limit gets 429 with Retry-After, nothing started; another merchant and the deployment's own still start",
      () =>
        Effect.gen(function* () {
          yield* merchant("rush-bar", "SIM-RUSH", "RUSH-1")
          yield* merchant("calm-tea", "SIM-CALM", "CALM-1")
          const cloud = yield* Stack.Cloud
          const own = cloud.terminals[0]
          if (own === undefined) return yield* Effect.dieMessage("no terminal")
          const run = Date.now()
          const rush = { "tillflow-merchant": "rush-bar" }
          const calm = { "tillflow-merchant": "calm-tea" }

          // The burst: two start, the third is refused, naming the merchant and the limit.
          for (const i of [1, 2]) {
            const made = yield* sale("RUSH-1", `rush-${run}-${i}`, rush)
            expect([made.status, made.json?.report?.verdict], made.text).toEqual([200, "approved"])
          }
          const refused = yield* sale("RUSH-1", `rush-${run}-3`, rush)
          expect([refused.status, refused.json?._tag, refused.json?.merchant], refused.text).toEqual([
            429,
            "RateLimited",
            "rush-bar"
          ])
          expect(refused.json?.message).toContain("merchant rush-bar")
          expect(refused.json?.message).toContain("rate limit of 1/min (burst 2)")
          const retryAfter = Number(refused.retryAfter)
          expect(retryAfter).toBeGreaterThanOrEqual(1)
          expect(retryAfter).toBeLessThanOrEqual(60)
          expect(refused.json?.retryAfterSeconds).toBe(retryAfter)
          // A terminal-less operation is a new operation too.
          const moto = yield* call("POST", "/v1/lifecycle/Moto.Sale", {
            headers: rush,
            body: JSON.stringify({
              payload: {
                requestId: `moto-${run}`,
                transactionReference: globalThis.crypto.randomUUID(),
                cardToken: "tok_1234",
                amount: { amount: "2100", currency: "EUR" }
              }
            })
          })
          expect([moto.status, moto.json?._tag], moto.text).toEqual([429, "RateLimited"])
          expect(Number(moto.retryAfter)).toBeGreaterThanOrEqual(1)
          // Nothing was started for the refused ones: the merchant has its two sales.
          const listed = yield* call("GET", "/v1/executions?limit=100", { headers: rush })
          expect(listed.status, listed.text).toBe(200)
          expect((listed.json as Json[]).length).toBe(2)
          // A retry of the refused request is refused the same way while the bucket is empty.
          const again = yield* sale("RUSH-1", `rush-${run}-3`, rush)
          expect(again.status).toBe(429)

          // The other merchant still starts — its own limit (ample) over the deployment's, which
          // would refuse its third — and the deployment's own merchant is not limited.
          const registry = yield* MerchantRegistry.MerchantRegistry
          yield* registry.setRateLimit("calm-tea", { count: 100, intervalMillis: 1_000, burst: 100 })
          for (const i of [1, 2, 3]) {
            const made = yield* sale("CALM-1", `calm-${run}-${i}`, calm)
            expect([made.status, made.json?.report?.verdict], made.text).toEqual([200, "approved"])
          }
          for (const i of [1, 2, 3]) {
            const made = yield* sale(own.serialNumber, `own-${run}-${i}`)
            expect([made.status, made.json?.report?.verdict], made.text).toEqual([200, "approved"])
          }

          // Counted per merchant: the registered ones listed at 0 until refused.
          const metrics = yield* call("GET", "/metrics")
          expect(metrics.text).toContain("# TYPE tillflow_merchant_rate_limited_total counter")
          expect(metrics.text).toMatch(/tillflow_merchant_rate_limited_total\{merchant="rush-bar"\} 3\n/)
          expect(metrics.text).toMatch(/tillflow_merchant_rate_limited_total\{merchant="calm-tea"\} 0\n/)
        })
    )
  })
})

// No deployment's limit: only a merchant's own holds.
const unlimited = running(29).pipe(Layer.provide(Layer.setConfigProvider(withKek)))

describe("a merchant's own rate limit, the deployment setting none", () => {
  layer(unlimited, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect(
      "the merchant given its own low limit is refused 429 past it, the other is not; set back to the deployment's, it starts again",
      () =>
        Effect.gen(function* () {
          yield* merchant("own-limit", "SIM-OWNL", "OWNL-1")
          yield* merchant("no-limit", "SIM-NOL", "NOL-1")
          const run = Date.now()
          const limited = { "tillflow-merchant": "own-limit" }
          const free = { "tillflow-merchant": "no-limit" }
          const setLimit = (rateLimit: unknown) =>
            call("POST", "/v1/merchants/own-limit/rate-limit", { body: JSON.stringify({ rateLimit }) })

          // Its own: one a minute, one at once, set by the admin route.
          const set = yield* setLimit({ count: 1, intervalMillis: 60_000, burst: 1 })
          expect([set.status, set.json?.rateLimit], set.text).toEqual([
            200,
            { count: 1, intervalMillis: 60_000, burst: 1 }
          ])
          const first = yield* sale("OWNL-1", `ownl-${run}-1`, limited)
          expect([first.status, first.json?.report?.verdict], first.text).toEqual([200, "approved"])
          const refused = yield* sale("OWNL-1", `ownl-${run}-2`, limited)
          expect([refused.status, refused.json?._tag, refused.json?.merchant], refused.text).toEqual([
            429,
            "RateLimited",
            "own-limit"
          ])
          expect(refused.json?.message).toContain("rate limit of 1/min (burst 1)")
          expect(refused.json?.message).toContain("its own: tillflow merchants rate-limit own-limit")
          expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1)

          // The other merchant, without a limit of its own (and none in the deployment), is not limited.
          for (const i of [1, 2, 3]) {
            const made = yield* sale("NOL-1", `nol-${run}-${i}`, free)
            expect([made.status, made.json?.report?.verdict], made.text).toEqual([200, "approved"])
          }

          // A limit out of bounds is refused, naming the rule; nothing changes.
          const bad = yield* setLimit({ count: 0, intervalMillis: 1_000, burst: 1 })
          expect(bad.status, bad.text).toBe(400)
          expect(bad.text).toContain("from 1 to 100000")
          const listed = yield* call("GET", "/v1/merchants")
          expect((listed.json as Json[]).map((m) => [m.id, m.rateLimit?.count])).toEqual([
            ["no-limit", undefined],
            ["own-limit", 1]
          ])

          // Back to the deployment's (none): the merchant's next operation starts.
          const back = yield* setLimit(null)
          expect([back.status, "rateLimit" in back.json], back.text).toEqual([200, false])
          const again = yield* sale("OWNL-1", `ownl-${run}-3`, limited)
          expect([again.status, again.json?.report?.verdict], again.text).toEqual([200, "approved"])
        })
    )
  })
})
