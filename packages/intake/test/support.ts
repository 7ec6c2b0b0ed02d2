/**
 * Test support: the intake API served on a loopback port as the worker serves it (the
 * same handlers, store, engine and built-in simulator, without an engine worker running
 * the executions), a fetch-based caller that can send any bytes, and a count of what the
 * store holds, to show that a refused request wrote nothing.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import type * as SqlClient from "@effect/sql/SqlClient"
import { Operators } from "@tillflow/console"
import { CallbackRegistration, LifecycleEvent, MerchantRegistry, ProtocolSettings } from "@tillflow/core"
import { DurableEngine, EngineWorker, EventStore, type ExecutionQueue } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import { IntakeHttp, IntakeLocal, Stack } from "@tillflow/intake"
import { adminClient } from "@tillflow/simulator/testing"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/** The bearer token of the served intake. */
export const token = "intake-test-token"

const database = SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(
  Layer.provideMerge(TestDatabase.layer)
)

const services = Layer.mergeAll(
  Stack.workflowsLayerFor({ mcc: Option.none(), motoTerminal: Option.none() }),
  IntakeLocal.layer()
).pipe(Layer.provide(ProtocolSettings.layer({})))

/** The worker's server on a free loopback port: the callback route on its lean path, the rest the intake's. */
const server = IntakeHttp.serverLayer({ host: "127.0.0.1", port: 0 })

/** The intake served on loopback over a fresh database and the built-in simulator, with `options`. */
export const layerWith = (
  options: IntakeHttp.ServeOptions
): Layer.Layer<
  | HttpServer.HttpServer
  | DurableEngine.DurableEngine
  | EventStore.EventStore
  | ExecutionQueue.ExecutionQueue
  | Stack.Cloud
  | SqlClient.SqlClient
  | MerchantRegistry.MerchantRegistry,
  unknown
> =>
  IntakeHttp.serve(Redacted.make(token), options).pipe(
    Layer.provideMerge(services),
    Layer.provideMerge(
      Stack.cloudLayer({ _tag: "Simulator", seed: 7, port: 0, fast: true }).pipe(Layer.orDie)
    ),
    Layer.provideMerge(server),
    // One memory of registered attempts for the workflows and the receiver, as the worker has.
    Layer.provideMerge(Stack.receiverLayer),
    Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
    Layer.provideMerge(Stack.engineLayer),
    Layer.provideMerge(database)
  )

/** The intake served on loopback over a fresh database and the built-in simulator. */
export const layer = layerWith({})

/**
 * Results by polling every 20 ms unless a call asks for a callback: to the worker's own
 * receiver, on the port the server was given.
 */
const settings = Layer.unwrapEffect(
  Effect.map(HttpServer.HttpServer, (server) =>
    ProtocolSettings.layer({
      pollInterval: Duration.millis(20),
      defaultDelivery: "polling",
      callbackBaseUrl: Option.some(
        `http://127.0.0.1:${server.address._tag === "TcpAddress" ? server.address.port : 0}/callbacks`
      )
    })
  )
)

/**
 * The worker's stack on loopback, executions run: an engine worker, the intake, the
 * workflows with the merchant's MCC (7011), the built-in simulator (`seed`), results by
 * polling every 20 ms (by callback to its own receiver when a call asks), a fresh database; the intake with `intakeOptions` besides.
 */
export const running = (
  seed: number,
  serveOptions: IntakeHttp.ServeOptions = {},
  intakeOptions: IntakeLocal.Options = {}
): Layer.Layer<
  | HttpServer.HttpServer
  | DurableEngine.DurableEngine
  | EventStore.EventStore
  | ExecutionQueue.ExecutionQueue
  | Stack.Cloud
  | SqlClient.SqlClient
  | TestDatabase.TestDatabase
  | MerchantRegistry.MerchantRegistry,
  unknown
