/**
 * The intake API served over HTTP: each handler of `IntakeApi` calls the `Intake`; the
 * bearer token is compared in constant time (as SHA-256 digests); `/metrics` renders
 * Effect's metrics with the executions counted by workflow and status at scrape time; the
 * callback receiver (`POST /callbacks/:attemptId`, authenticated by each attempt's own
 * `AUTH-TOKEN`) shares the server. Everything is released with the layer: the listener
 * stops accepting, requests in flight finish.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpServer from "@effect/platform/HttpServer"
import type { ServeError } from "@effect/platform/HttpServerError"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import { CallbackRegistration } from "@tillflow/core"
import { DurableEngine, ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:http"
import * as Intake from "./Intake.js"
import { IntakeApi, IntakeAuth, NotReady } from "./IntakeApi.js"
import * as Prometheus from "./Prometheus.js"

/** Executions by workflow and status, set at each scrape. */
export const executions = Metric.gauge("tillflow_executions", {
  description: "workflow executions by workflow and status"
})

/** The bearer check: SHA-256 of both sides compared in constant time. */
export const authLayer = (token: Redacted.Redacted<string>): Layer.Layer<IntakeAuth> =>
  Layer.effect(
    IntakeAuth,
    Effect.map(CallbackRegistration.hashToken(token), (expected) =>
      IntakeAuth.of({
        bearer: (presented) =>
          Effect.flatMap(CallbackRegistration.verifyToken(Redacted.value(presented), expected), (ok) =>
            ok ? Effect.void : Effect.fail(new HttpApiError.Unauthorized())
          )
      })
    )
  )

const HealthLive = HttpApiBuilder.group(IntakeApi, "health", (handlers) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.flatMap(intake.ready, (view) =>
          view.ready
            ? Effect.succeed(view)
            : Effect.fail(new NotReady({ store: view.store, engine: view.engine }))
        )
      )
  })
)

const OperationsLive = HttpApiBuilder.group(IntakeApi, "operations", (handlers) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    return handlers
      .handle("start", ({ payload }) => intake.start(payload))
      .handle("stop", ({ path, payload }) => intake.stop({ ...payload, serialNumber: path.serialNumber }))
      .handle("lifecycle", ({ path, payload }) => intake.lifecycle(path.workflow, payload))
      .handle("devices", () => intake.devices)
      .handle("transactionStatus", ({ path, urlParams }) =>
        intake.transactionStatus(path.reference, urlParams.selector ?? "first")
      )
  })
)

const ExecutionsLive = HttpApiBuilder.group(IntakeApi, "executions", (handlers) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    return handlers
      .handle("list", ({ urlParams }) => intake.list(urlParams))
      .handle("get", ({ path, urlParams }) => intake.execution(path.executionId, urlParams.wait))
      .handle("history", ({ path }) => intake.history(path.executionId))
  })
)

const AuditLive = HttpApiBuilder.group(IntakeApi, "audit", (handlers) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    return handlers
      .handle("events", ({ urlParams }) => intake.events(urlParams.after, urlParams.limit ?? 500))
      .handle("verify", ({ urlParams }) => intake.verify(urlParams.stream))
      .handle("ledger", ({ urlParams }) =>
        intake.ledger({ source: urlParams.source ?? "replay", from: urlParams.from })
      )
      .handle("entries", ({ urlParams }) => intake.entries(urlParams.from, urlParams.limit ?? 10_000))
      .handle("rebuild", () => intake.rebuild)
      .handle("timeline", ({ path }) => intake.timeline(path.reference))
  })
)

const SystemLive = HttpApiBuilder.group(IntakeApi, "system", (handlers) =>
  Effect.gen(function* () {
    const engine = yield* DurableEngine.DurableEngine
    const spec = OpenApi.fromApi(IntakeApi)
    const countExecutions = Effect.gen(function* () {
      const all = yield* engine.list({})
      const names = new Set([...(yield* engine.workflowNames), ...all.map((e) => e.workflowName)])
      for (const workflow of names) {
        for (const status of ExecutionQueue.ExecutionStatus.literals) {
          const n = all.filter((e) => e.workflowName === workflow && e.status === status).length
          yield* Metric.set(
            Metric.tagged(Metric.tagged(executions, "workflow", workflow), "status", status),
            n
          )
        }
      }
    }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`metrics: executions not counted: ${error.message}`))
    )
    return handlers
      .handle("metrics", () => Effect.zipRight(countExecutions, Prometheus.scrape))
      .handle("openapi", () => Effect.succeed(spec))
  })
)

/** The intake API with its handlers, over an `Intake` and the engine (for metrics). */
export const apiLayer = (token: Redacted.Redacted<string>) =>
  HttpApiBuilder.api(IntakeApi).pipe(
    Layer.provide([HealthLive, OperationsLive, ExecutionsLive, AuditLive, SystemLive]),
    Layer.provide(authLayer(token))
  )

/** The callback receiver's route on the same server. */
export const callbackRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const receiver = yield* CallbackReceiver.CallbackReceiver
    yield* router.post(
      CallbackHttp.path,
      Effect.provideService(CallbackHttp.handle, CallbackReceiver.CallbackReceiver, receiver)
    )
  })
)

/**
 * Serves the intake API and the callback receiver on the `HttpServer` in context. Request
 * logs go through Effect's logger (JSON in the worker).
 */
export const serve = (
  token: Redacted.Redacted<string>
): Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | Intake.Intake | DurableEngine.DurableEngine | CallbackReceiver.CallbackReceiver
> =>
  HttpApiBuilder.serve(HttpMiddleware.logger).pipe(
    Layer.provide(apiLayer(token)),
    Layer.provide(callbackRoute),
    // The callback route's AUTH-TOKEN redacted in the server's request spans.
    Layer.provide(CallbackHttp.redactedHeaders),
    Layer.provide(NodeHttpServer.layerContext)
  )

/** Node's HTTP server on `host:port` (0 picks a free port), closed with the layer. */
export const serverLayer = (options: {
  readonly host: string
  readonly port: number
}): Layer.Layer<HttpServer.HttpServer, ServeError> =>
  NodeHttpServer.layer(createServer, { host: options.host, port: options.port })
