/**
 * Named operators at the door: with operators configured, the console is logged into by name
 * and secret (the shared token opens no console session, and still opens the API for
 * machines), a viewer's session reads but is refused every request that acts (403 naming the
 * role), an operator's session acts, and repeated wrong logins are locked out (429 with
 * Retry-After).
 */
import { describe, expect, layer as layerOf } from "@effect/vitest"
import { LoginLimiter } from "@tillflow/console"
import { Stack } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import { call, layerWith, operators, send, token } from "./support.js"

const sale = (idempotencyKey: string, serialNumber: string) => ({
  idempotencyKey,
  request: { operation: "sale", serial_number: serialNumber, amount: "1000", currency: "EUR" }
})

describe("named operators with roles", () => {
  layerOf(layerWith({ operators }), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect(
      "the login page asks for a name; the shared token opens no console session but still opens the API",
      () =>
        Effect.gen(function* () {
          const page = yield* send("GET", "/console")
          expect(page.status).toBe(401)
          expect(page.text).toContain('id="name"')
          const byToken = yield* send("POST", "/console/login", { body: { token } })
          expect(byToken.status).toBe(401)
          expect(byToken.json?.["message"]).toContain("log in with your operator name and secret")
          expect((yield* call("GET", "/v1/executions")).status).toBe(200)
        })
    )

    it.effect("a viewer reads and is refused what acts (403 naming the role); an operator acts", () =>
      Effect.gen(function* () {
        const [serial = ""] = (yield* Stack.Cloud).terminals.map((t) => t.serialNumber)
        const viewer = yield* send("POST", "/console/login", { body: { name: "vic", secret: "vic-secret" } })
        expect(viewer.status).toBe(200)
        expect(viewer.json?.["operator"]).toEqual({ name: "vic", role: "viewer" })
        expect((yield* send("GET", "/v1/executions", { cookie: viewer.cookie })).status).toBe(200)
        const refused = yield* send("POST", "/v1/operations", {
          cookie: viewer.cookie,
          body: sale("vic-1", serial)
        })
        expect(refused.status).toBe(403)
        expect(refused.json).toMatchObject({ _tag: "Forbidden", role: "viewer" })
        expect(String(refused.json?.["message"])).toContain("operator vic is a viewer")

        const operator = yield* send("POST", "/console/login", {
          body: { name: "ana", secret: "ana-secret" }
        })
        expect(operator.json?.["operator"]).toEqual({ name: "ana", role: "operator" })
        const started = yield* send("POST", "/v1/operations", {
          cookie: operator.cookie,
          body: sale("ana-1", serial)
        })
        expect(started.status).toBe(200)
      })
    )

    it.effect("five wrong secrets lock the name out: 429 with Retry-After, even for the right secret", () =>
      Effect.gen(function* () {
        const statuses: Array<number> = []
        for (let i = 0; i < LoginLimiter.maxFailures; i++)
          statuses.push(
            (yield* send("POST", "/console/login", { body: { name: "ana", secret: `guess-${i}` } })).status
          )
        expect(statuses).toEqual([401, 401, 401, 401, 429])
        const locked = yield* send("POST", "/console/login", { body: { name: "ana", secret: "ana-secret" } })
        expect(locked.status).toBe(429)
        expect(locked.json?.["_tag"]).toBe("TooManyRequests")
        expect(Number(locked.retryAfter)).toBeGreaterThan(800)
        expect(locked.cookie).toBe("")
      })
    )
  })
})
