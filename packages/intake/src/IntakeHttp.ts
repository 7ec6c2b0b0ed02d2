/**
 * The intake API served over HTTP: each handler of `IntakeApi` calls the `Intake`; the
 * bearer token is compared in constant time (as SHA-256 digests); `/metrics` renders
 * Effect's metrics with the executions counted by workflow and status, the open alerts by
 * kind and the terminals by state at scrape time; the
 * callback receiver (`POST /callbacks/:attemptId`, authenticated by each attempt's own
 * `AUTH-TOKEN`) shares the server's port on a lean path of its own (`serverLayer`). Bodies are bounded (1 MiB); a body too large or not
 * JSON and an unknown route get JSON errors like the API's own (`guard`). Everything is
 * released with the layer: the listener stops accepting, requests in flight finish.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import { ConsoleHttp, ConsoleSessions, LoginLimiter, Operators } from "@tillflow/console"
import { CallbackRegistration, LogMetrics, MerchantKeys, MerchantRegistry } from "@tillflow/core"
import { DurableEngine, type EventStore, ExecutionQueue, Tenant } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Intake from "./Intake.js"
import {
  CurrentOperator,
  Forbidden,
  IntakeApi,
  IntakeAuth,
  NotReady,
  TooManyRequests,
  Unauthorized
} from "./IntakeApi.js"
import { issueMessage, issuePath } from "./internal/Failures.js"
import * as Scope from "./internal/Scope.js"
import { MerchantsLive } from "./internal/Merchants.js"
import * as MerchantRateLimit from "./MerchantRateLimit.js"
import * as Monitor from "./Monitor.js"
import { MonitorLive } from "./MonitorHttp.js"
import * as ReferencePage from "./internal/ReferencePage.js"
import * as Prometheus from "./Prometheus.js"
import type * as Stack from "./Stack.js"

/** Executions by workflow and status, set at each scrape. */
export const executions = Metric.gauge("tillflow_executions", {
  description: "workflow executions by workflow and status"
})

/** Unresolved alerts by kind and state (open: nobody is on it yet; acknowledged), set at each scrape (what to page on). */
export const alertsOpen = Metric.gauge("tillflow_alerts_open", {
  description:
    "unresolved alerts by kind (mismatch, unresolved, stuck, overdue, late-result, key-refused) and state (open: not yet acknowledged; acknowledged)"
})

/** Each merchant's executions running and waiting (fair shares, issue 32), set at each scrape. */
export const merchantExecutions = Metric.gauge("tillflow_merchant_executions", {
  description:
    "a merchant's executions by state: running (under a worker's lease), waiting (due, not yet claimed); the deployment's own merchant is not counted"
})

/** The merchant's terminals by state (idle, busy, offline), set at each scrape. */
export const terminalStates = Metric.gauge("tillflow_terminals", {
  description:
    "terminals by state: idle, busy (running an operation), offline (its operation waits for it to come back)"
})

/** The state a terminal is counted under: offline when its operation waits for it to come back online. */
export const terminalState = (terminal: Monitor.TerminalView): "idle" | "busy" | "offline" =>
  terminal.state === "idle"
    ? "idle"
    : terminal.running?.progress?.phase === "retrying" &&
        terminal.running.progress.waitingFor.includes("(offline)")
      ? "offline"
      : "busy"

/** Wrong bearer tokens refused, by reason (`wrong`, or `locked`: refused unchecked during a lock-out). */
export const bearerFailures = Metric.counter("tillflow_intake_auth_failures_total", {
  description: "intake requests refused for their bearer token, by reason: wrong token, or client locked out",
  incremental: true
})

/** Lock-outs of a client started after repeated wrong bearer tokens. */
export const bearerLockouts = Metric.counter("tillflow_intake_auth_lockouts_total", {
  description: "intake clients locked out after repeated wrong bearer tokens",
  incremental: true
})

