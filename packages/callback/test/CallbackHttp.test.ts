import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { describe, expect, it } from "@effect/vitest"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import {
  CallbackRegistration,
  PaymentEvents,
  Identifiers,
  Money,
  ResultRedaction,
  TerminalOperations
} from "@tillflow/core"
import { EventStore, MemoryEventStore, Redaction } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import {
  Answers,
  Cloud,
  everything,
  firstAttempt,
  hostApp,
  layer,
  post,
  register,
  runToEnd,
  streamOf
} from "./support.js"

const attemptId = "6f9619ff-8b86-4d01-b42d-00cf4fc964ff"
const token = "s3cret-token-value-for-tests-only"
const result = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    finStatus: "AUTHORISED",
    totalAmount: 1050,
    currency: "EUR",
    maskedCardNumber: "411111******1111",
    ...fields
  })
const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const types = (events: ReadonlyArray<EventStore.RecordedEvent>) => events.map((e) => e.type)

describe("CallbackHttp: authentication", () => {
  it.effect("an unknown attempt gets 401 with no detail, recorded as a security event", () =>
    Effect.gen(function* () {
      const reply = yield* post(attemptId, result(), token)
      expect(reply).toEqual({ status: 401, text: "" })
      const refused = yield* streamOf(CallbackRegistration.securityStream)
      expect(types(refused)).toEqual(["CallbackRefused"])
      expect(refused[0]?.data).toMatchObject({ attemptId, reason: "UnknownAttempt" })
      const notAnId = yield* post("../../etc", result(), token)
      expect(notAnId.status).toBeGreaterThanOrEqual(400)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a missing token gets 401, a wrong one 403; neither token is stored anywhere", () =>
    Effect.gen(function* () {
      yield* register(attemptId, token)
      expect((yield* post(attemptId, result(), undefined)).status).toBe(401)
      const wrong = "wrong-token-value-1234567890"
      expect(yield* post(attemptId, result(), wrong)).toEqual({ status: 403, text: "" })
      const refused = yield* streamOf(CallbackRegistration.securityStream)
      expect(refused.map((e) => (e.data as { reason: string }).reason)).toEqual([
        "MissingToken",
        "WrongToken"
      ])
      const dump = JSON.stringify((yield* everything).map((e) => [e.data, e.metadata]))
      expect(dump).not.toContain(wrong)
      expect(dump).not.toContain(token)
      expect(types(yield* streamOf(CallbackRegistration.attemptStream(attemptId)))).toEqual([
        "AttemptRegistered"
      ])
    }).pipe(Effect.provide(layer()))
  )
})

describe("CallbackHttp: the receiver on its own", () => {
  it.effect(
    "answers POST /callbacks/<attemptId> only (a query string ignored, the id percent-decoded); any other method or path gets 404 and stores nothing",
    () =>
      Effect.gen(function* () {
        const client = yield* HttpClient.HttpClient
        const send = (method: "POST" | "GET" | "PUT", url: string) =>
          client
            .execute(
              HttpClientRequest.make(method)(url).pipe(
                method === "GET" ? (r) => r : HttpClientRequest.bodyText(result(), "application/json"),
                HttpClientRequest.setHeader("AUTH-TOKEN", token)
              )
            )
            .pipe(
              Effect.map((response) => response.status),
              Effect.orDie
            )
        yield* register(attemptId, token)
        expect(yield* send("GET", `/callbacks/${attemptId}`)).toBe(404)
        expect(yield* send("PUT", `/callbacks/${attemptId}`)).toBe(404)
        expect(yield* send("POST", `/callbacks/${attemptId}/more`)).toBe(404)
        expect(yield* send("POST", "/callbacks/")).toBe(404)
        expect(yield* send("POST", `/elsewhere/${attemptId}`)).toBe(404)
        expect(types(yield* everything)).toEqual(["AttemptRegistered"])
        expect(yield* send("POST", `/callbacks/${attemptId.replace("-", "%2D")}?from=terminal`)).toBe(200)
        expect(types(yield* streamOf(CallbackRegistration.attemptStream(attemptId)))).toEqual([
          "AttemptRegistered",
          "ResultReceived"
        ])
      }).pipe(Effect.provide(layer()))
  )
})

describe("CallbackHttp: bodies", () => {
  it.effect("a body over 256 KiB gets 413, a body that is not a JSON object 400", () =>
    Effect.gen(function* () {
      yield* register(attemptId, token)
      const big = result({ merchantReceipt: "x".repeat(300 * 1024) })
      expect((yield* post(attemptId, big, token)).status).toBe(413)
      expect((yield* post(attemptId, "{not json", token)).status).toBe(400)
      expect((yield* post(attemptId, "[1,2]", token)).status).toBe(400)
      expect(types(yield* streamOf(CallbackRegistration.attemptStream(attemptId)))).toEqual([
        "AttemptRegistered"
      ])
    }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "a result that does not decode is stored raw, acknowledged, and surfaced as ResultUndecodable",
    () =>
      Effect.gen(function* () {
        yield* register(attemptId, token)
        const reply = yield* post(attemptId, result({ finStatus: 42, totalAmount: "lots" }), token)
        expect(reply.status).toBe(200)
        const events = yield* streamOf(CallbackRegistration.attemptStream(attemptId))
        expect(types(events)).toEqual(["AttemptRegistered", "ResultUndecodable"])
        expect(events[1]?.data).toMatchObject({ raw: { finStatus: 42, totalAmount: "lots" } })
      }).pipe(Effect.provide(layer()))
  )

  it.effect("an unmasked PAN in a delivery is never stored; the field is named as redacted", () =>
    Effect.gen(function* () {
      yield* register(attemptId, token)
      const pan = "6011000990139424"
      expect(
        (yield* post(attemptId, result({ finStatus: "PROCESSED", unMaskedPan: pan }), token)).status
      ).toBe(200)
      const events = yield* everything
      expect(JSON.stringify(events.map((e) => e.data))).not.toContain(pan)
      const received = events.find((e) => e.type === "ResultReceived")
      expect(received?.data).toMatchObject({ redactedFields: ["$.unMaskedPan"], finStatus: "PROCESSED" })
      for (const e of events) {
        expect(
          Redaction.check({ streamId: e.streamId, type: e.type, data: e.data, metadata: e.metadata })
        ).toEqual(Option.none())
      }
    }).pipe(Effect.provide(layer()))
  )

  it.effect("the same result twice, and its recovered resend, are acknowledged and recorded once", () =>
    Effect.gen(function* () {
      yield* register(attemptId, token)
      expect((yield* post(attemptId, result(), token)).status).toBe(200)
      expect((yield* post(attemptId, result(), token)).status).toBe(200)
      expect((yield* post(attemptId, result({ recoveredTransaction: true }), token)).status).toBe(200)
      const events = yield* streamOf(CallbackRegistration.attemptStream(attemptId))
      expect(types(events)).toEqual(["AttemptRegistered", "ResultReceived"])
    }).pipe(Effect.provide(layer()))
  )
})

describe("CallbackHttp with the payment protocol", () => {
  it.effect(
    "a sale in callback mode is settled by the delivery over HTTP, answered 200 after it is stored",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(1050n, "EUR") },
            { idempotencyKey: "h1", delivery: "callback" }
          )
        )
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("callback")
        expect(yield* Answers).toEqual([200])
        const cloud = yield* Cloud
        expect(cloud.recorded.statusQueries).toHaveLength(0)
        const attempt = (yield* everything).find((e) => e.type === "ResultReceived")
        expect(attempt).toBeDefined()
      }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "recovered resends after completion are acknowledged and recorded once; the workflow completes once",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(1050n, "EUR") },
            { idempotencyKey: "h2", delivery: "callback" }
          )
        )
        expect(Exit.isSuccess(exit) ? "completed" : Cause.pretty(exit.cause)).toBe("completed")
        yield* runToEnd(Effect.sleep("20 seconds"))
        expect(yield* Answers).toEqual([200, 200, 200])
        const all = yield* everything
        expect(all.filter((e) => e.type === "ResultReceived")).toHaveLength(1)
        expect(all.filter((e) => e.type === "PaymentAuthorised")).toHaveLength(1)
        expect(all.filter((e) => e.type === "LateResultRecorded")).toHaveLength(0)
      }).pipe(Effect.provide(layer({ scripts: [{ deliveries: 3 }] })))
  )

  it.effect("a late result that disagrees with the settled outcome raises ResultMismatch", () =>
    Effect.gen(function* () {
      // No callback in time: the status endpoint settles it AUTHORISED; then a DECLINED result arrives.
      const exit = yield* runToEnd(
        TerminalOperations.sale(
          { ...terminal, amount: Money.make(1050n, "EUR") },
          { idempotencyKey: "h3", delivery: "callback" }
        )
      )
      expect(Exit.isSuccess(exit) && exit.value.facts.source).toBe("status")
      yield* runToEnd(Effect.sleep("10 minutes"))
      expect(yield* Answers).toEqual([200])
      const all = yield* everything
      const mismatch = all.find((e) => e.type === "ResultMismatch")
      expect(mismatch?.data).toMatchObject({ recorded: "AUTHORISED", received: "DECLINED" })
      expect(all.filter((e) => e.type === "LateResultRecorded")).toHaveLength(1)
    }).pipe(
      Effect.provide(
        layer({
          scripts: [
            {
              result: { finStatus: "DECLINED" },
              statusResult: { finStatus: "AUTHORISED" },
              deliveryDelay: "5 minutes"
            }
          ]
        })
      )
    )
  )

  it.effect(
    "the attempt's registration, the result the receiver appends and its notes of the late result of a merchant's sale name that merchant as their tenant, as the sale's own events do",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(1050n, "EUR") },
            { idempotencyKey: "h3-tenant", delivery: "callback" }
          ).pipe(Tenant.within("cafe-sol"))
        )
        expect(Exit.isSuccess(exit) && exit.value.facts.source).toBe("status")
        yield* runToEnd(Effect.sleep("10 minutes"))
        const all = yield* everything
        const notes = all.filter((e) => e.type === "LateResultRecorded" || e.type === "ResultMismatch")
        expect(notes.map((e) => [e.type, Tenant.ofMetadata(e.metadata)])).toEqual([
          ["LateResultRecorded", "cafe-sol"],
          ["ResultMismatch", "cafe-sol"]
        ])
        // The attempt's registration (the execution's) and the result the receiver appended.
        const attempt = all.filter((e) => e.type === "AttemptRegistered" || e.type === "ResultReceived")
        expect(attempt.map((e) => [e.type, Tenant.ofMetadata(e.metadata)])).toEqual([
          ["AttemptRegistered", "cafe-sol"],
          ["ResultReceived", "cafe-sol"]
        ])
      }).pipe(
        Effect.provide(
          layer({
            scripts: [
              {
                result: { finStatus: "DECLINED" },
                statusResult: { finStatus: "AUTHORISED" },
                deliveryDelay: "5 minutes"
              }
            ]
          })
        )
      )
  )

  it.effect(
    "a late result whose first forwarding was lost (stopped after its 2xx) is noted when it is sent again",
    () =>
      Effect.gen(function* () {
        // No callback in time: the status endpoint settles it AUTHORISED.
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(1050n, "EUR") },
            { idempotencyKey: "h-resend", delivery: "callback" }
          )
        )
        expect(Exit.isSuccess(exit) && exit.value.facts.source).toBe("status")
        const { attemptId: lateId, token: lateToken } = yield* firstAttempt
        const body = JSON.stringify({ finStatus: "DECLINED", totalAmount: 1050, currency: "EUR" })
        // A receiver recorded it, answered 200 and stopped before forwarding it: the
        // result is in the attempt's stream, the payment's stream knows nothing of it.
        const sanitised = ResultRedaction.sanitise(JSON.parse(body) as Record<string, unknown>)
        const store = yield* EventStore.EventStore
        yield* store.append(CallbackRegistration.attemptStream(lateId), EventStore.AnyVersion, [
          CallbackRegistration.resultReceivedEvent({
            attemptId: lateId,
            resultHash: yield* CallbackRegistration.resultHash(sanitised.value),
            recovered: false,
            result: sanitised.value,
            redactedFields: sanitised.redactedFields,
            receivedAt: 0,
            finStatus: "DECLINED"
          })
        ])
        // The terminal sends it again: a duplicate, acknowledged and now noted.
        const reply = yield* post(lateId, body, lateToken)
        expect(reply.status).toBe(200)
        yield* (yield* CallbackReceiver.CallbackReceiver).forwarded
        const all = yield* everything
        expect(all.filter((e) => e.type === "ResultReceived")).toHaveLength(1)
        expect(all.filter((e) => e.type === "LateResultRecorded")).toHaveLength(1)
        const mismatch = all.filter((e) => e.type === "ResultMismatch")
        expect(mismatch).toHaveLength(1)
        expect(mismatch[0]?.data).toMatchObject({ recorded: "AUTHORISED", received: "DECLINED" })
      }).pipe(
        Effect.provide(
          layer({
            scripts: [
              { result: { finStatus: "DECLINED" }, statusResult: { finStatus: "AUTHORISED" }, deliver: false }
            ]
          })
        )
      )
  )

  it.effect("a store that cannot take the result gets 503, never 2xx, and the workflow is not resolved", () =>
    Effect.gen(function* () {
      yield* register(attemptId, token)
      const store = yield* EventStore.EventStore
      const before = (yield* store.readStream(CallbackRegistration.attemptStream(attemptId))).length
      const reply = yield* runToEnd(post(attemptId, result(), token))
      expect(Exit.isSuccess(reply) && reply.value.status).toBe(503)
      // Said, not silent: a JSON reason and when to send it again.
      expect(Exit.isSuccess(reply) && JSON.parse(reply.value.text)).toEqual({
        _tag: "Unavailable",
        message: expect.stringContaining("send it again")
      })
      expect(Exit.isSuccess(reply) && reply.value.retryAfter).toMatch(/^[0-9]+$/)
      expect((yield* store.readStream(CallbackRegistration.attemptStream(attemptId))).length).toBe(before)
    }).pipe(
      Effect.provide(
        layer({
          store: Layer.effect(
            EventStore.EventStore,
            Effect.map(MemoryEventStore.make(), ({ store: memory }) => {
              let appends = 0
              return {
                ...memory,
                // The registration goes through; every later append fails.
                append: (
                  streamId: string,
                  expected: EventStore.ExpectedVersion,
                  events: ReadonlyArray<EventStore.NewEvent>
                ) =>
                  ++appends > 1
                    ? Effect.fail(
                        new EventStore.EventStoreError({ operation: "append", detail: "disk full" })
                      )
                    : memory.append(streamId, expected, events)
              } satisfies EventStore.Service
            })
          )
        })
      )
    )
  )
})

