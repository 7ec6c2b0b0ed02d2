/**
 * The `TerminalCloud` port over HTTP: a client derived from core's `RemoteApi` contract
 * with `HttpApiClient` (one derived group per host), wrapped in the few things a
 * payment transport must add: the `ApiKeyCloud` header, per-attempt timeouts, retries of
 * reads only, one span per call with secrets redacted, and the mapping of every failure
 * to core's typed `RemoteError` — where 5xx, a broken connection, a timeout and an
 * answer we cannot read all become `OutcomeUnknown` carrying what was sent, never a
 * plain failure: the workflow reconciles, the transport never resends a POST.
 */
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as Headers from "@effect/platform/Headers"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import {
  type Batch,
  type DeviceCommand,
  Identifiers,
  type Moto,
  type PreAuthorization,
  RemoteApi,
  RemoteError,
  type Reversal,
  TerminalCloud,
  type TipAdjustment,
  TransactionRequest,
  TransactionResult
} from "@tillflow/core"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as NodeTransport from "./NodeTransport.js"
import * as Redaction from "./Redaction.js"
import * as TerminalCloudConfig from "./TerminalCloudConfig.js"

/**
 * What was sent, as an `OutcomeUnknown` carries it: the endpoint, method, full URL and
 * the JSON body with secrets replaced (no API key — headers are not kept —, no callback
 * token, no card number or security code).
 */
export interface SentRequest {
  readonly endpoint: string
  readonly method: string
  readonly url: string
  readonly body?: unknown
}

/** What one attempt saw on the wire; filled by the transport, read by the mapping. */
interface Exchange {
  readonly endpoint: string
  request: SentRequest | undefined
  response: { readonly status: number; readonly text: string } | undefined
}

/**
 * The exchange of the running attempt. Why a context cell: `HttpApiClient` decodes the
 * response itself and, when decoding fails, hands back a `ParseError` without the status
 * or body — but the body of an undecodable payment answer must be kept, and whether the
 * request left at all decides between "not sent" and "outcome unknown".
 */
class CurrentExchange extends Context.Tag("tillflow/http/CurrentExchange")<CurrentExchange, Exchange>() {}

/** The attempt's own deadline passed (mapped to `OutcomeUnknown` "Timeout"). */
class AttemptTimedOut extends Data.TaggedError("AttemptTimedOut")<{ readonly after: Duration.Duration }> {}

const textDecoder = new TextDecoder()

const describeRequest = (endpoint: string, request: HttpClientRequest.HttpClientRequest): SentRequest => {
  const base = { endpoint, method: request.method, url: request.url }
  const body = request.body
  if (body._tag !== "Uint8Array" || body.body.byteLength === 0) return base
  const text = textDecoder.decode(body.body)
  try {
    return { ...base, body: Redaction.scrubJson(JSON.parse(text)) }
  } catch {
    return { ...base, body: Redaction.scrubText(text) }
  }
}

const hasNoBody = (status: number) => status === 204 || status === 205 || status === 304

/**
 * The smallest adapter over the platform's HttpClient: sets `ApiKeyCloud`; keeps trace
 * headers to ourselves (the service is a third party); reads each answer once into
 * memory so that its status and raw text are known to the error mapping
 * (`CurrentExchange`) while `HttpApiClient` still decodes it; and maps transport
 * failures to `RemoteError` right here.
 *
 * It also replaces the platform's HTTP span with one of its own (same name, same
 * semantic-convention attributes, `ApiKeyCloud` and `AUTH-TOKEN` redacted). Why: the
 * platform's span ends with the raw `HttpClientError`, which holds the request — its
 * headers (the API key) and its body (the callback token) — and any tracer that renders
 * a span's end state would print them. Our span ends with the typed error instead.
 */