> =>
  EngineWorker.layer({ concurrency: 8, pollInterval: "20 millis" }).pipe(
    Layer.provideMerge(IntakeHttp.serve(Redacted.make(token), serveOptions)),
    Layer.provideMerge(
      Layer.mergeAll(
        Stack.workflowsLayerFor({ mcc: Option.some("7011"), motoTerminal: Option.none() }),
        IntakeLocal.layer({ merchantMcc: Option.some("7011"), ...intakeOptions })
      ).pipe(Layer.provide(settings))
    ),
    Layer.provideMerge(Stack.cloudLayer({ _tag: "Simulator", seed, port: 0, fast: true }).pipe(Layer.orDie)),
    Layer.provideMerge(server),
    Layer.provideMerge(Stack.receiverLayer),
    Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
    Layer.provideMerge(Stack.engineLayer),
    Layer.provideMerge(database)
  )

/** A reply: its status, raw text and JSON (undefined when the text is not JSON). */
export interface Reply {
  readonly status: number
  readonly contentType: string | null
  /** The `Retry-After` header, if any. */
  readonly retryAfter?: string | null
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Calls the served intake with the test token (unless `token` says otherwise) and any body. */
export const call = (
  method: string,
  path: string,
  options: {
    readonly body?: string | ReadableStream<Uint8Array>
    readonly token?: string | null
    /** Give up after this long (real time): the reply is then status 0, "no answer". */
    readonly timeoutMs?: number
    /** More request headers (`tillflow-merchant` …). */
    readonly headers?: Record<string, string>
  } = {}
): Effect.Effect<Reply, never, HttpServer.HttpServer> =>
  Effect.gen(function* () {
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const bearer = options.token === undefined ? token : options.token
    return yield* Effect.promise(async () => {
      const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs)
      let response: Response
      try {
        response = await fetch(`http://127.0.0.1:${port}${path}`, {
          ...(signal === undefined ? {} : { signal }),
          method,
          headers: {
            ...options.headers,
            ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
            ...(options.body === undefined ? {} : { "content-type": "application/json" })
          },
          // A stream is sent chunked, without a length the server could refuse it by.
          ...(options.body === undefined ? {} : { body: options.body, duplex: "half" })
        })
      } catch (error) {
        if (signal?.aborted !== true) throw error
        return {
          status: 0,
          contentType: null,
          text: `no answer within ${options.timeoutMs} ms`,
          json: undefined
        }
      }
      const text = await response.text()
      return {
        status: response.status,
        contentType: response.headers.get("content-type"),
        retryAfter: response.headers.get("retry-after"),
        text,
        json: parse(text)
      }
    })
  })

/** Two named operators, `ana` (operator) and `vic` (viewer), each with secret `<name>-secret`. */
export const operators = await Effect.runPromise(
  Effect.gen(function* () {
    const entries = [
      { name: "ana", role: "operator" as const, secret: yield* Operators.hash("ana-secret", 1000) },
      { name: "vic", role: "viewer" as const, secret: yield* Operators.hash("vic-secret", 1000) }
    ]
    return Either.getOrThrow(Operators.parse(JSON.stringify(entries)))
  })
)

/** A request as the console sends it: no bearer token, the session's cookie (or none). */
export const send = (
  method: string,
  path: string,
  options: { readonly cookie?: string; readonly body?: unknown } = {}
) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.promise(async () => {
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: {
          ...(options.cookie === undefined ? {} : { cookie: options.cookie }),
          ...(options.body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
      })
      const text = await response.text()
      return {
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        /** The session cookie the reply sets, as a `cookie` header sends it back. */
        cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
        text,
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        json: parse(text) as any
      }
    })
  )

/** Logs `name` in to the console (secret `<name>-secret` unless given): the session's cookie. */
export const login = (name: string, secret = `${name}-secret`) =>
  Effect.map(send("POST", "/console/login", { body: { name, secret } }), (r) => r.cookie)

/** How many executions and events the store holds. */
export const written = Effect.gen(function* () {
  const engine = yield* DurableEngine.DurableEngine
  const store = yield* EventStore.EventStore
  const executions = (yield* engine.list({})).length
  const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
  return { executions, events: page.events.length }
}).pipe(Effect.orDie)

/**
 * Opens the live feed at `url` with `bearer`, runs `meanwhile` once it is connected, and
 * reads until `until` appears (or the feed ends): its status, content type and the text read.
 */
