/**
 * The intake of a running worker, over HTTP: the client derived from `IntakeApi`, its
 * failures turned into the intake's own errors (a worker that does not answer is
 * `Unavailable`, a refused credential is said as such, a role that does not allow the
 * request is `Forbidden` naming the role and what was asked). It authenticates with the
 * intake's bearer token (machines) or a named operator's session (`login`), to which the
 * worker attributes what is done. The command line uses it when a worker is running (it
 * holds the embedded store, or `--worker` names it).
 */
import * as Cookies from "@effect/platform/Cookies"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { ConsoleHttp, ConsoleSessions, Operators } from "@tillflow/console"
// The module, not the package: the command line's client loads no engine.
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Intake from "./Intake.js"
import { IntakeApi } from "./IntakeApi.js"
import type * as Monitor from "./Monitor.js"

/**
 * How the client authenticates: the intake's bearer token (machines, attributed to
 * `token`), or a named operator's session from {@link login} (attributed to the operator,
 * and allowed what their role allows; `operator` names them in messages, "" when unknown).
 */
export type Credential =
  | { readonly _tag: "Token"; readonly token: Redacted.Redacted<string> }
  | {
      readonly _tag: "Session"
      readonly operator: string
      readonly session: Redacted.Redacted<string>
    }

/** Where the worker is and how to authenticate. */
export interface Options {
  readonly baseUrl: string
  readonly credential: Credential
}

const isIntakeError = (error: unknown): error is Intake.IntakeError =>
  typeof error === "object" &&
  error !== null &&
  "_tag" in error &&
  (error._tag === "InvalidRequest" ||
    error._tag === "NotFound" ||
    error._tag === "IdempotencyConflict" ||
    error._tag === "ActionRefused" ||
    error._tag === "Unavailable" ||
    error._tag === "RateLimited")

/** The credential on a request: the bearer token, or the session's cookie (the worker's console sessions). */
const authenticate = (credential: Credential) =>
  credential._tag === "Token"
    ? HttpClientRequest.bearerToken(Redacted.value(credential.token))
    : HttpClientRequest.setHeader(
        "cookie",
        `${ConsoleSessions.cookieName}=${Redacted.value(credential.session)}`
      )

/**
 * The merchant a request acts for, when the caller runs it for one
 * (`MerchantKeys.forMerchant`, the engine's tenant): the `Tillflow-Merchant` header.
 */
const forCurrentMerchant = HttpClient.mapRequestEffect((request: HttpClientRequest.HttpClientRequest) =>
  Effect.map(Tenant.current, (merchant) =>
    merchant === undefined ? request : HttpClientRequest.setHeader(request, "tillflow-merchant", merchant)
  )
)

const clientOf = (options: Options) =>
  HttpApiClient.make(IntakeApi, {
    baseUrl: options.baseUrl,
    transformClient: (client) =>
      forCurrentMerchant(HttpClient.mapRequest(client, authenticate(options.credential)))
  })

const messageOf = (error: unknown, fallback: string): string =>
  typeof error === "object" && error !== null && "message" in error ? String(error.message) : fallback

const tagOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""

/**
 * What a refused credential is told: the token to set, or to log in again. A session's
 * operator is "" when only the session is known (`TILLFLOW_OPERATOR_SESSION`).
 */
const refusedCredential = (options: Options): string => {
  const credential = options.credential
  if (credential._tag === "Token") {
    return `the worker at ${options.baseUrl} refused the token (set TILLFLOW_INTAKE_TOKEN to its token)`
  }
  const named = credential.operator !== ""
  return (
    `the worker at ${options.baseUrl} does not know the session ` +
    `${named ? `of operator ${credential.operator}` : "of TILLFLOW_OPERATOR_SESSION"} ` +
    `(it expired, was logged out, or the worker restarted): log in again ` +
    `(tillflow login --worker ${options.baseUrl} --operator ${named ? credential.operator : "NAME"})`
  )
}

/**
 * A call of the worker's API with its failures as the intake's errors; `action` says what
 * was asked (`refund transaction …`), for a refusal of the caller's role: 403 is
 * `Forbidden`, "forbidden: viewer may not refund transaction …", never `Unavailable`.
 */