describe("CallbackHttp, mounted", () => {
  it.effect("mounts into a host application's router beside its own routes", () =>
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient
      const health = yield* Effect.flatMap(client.get("/health"), (r) => r.text)
      expect(health).toBe("ok")
      yield* register(attemptId, token)
      expect((yield* post(attemptId, result(), token)).status).toBe(200)
      expect(PaymentEvents.paymentStream("x")).toBe("payment-x")
    }).pipe(
      Effect.provide(
        HttpServer.serve(
          HttpRouter.empty.pipe(
            HttpRouter.get("/health", HttpServerResponse.text("ok")),
            HttpRouter.concat(CallbackHttp.router)
          )
        ).pipe(
          Layer.provide(CallbackReceiver.layer),
          Layer.provideMerge(NodeHttpServer.layerTest),
          Layer.provideMerge(MemoryEventStore.layer()),
          Layer.provideMerge(WorkflowEngine.layerMemory)
        )
      )
    )
  )
})

describe("CallbackHttp.layerServer beside a host app, on one port (as the worker serves it)", () => {
  it.live(
    "callbacks are answered by the plain listener and never reach the host app, which answers everything else; once the app is released the rest gets 503 and callbacks are still taken",
    () =>
      Effect.gen(function* () {
        const server = yield* Layer.build(
          CallbackHttp.layerServer({ port: 0, host: "127.0.0.1" }).pipe(
            Layer.provideMerge(CallbackReceiver.layer),
            Layer.provideMerge(MemoryEventStore.layer()),
            Layer.provideMerge(WorkflowEngine.layerMemory)
          )
        )
        const address = Context.get(server, HttpServer.HttpServer).address
        const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
        const send = (method: string, path: string, body?: string, auth?: string) =>
          Effect.promise(async () => {
            const response = await fetch(`${base}${path}`, {
              method,
              headers: auth === undefined ? {} : { "AUTH-TOKEN": auth },
              ...(body === undefined ? {} : { body })
            })
            return { status: response.status, text: await response.text() }
          })
        yield* register(attemptId, token).pipe(Effect.provide(server))
        // No app yet: the callback route alone, 404 elsewhere.
        expect((yield* send("GET", "/health")).status).toBe(404)

        const seen: Array<string> = []
        const app = yield* Scope.make()
        yield* Layer.buildWithScope(hostApp(seen).pipe(Layer.provide(Layer.succeedContext(server))), app)
        expect(yield* send("GET", "/health")).toEqual({ status: 200, text: "ok" })
        expect((yield* send("GET", "/nowhere")).status).toBe(404)
        expect((yield* send("POST", `/callbacks/${attemptId}`, result(), "wrong-token")).status).toBe(403)
        const reply = yield* send("POST", `/callbacks/${attemptId}`, result(), token)
        expect(reply).toEqual({ status: 200, text: '{"received":true}' })
        // The 200 came after the append.
        expect(
          types(yield* streamOf(CallbackRegistration.attemptStream(attemptId)).pipe(Effect.provide(server)))
        ).toEqual(["AttemptRegistered", "ResultReceived"])
        expect(seen).toEqual(["GET /health", "GET /nowhere"])

        // The host shutting down: its app released, the server still listening.
        yield* Scope.close(app, Exit.void)
        expect((yield* send("GET", "/health")).status).toBe(503)
        const again = yield* send("POST", `/callbacks/${attemptId}`, result(), token)
        expect(again.status).toBe(200)
        expect(seen).toEqual(["GET /health", "GET /nowhere"])
      }).pipe(Effect.scoped)
  )
})

