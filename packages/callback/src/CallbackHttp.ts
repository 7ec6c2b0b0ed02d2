/**
 * The callback receiver over HTTP: `POST /callbacks/:attemptId` with the terminal's
 * `TransactionResult` as JSON and the attempt's token in `AUTH-TOKEN`. It bounds the body
 * (256 KiB, else 413), hands the delivery to `CallbackReceiver`, and answers 200 only once
 * the result is stored (the workflow is resolved after the reply); 401/403 with an empty body for an
 * unknown attempt or a wrong token; 400 with a JSON error (`{"_tag":"MalformedBody","message":…}`)
 * for a body that is not a JSON object or nests deeper than `CallbackReceiver.maxDepth`; 503
 * with a JSON reason and `Retry-After` when the store cannot take it (the terminal's
 * recovery loop delivers again).
 *
 * Mount `router` into a host application's router (and provide `redactedHeaders` to the
 * host's server), or run `serve`, which does; or serve it by `listener` / `layerServer`,
 * a plain `node:http` listener with the same checks and answers (the leanest path), which
 * can serve a host app on the same port (the worker's intake does).
 *
 * @example
 * // inside a host app
 * const app = HttpRouter.empty.pipe(HttpRouter.concat(CallbackHttp.router), …)
 * // standalone
 * Layer.launch(CallbackHttp.layerServer({ port: 8443 }).pipe(Layer.provide(CallbackReceiver.layer), …))
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import type { ServeError } from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { RemoteApi } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as CallbackReceiver from "./CallbackReceiver.js"
import * as NodeListener from "./internal/NodeListener.js"

/** The path of the route; the receiver's public base URL must end in `/callbacks`. */
export const path = "/callbacks/:attemptId"

const empty = (status: number) => HttpServerResponse.empty({ status })

/** A refusal's answer: a 400 says what is wrong with the body, a 503 why and when to send again; the others say nothing. */
const refused = (reply: CallbackReceiver.Reply): HttpServerResponse.HttpServerResponse =>
  reply._tag === "Refused" && reply.status === 400
    ? HttpServerResponse.unsafeJson(
        { _tag: reply.reason, message: reply.message ?? "the body is not a JSON object" },
        { status: 400 }
      )
    : reply._tag === "Unavailable"
      ? HttpServerResponse.unsafeJson(
          { _tag: "Unavailable", message: CallbackReceiver.unavailableAnswer.message },
          {
            status: 503,
            headers: { "retry-after": String(CallbackReceiver.unavailableAnswer.retryAfterSeconds) }
          }
        )
      : empty(reply.status)

/** One delivery to `attemptId` (the path's last segment), with the request in context. */
const deliver = (attemptId: string) =>
  Effect.gen(function* () {
    const receiver = yield* CallbackReceiver.CallbackReceiver
    const request = yield* HttpServerRequest.HttpServerRequest
    const remoteAddress = Option.getOrUndefined(request.remoteAddress)
    const declared = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > CallbackReceiver.maxBodyBytes) {
      return refused(yield* receiver.refuse(attemptId, "TooLarge", remoteAddress))
    }
    const body = yield* request.text.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(CallbackReceiver.maxBodyBytes)),
      Effect.either
    )
    if (body._tag === "Left") {
      const tooLarge = String(body.left.cause).includes("maxBytes")
      return refused(
        yield* tooLarge
          ? receiver.refuse(attemptId, "TooLarge", remoteAddress)
          : receiver.refuse(attemptId, "MalformedBody", remoteAddress, "the body could not be read")
      )
    }
    const token = request.headers[authTokenHeader]
    const reply = yield* receiver.receive({
      attemptId,
      token: Option.fromNullable(token).pipe(Option.filter((t) => t.length > 0)),
      body: body.right,
      remoteAddress
    })
    return reply.status === 200 ? HttpServerResponse.unsafeJson({ received: true }) : refused(reply)
  })

const authTokenHeader = RemoteApi.AUTH_TOKEN_HEADER.toLowerCase()

/** Handles one delivery, as the route `path` of a router. */
export const handle: Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  CallbackReceiver.CallbackReceiver | HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext
> = Effect.flatMap(HttpRouter.params, (params) => deliver(params["attemptId"] ?? ""))