/**
 * Wrong bearer tokens from one client address: ten within a minute lock that address out
 * for a minute (429 with `Retry-After`, every token refused unchecked, logged with the
 * address and never the token, counted); other clients are not affected, and a right token
 * clears the address's failures. A token is 256 bits: the lock-out is against floods and
 * noise in the logs, not against guessing.
 */
export const bearerPolicy: LoginLimiter.Policy = {
  what: "intake bearer token",
  maxFailures: 10,
  window: Duration.minutes(1),
  lockout: Duration.minutes(1),
  failures: bearerFailures,
  lockouts: bearerLockouts
}

const refused = new Unauthorized({
  message: "missing or wrong bearer token: send Authorization: Bearer <TILLFLOW_INTAKE_TOKEN>"
})

/** What a role may do through the API: a viewer reads (GET, HEAD); an operator and an admin also act. */
const roleRefusal = (operator: Operators.Operator, method: string): Forbidden | undefined =>
  method === "GET" || method === "HEAD" || Operators.allows(operator.role, "operator")
    ? undefined
    : new Forbidden({
        message: `operator ${operator.name} is a ${operator.role}: a viewer reads, it does not act (${method} needs the operator role)`,
        role: operator.role
      })

/**
 * The bearer check: SHA-256 of both sides compared in constant time (the intake token's
 * identity, `Operators.tokenOperator`); or a live session of the console (its cookie), from
 * the `ConsoleSessions` in context, whose operator's role must allow the request.
 */
export const authLayer = (
  token: Redacted.Redacted<string>,
  tokens: Operators.Tokens = Operators.noTokens
): Layer.Layer<IntakeAuth, never, ConsoleSessions.ConsoleSessions> =>
  Layer.effect(
    IntakeAuth,
    Effect.zipWith(
      CallbackRegistration.hashToken(token),
      ConsoleSessions.ConsoleSessions,
      (expected, sessions) => {
        const limiter = LoginLimiter.make(Date.now, bearerPolicy)
        // The schemes are tried in turn (the bearer first, then the cookie), the last failure
        // answering: a lock-out the bearer check found, or a merchant token's refusal, is kept
        // for the cookie's to answer with, when the request has no session cookie.
        const lockedOut = new WeakMap<
          object,
          Effect.Effect<never, TooManyRequests | Forbidden | Intake.InvalidRequest>
        >()
        return IntakeAuth.of({
          consoleSession: (presented) =>
            Effect.gen(function* () {
              if (Redacted.value(presented) === "") {
                const locked = lockedOut.get(yield* HttpServerRequest.HttpServerRequest)
                if (locked !== undefined) return yield* locked
              }
              const operator = yield* sessions.check(Redacted.value(presented))
              if (Option.isNone(operator)) return yield* Effect.fail(refused)
              const request = yield* HttpServerRequest.HttpServerRequest
              const forbidden = roleRefusal(operator.value, request.method)
              if (forbidden !== undefined) return yield* Effect.fail(forbidden)
              yield* Scope.enforce(operator.value, request)
              return operator.value
            }),
          bearer: (presented) =>
            Effect.gen(function* () {
              const request = yield* HttpServerRequest.HttpServerRequest
              const attempt = { name: "", client: Option.getOrElse(request.remoteAddress, () => "unknown") }
              const refuse = (until: number) => {
                const refusal = tooManyTokens(until)
                lockedOut.set(request, refusal)
                return refusal
              }
              // No bearer token at all (a console request, carrying its cookie): not a wrong one.
              if (Redacted.value(presented) === "") return yield* Effect.fail(refused)
              const locked = yield* limiter.lockedUntil(attempt)
              if (locked !== undefined) return yield* refuse(locked)
              const ok = yield* CallbackRegistration.verifyToken(Redacted.value(presented), expected)
              if (ok) {
                yield* limiter.succeeded(attempt)
                return Operators.tokenOperator
              }
              // A merchant's own token (`TILLFLOW_INTAKE_TOKENS`), known by its SHA-256.
              const merchantToken =
                tokens.bySha256.size === 0
                  ? undefined
                  : tokens.bySha256.get(yield* CallbackRegistration.hashToken(presented))
              if (merchantToken !== undefined) {
                yield* limiter.succeeded(attempt)
                const forbidden = roleRefusal(merchantToken, request.method)
                const outcome = yield* Effect.either(
                  forbidden !== undefined ? Effect.fail(forbidden) : Scope.enforce(merchantToken, request)
                )
                if (outcome._tag === "Right") return merchantToken
                // Kept for the cookie scheme to answer with (it answers last).
                lockedOut.set(request, Effect.fail(outcome.left))
                return yield* Effect.fail(outcome.left)
              }
              const lockedNow = yield* limiter.failed(attempt)
              return yield* lockedNow === undefined ? Effect.fail(refused) : refuse(lockedNow)
            })
        })
      }
    )
  )

