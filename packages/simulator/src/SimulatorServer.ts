/**
 * Serving the simulator over real sockets: both hosts (one port with the status host
 * under a prefix, or separate ports), the admin API under `/_sim`, bounded bodies, empty or
 * malformed JSON and unknown routes answered with the service's JSON error shapes, and
 * the injected faults (drop the response after processing, 5xx before or after, delay).
 * `layer` runs it in-process on loopback; the app `apps/simulator` runs it as a process.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as Scope from "effect/Scope"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Http from "node:http"
import * as AdminHttp from "./AdminHttp.js"
import * as SimClock from "./SimClock.js"
import * as Simulator from "./Simulator.js"
import { json, mainApp, statusApp } from "./SimulatorHttp.js"

/** Where the simulator listens and what it was started with. */
export interface Info {
  /** `{base_url}`. */
  readonly baseUrl: string
  /** `{transactions_url}`: the status host. */
  readonly transactionsUrl: string
  /** The admin API (`{baseUrl}/_sim`). */
  readonly adminUrl: string
  /** The default merchant's API key. */
  readonly apiKey: string
  /** The default merchant's id. */
  readonly merchantId: string
  /** The default merchant's terminals. */
  readonly terminals: ReadonlyArray<{ readonly serial_number: string; readonly terminal_type: string }>
  /** The serial of the default merchant's virtual terminal, which books terminal-less MOTO payments. */
  readonly virtualTerminal: string
}

/** The running simulator's addresses. */
export class SimulatorInfo extends Context.Tag("tillflow/SimulatorInfo")<SimulatorInfo, Info>() {}

/** Options of a served simulator. */
export interface Options extends Simulator.Options {
  /** Port of the main host (and of the status host unless `statusPort`); 0 picks a free one. */
  readonly port?: number | undefined
  /** Serve the status host on its own port (0 picks a free one) instead of under a prefix. */
  readonly statusPort?: number | undefined
  /** Interface to bind (default 127.0.0.1). */
  readonly host?: string | undefined
  /** Largest accepted request body in bytes (default 1 MiB); larger ones get 413. */
  readonly maxBodyBytes?: number | undefined
}

/** Prefix of the status host when it shares the main port. */
export const STATUS_PREFIX = "/_status-host"
/** Prefix of the admin API. */
export const ADMIN_PREFIX = "/_sim"

const DEFAULT_MAX_BODY = 1024 * 1024
/** Bodies beyond this are not even drained: the connection is cut. */
const HARD_LIMIT = 64 * 1024 * 1024

const errorBody = (statusCode: number, name: string, message: string) => ({
  error: { statusCode, name, message }
})

type Body =
  { readonly _tag: "Text"; readonly text: string } | { readonly _tag: "TooLarge"; readonly bytes: number }

/**
 * The platform dies when an endpoint's payload cannot be read as JSON; past the malformed JSON
 * check in `makeListener` that means the body was empty, which the service answers 400.
 */
const isUnreadableBody = (cause: Cause.Cause<unknown>): boolean =>
  Option.exists(
    Cause.dieOption(cause),
    (defect) =>
      HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"
  )

/**
 * Reads the whole body, keeping at most `limit` bytes; beyond that it drains (so the
 * client reads our 413 instead of a reset connection) up to a hard limit.
 */
const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Body> =>
  Effect.async<Body>((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let bytes = 0
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= limit) chunks.push(chunk)
      else if (bytes > HARD_LIMIT) source.destroy()
    }
    const onEnd = () => {
      cleanup()
      resume(
        Effect.succeed(
          bytes > limit
            ? { _tag: "TooLarge", bytes }
            : { _tag: "Text", text: Buffer.concat(chunks).toString("utf8") }
        )
      )
    }
    const onError = () => {
      cleanup()
      resume(Effect.succeed({ _tag: "TooLarge", bytes }))
    }
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    return Effect.sync(cleanup)
  })

const operationOf = (text: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" &&
      parsed !== null &&
      "operation" in parsed &&
      typeof parsed.operation === "string"
      ? parsed.operation
      : undefined
  } catch {
    return undefined
  }
}

type App = HttpApp.Default<unknown, HttpRouter.HttpRouter.DefaultServices>

/**
 * One listener: routes a request to the admin API, the status host or the main host,
 * after reading its body within bounds and applying any injected fault.
 */