/** The route, to mount into a host application's router. */
export const router: HttpRouter.HttpRouter<never, CallbackReceiver.CallbackReceiver> = HttpRouter.empty.pipe(
  HttpRouter.post(path, handle)
)

/**
 * The receiver as an HTTP app on its own: `router`'s one route matched directly, 404 for
 * any other method or path. For one route, a router's matching and the route context it
 * builds per request are work to spare: measured ~0.07 ms of CPU per request, of the
 * ~0.4 ms @effect/platform's server adds to bare `node:http` on a loaded 2-CPU machine.
 */
export const app: Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  CallbackReceiver.CallbackReceiver | HttpServerRequest.HttpServerRequest
> = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const match = request.method === "POST" ? NodeListener.callbackUrl.exec(request.url) : null
  const raw = match?.[1]
  return raw === undefined ? Effect.succeed(empty(404)) : deliver(NodeListener.segment(raw))
})

/**
 * `AUTH-TOKEN` added to the header names @effect/platform redacts when its server tracing
 * records a request's headers on the request's span (`http.request.header.*`): without it
 * every delivery's callback token would reach a trace exporter in clear. `serve` and
 * `layerServer` provide it (the latter traces no headers itself); a host mounting `router` into its own server provides it to
 * that server's layer.
 */
export const redactedHeaders: Layer.Layer<never> = Layer.scopedDiscard(
  Effect.locallyScopedWith(Headers.currentRedactedNames, (names) => {
    const name = RemoteApi.AUTH_TOKEN_HEADER.toLowerCase()
    return names.some((n) => typeof n === "string" && n.toLowerCase() === name) ? names : [...names, name]
  })
)

/** Serves the receiver on the `HttpServer` in context. */
export const serve: Layer.Layer<never, never, CallbackReceiver.CallbackReceiver | HttpServer.HttpServer> =
  HttpServer.serve(app).pipe(Layer.provide(redactedHeaders))

/**
 * The route as a plain `node:http` request listener, the leanest way to serve it: the same
 * checks and answers as `app` (the declared and the streamed body bounded, 413; the token
 * and the body to `CallbackReceiver`; 200 only once the result is appended; 404 for any
 * other method or path, or `other` handles those), without @effect/platform's server per
 * request (its request object, the handled app's fiber, response conversion and server
 * span): measured ~0.4 ms of CPU per delivery on the bench's 2-CPU machine. Nothing of a
 * request's headers is traced or logged here.
 *
 * @example
 * const listener = yield* CallbackHttp.listener()
 * createServer(listener).listen(8443)
 */
export const listener: (
  other?: (request: IncomingMessage, response: ServerResponse) => void
) => Effect.Effect<
  (request: IncomingMessage, response: ServerResponse) => void,
  never,
  CallbackReceiver.CallbackReceiver
> = NodeListener.make

/** A 503 answer: the JSON reason (`{"_tag":"Unavailable","message":…}`) and `Retry-After`. */
export interface Unavailable {
  readonly message: string
  readonly retryAfterSeconds: number
}

/** How long a server whose host app was released waits for requests in flight before cutting them. */
export const closeGraceMillis = 10_000

/**
 * Runs the receiver with Node's HTTP server and `listener` (released with the layer): on
 * its own port, or on a host's, for `POST /callbacks/:attemptId` is served by `listener`
 * whatever else the port serves. The `HttpServer` it provides names the address (port 0
 * picks one) and takes one host app at a time: `HttpServer.serve(app)` on it has every
 * other request answered by @effect/platform's handler of `app` (`NodeHttpServer.makeHandler`,
 * the app's middleware included), so a host (the worker's intake) keeps one port and one
 * callback URL while the callback route skips the platform's per-request work.
 *
 * Every other request is answered even while no app is served, never with an empty body:
 * before the app is served, 404 (the receiver alone on its port) or, when `unserved.starting`
 * says a host app is coming, 503 with its reason and `Retry-After`; after the app is released
 * (the host shutting down), 503 with `unserved.stopping` (by default "the server is
 * stopping"). From then on every answer, callbacks included, closes its connection, so that
 * clients holding keep-alive connections cannot keep the server from closing; the server
 * closes idle connections at once and cuts the rest after {@link closeGraceMillis}.
 * Upgrade requests (WebSockets) are not served.
 *
 * @example
 * // the receiver alone
 * Layer.launch(CallbackHttp.layerServer({ port: 8443 }).pipe(Layer.provide(CallbackReceiver.layer), …))
 * // beside a host app, on one port
 * HttpServer.serve(app).pipe(Layer.provide(CallbackHttp.layerServer({ port: 8080 })), …)
 */
