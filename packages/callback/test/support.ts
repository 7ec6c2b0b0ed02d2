/**
 * Harness of the receiver's tests: the receiver served on a loopback port by Node's HTTP
 * server, an HttpClient pointed at it, the memory event store, the in-memory workflow
 * engine with the protocol's workflows, and the scripted terminal cloud delivering its
 * results to the receiver over real HTTP.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import type { ServeError } from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import { CallbackRegistration, PaymentProtocol, ProtocolSettings, TerminalCloud } from "@tillflow/core"
import { ScriptedTerminalCloud } from "@tillflow/core/testing"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"

export const callbackBase = "https://pos.test/callbacks"

/** The scripted cloud of the test. */
export class Cloud extends Context.Tag("test/Cloud")<Cloud, ScriptedTerminalCloud.Handle>() {}

/** Statuses the receiver answered to the cloud's deliveries. */
export class Answers extends Context.Tag("test/Answers")<Answers, Array<number>>() {}

/** Posts a delivery to the receiver as a terminal does. */
export const post = (attemptId: string, body: string, token: string | undefined) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const request = HttpClientRequest.post(`/callbacks/${attemptId}`).pipe(
      HttpClientRequest.bodyText(body, "application/json"),
      token === undefined ? (r) => r : HttpClientRequest.setHeader("AUTH-TOKEN", token)
    )
    const response = yield* client.execute(request)
    return {
      status: response.status,
      text: yield* response.text,
      retryAfter: response.headers["retry-after"]
    }
  }).pipe(Effect.orDie)

const deliver = (answers: Array<number>) => (delivery: ScriptedTerminalCloud.Delivery) =>
  Effect.gen(function* () {
    const attemptId = delivery.callbackUrl.slice(callbackBase.length + 1)
    const reply = yield* post(attemptId, JSON.stringify(delivery.body), delivery.token)
    answers.push(reply.status)
  })

/** The first attempt's id and token, from the callback address the cloud was sent. */
export const firstAttempt = Effect.gen(function* () {
  const sent = (yield* Cloud).recorded.sends[0]?.request
  const delivery = sent !== undefined && "delivery" in sent ? sent.delivery : undefined
  if (delivery === undefined) return yield* Effect.dieMessage("the attempt was sent without a callback")
  return {
    attemptId: delivery.callbackUrl.slice(callbackBase.length + 1),
    token: Redacted.value(delivery.token)
  }
})

/** Options of the harness. */
export interface Options {
  readonly scripts?: ReadonlyArray<ScriptedTerminalCloud.Script>
  readonly store?: Layer.Layer<EventStore.EventStore>
  /**
   * The receiver's process stops right after acknowledging: its forwarding of the result
   * to the workflow (the deferred resolved) never happens. The workflows run on.
   */
  readonly loseForwarding?: boolean
  /**
   * How the route is served: `CallbackHttp.layerServer`'s plain `node:http` listener (the
   * default, the leanest path), the same with a host app served on its port (as the
   * worker's intake is), or `CallbackHttp.serve` on @effect/platform's server.
   */
  readonly transport?: Transport
}

/** The ways the route is served. */
export type Transport = "listener" | "beside a host app" | "platform"

/** Every transport, for tests that run on each. */
export const transports: ReadonlyArray<Transport> = ["listener", "beside a host app", "platform"]

/** The transports that serve the route on the plain listener. */
export const leanTransports: ReadonlyArray<Transport> = ["listener", "beside a host app"]

/** The requests the host app saw (method and path), newest last. */
export class HostRequests extends Context.Tag("test/HostRequests")<HostRequests, Array<string>>() {}

/**
 * A host app served on the receiver's port: `GET /health` answers "ok", anything else
 * 404; every request it sees is noted in `HostRequests` by its middleware.
 */
export const hostApp = (seen: Array<string>) =>
  HttpServer.serve(HttpRouter.empty.pipe(HttpRouter.get("/health", HttpServerResponse.text("ok"))), (app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      seen.push(`${request.method} ${request.url}`)
      return Effect.catchAll(app, () => HttpServerResponse.empty({ status: 404 }))
    })
  )

