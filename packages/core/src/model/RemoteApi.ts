/**
 * The remote service's contract, written once as an @effect/platform `HttpApi`: every
 * endpoint of both hosts with its path, payload, success statuses and error statuses.
 * The HTTP client derives its client from it (`HttpApiClient`) and the simulator its
 * server (`HttpApiBuilder`), so the two cannot drift.
 *
 * Two groups, two hosts: `terminal` on `{base_url}` and `status` on `{transactions_url}`.
 *
 * Quirks HttpApi cannot express directly, and the smallest adapters for them:
 * - Error bodies come in several shapes on one status (400 carries 1001/1002/1003 and
 *   business errors), sometimes not JSON at all, and must be kept verbatim. So each
 *   error status is declared with ONE schema that reads the body as text and maps it
 *   with `RemoteError.fromResponse(status, text)` (never failing), and writes
 *   `RemoteError.toWireBody`. Its type side is "a RemoteError whose status is this one",
 *   so a server of the contract answers each error with its own status.
 * - Statuses not declared here (e.g. 502) reach an HttpApiClient as a `ResponseError`;
 *   the client adapter maps them with `RemoteError.fromResponse` too.
 * - `HttpApi.make` always declares the platform's `HttpApiDecodeError` on 400 (a server
 *   of the contract answers it when it cannot decode a request; the real service answers
 *   422 there). A client decoding a 400 tries it first; real bodies never match it.
 * - `GET /transaction-result/{id}` answers 200 with a result or 204 with nothing: both
 *   are successes (the client sees `TransactionResult | void`).
 * - The API key header is `ApiKeyCloud`; header names are case-insensitive (public
 *   samples write `ApiKeyCLoud`), and the platform's server side lower-cases it.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as Context from "effect/Context"
import * as ParseResult from "effect/ParseResult"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Accepted } from "./Accepted.js"
import {
  BatchCloseResponse,
  BatchDetailRequest,
  BatchDetailResponse,
  BatchRequest,
  BatchSummaryResponse
} from "./Batch.js"
import { DeferredTokenizationResponse } from "./DeferredTokenization.js"
import { DeviceList } from "./Device.js"
import * as DeviceCommand from "./DeviceCommand.js"
import * as Identifiers from "./Identifiers.js"
import { MotoRefundRequest, MotoResponse, MotoReversalRequest, MotoSaleRequest } from "./Moto.js"
import {
  PreAuthorizationCaptureRequest,
  PreAuthorizationIncreaseRequest,
  PreAuthorizationResponse
} from "./PreAuthorization.js"
import * as RemoteError from "./RemoteError.js"
import { ReversalRequest, ReversalResponse } from "./Reversal.js"
import { TipAdjustment, TipAdjustmentResponse } from "./TipAdjustment.js"
import { TransactionRequest } from "./TransactionRequest.js"
import { TransactionResult, TransactionStatusAnswer } from "./TransactionResult.js"

/** Name of the API key header (matched case-insensitively). */
export const API_KEY_HEADER = "ApiKeyCloud"

/** Name of the header carrying the callback token on result deliveries. */
export const AUTH_TOKEN_HEADER = "AUTH-TOKEN"

/**
 * The error schema of one HTTP status: the body text, mapped by
 * `RemoteError.fromResponse`, to a RemoteError of that status.
 */
export const errorAt = (status: number) => {
  const typed = Schema.typeSchema(RemoteError.RemoteError).pipe(
    Schema.filter((e) => RemoteError.statusOf(e) === status)
  )
  return Schema.transformOrFail(Schema.String, typed, {
    strict: true,
    decode: (text) => ParseResult.succeed(RemoteError.fromResponse(status, text)),
    encode: (e) => ParseResult.succeed(RemoteError.toWireBody(e))
  }).pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "application/json" }), (s) =>
    s.annotations({ ...HttpApiSchema.annotations({ status }), identifier: `RemoteError${status}` })
  )
}

/** The error statuses declared on every endpoint. */
export const ERROR_STATUSES = [400, 401, 403, 404, 422, 500, 503] as const