export const layerServer = (options: {
  readonly port: number
  readonly host?: string | undefined
  /** What the rest of the port answers while no host app is served. */
  readonly unserved?:
    | {
        readonly starting?: Unavailable | undefined
        readonly stopping?: Unavailable | undefined
      }
    | undefined
}): Layer.Layer<HttpServer.HttpServer, ServeError, CallbackReceiver.CallbackReceiver> =>
  Layer.scoped(
    HttpServer.HttpServer,
    Effect.gen(function* () {
      const starting = options.unserved?.starting
      const stopping = options.unserved?.stopping ?? {
        message: "the server is stopping",
        retryAfterSeconds: 5
      }
      // What answers the requests that are not the callback route: 404 or 503 until a host
      // app is served, its platform handler while it is, 503 once it is released.
      let other: (request: IncomingMessage, response: ServerResponse) => void =
        starting === undefined ? notFound : unavailable(starting)
      // Once the host app is released: every answer closes its connection.
      let closing = false
      const handle = yield* listener((request, response) => other(request, response))
      const server = yield* Effect.acquireRelease(
        Effect.sync(() =>
          createServer((request, response) => {
            if (closing) response.setHeader("connection", "close")
            handle(request, response)
          })
        ),
        (server) =>
          Effect.async<void>((resume) => {
            closing = true
            if (!server.listening) return resume(Effect.void)
            const cut = setTimeout(() => server.closeAllConnections(), closeGraceMillis)
            server.close(() => {
              clearTimeout(cut)
              resume(Effect.void)
            })
            server.closeIdleConnections()
          })
      )
      yield* Effect.async<void, ServeError>((resume) => {
        const onError = (cause: unknown) => resume(Effect.fail(new HttpServerError.ServeError({ cause })))
        server.once("error", onError)
        server.listen(
          { port: options.port, ...(options.host === undefined ? {} : { host: options.host }) },
          () => {
            server.off("error", onError)
            resume(Effect.void)
          }
        )
      })
      const address = server.address()
      const bound: HttpServer.Address =
        typeof address === "object" && address !== null
          ? {
              _tag: "TcpAddress",
              hostname: address.address === "::" ? "0.0.0.0" : address.address,
              port: address.port
            }
          : { _tag: "UnixAddress", path: String(address) }
      yield* Effect.logInfo(
        `callback receiver listening on ${bound._tag === "TcpAddress" ? `http://${bound.hostname}:${bound.port}` : bound.path}`
      )
      let serving = false
      return HttpServer.make({
        address: bound,
        serve: (app, middleware) =>
          Effect.gen(function* () {
            if (serving) {
              return yield* Effect.dieMessage("CallbackHttp.layerServer serves one host app at a time")
            }
            const handler = yield* middleware === undefined
              ? NodeHttpServer.makeHandler(app)
              : NodeHttpServer.makeHandler(app, middleware)
            yield* Effect.acquireRelease(
              Effect.sync(() => {
                serving = true
                other = handler
              }),
              () =>
                Effect.sync(() => {
                  serving = false
                  closing = true
                  other = unavailable(stopping)
                })
            )
          })
      })
    })
  ).pipe(
    // Nothing of a callback request is traced here; the name is redacted for the host
    // app's server spans and any other HTTP span of the host's.
    Layer.provide(redactedHeaders)
  )

const answerEmpty = (status: number) => (request: IncomingMessage, response: ServerResponse) => {
  request.resume()
  if (response.headersSent) return
  response.writeHead(status, { "content-length": 0 })
  response.end()
}

const notFound = answerEmpty(404)

const unavailable = (reason: Unavailable) => {
  const body = Buffer.from(JSON.stringify({ _tag: "Unavailable", message: reason.message }))
  return (request: IncomingMessage, response: ServerResponse) => {
    request.resume()
    if (response.headersSent) return
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": body.length,
      "retry-after": String(reason.retryAfterSeconds),
      connection: "close"
    })
    response.end(body)
  }
}