const transport = (
  client: HttpClient.HttpClient,
  apiKey: Redacted.Redacted<string>
): HttpClient.HttpClient.With<RemoteError.RemoteError | HttpClientError.HttpClientError> =>
  client.pipe(
    HttpClient.mapRequest(HttpClientRequest.setHeader(RemoteApi.API_KEY_HEADER, Redacted.value(apiKey))),
    HttpClient.withTracerDisabledWhen(() => true),
    HttpClient.withTracerPropagation(false),
    HttpClient.transform((response, request) =>
      Effect.useSpan(`http.client ${request.method}`, { kind: "client", captureStackTrace: false }, (span) =>
        Effect.gen(function* () {
          const exchange = Option.getOrElse(yield* Effect.serviceOption(CurrentExchange), (): Exchange => ({
            endpoint: "unknown",
            request: undefined,
            response: undefined
          }))
          exchange.request = describeRequest(exchange.endpoint, request)
          const redacted = [...(yield* FiberRef.get(Headers.currentRedactedNames)), ...Redaction.headerNames]
          span.attribute("http.request.method", request.method)
          const url = URL.canParse(request.url) ? new URL(request.url) : undefined
          if (url !== undefined) {
            span.attribute("server.address", url.origin)
            if (url.port !== "") span.attribute("server.port", Number(url.port))
            span.attribute("url.full", url.href)
            span.attribute("url.path", url.pathname)
            span.attribute("url.scheme", url.protocol.slice(0, -1))
          }
          for (const [name, value] of Object.entries(Headers.redact(request.headers, redacted))) {
            span.attribute(`http.request.header.${name}`, String(value))
          }
          const toRemote = (failure: HttpClientError.HttpClientError) => toRemoteError(failure, exchange)
          const raw = yield* Effect.mapError(response, toRemote)
          const bytes = yield* Effect.mapError(raw.arrayBuffer, toRemote)
          exchange.response = { status: raw.status, text: textDecoder.decode(bytes) }
          span.attribute("http.response.status_code", raw.status)
          for (const [name, value] of Object.entries(Headers.redact(raw.headers, redacted))) {
            span.attribute(`http.response.header.${name}`, String(value))
          }
          return HttpClientResponse.fromWeb(
            request,
            new Response(hasNoBody(raw.status) ? null : bytes, { status: raw.status, headers: raw.headers })
          )
        })
      )
    )
  )

const formatIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    // Only where and what: the "actual" value of an issue may hold a secret (an ssk).
    .map((issue) => {
      const what = issue.message.replace(/,? actual [\s\S]*$/, "")
      return issue.path.length === 0 ? what : `${issue.path.join(".")}: ${what}`
    })
    .join("; ")

type Failure =
  | RemoteError.RemoteError
  | HttpApiDecodeError
  | HttpClientError.HttpClientError
  | ParseResult.ParseError
  | AttemptTimedOut

const unknownOutcome = (
  exchange: Exchange,
  fields: {
    readonly message: string
    readonly reason: RemoteError.UnknownReason
    readonly status?: number | undefined
    readonly body?: string | undefined
  }
): RemoteError.OutcomeUnknown =>
  new RemoteError.OutcomeUnknown({
    message: fields.message,
    reason: fields.reason,
    ...(fields.status === undefined ? {} : { status: fields.status }),
    ...(fields.body === undefined ? {} : { body: fields.body }),
    ...(exchange.request === undefined ? {} : { request: exchange.request })
  })

const withRequest = (error: RemoteError.RemoteError, exchange: Exchange): RemoteError.RemoteError =>
  error._tag === "OutcomeUnknown" && error.request === undefined && exchange.request !== undefined
    ? unknownOutcome(exchange, {
        message: error.message,
        reason: error.reason,
        status: error.status,
        body: error.body
      })
    : error

/**
 * Every failure of one attempt as a `RemoteError`. Error statuses go through core's one
 * mapping (`RemoteError.fromResponse`), whether `HttpApiClient` decoded them (declared
 * statuses) or not (e.g. 502, 504). Nothing that may have reached the service fails as
 * anything but a typed error of the service or `OutcomeUnknown`.
 */
