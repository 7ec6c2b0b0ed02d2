/**
 * The simulator's HTTP face, derived from the remote contract (`RemoteApi` in core) with
 * `HttpApiBuilder`: the same endpoints, paths, payload schemas and error schemas the
 * client is built from, so the two cannot drift. Each host is its own `HttpApp` built from
 * the contract's group for that host (a request on the wrong host finds no route: 404).
 *
 * Adapters where HttpApi cannot say what the service does, each as small as possible:
 * - A payload the contract cannot decode is answered 422 VALIDATION_FAILED (the platform
 *   would answer its own 400 `HttpApiDecodeError`); on the status host an undecodable
 *   reference or selector is a 404, as the spec says for an unknown one.
 * - Success bodies are checked against the contract's success schema, then sent as the
 *   simulator wrote them: the lenient result schemas read `""` as absent and would drop
 *   the empty strings real payloads carry, which clients must cope with.
 * - Device commands and tip adjustment are handled raw (`handleRaw`): the contract's
 *   command schemas refuse out-of-range values, but the service answers those 400 (not
 *   422), and a tip adjustment answers every rejection 400.
 * - A transaction request is handled raw too and checked by the simulator's own rules
 *   (`internal/validate.ts`): the contract's `TransactionRequest` is tillflow's strict
 *   client schema, and the service accepts what it refuses (a `moToPreAuthorization`
 *   without `transactionReference`, a credential with `externalId` and mid/tid/mcc).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  Batch,
  DeferredTokenization,
  Device,
  Moto,
  PreAuthorization,
  RemoteApi,
  RemoteError,
  Reversal,
  TipAdjustment,
  TransactionResult,
  Accepted as AcceptedSchema
} from "@tillflow/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Simulator from "./Simulator.js"
import * as SimulatorError from "./SimulatorError.js"

/** The main host `{base_url}`: the contract's terminal group. */
export class MainApi extends HttpApi.make("TerminalCloud").add(RemoteApi.TerminalGroup) {}

/** The status host `{transactions_url}`: the contract's status group. */
export class StatusApi extends HttpApi.make("TerminalCloudStatus").add(RemoteApi.StatusGroup) {}

/** A JSON response with a body the simulator wrote. */
export const json = (body: unknown, status = 200): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body, { status })

