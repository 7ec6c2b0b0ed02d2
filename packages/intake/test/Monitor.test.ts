import { describe, expect, layer as layerOf } from "@effect/vitest"
import * as HttpServer from "@effect/platform/HttpServer"
import { EventStore } from "@tillflow/engine"
import { Stack } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { call, layer, readLive, token } from "./support.js"

const serials = Effect.map(Stack.Cloud, (cloud) => cloud.terminals.map((t) => t.serialNumber))

const sale = (idempotencyKey: string, serialNumber: string) => ({
  idempotencyKey,
  request: { operation: "sale", serial_number: serialNumber, amount: "1000", currency: "EUR" }
})

const base = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : ""
)

/** A request with a cookie instead of the bearer token. */
const withCookie = (method: string, path: string, cookie: string, body?: unknown) =>
  Effect.flatMap(base, (url) =>
    Effect.promise(async () => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { cookie, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return {
        status: response.status,
        setCookie: response.headers.get("set-cookie"),
        text: await response.text()
      }
    })
  )

const search = (query: string) => Effect.map(call("GET", `/v1/monitor/executions?${query}`), (r) => r.json)

/** Polls `effect` until `done` holds (the log follower runs in its own fiber). */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (a: A) => boolean) =>
  effect.pipe(
    Effect.filterOrFail(done, () => "not yet"),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100))))
  )