const caller =
  (options: Options) =>
  <A, E>(effect: Effect.Effect<A, E>, action = "do this"): Effect.Effect<A, Intake.IntakeError> =>
    Effect.mapError(effect, (error): Intake.IntakeError => {
      if (error instanceof Intake.Forbidden) {
        return new Intake.Forbidden({
          message: `forbidden: ${error.role} may not ${action} (the worker at ${options.baseUrl}: ${error.message})`,
          role: error.role
        })
      }
      if (isIntakeError(error)) return error
      const tag = tagOf(error)
      if (tag === "AlertStateConflict") return new Intake.InvalidRequest({ message: messageOf(error, tag) })
      if (tag === "Unauthorized") return new Intake.InvalidRequest({ message: refusedCredential(options) })
      if (tag === "RequestError" || tag === "ResponseError") {
        return new Intake.Unavailable({
          message: `the worker at ${options.baseUrl} did not answer: ${messageOf(error, tag)}`
        })
      }
      return new Intake.Unavailable({
        message: `unexpected answer from the worker at ${options.baseUrl}: ${String(error)}`
      })
    })

/** Builds the client intake. */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const client = yield* clientOf(options)
    const call = caller(options)
    return Intake.Intake.of({
      devices: call(client.operations.devices()),
      start: (payload) =>
        call(
          client.operations.start({ payload }),
          `start a ${String(payload.request["operation"] ?? "terminal operation")}`
        ),
      stop: ({ serialNumber, ...payload }) =>
        call(
          client.operations.stop({ path: { serialNumber }, payload }),
          `stop the operation on terminal ${serialNumber}`
        ),
      lifecycle: (workflow, payload) =>
        call(client.operations.lifecycle({ path: { workflow }, payload }), `start ${workflow}`),
      execution: (executionId, wait) =>
        call(client.executions.get({ path: { executionId }, urlParams: wait === undefined ? {} : { wait } })),
      history: (executionId) => call(client.executions.history({ path: { executionId } })),
      retry: (executionId, payload) =>
        call(client.executions.retry({ path: { executionId }, payload }), `retry execution ${executionId}`),
      list: (urlParams) => call(client.executions.list({ urlParams })),
      search: (urlParams) => call(client.monitor.executions({ urlParams })),
      transactionStatus: (reference, selector) =>
        call(client.operations.transactionStatus({ path: { reference }, urlParams: { selector } })),
      events: (after, limit) =>
        call(client.audit.events({ urlParams: { ...(after === undefined ? {} : { after }), limit } })),
      verify: (stream) => call(client.audit.verify({ urlParams: stream === undefined ? {} : { stream } })),
      ledger: ({ source, from }) =>
        call(client.audit.ledger({ urlParams: { source, ...(from === undefined ? {} : { from }) } })),
      entries: (from, limit) =>
        call(client.audit.entries({ urlParams: { ...(from === undefined ? {} : { from }), limit } })),
      rebuild: call(client.audit.rebuild(), "rebuild the ledger"),
      timeline: (reference) => call(client.audit.timeline({ path: { reference } })),
      resolve: (guid, payload) =>
        call(client.operations.resolve({ path: { guid }, payload }), `resolve transaction ${guid}`),
      resolveAttempt: (kind, key, payload) =>
        call(client.operations.resolveAttempt({ path: { kind, key }, payload }), `resolve ${kind} ${key}`),
      // The worker records its own caller (this client's session or token) as the actor.
      act: (guid, payload) =>
        call(client.operations.act({ path: { guid }, payload }), `${payload.action} transaction ${guid}`),
      ready: client.health.ready().pipe(
        Effect.catchAll((error) =>
          Effect.succeed({
            ready: false,
            store: "unknown",
            service: "unknown",
            engine:
              typeof error === "object" && error !== null && "message" in error
                ? String(error.message)
                : "unreachable"
          })
        )
      )
    })
  })

/**
 * The alerts of a running worker's monitor, over HTTP (`MonitorApi`): listed, acknowledged
 * and resolved under the credential's identity. A step the alert's state does not allow is an
 * `InvalidRequest` saying so.
 */
export const alerts = (options: Options) =>
  Effect.gen(function* () {
    const client = yield* clientOf(options)
    const call = caller(options)
    return {
      list: (urlParams: Monitor.AlertsQuery) => call(client.monitor.alerts({ urlParams })),
      acknowledge: (alertId: string, reason: string) =>
        call(
          client.monitor.acknowledgeAlert({ path: { alertId }, payload: { reason } }),
          `acknowledge alert ${alertId}`
        ),
      resolve: (alertId: string, reason: string) =>
        call(
          client.monitor.resolveAlert({ path: { alertId }, payload: { reason } }),
          `resolve alert ${alertId}`
        )
    }
  }).pipe(Effect.provide(FetchHttpClient.layer))

