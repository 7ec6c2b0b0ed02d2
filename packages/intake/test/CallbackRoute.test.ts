/**
 * The worker's callback route: on the intake's port, served by `CallbackHttp`'s plain
 * listener (the receiver's lean path), not by the intake's @effect/platform app. What the
 * route did before holds: the token checked, the body bounded (413), 200 only once the
 * result is stored, no token in any log line.
 */
import { describe, expect, it } from "@effect/vitest"
import { CallbackRegistration } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as http from "node:http"
import { call, layer } from "./support.js"

/** Every log record of the served stack, as its message and annotations in JSON. */
const logged: Array<string> = []
const capture = Logger.make(({ annotations, message }) => {
  logged.push(JSON.stringify({ message, annotations: Object.fromEntries(annotations) }))
})
const served = layer.pipe(Layer.provide(Logger.replace(Logger.defaultLogger, capture)))

const attemptId = "0b7a6c1e-5d4f-4e3a-9b2c-1d0e9f8a7b6c"
const token = "worker-callback-token-for-tests-only"
const result = JSON.stringify({ finStatus: "AUTHORISED", totalAmount: 1050, currency: "EUR" })

/** Registers an attempt as the protocol's send step does, with the hash of `token`. */
const register = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const event = yield* CallbackRegistration.events.encode(
    CallbackRegistration.AttemptRegistered.make({
      attemptId,
      attempt: 1,
      workflowName: "TerminalOperation",
      executionId: "not-running",
      paymentStream: "payment-callback-route",
      deferredName: CallbackRegistration.resultDeferred(attemptId).name,
      operation: "sale",
      serialNumber: "0821032398",
      delivery: "callback",
      tokenHash: yield* CallbackRegistration.hashToken(token),
      registeredAt: 0
    })
  )
  yield* store.append(CallbackRegistration.attemptStream(attemptId), EventStore.NoStream, [event])
}).pipe(Effect.orDie)

const attemptEvents = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(Effect.orDie(store.readStream(CallbackRegistration.attemptStream(attemptId))), (events) =>
    events.map((e) => e.type)
  )
)

/** A delivery to the worker's port with `AUTH-TOKEN`, its status and body. */
const deliver = (auth: string, body: string) =>
  Effect.gen(function* () {
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    return yield* Effect.promise(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/callbacks/${attemptId}`, {
        method: "POST",
        headers: { "AUTH-TOKEN": auth, "content-type": "application/json" },
        body
      })
      return { status: response.status, text: await response.text() }
    })
  })

/** A body over 256 KiB sent in chunks without a length; the status, or 0 without an answer in 10 s. */
const chunkedOverBound = Effect.gen(function* () {
  const server = yield* HttpServer.HttpServer
  const port = server.address._tag === "TcpAddress" ? server.address.port : 0
  return yield* Effect.async<number>((resume) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: `/callbacks/${attemptId}`,
        headers: { "transfer-encoding": "chunked", "AUTH-TOKEN": token },
        timeout: 10_000
      },
      (response) => {
        response.resume()
        resume(Effect.succeed(response.statusCode ?? 0))
      }
    )
    request.on("timeout", () => {
      request.destroy()
      resume(Effect.succeed(0))
    })
    // The answer may come before the whole body is sent, and the connection closed.
    request.on("error", () => {})
    const chunk = `"${"x".repeat(16 * 1024 - 2)}"`
    request.write(`{"finStatus":"AUTHORISED","r":[`)
    for (let i = 0; i < 20; i++) request.write(i === 0 ? chunk : `,${chunk}`)
    request.end("]}")
  })
})

describe("the worker's callback route", () => {
  it.layer(served, { timeout: 60_000 })((it) => {
    it.effect(
      "is answered on the intake's port by the plain listener: no request log line for it (the API's requests have theirs), and a chunked body over 256 KiB gets 413",
      () =>
        Effect.gen(function* () {
          yield* register
          logged.length = 0
          expect((yield* call("GET", "/health")).status).toBe(200)
          expect((yield* deliver("a-wrong-token", result)).status).toBe(403)
          expect(yield* chunkedOverBound).toBe(413)
          const requestLines = logged.filter((line) => line.includes('"http.method"'))
          expect(requestLines.some((line) => line.includes("GET /health 200"))).toBe(true)
          // The intake's request logger never saw a callback: they do not go through its app.
          expect(requestLines.filter((line) => line.includes("/callbacks/"))).toEqual([])
          expect(yield* attemptEvents).toEqual(["AttemptRegistered"])
        })
    )

    it.effect(
      "a result with the attempt's token gets 200 once ResultReceived is stored; the token reaches no log line",
      () =>
        Effect.gen(function* () {
          logged.length = 0
          const reply = yield* deliver(token, result)
          expect(reply).toEqual({ status: 200, text: '{"received":true}' })
          expect(yield* attemptEvents).toEqual(["AttemptRegistered", "ResultReceived"])
          expect(logged.some((line) => line.includes("callback result recorded"))).toBe(true)
          expect(logged.filter((line) => line.includes(token))).toEqual([])
          // The intake's API on the same port answers as before.
          expect((yield* call("GET", "/v1/executions")).status).toBe(200)
        })
    )
  })
})