describe("CallbackHttp.layerServer for a host app to come (the worker's intake)", () => {
  it.live(
    "before the app is served and after it is released, every other request gets 503 with a JSON reason, Retry-After and Connection: close; callbacks are taken throughout",
    () =>
      Effect.gen(function* () {
        const server = yield* Layer.build(
          CallbackHttp.layerServer({
            port: 0,
            host: "127.0.0.1",
            unserved: {
              starting: { message: "the worker is starting", retryAfterSeconds: 2 },
              stopping: { message: "the worker is stopping", retryAfterSeconds: 7 }
            }
          }).pipe(
            Layer.provideMerge(CallbackReceiver.layer),
            Layer.provideMerge(MemoryEventStore.layer()),
            Layer.provideMerge(WorkflowEngine.layerMemory)
          )
        )
        const address = Context.get(server, HttpServer.HttpServer).address
        const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
        const send = (method: string, path: string, body?: string, auth?: string) =>
          Effect.promise(async () => {
            const response = await fetch(`${base}${path}`, {
              method,
              headers: auth === undefined ? {} : { "AUTH-TOKEN": auth },
              ...(body === undefined ? {} : { body })
            })
            return {
              status: response.status,
              retryAfter: response.headers.get("retry-after"),
              connection: response.headers.get("connection"),
              contentType: response.headers.get("content-type"),
              text: await response.text()
            }
          })
        yield* register(attemptId, token).pipe(Effect.provide(server))

        const starting = yield* send("POST", "/v1/operations", "{}")
        expect(starting).toEqual({
          status: 503,
          retryAfter: "2",
          connection: "close",
          contentType: "application/json",
          text: JSON.stringify({ _tag: "Unavailable", message: "the worker is starting" })
        })
        expect((yield* send("POST", `/callbacks/${attemptId}`, result(), token)).status).toBe(200)

        const seen: Array<string> = []
        const app = yield* Scope.make()
        yield* Layer.buildWithScope(hostApp(seen).pipe(Layer.provide(Layer.succeedContext(server))), app)
        expect((yield* send("GET", "/health")).status).toBe(200)
        yield* Scope.close(app, Exit.void)

        const stopping = yield* send("GET", "/health")
        expect(stopping).toEqual({
          status: 503,
          retryAfter: "7",
          connection: "close",
          contentType: "application/json",
          text: JSON.stringify({ _tag: "Unavailable", message: "the worker is stopping" })
        })
        expect(seen).toEqual(["GET /health"])
      }).pipe(Effect.scoped)
  )

  it.live(
    "without a host to come, a released app's routes get 503 with a JSON reason and Retry-After, never an empty body",
    () =>
      Effect.gen(function* () {
        const server = yield* Layer.build(
          CallbackHttp.layerServer({ port: 0, host: "127.0.0.1" }).pipe(
            Layer.provideMerge(CallbackReceiver.layer),
            Layer.provideMerge(MemoryEventStore.layer()),
            Layer.provideMerge(WorkflowEngine.layerMemory)
          )
        )
        const address = Context.get(server, HttpServer.HttpServer).address
        const base = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
        const app = yield* Scope.make()
        yield* Layer.buildWithScope(hostApp([]).pipe(Layer.provide(Layer.succeedContext(server))), app)
        yield* Scope.close(app, Exit.void)
        const reply = yield* Effect.promise(async () => {
          const response = await fetch(`${base}/health`)
          return {
            status: response.status,
            retryAfter: response.headers.get("retry-after"),
            json: await response.json()
          }
        })
        expect(reply).toEqual({
          status: 503,
          retryAfter: expect.stringMatching(/^[0-9]+$/),
          json: { _tag: "Unavailable", message: expect.stringContaining("stopping") }
        })
      }).pipe(Effect.scoped)
  )
})