const toRemoteError = (failure: Failure, exchange: Exchange): RemoteError.RemoteError => {
  const response = exchange.response
  switch (failure._tag) {
    case "AttemptTimedOut":
      return unknownOutcome(exchange, {
        message: `no complete answer within ${Duration.format(failure.after)}: the outcome is unknown`,
        reason: "Timeout",
        ...(response === undefined ? {} : { status: response.status })
      })
    case "HttpApiDecodeError":
      // A server of the contract answers 400 with this when it cannot decode a request
      // (the real service answers 422 there): the request was refused, not processed.
      return new RemoteError.ValidationFailed({
        message: `the service could not decode the request: ${failure.message}`,
        body: response?.text ?? ""
      })
    case "RequestError":
      if (failure.reason === "Transport") {
        return unknownOutcome(exchange, {
          message: `network failure before an answer (${describeCause(failure.cause)}): the outcome is unknown`,
          reason: "Network"
        })
      }
      return new RemoteError.ValidationFailed({
        message: `not sent: ${failure.reason} — ${failure.message}`,
        body: ""
      })
    case "ResponseError":
      if (response === undefined) {
        return unknownOutcome(exchange, {
          message: `the connection broke while reading the answer (${describeCause(failure.cause)}): the outcome is unknown`,
          reason: "Network",
          status: failure.response.status
        })
      }
      if (response.status >= 400)
        return withRequest(RemoteError.fromResponse(response.status, response.text), exchange)
      return unknownOutcome(exchange, {
        message: `unexpected status ${response.status}: the outcome is unknown`,
        reason: "UndecodableResponse",
        status: response.status,
        body: Redaction.scrubText(response.text)
      })
    case "ParseError":
      if (response === undefined) {
        return new RemoteError.ValidationFailed({
          message: `not sent: the request does not satisfy the contract: ${formatIssues(failure)}`,
          body: ""
        })
      }
      return unknownOutcome(exchange, {
        message: `the answer (${response.status}) could not be decoded: ${formatIssues(failure)}`,
        reason: "UndecodableResponse",
        status: response.status,
        body: Redaction.scrubText(response.text)
      })
    default:
      return withRequest(failure, exchange)
  }
}

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const code = (cause as { readonly code?: unknown }).code
    return typeof code === "string" ? `${code}: ${cause.message}` : cause.message
  }
  return String(cause)
}

/** Whether a failed read may be tried again: the service may not have answered it. */
const isTransient = (error: RemoteError.RemoteError): boolean =>
  error._tag === "OutcomeUnknown" && error.reason !== "UndecodableResponse"

/**
 * Builds the HTTP `TerminalCloud` over the `HttpClient` in context.
 * `config.connectTimeout` is the transport's business (see `NodeTransport`).
 */