const makeListener = (
  sim: Simulator.SimulatorService,
  apps: {
    readonly main: App | undefined
    readonly status: App | undefined
    readonly statusUnderPrefix: boolean
    readonly admin: App | undefined
  },
  maxBodyBytes: number
): HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices> =>
  Effect.gen(function* () {
    const original = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(original.url, "http://simulator")
    const path = url.pathname
    const under = (prefix: string) => path === prefix || path.startsWith(`${prefix}/`)
    const strip = (prefix: string) => `${path.slice(prefix.length) || "/"}${url.search}`
    let app: App
    let host: "main" | "status" | "admin"
    let innerUrl = original.url
    if (apps.admin !== undefined && under(ADMIN_PREFIX)) {
      app = apps.admin
      host = "admin"
      innerUrl = strip(ADMIN_PREFIX)
    } else if (apps.status !== undefined && (!apps.statusUnderPrefix || under(STATUS_PREFIX))) {
      app = apps.status
      host = "status"
      innerUrl = apps.statusUnderPrefix ? strip(STATUS_PREFIX) : original.url
    } else if (apps.main !== undefined) {
      // Receipt links of results (public, like a receipt URL of the real service): not
      // part of the contract, so served beside it.
      const receipt = /^\/receipts\/([^/]+)\/([^/]+)$/.exec(path)
      if (receipt !== null && original.method === "GET") {
        return yield* sim.receipt(decodeURIComponent(receipt[1] ?? ""), receipt[2] ?? "").pipe(
          Effect.map((html) => HttpServerResponse.html(html)),
          Effect.catchAll((e) => Effect.succeed(json(errorBody(404, "NotFoundError", e.message), 404)))
        )
      }
      app = apps.main
      host = "main"
    } else {
      return json(errorBody(404, "NotFoundError", `Cannot ${original.method} ${path}`), 404)
    }
    const body = yield* readBody(original, maxBodyBytes)
    if (body._tag === "TooLarge") {
      return json(
        errorBody(
          413,
          "PayloadTooLargeError",
          `request entity too large: ${body.bytes} bytes, limit ${maxBodyBytes}`
        ),
        413
      )
    }
    if (body.text.trim() !== "") {
      const valid = (() => {
        try {
          JSON.parse(body.text)
          return true
        } catch {
          return false
        }
      })()
      if (!valid) return json(errorBody(400, "BadRequestError", "Malformed JSON in the request body"), 400)
    }
    // The platform's request reads the socket once: hand the inner app a copy with the body read.
    // A blank body is forwarded as none, read as JSON: an endpoint that needs one cannot decode it.
    const headers = new Headers()
    for (const [key, value] of Object.entries(original.headers)) headers.set(key, value)
    const hasBody = original.method !== "GET" && original.method !== "HEAD" && body.text.trim() !== ""
    if (!hasBody) headers.delete("content-type")
    const inner = HttpServerRequest.fromWeb(
      new Request(new URL(innerUrl, "http://simulator"), {
        method: original.method,
        headers,
        ...(hasBody ? { body: body.text } : {})
      })
    )
    const run = Effect.provideService(app, HttpServerRequest.HttpServerRequest, inner).pipe(
      Effect.catchAllCause((cause) => {
        const failure = Cause.failureOption(cause)
        if (
          Option.isSome(failure) &&
          (failure.value as HttpServerError.HttpServerError)._tag === "RouteNotFound"
        ) {
          return Effect.succeed(
            json(errorBody(404, "NotFoundError", `Cannot ${original.method} ${path}`), 404)
          )
        }
        if (isUnreadableBody(cause)) {
          return Effect.succeed(
            json(
              errorBody(400, "BadRequestError", "The request body is empty: a JSON object is expected"),
              400
            )
          )
        }
        return Effect.logError("simulator: unexpected failure", cause).pipe(
          Effect.as(json(errorBody(500, "InternalServerError", "Internal server error"), 500))
        )
      })
    )
    if (host === "admin") return yield* run
    const fault = yield* sim.admin.takeFault({
      host,
      method: original.method,
      path: host === "status" ? new URL(innerUrl, "http://simulator").pathname : path,
      operation: original.method === "POST" ? operationOf(body.text) : undefined
    })
    if (Option.isNone(fault)) return yield* run
    const f = fault.value
    const injected = json(errorBody(f.status, "ServiceUnavailableError", "Injected fault"), f.status)
    switch (f.kind) {
      case "error-before":
        return injected
      case "error-after":
        return yield* Effect.as(run, injected)
      case "delay":
        yield* Effect.sleep(f.delayMs)
        return yield* run
      case "misreport":
        return misreported(yield* run, f.finStatus ?? "DECLINED")
      case "drop-response": {
        yield* run
        // Processed, but the caller never hears: cut the connection without a response.
        NodeHttpServerRequest.toServerResponse(original).destroy()
        return yield* Effect.never
      }
    }
  })