/** 429 with `Retry-After` (seconds until `until`, epoch ms) for a client locked out. */
const tooManyTokens = (until: number) => {
  const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000))
  return Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(seconds)))
    ),
    Effect.fail(
      new TooManyRequests({
        message: `too many wrong bearer tokens from this client: try again in ${seconds} s`,
        retryAfterSeconds: seconds
      })
    )
  )
}

const HealthLive = HttpApiBuilder.group(IntakeApi, "health", (handlers) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.flatMap(intake.ready, (view) =>
          view.ready
            ? Effect.succeed(view)
            : Effect.fail(
                new NotReady({
                  store: view.store,
                  engine: view.engine,
                  service: view.service,
                  message: `not ready: ${[
                    view.store === "ok" ? undefined : `store ${view.store}`,
                    view.engine.startsWith("ok") ? undefined : `engine ${view.engine}`,
                    view.service.startsWith("refused") ? `service ${view.service}` : undefined
                  ]
                    .filter((part) => part !== undefined)
                    .join("; ")}`
                })
              )
        )
      )
  })
)

/**
 * A resolution recorded in the name it gives: a console session's operator may give only
 * their own (400 otherwise); a bearer-token caller names the operator.
 */
const inOwnName = <A, R>(operator: string, resolve: Effect.Effect<A, Intake.IntakeError, R>) =>
  Effect.flatMap(CurrentOperator, (who) =>
    who.via === "operator" && operator !== who.name
      ? Effect.fail(
          new Intake.InvalidRequest({
            message: `operator: a resolution is recorded in the name of the operator logged in (${who.name}), not ${operator}`
          })
        )
      : resolve
  )

/**
 * A merchant's rate limit reached (`Intake.RateLimited`) answers 429 with `Retry-After`,
 * the seconds the error says, beside its JSON body.
 */
const rateLimitedRetryAfter = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapError(effect, (error) =>
    error instanceof Intake.RateLimited
      ? HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(
            HttpServerResponse.setHeader(response, "retry-after", String(error.retryAfterSeconds))
          )
        )
      : Effect.void
  )

const OperationsLive = HttpApiBuilder.group(IntakeApi, "operations", (handlers) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    return (
      handlers
        .handle("start", ({ payload }) => rateLimitedRetryAfter(intake.start(payload)))
        // Attributed to who asks: the session's operator, or the bearer token as such.
        .handle("stop", ({ path, payload }) =>
          Effect.flatMap(CurrentOperator, (who) =>
            intake.stop({ ...payload, serialNumber: path.serialNumber }, { name: who.name, via: who.via })
          )
        )
        .handle("lifecycle", ({ path, payload }) =>
          rateLimitedRetryAfter(intake.lifecycle(path.workflow, payload))
        )
        .handle("devices", () => intake.devices)
        .handle("transactionStatus", ({ path, urlParams }) =>
          intake.transactionStatus(path.reference, urlParams.selector ?? "first")
        )
        // A console operator resolves in their own name; a token caller names the operator.
        .handle("resolve", ({ path, payload }) =>
          inOwnName(payload.operator, intake.resolve(path.guid, payload))
        )
        .handle("resolveAttempt", ({ path, payload }) =>
          inOwnName(payload.operator, intake.resolveAttempt(path.kind, path.key, payload))
        )
        // Attributed to who asks: the session's operator, or the bearer token as such.
        .handle("act", ({ path, payload }) =>
          Effect.flatMap(CurrentOperator, (who) =>
            rateLimitedRetryAfter(intake.act(path.guid, payload, { name: who.name, via: who.via }))
          )
        )
    )
  })
)

