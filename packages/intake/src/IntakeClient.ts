/**
 * The intake of a running worker, over HTTP: the client derived from `IntakeApi` with the
 * bearer token, its failures turned into the intake's own errors (a worker that does not
 * answer is `Unavailable`, a refused token is said as such). The command line uses it
 * when a worker is running (it holds the embedded store, or `--worker` names it).
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Intake from "./Intake.js"
import { IntakeApi } from "./IntakeApi.js"
import type * as Monitor from "./Monitor.js"

/** Where the worker is and how to authenticate. */
export interface Options {
  readonly baseUrl: string
  readonly token: Redacted.Redacted<string>
}

const isIntakeError = (error: unknown): error is Intake.IntakeError =>
  typeof error === "object" &&
  error !== null &&
  "_tag" in error &&
  (error._tag === "InvalidRequest" ||
    error._tag === "NotFound" ||
    error._tag === "IdempotencyConflict" ||
    error._tag === "ActionRefused" ||
    error._tag === "Unavailable")

const clientOf = (options: Options) =>
  HttpApiClient.make(IntakeApi, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(Redacted.value(options.token)))
  })

/** A call of the worker's API with its failures as the intake's errors. */
const caller =
  (options: Options) =>
  <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, Intake.IntakeError> =>
    Effect.mapError(effect, (error): Intake.IntakeError => {
      if (isIntakeError(error)) return error
      if (
        typeof error === "object" &&
        error !== null &&
        "_tag" in error &&
        error._tag === "AlertStateConflict"
      ) {
        return new Intake.InvalidRequest({ message: String((error as { message?: unknown }).message) })
      }
      const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
      if (tag === "Unauthorized") {
        return new Intake.InvalidRequest({
          message: `the worker at ${options.baseUrl} refused the token (set TILLFLOW_INTAKE_TOKEN to its token)`
        })
      }
      if (tag === "RequestError" || tag === "ResponseError") {
        return new Intake.Unavailable({
          message: `the worker at ${options.baseUrl} did not answer: ${String((error as { message?: unknown }).message ?? tag)}`
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
      start: (payload) => call(client.operations.start({ payload })),
      stop: ({ serialNumber, ...payload }) =>
        call(client.operations.stop({ path: { serialNumber }, payload })),
      lifecycle: (workflow, payload) => call(client.operations.lifecycle({ path: { workflow }, payload })),
      execution: (executionId, wait) =>
        call(client.executions.get({ path: { executionId }, urlParams: wait === undefined ? {} : { wait } })),
      history: (executionId) => call(client.executions.history({ path: { executionId } })),
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
      rebuild: call(client.audit.rebuild()),
      timeline: (reference) => call(client.audit.timeline({ path: { reference } })),
      resolve: (guid, payload) => call(client.operations.resolve({ path: { guid }, payload })),
      resolveAttempt: (kind, key, payload) =>
        call(client.operations.resolveAttempt({ path: { kind, key }, payload })),
      // The worker records its own caller (this client's token) as the actor.
      act: (guid, payload) => call(client.operations.act({ path: { guid }, payload })),
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
 * and resolved under the token's identity. A step the alert's state does not allow is an
 * `InvalidRequest` saying so.
 */
export const alerts = (options: Options) =>
  Effect.gen(function* () {
    const client = yield* clientOf(options)
    const call = caller(options)
    return {
      list: (urlParams: Monitor.AlertsQuery) => call(client.monitor.alerts({ urlParams })),
      acknowledge: (alertId: string, reason: string) =>
        call(client.monitor.acknowledgeAlert({ path: { alertId }, payload: { reason } })),
      resolve: (alertId: string, reason: string) =>
        call(client.monitor.resolveAlert({ path: { alertId }, payload: { reason } }))
    }
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** The client intake as a layer (fetch transport). */
export const layer = (options: Options): Layer.Layer<Intake.Intake> =>
  Layer.effect(Intake.Intake, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