export const make = Effect.fn("HttpTerminalCloud.make")(function* (
  config: TerminalCloudConfig.TerminalCloudConfig
) {
  const httpClient = transport(yield* HttpClient.HttpClient, config.apiKey)
  const terminal = yield* HttpApiClient.group(RemoteApi.RemoteApi, {
    group: "terminal",
    httpClient,
    baseUrl: withoutTrailingSlash(config.baseUrl)
  })
  const status = yield* HttpApiClient.group(RemoteApi.RemoteApi, {
    group: "status",
    httpClient,
    baseUrl: withoutTrailingSlash(config.transactionsUrl)
  })
  const retryReads = Schedule.exponential(config.readRetryDelay).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(config.readRetries))
  )

  /** One attempt: its own exchange cell and deadline, every failure typed. */
  const attempt = <A>(
    endpoint: string,
    call: Effect.Effect<A, Failure>
  ): Effect.Effect<A, RemoteError.RemoteError> =>
    Effect.suspend(() => {
      const exchange: Exchange = { endpoint, request: undefined, response: undefined }
      return call.pipe(
        Effect.timeoutFail({
          duration: config.requestTimeout,
          onTimeout: () => new AttemptTimedOut({ after: config.requestTimeout })
        }),
        Effect.provideService(CurrentExchange, exchange),
        Effect.mapError((failure) => toRemoteError(failure, exchange)),
        Effect.onExit(() =>
          exchange.response === undefined
            ? Effect.void
            : Effect.annotateCurrentSpan("http.response.status_code", exchange.response.status)
        )
      )
    })

  const warnIfUnknown = (endpoint: string) => (error: RemoteError.RemoteError) =>
    error._tag === "OutcomeUnknown"
      ? Effect.logWarning("TerminalCloud: outcome unknown").pipe(
          Effect.annotateLogs({
            endpoint,
            reason: error.reason,
            status: error.status === undefined ? "none" : String(error.status)
          })
        )
      : Effect.void

  /** A request that may have reached a terminal or the gateway: one attempt, never retried. */
  const once = <A>(
    endpoint: string,
    call: Effect.Effect<A, Failure>
  ): Effect.Effect<A, RemoteError.RemoteError> =>
    attempt(endpoint, call).pipe(Effect.tapError(warnIfUnknown(endpoint)))

  /** A read: retried a few times on 5xx, network error or timeout. */
  const read = <A>(
    endpoint: string,
    call: Effect.Effect<A, Failure>
  ): Effect.Effect<A, RemoteError.RemoteError> =>
    attempt(endpoint, call).pipe(
      Effect.tapError((error) =>
        isTransient(error)
          ? Effect.logDebug("TerminalCloud: read failed").pipe(
              Effect.annotateLogs({
                endpoint,
                reason: error._tag === "OutcomeUnknown" ? error.reason : error._tag
              })
            )
          : Effect.void
      ),
      Effect.retry({ schedule: retryReads, while: isTransient }),
      Effect.tapError(warnIfUnknown(endpoint))
    )

  const listDevices = Effect.fn("TerminalCloud.listDevices")(function* () {
    yield* Effect.annotateCurrentSpan("tillflow.endpoint", "listDevices")
    return yield* read("listDevices", terminal.listDevices())
  })

  const sendTransaction = Effect.fn("TerminalCloud.sendTransaction")(function* (
    request: TransactionRequest.TransactionRequest
  ) {
    yield* Effect.annotateCurrentSpan(transactionAttributes(request))
    // The derived method's parameter is a union of one object per operation; a request of
    // the whole union is one of them (a widening the compiler cannot see by itself).
    const accepted = yield* once(
      "sendTransaction",
      terminal.sendTransaction<false>({ payload: request } as Parameters<
        typeof terminal.sendTransaction<false>
      >[0])
    )
    if (accepted.transactionResultId !== undefined) {
      yield* Effect.annotateCurrentSpan("tillflow.transaction_result_id", accepted.transactionResultId)
    }
    return accepted
  })

  const transactionResult = Effect.fn("TerminalCloud.transactionResult")(function* (
    id: Identifiers.TransactionResultId
  ) {
    yield* Effect.annotateCurrentSpan({
      "tillflow.endpoint": "transactionResult",
      "tillflow.transaction_result_id": id
    })
    // 204 and 200 are both successes of the contract; `withResponse` tells them apart by
    // status rather than by the shape of the value. 404 is an outcome, not a failure.
    return yield* read(
      "transactionResult",
      terminal.transactionResult({
        path: { transactionResultId: segment((s) => Identifiers.TransactionResultId.make(s), id) },
        withResponse: true
      })
    ).pipe(
      Effect.map(([value, response]): TerminalCloud.ResultOutcome =>
        response.status === 204 || value === undefined
          ? new TerminalCloud.Pending()
          : new TerminalCloud.Ready({ result: value })
      ),
      Effect.catchTag("NotFound", (e) => Effect.succeed(new TerminalCloud.Unknown({ message: e.message }))),
      Effect.tap((outcome) => Effect.annotateCurrentSpan("tillflow.result_outcome", outcome._tag))
    )
  })

  const transactionStatus = Effect.fn("TerminalCloud.transactionStatus")(function* (
    reference: Identifiers.TransactionReference,
    selector?: RemoteApi.StatusSelector
  ) {
    yield* Effect.annotateCurrentSpan({
      "tillflow.endpoint": "transactionStatus",
      "tillflow.transaction_reference": reference,
      "tillflow.status_selector": selector === undefined ? "first (default)" : String(selector)
    })
    // The shape for `all` is not shown in the spec: the contract reads a list or one
    // object, and the port always answers a list.
    const answer = yield* read(
      "transactionStatus",
      selector === undefined
        ? status.transactionStatus({ path: { transactionReference: reference } })
        : status.transactionStatusAt({ path: { transactionReference: reference, selector } })
    )
    return TransactionResult.statusResults(answer)
  })

  const deviceCommand = Effect.fn("TerminalCloud.deviceCommand")(function* (
    deviceType: Identifiers.TerminalType,
    serialNumber: Identifiers.SerialNumber,
    command: DeviceCommand.DeviceCommand
  ) {
    yield* Effect.annotateCurrentSpan({
      "tillflow.endpoint": "deviceCommand",
      "tillflow.command": command.command,
      "tillflow.serial_number": serialNumber,
      "tillflow.terminal_type": deviceType
    })
    const path = {
      deviceType: segment((s) => Identifiers.TerminalType.make(s), deviceType),
      serialNumber: segment((s) => Identifiers.SerialNumber.make(s), serialNumber)
    }
    // A command reaches a terminal (a reboot!): sent once, never retried here.
    switch (command.command) {
      case "set-unattended-mode":
        return yield* once(command.command, terminal.setUnattendedMode({ path, payload: command.body }))
      case "set-locale":
        return yield* once(command.command, terminal.setLocale({ path, payload: command.body }))
      case "set-password-protected":
        return yield* once(command.command, terminal.setPasswordProtected({ path, payload: command.body }))
      case "reboot":
        return yield* once(command.command, terminal.reboot({ path, payload: command.body }))
      case "set-screen-brightness":
        return yield* once(command.command, terminal.setScreenBrightness({ path, payload: command.body }))
      case "set-reboot-time":
        return yield* once(command.command, terminal.setRebootTime({ path, payload: command.body }))
    }
  })

  const guidCall = <A>(
    name: string,
    guid: Identifiers.Guid,
    call: (path: { readonly guid: Identifiers.Guid }) => Effect.Effect<A, Failure>
  ) =>
    Effect.annotateCurrentSpan({ "tillflow.endpoint": name, "tillflow.original_guid": guid }).pipe(
      Effect.andThen(once(name, call({ guid: segment((s) => Identifiers.Guid.make(s), guid) })))
    )

  const tipAdjustment = Effect.fn("TerminalCloud.tipAdjustment")(function* (
    guid: Identifiers.Guid,
    body: TipAdjustment.TipAdjustment
  ) {
    return yield* guidCall("tipAdjustment", guid, (path) => terminal.tipAdjustment({ path, payload: body }))
  })

  // `GET /transactions/{guid}/token` is a GET but not a pure read: each call asks the
  // gateway to mint a token (a new cardTokenizationGuid and agreement for the card), so
  // a retry after a lost answer could leave two agreements. Sent once, like a POST; the
  // workflow decides whether to ask again.
  const deferredToken = Effect.fn("TerminalCloud.deferredToken")(function* (guid: Identifiers.Guid) {
    return yield* guidCall("deferredToken", guid, (path) => terminal.deferredToken({ path }))
  })

  const post = <I, A>(
    name: string,
    attributes: (request: NoInfer<I>) => Record<string, unknown>,
    call: (request: I) => Effect.Effect<A, Failure>
  ) =>
    Effect.fn(`TerminalCloud.${name}`)(function* (request: I) {
      yield* Effect.annotateCurrentSpan({ "tillflow.endpoint": name, ...attributes(request) })
      return yield* once(name, call(request))
    })

  const original = (request: { readonly originalGuid: Identifiers.Guid }) => ({
    "tillflow.original_guid": request.originalGuid
  })
  const batch = (request: { readonly serialNumber: string; readonly batchNumber: string }) => ({
    "tillflow.serial_number": request.serialNumber,
    "tillflow.batch_number": request.batchNumber
  })

  const service: TerminalCloud.Service = {
    listDevices: listDevices(),
    sendTransaction,
    transactionResult,
    transactionStatus,
    deviceCommand,
    tipAdjustment,
    deferredToken,
    reversal: post("reversal", original, (payload: Reversal.ReversalRequest) =>
      terminal.reversal({ payload })
    ),
    preAuthorizationIncrease: post(
      "preAuthorizationIncrease",
      original,
      (payload: PreAuthorization.PreAuthorizationIncreaseRequest) =>
        terminal.preAuthorizationIncrease({ payload })
    ),
    preAuthorizationCapture: post(
      "preAuthorizationCapture",
      original,
      (payload: PreAuthorization.PreAuthorizationCaptureRequest) =>
        terminal.preAuthorizationCapture({ payload })
    ),
    motoSale: post(
      "motoSale",
      (r: Moto.MotoSaleRequest) =>
        r.transactionReference === undefined
          ? {}
          : { "tillflow.transaction_reference": r.transactionReference },
      (payload: Moto.MotoSaleRequest) => terminal.motoSale({ payload })
    ),
    motoRefund: post("motoRefund", original, (payload: Moto.MotoRefundRequest) =>
      terminal.motoRefund({ payload })
    ),
    motoReversal: post("motoReversal", original, (payload: Moto.MotoReversalRequest) =>
      terminal.motoReversal({ payload })
    ),
    batchClose: post("batchClose", batch, (payload: Batch.BatchRequest) => terminal.batchClose({ payload })),
    batchSummary: post("batchSummary", batch, (payload: Batch.BatchRequest) =>
      terminal.batchSummary({ payload })
    ),
    batchDetail: post("batchDetail", batch, (payload: Batch.BatchDetailRequest) =>
      terminal.batchDetail({ payload })
    )
  }
  return service
})