const ExecutionsLive = HttpApiBuilder.group(IntakeApi, "executions", (handlers) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    return (
      handlers
        .handle("list", ({ urlParams }) => intake.list(urlParams))
        .handle("get", ({ path, urlParams }) => intake.execution(path.executionId, urlParams.wait))
        .handle("history", ({ path }) => intake.history(path.executionId))
        // Attributed to who asks: the session's operator, or the bearer token as such.
        .handle("retry", ({ path, payload }) =>
          Effect.flatMap(CurrentOperator, (who) =>
            rateLimitedRetryAfter(intake.retry(path.executionId, payload, { name: who.name, via: who.via }))
          )
        )
    )
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
    // Every documented series from the first scrape, at zero until counted.
    yield* LogMetrics.initialize
    yield* CallbackReceiver.initializeRefusals
    for (const reason of ["wrong", "locked"])
      yield* Metric.value(Metric.tagged(bearerFailures, "reason", reason))
    yield* Metric.value(bearerLockouts)
    const countExecutions = Effect.gen(function* () {
      // Counted by the store (one GROUP BY), not by reading every execution at each scrape.
      const tally = yield* engine.tally
      const names = new Set([...(yield* engine.workflowNames), ...tally.map((t) => t.workflowName)])
      for (const workflow of names) {
        for (const status of ExecutionQueue.ExecutionStatus.literals) {
          const n = tally.find((t) => t.workflowName === workflow && t.status === status)?.count ?? 0
          yield* Metric.set(
            Metric.tagged(Metric.tagged(executions, "workflow", workflow), "status", status),
            n
          )
        }
      }
    }).pipe(
      Effect.catchAll((error) => Effect.logWarning(`metrics: executions not counted: ${error.message}`))
    )
    const monitor = yield* Monitor.Monitor
    const countAlerts = Effect.gen(function* () {
      const { alerts } = yield* monitor.alerts()
      for (const kind of Monitor.AlertKind.literals) {
        for (const state of ["open", "acknowledged"] as const) {
          yield* Metric.set(
            Metric.tagged(Metric.tagged(alertsOpen, "kind", kind), "state", state),
            alerts.filter((a) => a.kind === kind && a.state === state).length
          )
        }
      }
    }).pipe(Effect.catchAll((error) => Effect.logWarning(`metrics: alerts not counted: ${error.message}`)))
    const countTerminals = Effect.gen(function* () {
      const terminals = yield* monitor.terminals
      for (const state of ["idle", "busy", "offline"] as const) {
        yield* Metric.set(
          Metric.tagged(terminalStates, "state", state),
          terminals.filter((t) => terminalState(t) === state).length
        )
      }
    }).pipe(Effect.catchAll((error) => Effect.logWarning(`metrics: terminals not counted: ${error.message}`)))
    // The registered merchants and those seen at a scrape: each has its series, 0 when idle.
    const registry = yield* Effect.serviceOption(MerchantRegistry.MerchantRegistry)
    const merchantsSeen = new Set<string>()
    const countMerchants = Effect.gen(function* () {
      const tally = yield* engine.tallyByTenant
      for (const t of tally) merchantsSeen.add(t.tenant)
      if (Option.isSome(registry)) {
        const registered = yield* Effect.option(registry.value.list)
        for (const m of Option.getOrElse(registered, () => [])) merchantsSeen.add(m.id)
      }
      for (const merchant of merchantsSeen) {
        // Each merchant's refusals for its rate limit: 0 until one is refused.
        yield* Metric.value(MerchantRateLimit.rateLimitedOf(merchant))
        const counted = tally.find((t) => t.tenant === merchant)
        for (const state of ["running", "waiting"] as const) {
          yield* Metric.set(
            Metric.tagged(Metric.tagged(merchantExecutions, "merchant", merchant), "state", state),
            counted?.[state] ?? 0
          )
        }
      }
    }).pipe(Effect.catchAll((error) => Effect.logWarning(`metrics: merchants not counted: ${error.message}`)))
    return handlers.handle("metrics", () =>
      Effect.zipRight(
        // The gauges are the deployment's, whatever merchant a scrape names (`Tillflow-Merchant`
        // scopes the monitor's alerts and terminals to that merchant's own).
        Effect.all([countExecutions, countAlerts, countTerminals, countMerchants], { concurrency: 4 }).pipe(
          MerchantKeys.forMerchant(undefined)
        ),
        Prometheus.scrape
      )
    )
  })
)