describe("CallbackHttp: the reply waits for the append only", () => {
  it.effect(
    "a result acknowledged but never forwarded (the process stopped): the workflow finds it in the attempt's stream",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(1050n, "EUR") },
            { idempotencyKey: "lost-forward", delivery: "callback" }
          )
        )
        expect(Exit.isSuccess(exit) ? exit.value._tag : Cause.pretty(exit.cause)).toBe("Approved")
        // Settled with the delivered result, not by asking the service.
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("callback")
        expect(yield* Answers).toEqual([200])
        const cloud = yield* Cloud
        expect(cloud.recorded.statusQueries).toHaveLength(0)
        expect(cloud.recorded.sends).toHaveLength(1)
        const all = yield* everything
        expect(all.filter((e) => e.type === "ResultReceived")).toHaveLength(1)
        expect(all.filter((e) => e.type === "PaymentAuthorised")).toHaveLength(1)
      }).pipe(Effect.provide(layer({ loseForwarding: true })))
  )

  it.effect(
    "an operation with no reference to reconcile with, its result never forwarded: settled by the recorded result",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.pingDevice(
            { ...terminal },
            { idempotencyKey: "lost-ping", delivery: "callback" }
          )
        )
        // Without the look into the attempt's stream this would end OutcomeUnresolved after the result timeout.
        expect(Exit.isSuccess(exit) ? exit.value._tag : Cause.pretty(exit.cause)).toBe("Approved")
        expect(yield* Answers).toEqual([200])
        const all = yield* everything
        expect(all.filter((e) => e.type === "DevicePinged")).toHaveLength(1)
        expect(all.filter((e) => e.type === "OutcomeUnresolved")).toHaveLength(0)
      }).pipe(Effect.provide(layer({ loseForwarding: true })))
  )

  const reads: Array<string> = []
  const countingStore = Layer.effect(
    EventStore.EventStore,
    Effect.map(MemoryEventStore.make(), ({ store }) => ({
      ...store,
      readStream: (streamId: string, options?: EventStore.ReadStreamOptions) => {
        reads.push(streamId)
        return store.readStream(streamId, options)
      },
      append: (
        streamId: string,
        expected: EventStore.ExpectedVersion,
        events: ReadonlyArray<EventStore.NewEvent>
      ) => {
        reads.push(`append ${streamId} ${events.map((e) => e.type).join(",")}`)
        return store.append(streamId, expected, events)
      }
    }))
  )

  it.effect(
    "the protocol notes the attempts it registers: the receiver appends the result without a read",
    () =>
      Effect.gen(function* () {
        reads.length = 0
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: Money.make(1050n, "EUR") },
            { idempotencyKey: "noted", delivery: "callback" }
          )
        )
        expect(Exit.isSuccess(exit) && exit.value.facts.source).toBe("callback")
        const registered = reads.findIndex(
          (r) => r.startsWith("append attempt-") && r.endsWith("AttemptRegistered")
        )
        const received = reads.findIndex(
          (r) => r.startsWith("append attempt-") && r.endsWith("ResultReceived")
        )
        expect(registered).toBeGreaterThanOrEqual(0)
        expect(received).toBeGreaterThan(registered)
        expect(reads.slice(registered, received).filter((r) => r.startsWith("attempt-"))).toEqual([])
      }).pipe(Effect.provide(layer({ store: countingStore })))
  )

  it.effect(
    "an attempt the workflows noted is checked against the noted hash: no read of its stream, wrong token refused",
    () =>
      Effect.gen(function* () {
        const attempts = yield* CallbackRegistration.RegisteredAttempts
        yield* register(attemptId, token)
        const registration = (yield* streamOf(CallbackRegistration.attemptStream(attemptId)))[0]
        attempts.note({
          registration: registration?.data as CallbackRegistration.Registration,
          version: 1,
          resultHashes: []
        })
        reads.length = 0
        const receiver = yield* CallbackReceiver.CallbackReceiver
        const wrong = yield* receiver.receive({
          attemptId,
          token: Option.some("wrong-token-value-1234567890"),
          body: result()
        })
        expect(wrong).toMatchObject({ _tag: "Refused", status: 403, reason: "WrongToken" })
        const first = yield* receiver.receive({ attemptId, token: Option.some(token), body: result() })
        expect(first).toEqual({ _tag: "Acknowledged", status: 200, duplicate: false })
        // The same result again: known as recorded, not appended again.
        const again = yield* receiver.receive({ attemptId, token: Option.some(token), body: result() })
        expect(again).toEqual({ _tag: "Acknowledged", status: 200, duplicate: true })
        yield* receiver.forwarded
        expect(reads.filter((s) => s === CallbackRegistration.attemptStream(attemptId))).toEqual([])
        expect(types(yield* streamOf(CallbackRegistration.attemptStream(attemptId)))).toEqual([
          "AttemptRegistered",
          "ResultReceived"
        ])
        expect(attempts.get(attemptId)?.version).toBe(2)
        expect(types(yield* streamOf(CallbackRegistration.securityStream))).toEqual(["CallbackRefused"])
      }).pipe(Effect.provide(layer({ store: countingStore })))
  )

  it.effect(
    "a noted version gone stale (another process appended) costs a read: a result there is not recorded twice",
    () =>
      Effect.gen(function* () {
        const attempts = yield* CallbackRegistration.RegisteredAttempts
        const store = yield* EventStore.EventStore
        yield* register(attemptId, token)
        const stream = CallbackRegistration.attemptStream(attemptId)
        const registration = (yield* streamOf(stream))[0]
        attempts.note({
          registration: registration?.data as CallbackRegistration.Registration,
          version: 1,
          resultHashes: []
        })
        // Another process's receiver recorded this result already.
        const other = yield* Effect.provide(
          Effect.flatMap(CallbackReceiver.CallbackReceiver, (r) =>
            r.receive({ attemptId, token: Option.some(token), body: result() })
          ),
          CallbackReceiver.layer.pipe(
            Layer.provide(Layer.succeed(EventStore.EventStore, store)),
            Layer.provide(WorkflowEngine.layerMemory),
            // Its own memory: another process.
            Layer.provide(CallbackRegistration.registeredAttemptsLayer())
          )
        )
        expect(other).toMatchObject({ _tag: "Acknowledged", duplicate: false })
        expect(attempts.get(attemptId)?.version).toBe(1)
        const receiver = yield* CallbackReceiver.CallbackReceiver
        const same = yield* receiver.receive({ attemptId, token: Option.some(token), body: result() })
        expect(same).toMatchObject({ _tag: "Acknowledged", duplicate: true })
        const different = yield* receiver.receive({
          attemptId,
          token: Option.some(token),
          body: result({ finStatus: "DECLINED" })
        })
        expect(different).toMatchObject({ _tag: "Acknowledged", duplicate: false })
        yield* receiver.forwarded
        expect(types(yield* streamOf(stream))).toEqual([
          "AttemptRegistered",
          "ResultReceived",
          "ResultReceived"
        ])
        expect(attempts.get(attemptId)?.version).toBe(3)
      }).pipe(Effect.provide(layer()))
  )
})

