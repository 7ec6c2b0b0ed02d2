/**
 * Test support: a simulator served on loopback per test, and a small fetch-based client
 * for the service routes and the admin API (the typed client is another package's job).
 */
import { SimulatorServer } from "@tillflow/simulator"
import { instantTimings } from "@tillflow/simulator/testing"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface Reply {
  readonly status: number
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

export const zeroTimings = instantTimings

const parse = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

export const request = (
  url: string,
  init: {
    readonly method?: string
    readonly key?: string | undefined
    readonly body?: unknown
    readonly headers?: Record<string, string>
  } = {}
): Effect.Effect<Reply> =>
  Effect.promise(async () => {
    const headers: Record<string, string> = { ...init.headers }
    if (init.key !== undefined) headers["ApiKeyCloud"] = init.key
    if (init.body !== undefined) headers["content-type"] ??= "application/json"
    const response = await fetch(url, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers,
      ...(init.body === undefined
        ? {}
        : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) })
    })
    const text = await response.text()
    return { status: response.status, text, json: parse(text) }
  })

/** A running simulator and helpers bound to it. */
export interface Harness {
  readonly info: SimulatorServer.Info
  readonly serial: string
  readonly type: string
  /** Main host call with the default key. */
  readonly main: (path: string, body?: unknown, key?: string) => Effect.Effect<Reply>
  /** Status host call with the default key. */
  readonly status: (path: string, key?: string) => Effect.Effect<Reply>
  readonly admin: (method: string, path: string, body?: unknown) => Effect.Effect<Reply>
  /** POST /transactions on the first terminal. */
  readonly send: (fields: Record<string, unknown>, key?: string) => Effect.Effect<Reply>
  /** Waits until no terminal runs an operation. */
  readonly settle: Effect.Effect<void>
  /** Sends, settles and returns the polled result. */
  readonly run: (fields: Record<string, unknown>) => Effect.Effect<Reply>
  readonly advance: (ms: number) => Effect.Effect<void>
  readonly counters: (serial?: string) => Effect.Effect<Record<string, number>>
  /** Polls an admin GET route until `ok` holds (5 s real time at most); returns the last body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly eventually: (path: string, ok: (body: any) => boolean) => Effect.Effect<any>
  /** Polls a status-host path until it answers `status`; returns the last reply. */
  readonly statusEventually: (path: string, status: number) => Effect.Effect<Reply>
}

export const reference = () => globalThis.crypto.randomUUID()

export const withSimulator = <A, E>(
  options: SimulatorServer.Options,
  body: (h: Harness) => Effect.Effect<A, E>
): Effect.Effect<A, E | unknown> =>
  Effect.gen(function* () {
    const info = yield* SimulatorServer.SimulatorInfo
    const first = info.terminals[0]
    if (first === undefined) throw new Error("no terminal")
    const main = (path: string, b?: unknown, key: string = info.apiKey) =>
      request(`${info.baseUrl}${path}`, { key, body: b })
    const admin = (method: string, path: string, b?: unknown) =>
      request(`${info.adminUrl}${path}`, { method, body: b })
    const settle = Effect.flatMap(admin("POST", "/settle", { timeoutMs: 5000 }), (r) =>
      r.json?.idle === true ? Effect.void : Effect.die(new Error("simulator did not settle"))
    )
    const send = (fields: Record<string, unknown>, key?: string) =>
      main(
        "/transactions",
        { serial_number: first.serial_number, terminal_type: first.terminal_type, ...fields },
        key
      )
    const h: Harness = {
      info,
      serial: first.serial_number,
      type: first.terminal_type,
      main,
      status: (path, key = info.apiKey) => request(`${info.transactionsUrl}${path}`, { key }),
      admin,
      send,
      settle,
      run: (fields) =>
        Effect.gen(function* () {
          const accepted = yield* send(fields)
          if (accepted.status !== 202) return accepted
          yield* settle
          return yield* main(`/transaction-result/${accepted.json.transactionResultId}`)
        }),
      advance: (ms) => Effect.asVoid(admin("POST", "/clock/advance", { ms })),
      eventually: (path, ok) =>
        Effect.gen(function* () {
          const deadline = Date.now() + 5000
          for (;;) {
            const reply = yield* admin("GET", path)
            if (ok(reply.json) || Date.now() > deadline) return reply.json
            yield* Effect.sleep(5)
          }
        }),
      statusEventually: (path, status) =>
        Effect.gen(function* () {
          const deadline = Date.now() + 5000
          for (;;) {
            const reply = yield* request(`${info.transactionsUrl}${path}`, { key: info.apiKey })
            if (reply.status === status || Date.now() > deadline) return reply
            yield* Effect.sleep(5)
          }
        }),
      counters: (serial = first.serial_number) =>
        Effect.map(admin("GET", "/counters"), (r) => r.json.terminals[serial])
    }
    return yield* body(h)
  }).pipe(
    Effect.provide(
      SimulatorServer.layer({ seed: 42, ...options, timings: { ...zeroTimings, ...options.timings } })
    )
  )

/** A callback receiver on loopback recording every delivery. */
export interface Receiver {
  readonly url: string
  readonly deliveries: Array<{
    readonly headers: Http.IncomingHttpHeaders
    readonly body: Record<string, unknown>
  }>
  /** Status the receiver answers with (mutable). */
  answer: number
  /** Resolves when `n` deliveries have been received (fails after 5 s real time). */
  readonly waitFor: (n: number) => Effect.Effect<void>
}

export const receiver: Effect.Effect<Receiver, never, import("effect/Scope").Scope> = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ server: Http.Server; rec: Receiver }>((resolve) => {
        const rec: { -readonly [K in keyof Receiver]: Receiver[K] } = {
          url: "",
          deliveries: [],
          answer: 200,
          waitFor: (n) =>
            Effect.promise(async () => {
              const deadline = Date.now() + 5000
              while (rec.deliveries.length < n && Date.now() < deadline)
                await new Promise((r) => setTimeout(r, 5))
            }).pipe(
              Effect.flatMap(() =>
                rec.deliveries.length >= n ? Effect.void : Effect.die(new Error(`expected ${n} deliveries`))
              )
            )
        }
        const server = Http.createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            if (rec.answer >= 200 && rec.answer < 300) {
              rec.deliveries.push({
                headers: req.headers,
                body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
              })
            }
            res.statusCode = rec.answer
            res.end()
          })
        })
        server.listen(0, "127.0.0.1", () => {
          rec.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`
          resolve({ server, rec })
        })
      })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
).pipe(Effect.map(({ rec }) => rec))