/** Renders a simulator error as the service's response. */
export const errorResponse = (
  sim: Simulator.SimulatorService,
  error: SimulatorError.SimulatorError
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(sim.errorGuid, (guid) => {
    const rendered = SimulatorError.render(error, guid)
    return json(rendered.body, rendered.status)
  })

/** The contract's typed error for a simulator error: the same status and body. */
const toRemote =
  (sim: Simulator.SimulatorService) =>
  (error: SimulatorError.SimulatorError): Effect.Effect<never, RemoteError.RemoteError> =>
    Effect.flatMap(sim.errorGuid, (guid) => {
      const rendered = SimulatorError.render(error, guid)
      return Effect.fail(RemoteError.fromResponse(rendered.status, JSON.stringify(rendered.body)))
    })

/**
 * Checks a body against the contract's success schema and sends it as written. A body
 * the contract cannot read is a simulator bug: it dies (500) rather than mislead.
 */
const checked =
  <A, I>(schema: Schema.Schema<A, I>, status = 200) =>
  (body: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
    Schema.decodeUnknown(schema)(body).pipe(
      Effect.as(json(body, status)),
      Effect.orDieWith((e) => new Error(`simulator answered a body the contract cannot read: ${e.message}`))
    )

const callerOf = (sim: Simulator.SimulatorService) =>
  Effect.flatMap(RemoteApi.CallerApiKey, (key) => sim.authenticate(Redacted.value(key)))

/** The server side of the contract's `ApiKeyCloud` authentication. */
export const ApiKeyAuthLive: Layer.Layer<RemoteApi.ApiKeyAuth, never, Simulator.Simulator> = Layer.effect(
  RemoteApi.ApiKeyAuth,
  Effect.map(Simulator.Simulator, (sim) =>
    RemoteApi.ApiKeyAuth.of({
      apiKey: (key) =>
        sim
          .authenticate(Redacted.value(key) === "" ? undefined : Redacted.value(key))
          .pipe(Effect.as(key), Effect.catchAll(toRemote(sim)))
    })
  )
)

/** Reads the raw JSON body of a request handled raw (null when absent). */
const rawBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.json.pipe(Effect.orElseSucceed(() => null))

/** Handlers of the main host. */
export const MainHandlers = HttpApiBuilder.group(MainApi, "terminal", (handlers) =>
  Effect.gen(function* () {
    const sim = yield* Simulator.Simulator
    const fail = toRemote(sim)
    const withCaller = <A>(
      f: (caller: Simulator.Caller) => Effect.Effect<A, SimulatorError.SimulatorError>
    ): Effect.Effect<A, RemoteError.RemoteError, RemoteApi.CallerApiKey> =>
      Effect.flatMap(callerOf(sim), f).pipe(Effect.catchAll(fail))
    const encoded = <A, I>(schema: Schema.Schema<A, I>, value: A) =>
      Schema.encode(schema)(value).pipe(Effect.orDie)
    const command =
      (name: string) =>
      ({
        path,
        request
      }: {
        readonly path: { readonly deviceType: string; readonly serialNumber: string }
        readonly request: HttpServerRequest.HttpServerRequest
      }) =>
        withCaller((caller) =>
          Effect.flatMap(rawBody(request), (body) =>
            sim.deviceCommand(caller, path.deviceType, path.serialNumber, name, body)
          )
        ).pipe(Effect.as(HttpServerResponse.empty({ status: 202 })))
    return handlers
      .handle("listDevices", () =>
        withCaller((caller) => sim.devices(caller)).pipe(Effect.flatMap(checked(Device.DeviceList)))
      )
      .handle("listDevicesLegacy", () =>
        withCaller((caller) => sim.devices(caller)).pipe(Effect.flatMap(checked(Device.DeviceList)))
      )
      .handleRaw("sendTransaction", ({ request }) =>
        withCaller((caller) =>
          // An unreadable (empty) body dies as the decoding routes do: the server answers it 400.
          Effect.flatMap(Effect.orDie(request.json), (body) => sim.postTransaction(caller, body))
        ).pipe(Effect.flatMap(checked(AcceptedSchema.Accepted, 202)))
      )
      .handle("transactionResult", ({ path }) =>
        withCaller((caller) => sim.transactionResult(caller, path.transactionResultId)).pipe(
          Effect.flatMap(
            Option.match({
              onNone: () => Effect.succeed(HttpServerResponse.empty({ status: 204 })),
              onSome: checked(TransactionResult.TransactionResult)
            })
          )
        )
      )
      .handleRaw("setUnattendedMode", command("set-unattended-mode"))
      .handleRaw("setLocale", command("set-locale"))
      .handleRaw("setPasswordProtected", command("set-password-protected"))
      .handleRaw("reboot", command("reboot"))
      .handleRaw("setScreenBrightness", command("set-screen-brightness"))
      .handleRaw("setRebootTime", command("set-reboot-time"))
      .handleRaw("tipAdjustment", ({ path, request }) =>
        withCaller((caller) =>
          Effect.flatMap(rawBody(request), (body) => sim.tipAdjustment(caller, path.guid, body))
        ).pipe(Effect.flatMap(checked(TipAdjustment.TipAdjustmentResponse)))
      )
      .handle("deferredToken", ({ path }) =>
        withCaller((caller) => sim.deferredToken(caller, path.guid)).pipe(
          Effect.flatMap(checked(DeferredTokenization.DeferredTokenizationResponse))
        )
      )
      .handle("reversal", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(Reversal.ReversalRequest, payload), (body) => sim.reversal(caller, body))
        ).pipe(Effect.flatMap(checked(Reversal.ReversalResponse)))
      )
      .handle("preAuthorizationIncrease", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(PreAuthorization.PreAuthorizationIncreaseRequest, payload), (body) =>
            sim.preAuthIncrease(caller, body)
          )
        ).pipe(Effect.flatMap(checked(PreAuthorization.PreAuthorizationResponse)))
      )
      .handle("preAuthorizationCapture", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(PreAuthorization.PreAuthorizationCaptureRequest, payload), (body) =>
            sim.preAuthCapture(caller, body)
          )
        ).pipe(Effect.flatMap(checked(PreAuthorization.PreAuthorizationResponse)))
      )
      .handle("motoSale", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(Moto.MotoSaleRequest, payload), (body) => sim.motoSale(caller, body))
        ).pipe(Effect.flatMap(checked(Moto.MotoResponse)))
      )
      .handle("motoRefund", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(Moto.MotoRefundRequest, payload), (body) => sim.motoRefund(caller, body))
        ).pipe(Effect.flatMap(checked(Moto.MotoResponse)))
      )
      .handle("motoReversal", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(Moto.MotoReversalRequest, payload), (body) => sim.motoReversal(caller, body))
        ).pipe(Effect.flatMap(checked(Moto.MotoResponse)))
      )
      .handle("batchClose", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(Batch.BatchRequest, payload), (body) => sim.batchClose(caller, body))
        ).pipe(Effect.flatMap(checked(Batch.BatchCloseResponse)))
      )
      .handle("batchSummary", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(Batch.BatchRequest, payload), (body) => sim.batchSummary(caller, body))
        ).pipe(Effect.flatMap(checked(Batch.BatchSummaryResponse)))
      )
      .handle("batchDetail", ({ payload }) =>
        withCaller((caller) =>
          Effect.flatMap(encoded(Batch.BatchDetailRequest, payload), (body) => sim.batchDetail(caller, body))
        ).pipe(Effect.flatMap(checked(Batch.BatchDetailResponse)))
      )
  })
)