describe("CallbackReceiver: forwarding after the reply", () => {
  it.live("closing the receiver waits for the forwardings in flight", () =>
    Effect.gen(function* () {
      const resolved: Array<string> = []
      const slowEngine = Layer.effect(
        WorkflowEngine.WorkflowEngine,
        Effect.map(WorkflowEngine.WorkflowEngine, (engine) => ({
          ...engine,
          deferredDone: (_deferred: unknown, options: { readonly deferredName: string }) =>
            Effect.sync(() => resolved.push(options.deferredName)).pipe(Effect.delay("100 millis"))
        }))
      ).pipe(Layer.provide(WorkflowEngine.layerMemory))
      const store = yield* EventStore.EventStore
      yield* register(attemptId, token)
      const reply = yield* Effect.scoped(
        Effect.gen(function* () {
          const receiver = yield* CallbackReceiver.make()
          return yield* receiver.receive({ attemptId, token: Option.some(token), body: result() })
        }).pipe(Effect.provide(slowEngine), Effect.provideService(EventStore.EventStore, store))
      )
      expect(reply).toMatchObject({ _tag: "Acknowledged", duplicate: false })
      expect(resolved).toEqual([CallbackRegistration.resultDeferred(attemptId).name])
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.live("a resend of a result this process forwarded already is not forwarded again", () =>
    Effect.gen(function* () {
      const resolved: Array<string> = []
      const countingEngine = Layer.effect(
        WorkflowEngine.WorkflowEngine,
        Effect.map(WorkflowEngine.WorkflowEngine, (engine) => ({
          ...engine,
          deferredDone: (_deferred: unknown, options: { readonly deferredName: string }) =>
            Effect.sync(() => resolved.push(options.deferredName))
        }))
      ).pipe(Layer.provide(WorkflowEngine.layerMemory))
      const store = yield* EventStore.EventStore
      yield* register(attemptId, token)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const receiver = yield* CallbackReceiver.make()
          const delivery = { attemptId, token: Option.some(token), body: result() }
          expect(yield* receiver.receive(delivery)).toMatchObject({ duplicate: false })
          expect(yield* receiver.receive(delivery)).toMatchObject({ duplicate: true })
          const resend = { ...delivery, body: result({ recoveredTransaction: true }) }
          expect(yield* receiver.receive(resend)).toMatchObject({ duplicate: true })
          yield* receiver.forwarded
          // A different result is forwarded.
          const other = { ...delivery, body: result({ finStatus: "DECLINED" }) }
          expect(yield* receiver.receive(other)).toMatchObject({ duplicate: false })
          yield* receiver.forwarded
        }).pipe(Effect.provide(countingEngine), Effect.provideService(EventStore.EventStore, store))
      )
      const name = CallbackRegistration.resultDeferred(attemptId).name
      expect(resolved).toEqual([name, name])
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})

describe("CallbackReceiver: the forwarders", () => {
  // Attempt ids the store's card-number rule accepts (hex digit runs touch letters).
  const attemptIds = Array.from(
    { length: 24 },
    (_, i) => `6f9619ff-8b86-4d01-b42d-00cf4f${(0x6500 + i).toString(16)}ab`
  )

  it.live(
    "many results delivered at once: each forwarded exactly once, at most `forwardConcurrency` at a time",
    () =>
      Effect.gen(function* () {
        const resolved: Array<string> = []
        let active = 0
        let most = 0
        const slowEngine = Layer.effect(
          WorkflowEngine.WorkflowEngine,
          Effect.map(WorkflowEngine.WorkflowEngine, (engine) => ({
            ...engine,
            deferredDone: (_deferred: unknown, options: { readonly deferredName: string }) =>
              Effect.gen(function* () {
                active++
                most = Math.max(most, active)
                yield* Effect.sleep("20 millis")
                resolved.push(options.deferredName)
                active--
              })
          }))
        ).pipe(Layer.provide(WorkflowEngine.layerMemory))
        const store = yield* EventStore.EventStore
        yield* Effect.forEach(attemptIds, (id) => register(id, token), { discard: true })
        const replies = yield* Effect.scoped(
          Effect.gen(function* () {
            const receiver = yield* CallbackReceiver.make({ forwardConcurrency: 3 })
            const replies = yield* Effect.forEach(
              attemptIds,
              (id) => receiver.receive({ attemptId: id, token: Option.some(token), body: result() }),
              { concurrency: "unbounded" }
            )
            yield* receiver.forwarded
            // `forwarded` waited for every one of them.
            expect(resolved).toHaveLength(attemptIds.length)
            return replies
          }).pipe(Effect.provide(slowEngine), Effect.provideService(EventStore.EventStore, store))
        )
        expect(replies.every((r) => r._tag === "Acknowledged" && !r.duplicate)).toBe(true)
        expect([...resolved].sort()).toEqual(
          attemptIds.map((id) => CallbackRegistration.resultDeferred(id).name).sort()
        )
        expect(most).toBe(3)
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.live(
    "a forwarding that ends without resolving is forgotten: the forwarder goes on, and a resend forwards it again",
    () =>
      Effect.gen(function* () {
        const resolved: Array<string> = []
        let calls = 0
        const failingOnce = Layer.effect(
          WorkflowEngine.WorkflowEngine,
          Effect.map(WorkflowEngine.WorkflowEngine, (engine) => ({
            ...engine,
            deferredDone: (_deferred: unknown, options: { readonly deferredName: string }) =>
              // The first resolution is interrupted from within (not retried by the forwarding).
              calls++ === 0 ? Effect.interrupt : Effect.sync(() => resolved.push(options.deferredName))
          }))
        ).pipe(Layer.provide(WorkflowEngine.layerMemory))
        const store = yield* EventStore.EventStore
        const [first, second] = attemptIds
        if (first === undefined || second === undefined) return yield* Effect.dieMessage("ids")
        yield* register(first, token)
        yield* register(second, token)
        yield* Effect.scoped(
          Effect.gen(function* () {
            // One forwarder: it must survive the first forwarding's end.
            const receiver = yield* CallbackReceiver.make({ forwardConcurrency: 1 })
            const delivery = { attemptId: first, token: Option.some(token), body: result() }
            expect(yield* receiver.receive(delivery)).toMatchObject({ duplicate: false })
            yield* receiver.forwarded
            expect(resolved).toEqual([])
            const other = { attemptId: second, token: Option.some(token), body: result() }
            expect(yield* receiver.receive(other)).toMatchObject({ duplicate: false })
            yield* receiver.forwarded
            expect(resolved).toEqual([CallbackRegistration.resultDeferred(second).name])
            // The resend of the first result: recorded once, forwarded this time.
            expect(yield* receiver.receive(delivery)).toMatchObject({ duplicate: true })
            yield* receiver.forwarded
          }).pipe(Effect.provide(failingOnce), Effect.provideService(EventStore.EventStore, store))
        )
        expect(resolved).toEqual([
          CallbackRegistration.resultDeferred(second).name,
          CallbackRegistration.resultDeferred(first).name
        ])
        expect(types(yield* streamOf(CallbackRegistration.attemptStream(first)))).toEqual([
          "AttemptRegistered",
          "ResultReceived"
        ])
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})

let spanIds = 0
class RecordingSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly spanId = `span-${++spanIds}`
  readonly traceId = "trace-1"
  readonly sampled = true
  status: Tracer.SpanStatus
  readonly attributes = new Map<string, unknown>()
  links: Array<Tracer.SpanLink>
  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Tracer.Span["context"],
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.status = { _tag: "Started", startTime }
    this.links = [...links]
  }
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
  }
  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }
  event(): void {}
  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links.push(...links)
  }
}

describe("CallbackHttp: tracing", () => {
  it.effect("the server's request span records AUTH-TOKEN redacted; the token reaches no span", () =>
    Effect.gen(function* () {
      const spans: Array<RecordingSpan> = []
      const recording = Tracer.make({
        span: (name, parent, context, links, startTime, kind) => {
          const span = new RecordingSpan(name, parent, context, links, startTime, kind)
          spans.push(span)
          return span
        },
        context: (f) => f()
      })
      yield* Effect.gen(function* () {
        yield* register(attemptId, token)
        const reply = yield* post(attemptId, result(), token)
        expect(reply.status).toBe(200)
      }).pipe(
        Effect.provide(layer({ transport: "platform" }).pipe(Layer.provide(Layer.setTracer(recording))))
      )
      const server = spans.filter((span) => span.kind === "server")
      // The platform traced the request and recorded its headers (so the check below means something).
      expect(server.length).toBeGreaterThanOrEqual(1)
      expect(
        server.some((span) => span.attributes.get("http.request.header.auth-token") === "<redacted>")
      ).toBe(true)
      const text = spans
        .map((span) => JSON.stringify([span.name, [...span.attributes].map(([k, v]) => [k, String(v)])]))
        .join("\n")
      expect(text).not.toContain(token)
    })
  )

  it.effect(
    "served by the plain listener, the receiver's span is recorded and the token reaches no span",
    () =>
      Effect.gen(function* () {
        const spans: Array<RecordingSpan> = []
        const recording = Tracer.make({
          span: (name, parent, context, links, startTime, kind) => {
            const span = new RecordingSpan(name, parent, context, links, startTime, kind)
            spans.push(span)
            return span
          },
          context: (f) => f()
        })
        yield* Effect.gen(function* () {
          yield* register(attemptId, token)
          const reply = yield* post(attemptId, result(), token)
          expect(reply.status).toBe(200)
        }).pipe(
          Effect.provide(layer({ transport: "listener" }).pipe(Layer.provide(Layer.setTracer(recording))))
        )
        // The listener runs on the layer's runtime, so the installed tracer sees the receiver's work.
        expect(spans.map((span) => span.name)).toContain("CallbackReceiver.receive")
        const text = spans
          .map((span) => JSON.stringify([span.name, [...span.attributes].map(([k, v]) => [k, String(v)])]))
          .join("\n")
        expect(text).not.toContain(token)
      })
  )
})