const ReferenceLive = HttpApiBuilder.group(IntakeApi, "reference", (handlers) =>
  Effect.sync(() => {
    const spec: Readonly<Record<string, unknown>> = { ...OpenApi.fromApi(IntakeApi) }
    return handlers.handle("openapi", () => Effect.succeed(spec))
  })
)

/** Where the reference page is served. */
export const docsPath = "/docs"

/** Where the reference page's script is served. */
export const docsScriptPath = "/docs/scalar.js"

/**
 * The reference page at {@link docsPath} and its script at {@link docsScriptPath}, without
 * authentication: Scalar's API reference with the document embedded, its script served by
 * the worker (no CDN) and read from @effect/platform on its first request, its web fonts
 * off, so the page loads nothing from elsewhere (`ReferencePage`).
 */
export const docsRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const page = HttpServerResponse.html(ReferencePage.html(OpenApi.fromApi(IntakeApi), docsScriptPath))
    const script = yield* ReferencePage.script
    yield* router.get(docsPath, Effect.succeed(page))
    yield* router.get(
      docsScriptPath,
      script.pipe(
        Effect.map((source) =>
          HttpServerResponse.text(source, {
            contentType: "text/javascript; charset=utf-8",
            headers: { "cache-control": "public, max-age=86400" }
          })
        ),
        Effect.catchAll((error) =>
          Effect.as(Effect.logError(error.message), refusal(503, "Unavailable", error.message))
        )
      )
    )
  })
)

/** The intake API with its handlers, over an `Intake`, the engine (for metrics) and the `Monitor`. */
export const apiLayer = (token: Redacted.Redacted<string>, tokens: Operators.Tokens = Operators.noTokens) =>
  HttpApiBuilder.api(IntakeApi).pipe(
    Layer.provide([
      HealthLive,
      OperationsLive,
      ExecutionsLive,
      AuditLive,
      SystemLive,
      MonitorLive,
      MerchantsLive,
      ReferenceLive
    ]),
    Layer.provide(authLayer(token, tokens))
  )

/**
 * The largest request body, 1 MiB (the platform reads up to 10 MiB). The largest body the
 * intake has a use for, an operation with every optional field or a callback's result with
 * its receipts, is a few kilobytes: 1 MiB leaves a wide margin and bounds what each request
 * can make the worker hold.
 */
export const maxBodyBytes = 1024 * 1024

const refusal = (status: number, tag: string, message: string) =>
  HttpServerResponse.unsafeJson({ _tag: tag, message }, { status })

const tooLarge = refusal(
  413,
  "PayloadTooLarge",
  `the request body is larger than 1 MiB (${maxBodyBytes} bytes)`
)

