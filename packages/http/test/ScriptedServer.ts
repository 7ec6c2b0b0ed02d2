/**
 * A scripted server of the remote contract for contract tests of the HTTP client: the
 * routes and the `ApiKeyCloud` check come from core's `RemoteApi` (`HttpApiBuilder`),
 * served by real Node HTTP servers on loopback port 0 — one for `{base_url}` and one for
 * `{transactions_url}` — while each answer is scripted per test as raw wire text, so the
 * client is tested against bodies exactly as the spec shows them, statuses the contract
 * does not declare (502), a response dropped after the request was read, and silence.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { RemoteApi, RemoteError } from "@tillflow/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { createServer } from "node:http"

/** Which of the two hosts received a request. */
export type Host = "base" | "transactions"

/** A scripted answer. */
export type Answer =
  | { readonly _tag: "Respond"; readonly status: number; readonly body?: string | undefined }
  /** Read the request, then destroy the socket: processed, answer lost. */
  | { readonly _tag: "Drop" }
  /** Read the request and never answer. */
  | { readonly _tag: "Hang" }

/** Answers `status` with `body` (JSON text, or a value written as JSON). */
export const respond = (status: number, body?: unknown): Answer => ({
  _tag: "Respond",
  status,
  body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
})
/** The response is lost after the request was read. */
export const drop: Answer = { _tag: "Drop" }
/** No answer, ever. */
export const hang: Answer = { _tag: "Hang" }

/** A request as the server read it. */
export interface Received {
  readonly host: Host
  readonly endpoint: string
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** The script of one test: answers per endpoint (in order, the last one repeats) and what arrived. */
export class Script {
  readonly received: Array<Received> = []
  private readonly answers = new Map<string, Array<Answer>>()

  constructor(
    readonly apiKey: string,
    readonly arrivals: Queue.Queue<Received>
  ) {}

  /** Scripts the next answers of an endpoint (the last one repeats). */
  answer(endpoint: string, ...answers: ReadonlyArray<Answer>): this {
    this.answers.set(endpoint, [...answers])
    return this
  }

  /** The requests an endpoint received. */
  to(endpoint: string): ReadonlyArray<Received> {
    return this.received.filter((r) => r.endpoint === endpoint)
  }

  next(endpoint: string): Answer {
    const queue = this.answers.get(endpoint) ?? []
    const answer = queue.length > 1 ? queue.shift() : queue[0]
    return answer ?? respond(599, { error: `no answer scripted for ${endpoint}` })
  }
}

/** A fresh script accepting `apiKey`. */
export const makeScript = (apiKey: string): Effect.Effect<Script> =>
  Effect.map(Queue.unbounded<Received>(), (arrivals) => new Script(apiKey, arrivals))

const answerWith =
  (script: Script, host: Host, endpoint: string) =>
  (args: { readonly request: HttpServerRequest.HttpServerRequest }) =>
    Effect.gen(function* () {
      const { request } = args
      const body = yield* Effect.orDie(request.text)
      const received: Received = {
        host,
        endpoint,
        method: request.method,
        url: request.url,
        headers: request.headers,
        body
      }
      script.received.push(received)
      yield* Queue.offer(script.arrivals, received)
      const answer = script.next(endpoint)
      switch (answer._tag) {
        case "Respond":
          return answer.body === undefined
            ? HttpServerResponse.empty({ status: answer.status })
            : HttpServerResponse.text(answer.body, { status: answer.status, contentType: "application/json" })
        case "Drop":
          NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()
          return yield* Effect.never
        case "Hang":
          return yield* Effect.never
      }
    })

const apiLayer = (script: Script, host: Host) => {
  const on = (endpoint: string) => answerWith(script, host, endpoint)
  const terminal = HttpApiBuilder.group(RemoteApi.RemoteApi, "terminal", (handlers) =>
    handlers
      .handleRaw("listDevices", on("listDevices"))
      .handleRaw("listDevicesLegacy", on("listDevicesLegacy"))
      .handleRaw("sendTransaction", on("sendTransaction"))
      .handleRaw("transactionResult", on("transactionResult"))
      .handleRaw("setUnattendedMode", on("set-unattended-mode"))
      .handleRaw("setLocale", on("set-locale"))
      .handleRaw("setPasswordProtected", on("set-password-protected"))
      .handleRaw("reboot", on("reboot"))
      .handleRaw("setScreenBrightness", on("set-screen-brightness"))
      .handleRaw("setRebootTime", on("set-reboot-time"))
      .handleRaw("tipAdjustment", on("tipAdjustment"))
      .handleRaw("deferredToken", on("deferredToken"))
      .handleRaw("reversal", on("reversal"))
      .handleRaw("preAuthorizationIncrease", on("preAuthorizationIncrease"))
      .handleRaw("preAuthorizationCapture", on("preAuthorizationCapture"))
      .handleRaw("motoSale", on("motoSale"))
      .handleRaw("motoRefund", on("motoRefund"))
      .handleRaw("motoReversal", on("motoReversal"))
      .handleRaw("batchClose", on("batchClose"))
      .handleRaw("batchSummary", on("batchSummary"))
      .handleRaw("batchDetail", on("batchDetail"))
  )
  const status = HttpApiBuilder.group(RemoteApi.RemoteApi, "status", (handlers) =>
    handlers
      .handleRaw("transactionStatus", on("transactionStatus"))
      .handleRaw("transactionStatusAt", on("transactionStatus"))
  )
  const auth = Layer.succeed(RemoteApi.ApiKeyAuth, {
    apiKey: (key) =>
      Redacted.value(key) === script.apiKey
        ? Effect.succeed(key)
        : Effect.fail(
            new RemoteError.Forbidden({
              message: "Authorization failed",
              status: 403,
              body: JSON.stringify({
                error: { statusCode: 403, name: "ForbiddenError", message: "Authorization failed" }
              })
            })
          )
  })
  return HttpApiBuilder.api(RemoteApi.RemoteApi).pipe(Layer.provide([terminal, status]), Layer.provide(auth))
}

const listen = (script: Script, host: Host): Effect.Effect<URL, never, Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      HttpApiBuilder.serve().pipe(
        Layer.provide(apiLayer(script, host)),
        Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }))
      )
    ).pipe(Effect.orDie)
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return new URL(`http://127.0.0.1:${address.port}`)
  })

/** Two servers of the contract (both hosts), released with the scope. */
export const start = (
  script: Script
): Effect.Effect<{ readonly baseUrl: URL; readonly transactionsUrl: URL }, never, Scope.Scope> =>
  Effect.all({ baseUrl: listen(script, "base"), transactionsUrl: listen(script, "transactions") })