/** Every `finStatus` of a JSON answer replaced by `finStatus` (the `misreport` fault). */
const misreported = (
  response: HttpServerResponse.HttpServerResponse,
  finStatus: string
): HttpServerResponse.HttpServerResponse => {
  if (response.body._tag !== "Uint8Array") return response
  const replace = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(replace)
      : typeof value === "object" && value !== null
        ? Object.fromEntries(
            Object.entries(value).map(([k, v]) => [
              k,
              k === "finStatus" && typeof v === "string" ? finStatus : replace(v)
            ])
          )
        : value
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(response.body.body))
    return json(replace(body), response.status)
  } catch {
    return response
  }
}

const address = (server: HttpServer.HttpServer) =>
  server.address._tag === "TcpAddress" ? server.address.port : 0

/**
 * Serves an existing `Simulator` (from context) and returns its addresses. Use `layer`
 * unless you build the simulator yourself.
 */
export const serve = (
  options: Options = {}
): Effect.Effect<Info, HttpServerError.ServeError, Simulator.Simulator | Scope.Scope> =>
  Effect.gen(function* () {
    const sim = yield* Simulator.Simulator
    const host = options.host ?? "127.0.0.1"
    const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY
    const main = yield* mainApp
    const status = yield* statusApp
    const admin = HttpRouter.toHttpApp(yield* AdminHttp.router)
    const adminApp = yield* admin
    const mainServer = yield* NodeHttpServer.make(() => Http.createServer(), {
      port: options.port ?? 0,
      host
    })
    const base = `http://${host}:${address(mainServer)}`
    let transactionsUrl = `${base}${STATUS_PREFIX}`
    if (options.statusPort === undefined) {
      yield* mainServer.serve(
        makeListener(sim, { main, status, statusUnderPrefix: true, admin: adminApp }, maxBody)
      )
    } else {
      yield* mainServer.serve(
        makeListener(sim, { main, status: undefined, statusUnderPrefix: false, admin: adminApp }, maxBody)
      )
      const statusServer = yield* NodeHttpServer.make(() => Http.createServer(), {
        port: options.statusPort,
        host
      })
      yield* statusServer.serve(
        makeListener(sim, { main: undefined, status, statusUnderPrefix: false, admin: undefined }, maxBody)
      )
      transactionsUrl = `http://${host}:${address(statusServer)}`
    }
    yield* sim.admin.setBaseUrl(base)
    const apiKey = yield* sim.admin.defaultApiKey
    const merchantId = yield* sim.admin.defaultMerchantId
    const terminals = yield* sim.admin.terminals
    return {
      baseUrl: base,
      transactionsUrl,
      adminUrl: `${base}${ADMIN_PREFIX}`,
      apiKey,
      merchantId,
      terminals: terminals
        .filter((t) => t.merchant_id_alpha === merchantId && !t.virtual)
        .map((t) => ({ serial_number: t.serial_number, terminal_type: t.terminal_type })),
      virtualTerminal:
        terminals.find((t) => t.merchant_id_alpha === merchantId && t.virtual)?.serial_number ?? ""
    } satisfies Info
  }).pipe(Effect.provide(NodeHttpServer.layerContext))

/**
 * The whole simulator in-process on loopback: the service, its clock, a callback client
 * and the listeners, released with the layer's scope. Tests and the worker use this.
 *
 * @example
 * const SimLive = SimulatorServer.layer({ seed: 1, timings: { WaitingForCard: 0 } })
 * Effect.gen(function* () {
 *   const { baseUrl, apiKey } = yield* SimulatorServer.SimulatorInfo
 * }).pipe(Effect.provide(SimLive))
 */
export const layer = (
  options: Options = {}
): Layer.Layer<SimulatorInfo | Simulator.Simulator | SimClock.SimClock, HttpServerError.ServeError> =>
  Layer.scoped(SimulatorInfo, serve(options)).pipe(
    Layer.provideMerge(Simulator.layer(options)),
    Layer.provideMerge(SimClock.layer({ startAt: options.startAt })),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * The first line a simulator process prints: one JSON object scripts can read
 * (`{"baseUrl","transactionsUrl","adminUrl","apiKey","terminals":[…]}`).
 */
export const startupLine = (info: Info): string =>
  JSON.stringify({
    baseUrl: info.baseUrl,
    transactionsUrl: info.transactionsUrl,
    adminUrl: info.adminUrl,
    apiKey: info.apiKey,
    terminals: info.terminals
  })