const Error400 = errorAt(400)
const Error401 = errorAt(401)
const Error403 = errorAt(403)
const Error404 = errorAt(404)
const Error422 = errorAt(422)
const Error500 = errorAt(500)
const Error503 = errorAt(503)

/** The caller's API key, provided to handlers by a server of the contract. */
export class CallerApiKey extends Context.Tag("tillflow/CallerApiKey")<
  CallerApiKey,
  Redacted.Redacted<string>
>() {}

/**
 * Authentication by the `ApiKeyCloud` header. A server implements it (checking the key,
 * providing `CallerApiKey`, failing with a 403 `Forbidden`); a client sets the header.
 */
export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("tillflow/ApiKeyAuth", {
  failure: Error403,
  provides: CallerApiKey,
  security: { apiKey: HttpApiSecurity.apiKey({ key: API_KEY_HEADER, in: "header" }) }
}) {}

const transactionResultId = HttpApiSchema.param("transactionResultId", Identifiers.TransactionResultId)
const guid = HttpApiSchema.param("guid", Identifiers.Guid)
const deviceType = HttpApiSchema.param("deviceType", Identifiers.TerminalType)
const serialNumber = HttpApiSchema.param("serialNumber", Identifiers.SerialNumber)
const transactionReference = HttpApiSchema.param("transactionReference", Identifiers.TransactionReference)

/**
 * The selector of the status endpoint: `first` (the default), `last`, `all`, or a
 * 1-based position.
 */
export const StatusSelector = Schema.Union(
  Schema.Literal("first", "last", "all"),
  Schema.NumberFromString.pipe(Schema.int(), Schema.positive())
).annotations({ identifier: "StatusSelector" })
/** @see StatusSelector */
export type StatusSelector = typeof StatusSelector.Type

const selector = HttpApiSchema.param("selector", StatusSelector)

/** The main host `{base_url}`. */
export class TerminalGroup extends HttpApiGroup.make("terminal")
  .add(HttpApiEndpoint.get("listDevices", "/devices").addSuccess(DeviceList))
  .add(HttpApiEndpoint.get("listDevicesLegacy", "/initialize").addSuccess(DeviceList))
  .add(
    HttpApiEndpoint.post("sendTransaction", "/transactions")
      .setPayload(TransactionRequest)
      .addSuccess(Accepted, { status: 202 })
  )
  .add(
    HttpApiEndpoint.get("transactionResult")`/transaction-result/${transactionResultId}`
      .addSuccess(TransactionResult)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.post("setUnattendedMode")`/devices/${deviceType}/${serialNumber}/set-unattended-mode`
      .setPayload(DeviceCommand.SetUnattendedMode)
      .addSuccess(HttpApiSchema.Accepted)
  )
  .add(
    HttpApiEndpoint.post("setLocale")`/devices/${deviceType}/${serialNumber}/set-locale`
      .setPayload(DeviceCommand.SetLocale)
      .addSuccess(HttpApiSchema.Accepted)
  )
  .add(
    HttpApiEndpoint.post(
      "setPasswordProtected"
    )`/devices/${deviceType}/${serialNumber}/set-password-protected`
      .setPayload(DeviceCommand.SetPasswordProtected)
      .addSuccess(HttpApiSchema.Accepted)
  )
  .add(
    HttpApiEndpoint.post("reboot")`/devices/${deviceType}/${serialNumber}/reboot`
      .setPayload(DeviceCommand.Reboot)
      .addSuccess(HttpApiSchema.Accepted)
  )
  .add(
    HttpApiEndpoint.post("setScreenBrightness")`/devices/${deviceType}/${serialNumber}/set-screen-brightness`
      .setPayload(DeviceCommand.SetScreenBrightness)
      .addSuccess(HttpApiSchema.Accepted)
  )
  .add(
    HttpApiEndpoint.post("setRebootTime")`/devices/${deviceType}/${serialNumber}/set-reboot-time`
      .setPayload(DeviceCommand.SetRebootTime)
      .addSuccess(HttpApiSchema.Accepted)
  )
  .add(
    HttpApiEndpoint.post("tipAdjustment")`/transactions/${guid}/tip-adjustment`
      .setPayload(TipAdjustment)
      .addSuccess(TipAdjustmentResponse)
  )
  .add(
    HttpApiEndpoint.get("deferredToken")`/transactions/${guid}/token`.addSuccess(DeferredTokenizationResponse)
  )
  .add(HttpApiEndpoint.post("reversal", "/reversal").setPayload(ReversalRequest).addSuccess(ReversalResponse))
  .add(
    HttpApiEndpoint.post("preAuthorizationIncrease", "/preauthorization/increase")
      .setPayload(PreAuthorizationIncreaseRequest)
      .addSuccess(PreAuthorizationResponse)
  )
  .add(
    HttpApiEndpoint.post("preAuthorizationCapture", "/preauthorization/capture")
      .setPayload(PreAuthorizationCaptureRequest)
      .addSuccess(PreAuthorizationResponse)
  )
  .add(HttpApiEndpoint.post("motoSale", "/moto/sale").setPayload(MotoSaleRequest).addSuccess(MotoResponse))
  .add(
    HttpApiEndpoint.post("motoRefund", "/moto/refund").setPayload(MotoRefundRequest).addSuccess(MotoResponse)
  )
  .add(
    HttpApiEndpoint.post("motoReversal", "/moto/reversal")
      .setPayload(MotoReversalRequest)
      .addSuccess(MotoResponse)
  )
  .add(
    HttpApiEndpoint.post("batchClose", "/batch/close").setPayload(BatchRequest).addSuccess(BatchCloseResponse)
  )
  .add(
    HttpApiEndpoint.post("batchSummary", "/batch/summary")
      .setPayload(BatchRequest)
      .addSuccess(BatchSummaryResponse)
  )
  .add(
    HttpApiEndpoint.post("batchDetail", "/batch/detail")
      .setPayload(BatchDetailRequest)
      .addSuccess(BatchDetailResponse)
  )
  .addError(Error400)
  .addError(Error401)
  .addError(Error403)
  .addError(Error404)
  .addError(Error422)
  .addError(Error500)
  .addError(Error503)
  .middleware(ApiKeyAuth) {}