export const readLive = (url: string, bearer: string, meanwhile: () => Promise<void>, until: string) =>
  Effect.promise(async () => {
    const controller = new AbortController()
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${bearer}` },
      signal: controller.signal
    })
    const reader = response.body?.getReader()
    const decoder = new TextDecoder()
    let text = ""
    const readUntil = async (needle: string) => {
      while (reader !== undefined && !text.includes(needle)) {
        const chunk = await reader.read()
        if (chunk.done) break
        text += decoder.decode(chunk.value)
      }
    }
    await readUntil(": connected")
    await meanwhile()
    await readUntil(until)
    controller.abort()
    return { status: response.status, type: response.headers.get("content-type"), text }
  })

/**
 * A merchant at the built-in simulator (`simId`, with one terminal `serial` and a key) and in
 * the worker's registry (`id`, MCC 5812, that key): its key at the simulator.
 */
export const simulatedMerchant = (id: string, simId: string, serial: string) =>
  Effect.gen(function* () {
    const cloud = yield* Stack.Cloud
    if (cloud.adminUrl === undefined) return yield* Effect.dieMessage("no built-in simulator")
    const admin = adminClient(cloud.adminUrl)
    const created = (yield* admin("POST", "/merchants", { id: simId, name: id, mcc: "5812" })) as {
      readonly apiKey: string
    }
    yield* admin("POST", `/merchants/${simId}/terminals`, { serial_number: serial, terminal_type: "ANDROID" })
    const registry = yield* MerchantRegistry.MerchantRegistry
    yield* registry.register({ id, name: id, mcc: "5812" })
    yield* registry.addKey(id, "merchant", Redacted.make(created.apiKey))
    return created.apiKey
  })

/**
 * A request in doubt on an attempt's stream (a batch, MOTO sale or device): what was asked,
 * then no answer; written as an execution of `tenant` writes it (its events naming it), or
 * of the deployment's own merchant without one.
 */
export const attemptInDoubt = (
  streamId: string,
  requested: LifecycleEvent.Event,
  operation: LifecycleEvent.Operation,
  tenant?: string
) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const at = yield* DateTime.now
    const encoded = yield* LifecycleEvent.registry.encodeAll([
      requested,
      LifecycleEvent.OperationInDoubt.make({
        requestId: (requested.data as { readonly requestId: string }).requestId,
        at,
        operation,
        message: "unknown"
      })
    ])
    yield* store.append(
      streamId,
      EventStore.AnyVersion,
      yield* Tenant.stamp(encoded).pipe(Tenant.within(tenant))
    )
  })

/** A bearer token of the intake's configuration (`TILLFLOW_INTAKE_TOKENS`), given in plain. */
export interface TokenEntry {
  readonly name: string
  readonly token: string
  readonly role?: "viewer" | "operator" | "admin"
  /** The merchants it is limited to; none: the platform's. */
  readonly merchants?: ReadonlyArray<string>
}

/** The intake's tokens, as the configuration's parser reads them (each stored as its SHA-256). */
export const configuredTokens = (entries: ReadonlyArray<TokenEntry>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const configured: Array<Record<string, unknown>> = []
      for (const entry of entries) {
        configured.push({
          name: entry.name,
          role: entry.role ?? "operator",
          ...(entry.merchants === undefined ? {} : { merchants: entry.merchants }),
          sha256: yield* CallbackRegistration.hashToken(entry.token)
        })
      }
      return Either.getOrThrow(Operators.parseTokens(JSON.stringify(configured)))
    })
  )

/**
 * A result disagreeing with the recorded outcome of `executionId`, noted in its payment's
 * stream naming no tenant (as the callback receiver noted it before it stamped its notes):
 * the mismatch alert's id.
 */
export const mismatchNoted = (executionId: string, at = Date.now()) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const { nextVersion } = yield* store.append(`payment-${executionId}`, EventStore.AnyVersion, [
      {
        type: "ResultMismatch",
        data: {
          attemptId: "a1",
          recorded: "DECLINED",
          received: "AUTHORISED",
          resultHash: "h",
          source: "callback",
          at
        },
        metadata: { executionId }
      }
    ])
    return `mismatch.${executionId}.${nextVersion}`
  })