/** The platform's failure to read a body: it dies with it (the payload is read with `orDie`). */
const unreadableBody = (cause: Cause.Cause<unknown>): Option.Option<HttpServerError.RequestError> =>
  Option.filter(
    Cause.dieOption(cause),
    (defect): defect is HttpServerError.RequestError =>
      HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"
  )

/** The router found no route: a failure its type does not show (the middleware sees `never`). */
const routeNotFound = (cause: Cause.Cause<unknown>): boolean =>
  Option.exists(
    Cause.failureOption(cause),
    (error) => HttpServerError.isServerError(error) && error._tag === "RouteNotFound"
  )

const isIssue = (u: unknown): u is { _tag: string; path: ReadonlyArray<PropertyKey>; message: string } =>
  typeof u === "object" &&
  u !== null &&
  "_tag" in u &&
  typeof u._tag === "string" &&
  "path" in u &&
  Array.isArray(u.path) &&
  "message" in u &&
  typeof u.message === "string"

/**
 * A request that does not decode fails with the platform's `HttpApiDecodeError`, its
 * message a tree of the schema: said instead as the intake's `InvalidRequest`, one line
 * per field (`waitSecond: unknown field; allowed: idempotencyKey, request, …`).
 */
const undecodable = (cause: Cause.Cause<unknown>): Option.Option<string> =>
  Option.flatMap(Cause.failureOption(cause), (error) => {
    if (
      typeof error !== "object" ||
      error === null ||
      !("_tag" in error) ||
      error._tag !== "HttpApiDecodeError"
    )
      return Option.none()
    const issues = "issues" in error && Array.isArray(error.issues) ? error.issues.filter(isIssue) : []
    return issues.length === 0
      ? Option.none()
      : Option.some(issues.map((i) => `${issuePath("", i.path)}: ${issueMessage(i)}`).join("; "))
  })

/**
 * The `Retry-After` of every 503 of the intake (seconds): the store or the service did not
 * answer, this worker's key was refused, or the worker is starting or stopping. A caller
 * that retries with the same idempotency key is answered the same execution: retrying is
 * always safe.
 */
export const retryAfterSeconds = 5

/** What the port answers before the intake is served (`serverLayer`): the worker is starting. */
export const starting = {
  message:
    "the worker is starting: its API is not ready yet; retry shortly with the same idempotency key (safe: the same key is the same operation)",
  retryAfterSeconds: 1
}

/** What the port answers once the intake is released: the worker is stopping. */
export const stopping = {
  message:
    "the worker is stopping: retry shortly, here or at another worker, with the same idempotency key (safe: the same key is the same operation)",
  retryAfterSeconds
}

