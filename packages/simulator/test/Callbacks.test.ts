import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { nextAttemptAt } from "../src/internal/delivery.js"
import { receiver, reference, withSimulator } from "./support.js"

const sale = (url: string, token: string) => ({
  operation: "sale",
  amount: "1500",
  currency: "EUR",
  transactionReference: reference(),
  callbackUrl: url,
  token
})

describe("callback delivery", () => {
  it.live(
    "posts the result to the callbackUrl with the token in AUTH-TOKEN; the 202 has no transactionResultId",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const rec = yield* receiver
          yield* withSimulator({}, (h) =>
            Effect.gen(function* () {
              const accepted = yield* h.send(sale(rec.url, "secret-token-1"))
              expect(accepted.status).toBe(202)
              expect(accepted.json.transactionResultId).toBeUndefined()
              yield* rec.waitFor(1)
              const delivery = rec.deliveries[0]
              expect(delivery?.headers["auth-token"]).toBe("secret-token-1")
              expect(delivery?.body.finStatus).toBe("AUTHORISED")
              expect(delivery?.body.recoveredTransaction).toBe(false)
              expect(delivery?.body.transactionReference).toBe(accepted.json.transactionReference)
              const listed = yield* h.admin("GET", "/callbacks")
              expect(listed.text).not.toContain("secret-token-1")
              expect(listed.json[0].delivered).toBe(true)
            })
          )
        })
      )
  )

  it.live("retries a failed delivery every 5 s, then delivers it with recoveredTransaction: true", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const rec = yield* receiver
        rec.answer = 503
        yield* withSimulator({}, (h) =>
          Effect.gen(function* () {
            yield* h.send(sale(rec.url, "tok-2"))
            yield* h.settle
            const waitAttempts = (n: number) =>
              Effect.map(
                h.eventually(
                  "/callbacks",
                  (list) => list[0]?.attempts >= n && list[0]?.nextAttemptAt !== null
                ),
                (list) => list[0]
              )
            const first = yield* waitAttempts(1)
            expect(first.delivered).toBe(false)
            expect(first.nextAttemptAt - first.completedAt).toBe(5_000)
            yield* h.advance(5_000)
            const second = yield* waitAttempts(2)
            expect(second.attempts).toBe(2)
            expect(second.nextAttemptAt - second.completedAt).toBe(10_000)
            rec.answer = 200
            yield* h.advance(5_000)
            yield* rec.waitFor(1)
            expect(rec.deliveries[0]?.body.recoveredTransaction).toBe(true)
            expect(rec.deliveries[0]?.headers["auth-token"]).toBe("tok-2")
            expect(rec.deliveries).toHaveLength(1)
          })
        )
      })
    )
  )

  it.live(
    "after 100 s of failures the wait doubles from 8 s; an injected outage fails deliveries without a request",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const rec = yield* receiver
          yield* withSimulator({}, (h) =>
            Effect.gen(function* () {
              yield* h.admin("POST", "/faults/callback-outage", { ms: 200_000 })
              yield* h.send(sale(rec.url, "tok-3"))
              yield* h.settle
              const state = (attempts: number) =>
                Effect.map(
                  h.eventually(
                    "/callbacks",
                    (list) => list[0]?.attempts >= attempts && list[0]?.nextAttemptAt !== null
                  ),
                  (list) => list[0]
                )
              const first = yield* state(1)
              expect(first.lastError).toContain("unreachable")
              yield* h.advance(100_000)
              const afterFast = yield* state(2)
              expect(afterFast.nextAttemptAt - afterFast.completedAt).toBe(108_000)
              yield* h.advance(8_000)
              const next = yield* state(3)
              expect(next.nextAttemptAt - next.completedAt).toBe(124_000)
              yield* h.advance(16_000)
              const after = yield* state(4)
              expect(after.nextAttemptAt - after.completedAt).toBe(156_000)
              expect(rec.deliveries).toHaveLength(0)
              yield* h.advance(100_000)
              yield* rec.waitFor(1)
              expect(rec.deliveries[0]?.body.recoveredTransaction).toBe(true)
            })
          )
        })
      )
  )

  it.live("startRecovery retries a pending delivery at once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const rec = yield* receiver
        rec.answer = 500
        yield* withSimulator({}, (h) =>
          Effect.gen(function* () {
            yield* h.send(sale(rec.url, "tok-4"))
            yield* h.settle
            yield* h.eventually("/callbacks", (list) => typeof list[0]?.nextAttemptAt === "number")
            rec.answer = 200
            const kicked = yield* h.admin("POST", `/terminals/${h.serial}/recovery`)
            expect(kicked.json.kicked).toBe(1)
            yield* rec.waitFor(1)
            expect(rec.deliveries[0]?.body.recoveredTransaction).toBe(true)
          })
        )
      })
    )
  )
})

describe("the recovery schedule", () => {
  it("is every 5 s for 100 s after completion, then 8, 16, 32 s …, and gives up after a day", () => {
    const t0 = 1_000_000
    expect(nextAttemptAt(t0, t0)).toBe(t0 + 5_000)
    expect(nextAttemptAt(t0, t0 + 4_999)).toBe(t0 + 5_000)
    expect(nextAttemptAt(t0, t0 + 5_000)).toBe(t0 + 10_000)
    expect(nextAttemptAt(t0, t0 + 99_999)).toBe(t0 + 100_000)
    expect(nextAttemptAt(t0, t0 + 100_000)).toBe(t0 + 108_000)
    expect(nextAttemptAt(t0, t0 + 108_000)).toBe(t0 + 124_000)
    expect(nextAttemptAt(t0, t0 + 124_000)).toBe(t0 + 156_000)
    expect(nextAttemptAt(t0, t0 + 156_000)).toBe(t0 + 220_000)
    expect(nextAttemptAt(t0, t0 + 86_400_000)).toBeUndefined()
  })
})