describe("the monitor's routes and the console's session", () => {
  // Real time: the log follower polls, and executions are dated by the clock.
  layerOf(layer, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect(
      "the console's session cookie opens the intake API like the bearer token; logout or a forged id does not",
      () =>
        Effect.gen(function* () {
          const refused = yield* withCookie("POST", "/console/login", "", { token: "not-the-token" })
          expect(refused.status).toBe(401)
          expect(refused.setCookie).toBeNull()
          const login = yield* withCookie("POST", "/console/login", "", { token })
          expect(login.status).toBe(200)
          expect(login.setCookie).toMatch(
            /^tillflow_console=[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict/
          )
          const cookie = (login.setCookie ?? "").split(";")[0] ?? ""
          expect((yield* withCookie("GET", "/v1/monitor/alerts", cookie)).status).toBe(200)
          expect((yield* withCookie("GET", "/v1/executions", cookie)).status).toBe(200)
          expect(
            (yield* withCookie("GET", "/v1/monitor/alerts", `tillflow_console=${"0".repeat(64)}`)).status
          ).toBe(401)
          expect((yield* call("GET", "/v1/monitor/alerts", { token: null })).status).toBe(401)
          expect((yield* withCookie("POST", "/console/logout", cookie)).status).toBe(200)
          expect((yield* withCookie("GET", "/v1/monitor/alerts", cookie)).status).toBe(401)
        })
    )

    it.effect(
      "executions are found by idempotency key, reference or id, filtered by terminal, status and date",
      () =>
        Effect.gen(function* () {
          const [one = "", two = ""] = yield* serials
          const first = (yield* call("POST", "/v1/operations", {
            body: JSON.stringify(sale("search-one", one))
          })).json
          const second = (yield* call("POST", "/v1/operations", {
            body: JSON.stringify(sale("search-two", two))
          })).json
          const ids = (view: { executions: ReadonlyArray<{ executionId: string }> }) =>
            view.executions.map((e) => e.executionId)
          expect(ids(yield* search("q=search-one"))).toEqual([first.executionId])
          expect(ids(yield* search(`q=${second.attributes.transactionReference}`))).toEqual([
            second.executionId
          ])
          expect(ids(yield* search(`q=${first.executionId}`))).toEqual([first.executionId])
          expect(ids(yield* search(`q=${first.executionId}&serialNumber=${two}`))).toEqual([])
          expect(ids(yield* search(`serialNumber=${two}`))).toEqual([second.executionId])
          const today = new Date().toISOString().slice(0, 10)
          expect(ids(yield* search(`from=${today}&to=${today}&operation=sale`))).toEqual([
            second.executionId,
            first.executionId
          ])
          expect((yield* search(`from=${today}&to=${today}&operation=sale`)).total).toBe(2)
          expect(ids(yield* search("from=2999-01-01"))).toEqual([])
          expect(ids(yield* search("status=succeeded"))).toEqual([])
          const bad = yield* call("GET", "/v1/monitor/executions?to=yesterday")
          expect(bad.status).toBe(400)
          expect(bad.json.message).toContain('to "yesterday" is not a date: use ISO 8601')
        })
    )

    it.effect("a terminal is idle until an operation waits for it, then busy with its oldest one", () =>
      Effect.gen(function* () {
        const [one = "", , three = ""] = yield* serials
        type Terminal = {
          serialNumber: string
          state: string
          queued: number
          running?: { executionId: string }
        }
        const terminals = Effect.map(
          call("GET", "/v1/monitor/terminals"),
          (r): ReadonlyArray<Terminal> => r.json
        )
        expect((yield* terminals).find((t) => t.serialNumber === three)).toMatchObject({
          state: "idle",
          queued: 0
        })
        // No engine worker runs here: started operations wait.
        const started = (yield* call("POST", "/v1/operations", {
          body: JSON.stringify(sale("busy-three", three))
        })).json
        yield* call("POST", "/v1/operations", { body: JSON.stringify(sale("busy-three-again", three)) })
        const after = yield* terminals
        expect(after.find((t) => t.serialNumber === three)).toMatchObject({
          state: "busy",
          queued: 1,
          running: { executionId: started.executionId }
        })
        // The first terminal still runs the sale the search test started on it.
        expect(after.find((t) => t.serialNumber === one)?.state).toBe("busy")
        const busy = (yield* call("GET", "/metrics")).text
          .split("\n")
          .find((l) => l.startsWith('tillflow_terminals{state="busy"}'))
        expect(Number(busy?.split(" ")[1])).toBe(after.filter((t) => t.state === "busy").length)
      })
    )

    it.effect(
      "mismatches, unresolved outcomes and late results of the log are alerts, most severe first; a guid finds its execution",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const [one = ""] = yield* serials
          const started = (yield* call("POST", "/v1/operations", {
            body: JSON.stringify(sale("alerted", one))
          })).json
          const stream = `payment-${started.executionId}`
          const guid = "01236fc0-8192-11eb-9aca-ad4b0e95f241"
          yield* store.append(stream, EventStore.AnyVersion, [
            {
              type: "PaymentAuthorised",
              data: { facts: { efttransactionID: guid, finStatus: "AUTHORISED" }, at: 1 }
            },
            {
              type: "LateResultRecorded",
              data: { attemptId: "a1", resultHash: "h", finStatus: "AUTHORISED", recovered: true, at: 2 }
            },
            {
              type: "ResultMismatch",
              data: {
                attemptId: "a1",
                recorded: "DECLINED",
                received: "AUTHORISED",
                resultHash: "h",
                source: "callback",
                at: 3
              }
            },
            {
              type: "OutcomeUnresolved",
              data: { attemptId: "a2", attempt: 2, message: "the status endpoint never answered", at: 4 }
            }
          ])
          type Alerts = { caughtUp: boolean; alerts: ReadonlyArray<{ kind: string }> }
          const view = yield* eventually(
            Effect.map(call("GET", "/v1/monitor/alerts"), (r): Alerts => r.json),
            (v) => v.alerts.length >= 3
          )
          expect(view.caughtUp).toBe(true)
          expect(view.alerts.map((a) => a.kind)).toEqual(["mismatch", "unresolved", "late-result"])
          expect(view.alerts[0]).toMatchObject({
            executionId: started.executionId,
            message: expect.stringContaining("a result says AUTHORISED but DECLINED was recorded")
          })
          // The gauges to page on: the open alerts by kind, at scrape time.
          const scrape = (yield* call("GET", "/metrics")).text.split("\n")
          expect(scrape).toContain('tillflow_alerts_open{kind="mismatch",state="open"} 1')
          expect(scrape).toContain('tillflow_alerts_open{kind="unresolved",state="open"} 1')
          expect(scrape).toContain('tillflow_alerts_open{kind="late-result",state="open"} 1')
          const found = yield* search(`q=${guid}`)
          expect(found.executions.map((e: { executionId: string }) => e.executionId)).toEqual([
            started.executionId
          ])
        })
    )

    it.effect("the live feed sends every event stored after it opened, as server-sent events", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const url = yield* base
        const received = yield* readLive(
          `${url}/v1/monitor/live`,
          token,
          () =>
            Effect.runPromise(
              Effect.asVoid(
                store.append("live-probe", EventStore.NoStream, [{ type: "Probed", data: { n: 1 } }])
              )
            ),
          '"streamId":"live-probe"'
        )
        expect(received.type).toMatch(/^text\/event-stream/)
        expect(received.text).toMatch(
          /id: \d+:\d+\nevent: log\ndata: \{"position":"\d+:\d+","streamId":"live-probe","type":"Probed"/
        )
      })
    )
  })
})
