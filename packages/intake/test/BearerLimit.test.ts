/**
 * Wrong bearer tokens are limited per client address: ten within a minute lock the address
 * out (429 JSON with Retry-After, even for the right token, logged without the token and
 * counted), while the right token from another address is unaffected.
 */
import { describe, expect, layer as layerOf } from "@effect/vitest"
import * as HttpServer from "@effect/platform/HttpServer"
import { IntakeHttp } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Http from "node:http"
import { layer, token } from "./support.js"

/** Every log line of the served intake, with its annotations. */
const logs: Array<string> = []
const capture = Logger.make(({ annotations, message }) => {
  logs.push(`${String(message)} ${JSON.stringify(Object.fromEntries(annotations))}`)
})
const served = layer.pipe(Layer.provide(Logger.replace(Logger.defaultLogger, capture)))

/** A GET from the loopback address `from` (any of 127/8 reaches the server on 127.0.0.1). */
const getFrom = (from: string, bearer: string | undefined) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.async<{ status: number; retryAfter: string | undefined; body: string }>((resume) => {
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      const request = Http.request(
        {
          host: "127.0.0.1",
          port,
          path: "/v1/executions?limit=1",
          localAddress: from,
          headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }
        },
        (response) => {
          let body = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => (body += chunk))
          response.on("end", () =>
            resume(
              Effect.succeed({
                status: response.statusCode ?? 0,
                retryAfter: response.headers["retry-after"],
                body
              })
            )
          )
        }
      )
      request.on("error", (error) => resume(Effect.die(error)))
      request.end()
    })
  )

describe("the bearer token's rate limit", () => {
  layerOf(served, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect(
      "ten wrong tokens lock the address out (429, Retry-After, logged without the token); another address is not",
      () =>
        Effect.gen(function* () {
          const lockouts = (yield* Metric.value(IntakeHttp.bearerLockouts)).count
          const wrong = "wrong-token-0123456789"
          const statuses: Array<number> = []
          for (let i = 0; i < 10; i++) statuses.push((yield* getFrom("127.0.0.2", `${wrong}-${i}`)).status)
          expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 401, 401, 401, 429])
          const locked = yield* getFrom("127.0.0.2", token)
          expect(locked.status).toBe(429)
          expect(Number(locked.retryAfter)).toBeGreaterThanOrEqual(1)
          expect(Number(locked.retryAfter)).toBeLessThanOrEqual(60)
          expect(JSON.parse(locked.body)).toMatchObject({
            _tag: "TooManyRequests",
            retryAfterSeconds: expect.any(Number)
          })
          expect((yield* Metric.value(IntakeHttp.bearerLockouts)).count).toBe(lockouts + 1)
          expect(
            (yield* Metric.value(Metric.tagged(IntakeHttp.bearerFailures, "reason", "locked"))).count
          ).toBeGreaterThanOrEqual(1)
          // Another address, the right token: unaffected.
          expect((yield* getFrom("127.0.0.3", token)).status).toBe(200)
          expect(logs.join("\n")).not.toContain(token)
        })
    )

    it.effect("requests without a bearer token (a console's, with its cookie) are not wrong tokens", () =>
      Effect.gen(function* () {
        for (let i = 0; i < 15; i++) expect((yield* getFrom("127.0.0.5", undefined)).status).toBe(401)
        expect((yield* getFrom("127.0.0.5", token)).status).toBe(200)
      })
    )

    it.effect("the lock-out is logged with the address, never the token", () =>
      Effect.gen(function* () {
        const wrong = "another-wrong-token-9876543210"
        yield* Effect.forEach(Array.from({ length: 10 }), () => getFrom("127.0.0.4", wrong), {
          discard: true
        })
        const line = logs.find(
          (l) => l.includes("intake bearer token locked out") && l.includes('"client":"127.0.0.4"')
        )
        expect(line).toBeDefined()
        expect(logs.join("\n")).not.toContain(wrong)
      })
    )
  })
})