/** Handlers of the status host. */
export const StatusHandlers = HttpApiBuilder.group(StatusApi, "status", (handlers) =>
  Effect.gen(function* () {
    const sim = yield* Simulator.Simulator
    const fail = toRemote(sim)
    const answer = (reference: string, selector: string | undefined) =>
      Effect.flatMap(callerOf(sim), (caller) => sim.status(caller, reference, selector)).pipe(
        Effect.catchAll(fail),
        Effect.flatMap(checked(TransactionResult.TransactionStatusAnswer))
      )
    return handlers
      .handle("transactionStatus", ({ path }) => answer(path.transactionReference, undefined))
      .handle("transactionStatusAt", ({ path }) => answer(path.transactionReference, String(path.selector)))
  })
)

const isDecodeError = (u: unknown): u is HttpApiError.HttpApiDecodeError =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === "HttpApiDecodeError"

/**
 * Builds one host's `HttpApp` from its api layer, with the decode-error adapter:
 * `onDecodeError` turns a request the contract cannot decode into the service's answer.
 */
const buildApp = (
  apiLayer: Layer.Layer<HttpApi.Api, never, Simulator.Simulator | RemoteApi.ApiKeyAuth>,
  onDecodeError: (error: HttpApiError.HttpApiDecodeError) => SimulatorError.SimulatorError
): Effect.Effect<
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>,
  never,
  Simulator.Simulator | Scope.Scope
> =>
  Effect.gen(function* () {
    const sim = yield* Simulator.Simulator
    const scope = yield* Effect.scope
    const layer = Layer.mergeAll(
      apiLayer.pipe(Layer.provide(ApiKeyAuthLive)),
      HttpApiBuilder.Router.Live,
      HttpApiBuilder.Middleware.layer
    ).pipe(Layer.provide(Layer.succeed(Simulator.Simulator, sim)))
    const context = yield* Layer.buildWithScope(layer, scope)
    const middleware = Context.get(context, HttpApiBuilder.Middleware)
    yield* middleware.add((app) =>
      Effect.catchIf(app, isDecodeError, (error) => errorResponse(sim, onDecodeError(error)))
    )
    return yield* Effect.provide(HttpApiBuilder.httpApp, context)
  })

/** The main host's app. */
export const mainApp = buildApp(HttpApiBuilder.api(MainApi).pipe(Layer.provide(MainHandlers)), (error) => {
  const first = error.issues[0]
  const field = first === undefined ? undefined : first.path.map(String).join(".")
  const message =
    error.issues.length === 0
      ? error.message
      : error.issues.map((i) => `${i.path.map(String).join(".") || "body"}: ${i.message}`).join("; ")
  return new SimulatorError.ValidationFailed({
    message,
    ...(field === undefined || field === "" ? {} : { field })
  })
})

/** The status host's app. */
export const statusApp = buildApp(
  HttpApiBuilder.api(StatusApi).pipe(Layer.provide(StatusHandlers)),
  () => new SimulatorError.NotFound({ message: "Transaction or selector not found" })
)