/** A 503 without `Retry-After` given one. */
const withRetryAfter = (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 503 && response.headers["retry-after"] === undefined
    ? HttpServerResponse.setHeader(response, "retry-after", String(retryAfterSeconds))
    : response

const infrastructureTags: ReadonlySet<string> = new Set([
  "EventStoreError",
  "ExecutionQueueError",
  "SqlError",
  "CorruptHistory"
])

/**
 * Why a request failed on the worker's side, said to its caller: the store's own message
 * when the store or the queue failed (a defect after the engine's retries), else that an
 * unexpected failure was logged (its detail stays in the log: it may hold anything).
 */
const faultMessage = (cause: Cause.Cause<unknown>): string => {
  const reasons = [...Cause.defects(cause), ...Cause.failures(cause)]
  for (const reason of reasons) {
    if (
      typeof reason === "object" &&
      reason !== null &&
      "_tag" in reason &&
      typeof reason._tag === "string" &&
      infrastructureTags.has(reason._tag) &&
      "message" in reason &&
      typeof reason.message === "string"
    ) {
      return `the store did not answer (${reason.message}); retry with the same idempotency key`
    }
  }
  return "the worker failed to answer this request (logged); retry with the same idempotency key"
}

/**
 * Answers what the API's handlers never see with a JSON error like theirs: a body above
 * {@link maxBodyBytes} (413, refused by its length before it is read, or when reading
 * passes the limit), a body that is not JSON (400), a body that does not decode (400,
 * field by field), a route that does not exist (404), and a failure on the worker's side (a
 * defect, such as the store unreachable past the engine's retries): 503 with a JSON reason,
 * logged with its cause, never a 500 with an empty body. Every 503 carries `Retry-After`.
 */
export const guard: HttpApiBuilder.MiddlewareFn<never> = (app) =>
  Effect.gen(function* () {
    // Applied to the answer as it is written, whichever path made it (the API's encoded
    // errors are made outside this middleware).
    yield* HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(withRetryAfter(response)))
    const request = yield* HttpServerRequest.HttpServerRequest
    if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) return tooLarge
    return yield* app
  }).pipe(
    HttpServerRequest.withMaxBodySize(Option.some(maxBodyBytes)),
    Effect.catchAllCause((cause) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (routeNotFound(cause)) {
          return refusal(404, "NotFound", `no route ${request.method} ${request.url}`)
        }
        const invalid = undecodable(cause)
        if (Option.isSome(invalid)) return refusal(400, "InvalidRequest", invalid.value)
        const unreadable = unreadableBody(cause)
        if (Option.isSome(unreadable)) {
          return String(unreadable.value.cause).includes("maxBytes exceeded")
            ? tooLarge
            : refusal(400, "InvalidRequest", "the request body is not valid JSON")
        }
        // A declared error (the API answers it), or the caller gone away (nobody to answer).
        if (Cause.failures(cause).length > 0 || Cause.isInterruptedOnly(cause)) {
          return yield* Effect.failCause(cause)
        }
        // A defect (the store unreachable past the engine's retries …): the platform would
        // answer 500 with an empty body.
        yield* Effect.logError(
          `${request.method} ${request.url.split("?")[0] ?? request.url} failed on the worker's side`,
          cause
        )
        return refusal(503, "Unavailable", faultMessage(cause))
      })
    )
  )

/** The header a platform's backend names the merchant a request acts for with (issue 32). */
export const merchantHeader = "tillflow-merchant"

/**
 * The merchant a request acts for: `Tillflow-Merchant: <merchant id>`, as a platform's
 * backend names the connected account it acts for (Stripe's `Stripe-Account`). The request
 * is handled for that merchant (`MerchantKeys.forMerchant`): the service is called with its
 * keys, its device list is the one checked, the executions it starts are its; without the
 * header, for the deployment's own merchant (the live feed also takes `?merchant=`, which a
 * browser's `EventSource` can send: `Scope.namedMerchant`). A malformed id is 400 here; an unknown or
 * disabled merchant is refused by the intake when the request would start something.
 */
export const merchantScope: HttpApiBuilder.MiddlewareFn<never> = (app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const named = Scope.namedMerchant(request)
    if (named === undefined) return yield* app
    if (!Tenant.isTenant(named)) {
      return refusal(
        400,
        "InvalidRequest",
        "Tillflow-Merchant: a merchant id is 1 to 64 letters, digits, '.', '_' or '-'"
      )
    }
    return yield* app.pipe(MerchantKeys.forMerchant(named))
  })

/**
 * The `_tag` of an error answer (`InvalidRequest`, `Unauthorized` …): the API's builder
 * encodes a handler's error into a JSON body, so the response holds it, not the exit.
 */
const errorTag = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return undefined
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(response.body.body))
    return typeof body === "object" && body !== null && "_tag" in body && typeof body._tag === "string"
      ? body._tag
      : undefined
  } catch {
    return undefined
  }
}