/**
 * Span attributes of a terminal operation: what it is and where it goes, never its
 * secrets (no callback token, no amounts needed to find it).
 */
const transactionAttributes = (request: TransactionRequest.TransactionRequest): Record<string, unknown> => ({
  "tillflow.endpoint": "sendTransaction",
  "tillflow.operation": request.operation,
  "tillflow.serial_number": request.serialNumber,
  "tillflow.terminal_type": request.terminalType,
  "tillflow.delivery": request.delivery === undefined ? "polling" : "callback",
  ...Option.match(TransactionRequest.transactionReference(request), {
    onNone: () => ({}),
    onSome: (reference) => ({ "tillflow.transaction_reference": reference })
  }),
  ...Option.match(TransactionRequest.originalTransactionId(request), {
    onNone: () => ({}),
    onSome: (guid) => ({ "tillflow.original_guid": guid })
  })
})

/**
 * A path parameter, percent-encoded: `HttpApiClient` writes path parameters into the URL
 * as they are, so an id containing `/` or `..` would otherwise address another endpoint.
 */
const segment = <B>(make: (encoded: string) => B, value: string): B => make(encodeURIComponent(value))

const withoutTrailingSlash = (url: URL): string => url.href.replace(/\/+$/, "")

/**
 * `TerminalCloud` over the `HttpClient` in context (any transport: Node, fetch, a test
 * client). `connectTimeout` is ignored here: it belongs to the transport.
 */
export const layerWithoutTransport = (
  config: TerminalCloudConfig.TerminalCloudConfig
): Layer.Layer<TerminalCloud.TerminalCloud, never, HttpClient.HttpClient> =>
  Layer.effect(TerminalCloud.TerminalCloud, make(config))

/** `TerminalCloud` over HTTP on Node (undici, with the connect timeout of `config`). */
export const layer = (
  config: TerminalCloudConfig.TerminalCloudConfig
): Layer.Layer<TerminalCloud.TerminalCloud> =>
  layerWithoutTransport(config).pipe(
    Layer.provide(NodeTransport.layer({ connectTimeout: config.connectTimeout })),
    Layer.merge(Redaction.layer)
  )

/**
 * `TerminalCloud` over HTTP on Node, configured through `Config` (`TERMINAL_CLOUD_*`,
 * see `TerminalCloudConfig.config`).
 */
export const layerConfig = (
  config: Config.Config<TerminalCloudConfig.TerminalCloudConfig> = TerminalCloudConfig.config
): Layer.Layer<TerminalCloud.TerminalCloud, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(config, layer))