/** The receiver served by `CallbackHttp.layerServer` on a free loopback port, with a client pointed at it. */
const listenerServer = HttpServer.layerTestClient.pipe(
  Layer.provide(NodeHttpClient.layerWithoutAgent),
  Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
  Layer.provideMerge(CallbackHttp.layerServer({ port: 0, host: "127.0.0.1" }))
)

/** The same with the host app served on its port. */
const sharedServer = Layer.unwrapEffect(
  Effect.sync(() => {
    const seen: Array<string> = []
    return Layer.mergeAll(hostApp(seen), Layer.succeed(HostRequests, seen)).pipe(
      Layer.provideMerge(listenerServer)
    )
  })
)

/** A workflow engine on which resolving a deferred never happens (the process stopped first). */
export const losingForwarding = Layer.effect(
  WorkflowEngine.WorkflowEngine,
  Effect.map(WorkflowEngine.WorkflowEngine, (engine) => ({
    ...engine,
    deferredDone: () => Effect.void
  }))
)

/** The harness as a layer (fresh per test). */
export const layer = (options: Options = {}) => {
  const answers: Array<number> = []
  const cloud = Layer.scopedContext(
    Effect.map(
      ScriptedTerminalCloud.make({ scripts: options.scripts ?? [], deliver: deliver(answers) }),
      (handle) =>
        Context.make(Cloud, handle).pipe(
          Context.add(TerminalCloud.TerminalCloud, handle.service),
          Context.add(Answers, answers)
        )
    )
  )
  const receiver =
    options.loseForwarding === true
      ? CallbackReceiver.layer.pipe(Layer.provide(losingForwarding))
      : CallbackReceiver.layer
  const served: Layer.Layer<
    HttpClient.HttpClient | HttpServer.HttpServer,
    ServeError,
    CallbackReceiver.CallbackReceiver
  > =
    options.transport === "platform"
      ? CallbackHttp.serve.pipe(Layer.provideMerge(NodeHttpServer.layerTest))
      : options.transport === "beside a host app"
        ? sharedServer
        : listenerServer
  return PaymentProtocol.layer.pipe(
    Layer.provideMerge(cloud),
    Layer.provideMerge(served),
    Layer.provideMerge(receiver),
    // One memory of registered attempts for the workflows and the receiver, as the worker has.
    Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
    Layer.provideMerge(ProtocolSettings.layer({ callbackBaseUrl: Option.some(callbackBase) })),
    Layer.provideMerge(options.store ?? MemoryEventStore.layer()),
    Layer.provideMerge(WorkflowEngine.layerMemory)
  )
}

/** Registers an attempt as the protocol does, with the hash of `token`. */
export const register = (attemptId: string, token: string, paymentStream = "payment-test") =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const event = yield* CallbackRegistration.events.encode(
      CallbackRegistration.AttemptRegistered.make({
        attemptId,
        attempt: 1,
        workflowName: "TerminalOperation",
        executionId: "not-running",
        paymentStream,
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

const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 2)))

/** Runs an effect to its end, moving the test clock a second at a time (real I/O settles between). */
export const runToEnd = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly max?: Duration.DurationInput } = {}
): Effect.Effect<Exit.Exit<A, E>, never, R> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(effect)
    const max = Duration.toMillis(Duration.decode(options.max ?? "1 hour"))
    for (let elapsed = 0; ; elapsed += 1000) {
      for (let i = 0; i < 4; i++) yield* settle
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) return done.value
      if (elapsed > max) return yield* Effect.dieMessage("did not end in time")
      yield* TestClock.adjust("1 second")
    }
  })

/** The events of a stream. */
export const streamOf = (streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => Effect.orDie(store.readStream(streamId)))

/** Every event of the store. */
export const everything = Effect.flatMap(EventStore.EventStore, (store) =>
  Effect.map(
    Effect.orDie(store.readAll(EventStore.Checkpoint.start, { maxCount: 100_000 })),
    (page) => page.events
  )
)