/**
 * One log line per request, `POST /v1/operations 400 InvalidRequest`: at INFO up to 4xx,
 * whose answer says all there is, with no cause or stack trace; at ERROR with the cause for
 * 5xx. (The platform's logger says "Sent HTTP response" for an error answer the API
 * encoded, and logs the whole cause, stack included, for a failure that reaches it.)
 */
export const requestLogger = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const exit = yield* Effect.exit(app)
    if (yield* FiberRef.get(HttpMiddleware.loggerDisabled)) return yield* exit
    const path = request.url.split("?")[0] ?? request.url
    const [response, cause] =
      exit._tag === "Success"
        ? [exit.value, Option.none<Cause.Cause<unknown>>()]
        : HttpServerError.causeResponseStripped(exit.cause)
    const tag = errorTag(response)
    const message = `${request.method} ${path} ${response.status}${tag === undefined ? "" : ` ${tag}`}`
    const annotations = { "http.method": request.method, "http.url": path, "http.status": response.status }
    yield* (
      response.status >= 500 ? Effect.logError(message, ...Option.toArray(cause)) : Effect.logInfo(message)
    ).pipe(Effect.annotateLogs(annotations))
    return yield* exit
  })
)

/** Options of the served intake. */
export interface ServeOptions {
  /** The web console at `/console` (off: the routes do not exist); on by default. */
  readonly console?: false | ConsoleHttp.Options | undefined
  /** The console's operators (none: the console is logged into with the token). */
  readonly operators?: Operators.Registry | undefined
  /** Bearer tokens of merchants' own backends, each limited to its merchants (`TILLFLOW_INTAKE_TOKENS`). */
  readonly tokens?: Operators.Tokens | undefined
}

/**
 * Serves the intake API and (unless turned off) the web console on the `HttpServer` in
 * context; the callback receiver's route is the server's own ({@link serverLayer}). Request logs go through Effect's logger (JSON in the
 * worker, {@link requestLogger}); `guard` answers bad bodies, unknown routes and failures on
 * the worker's side (503 JSON with `Retry-After`).
 */
export const serve = (
  token: Redacted.Redacted<string>,
  options: ServeOptions = {}
): Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | Intake.Intake | DurableEngine.DurableEngine | EventStore.EventStore | Stack.Cloud
> =>
  HttpApiBuilder.serve(requestLogger).pipe(
    Layer.provide(HttpApiBuilder.middleware(guard)),
    Layer.provide(HttpApiBuilder.middleware(merchantScope)),
    Layer.provide(docsRoute),
    Layer.provide(apiLayer(token, options.tokens ?? Operators.noTokens)),
    Layer.provide(options.console === false ? Layer.empty : ConsoleHttp.layer(options.console ?? {})),
    // One set of sessions for the console's login and the API's authentication.
    Layer.provide(ConsoleSessions.layer(token, options.operators ?? Operators.none)),
    Layer.provide(Monitor.layer),
    // AUTH-TOKEN redacted in the server's request spans (a callback sent to the wrong path
    // reaches the platform's handler).
    Layer.provide(CallbackHttp.redactedHeaders),
    Layer.provide(NodeHttpServer.layerContext)
  )

/**
 * Node's HTTP server on `host:port` (0 picks a free port), closed with the layer: the
 * callback route (`POST /callbacks/:attemptId`) on `CallbackHttp`'s plain listener, the
 * receiver's lean path, and every other request to the app served on it ({@link serve}),
 * through @effect/platform. One port, so operators configure one callback URL. From its
 * first byte until the intake is served, and once it is released, the rest of the port
 * answers 503 with {@link starting} or {@link stopping} (JSON, `Retry-After`), never 404.
 */
export const serverLayer = (options: {
  readonly host: string
  readonly port: number
}): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError, CallbackReceiver.CallbackReceiver> =>
  CallbackHttp.layerServer({
    host: options.host,
    port: options.port,
    // From the first byte until the intake is served, and once it is released: 503, never 404.
    unserved: { starting, stopping }
  })