/**
 * The merchant registry of a running worker, over HTTP (`MerchantsApi`): listed under the
 * credential's identity (an admin's; a viewer's or an operator's session is `Forbidden`).
 */
export const merchants = (options: Options) =>
  Effect.gen(function* () {
    const client = yield* clientOf(options)
    const call = caller(options)
    return { list: call(client.merchants.list(), "list the merchants") }
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** The client intake as a layer (fetch transport). */
export const layer = (options: Options): Layer.Layer<Intake.Intake> =>
  Layer.effect(Intake.Intake, make(options)).pipe(Layer.provide(FetchHttpClient.layer))

/** A named operator's session on a worker, from {@link login}. */
export interface Session {
  readonly operator: string
  readonly role: Operators.Role
  /** The session's id: what {@link Credential} `Session` sends; never printed. */
  readonly session: Redacted.Redacted<string>
}

const LoginAnswer = Schema.Struct({ operator: Schema.Struct({ name: Schema.String, role: Operators.Role }) })

const consoleUrl = (baseUrl: string, route: "login" | "logout") =>
  `${baseUrl.replace(/\/+$/, "")}${ConsoleHttp.basePath}/${route}`

/**
 * Logs a named operator in to the worker at `baseUrl` with their secret (the console's
 * sessions, `POST /console/login`): their session, for {@link Credential} `Session`. A wrong
 * name or secret, a lock-out and a worker without the console's login are `InvalidRequest`
 * saying so in the worker's words (which never hold the secret).
 */
export const login = Effect.fn("IntakeClient.login")(
  function* (baseUrl: string, operator: string, secret: Redacted.Redacted<string>) {
    const client = yield* HttpClient.HttpClient
    const request = HttpClientRequest.post(consoleUrl(baseUrl, "login")).pipe(
      HttpClientRequest.bodyUnsafeJson({ name: operator, secret: Redacted.value(secret) })
    )
    const response = yield* client.execute(request)
    const body = yield* Effect.orElseSucceed(response.json, () => undefined)
    if (response.status === 404) {
      return yield* new Intake.InvalidRequest({
        message: `the worker at ${baseUrl} has no operator login (its console is turned off)`
      })
    }
    if (response.status !== 200) {
      return yield* new Intake.InvalidRequest({
        message: `the worker at ${baseUrl} refused the login of ${operator} (${response.status}): ${messageOf(body, "no reason given")}`
      })
    }
    const answer = yield* Schema.decodeUnknown(LoginAnswer)(body)
    const cookie = yield* Cookies.get(response.cookies, ConsoleSessions.cookieName)
    return {
      operator: answer.operator.name,
      role: answer.operator.role,
      session: Redacted.make(cookie.value)
    } satisfies Session
  },
  (effect, baseUrl) =>
    Effect.catchTags(effect, {
      RequestError: (error) =>
        Effect.fail(
          new Intake.Unavailable({ message: `the worker at ${baseUrl} did not answer: ${error.message}` })
        ),
      ResponseError: (error) =>
        Effect.fail(
          new Intake.Unavailable({ message: `the worker at ${baseUrl} did not answer: ${error.message}` })
        ),
      ParseError: () =>
        Effect.fail(
          new Intake.Unavailable({ message: `unexpected answer to the login from the worker at ${baseUrl}` })
        ),
      NoSuchElementException: () =>
        Effect.fail(
          new Intake.Unavailable({ message: `the worker at ${baseUrl} answered the login without a session` })
        )
    }),
  Effect.provide(FetchHttpClient.layer)
)

/**
 * Ends a session on the worker at `baseUrl` (`POST /console/logout`): it is refused from
 * then on. A worker that no longer knows it (expired, restarted) answers the same.
 */
export const logout = Effect.fn("IntakeClient.logout")(
  function* (baseUrl: string, session: Redacted.Redacted<string>) {
    const client = yield* HttpClient.HttpClient
    const request = HttpClientRequest.post(consoleUrl(baseUrl, "logout")).pipe(
      authenticate({ _tag: "Session", operator: "", session })
    )
    yield* client.execute(request)
  },
  (effect, baseUrl) =>
    Effect.mapError(
      effect,
      (error) =>
        new Intake.Unavailable({ message: `the worker at ${baseUrl} did not answer: ${error.message}` })
    ),
  Effect.provide(FetchHttpClient.layer)
)