/** The status host `{transactions_url}`. */
export class StatusGroup extends HttpApiGroup.make("status")
  .add(
    HttpApiEndpoint.get("transactionStatus")`/transactions/${transactionReference}/status`.addSuccess(
      TransactionStatusAnswer
    )
  )
  .add(
    HttpApiEndpoint.get(
      "transactionStatusAt"
    )`/transactions/${transactionReference}/status/${selector}`.addSuccess(TransactionStatusAnswer)
  )
  .addError(Error400)
  .addError(Error401)
  .addError(Error403)
  .addError(Error404)
  .addError(Error422)
  .addError(Error500)
  .addError(Error503)
  .middleware(ApiKeyAuth) {}

/** The whole remote contract. */
export class RemoteApi extends HttpApi.make("TerminalCloud").add(TerminalGroup).add(StatusGroup) {}

/** The paths of the contract, for adapters and tests that build URLs by hand. */
export const Paths = {
  devices: "/devices",
  initialize: "/initialize",
  transactions: "/transactions",
  transactionResult: (id: string): string => `/transaction-result/${encodeURIComponent(id)}`,
  deviceCommand: (type: string, serial: string, name: DeviceCommand.CommandName): string =>
    `/devices/${encodeURIComponent(type)}/${encodeURIComponent(serial)}/${name}`,
  tipAdjustment: (id: string): string => `/transactions/${encodeURIComponent(id)}/tip-adjustment`,
  deferredToken: (id: string): string => `/transactions/${encodeURIComponent(id)}/token`,
  reversal: "/reversal",
  preAuthorizationIncrease: "/preauthorization/increase",
  preAuthorizationCapture: "/preauthorization/capture",
  motoSale: "/moto/sale",
  motoRefund: "/moto/refund",
  motoReversal: "/moto/reversal",
  batchClose: "/batch/close",
  batchSummary: "/batch/summary",
  batchDetail: "/batch/detail",
  /** On the status host. */
  transactionStatus: (reference: string, at?: StatusSelector): string =>
    `/transactions/${encodeURIComponent(reference)}/status${at === undefined ? "" : `/${String(at)}`}`
} as const
