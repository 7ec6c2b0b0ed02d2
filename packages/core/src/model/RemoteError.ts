/**
 * The errors of the remote service (spec section 7) as typed, serialisable errors, each
 * with a human `message` and the raw response `body` kept verbatim, and the one function
 * that maps an HTTP status and body text to them (`fromResponse`). Error bodies vary
 * (spec 4.2 `{error:{statusCode,name,message:{error,message}}}`, spec 7 business errors
 * with `code` and `details`, a plain string `message`, or not JSON at all): they are read
 * leniently and never make the mapping fail.
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Lenient from "./internal/Lenient.js"

const body = Schema.String.annotations({ description: "the raw response body, verbatim" })

/** 400 with error 1001: the terminal is busy with another transaction. Not processed. */
export class DeviceBusy extends Schema.TaggedError<DeviceBusy>()("DeviceBusy", {
  message: Schema.String,
  body
}) {}

/** 400 with error 1002: the terminal is offline. Not processed. */
export class DeviceOffline extends Schema.TaggedError<DeviceOffline>()("DeviceOffline", {
  message: Schema.String,
  body
}) {}

/** 400 with error 1003: stopCurrentTransaction at a step that cannot be cancelled. */
export class CancelNotAllowed extends Schema.TaggedError<CancelNotAllowed>()("CancelNotAllowed", {
  message: Schema.String,
  body
}) {}

/** Gateway code 3107 (MOTO): the card security code is required. */
export class SecurityCodeRequired extends Schema.TaggedError<SecurityCodeRequired>()("SecurityCodeRequired", {
  message: Schema.String,
  status: Schema.Number,
  body
}) {}

/** 422 VALIDATION_FAILED: a required field is missing or invalid. */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  message: Schema.String,
  body
}) {}

/** 403 (or 401 in older versions): authentication failed, or a partner key was refused. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String,
  status: Schema.Number,
  body
}) {}

/** 404: the id, reference or selector is unknown. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String,
  body
}) {}

/** A 400 (or other 4xx) business error of the gateway, with what its body says. */
export class GatewayRejected extends Schema.TaggedError<GatewayRejected>()("GatewayRejected", {
  message: Schema.String,
  status: Schema.Number,
  code: Schema.optional(Schema.String),
  errorCode: Schema.optional(Schema.String),
  errorGuid: Schema.optional(Schema.String),
  body
}) {}

/** Why an outcome is unknown. */
export const UnknownReason = Schema.Literal("ServerError", "Network", "Timeout", "UndecodableResponse")
/** @see UnknownReason */
export type UnknownReason = typeof UnknownReason.Type

/**
 * 5xx, a network failure or a timeout: the request may or may not have been processed.
 * Never resend blindly: reconcile. `request` is what was sent, minus secrets.
 */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>()("OutcomeUnknown", {
  message: Schema.String,
  reason: UnknownReason,
  status: Schema.optional(Schema.Number),
  body: Schema.optional(Schema.String),
  request: Schema.optional(Schema.Unknown)
}) {}

/** Every error of the remote service. */
export const RemoteError = Schema.Union(
  DeviceBusy,
  DeviceOffline,
  CancelNotAllowed,
  SecurityCodeRequired,
  ValidationFailed,
  Forbidden,
  NotFound,
  GatewayRejected,
  OutcomeUnknown
)
/** @see RemoteError */
export type RemoteError = typeof RemoteError.Type

/** Errors that guarantee the request was not processed (a new attempt is safe). */
export const isNotProcessed = (e: RemoteError): e is DeviceBusy | DeviceOffline =>
  e._tag === "DeviceBusy" || e._tag === "DeviceOffline"

const codeLike = Schema.Union(Schema.String, Schema.Number)

/**
 * Every error body shape seen, read leniently: `message` may be an object `{error,
 * message}` (1001/1002/1003), a string (business errors, bad guid), or absent.
 */
export const ErrorBody = Schema.Struct(
  {
    error: Schema.optional(
      Schema.Union(
        Schema.Struct(
          {
            statusCode: Schema.optional(codeLike),
            name: Schema.optional(Schema.String),
            message: Schema.optional(
              Schema.Union(
                Schema.String,
                Schema.Struct(
                  { error: Schema.optional(codeLike), message: Schema.optional(Schema.String) },
                  Lenient.Extra
                )
              )
            ),
            code: Schema.optional(codeLike),
            details: Schema.optional(
              Schema.Struct(
                {
                  errorGuid: Schema.optional(Schema.String),
                  errorCode: Schema.optional(codeLike),
                  description: Schema.optional(Schema.String),
                  httpStatus: Schema.optional(codeLike)
                },
                Lenient.Extra
              )
            )
          },
          Lenient.Extra
        ),
        Schema.String
      )
    ),
    message: Schema.optional(Schema.String)
  },
  Lenient.Extra
).annotations({ identifier: "ErrorBody" })
/** @see ErrorBody */
export type ErrorBody = typeof ErrorBody.Type

const decodeErrorBody = Schema.decodeUnknownOption(Schema.parseJson(ErrorBody))

/** What an error body says, in the parts the mapping needs. */
export interface ErrorInfo {
  /** The numeric error of 1001/1002/1003 bodies (`message.error`), if any. */
  readonly errorNumber: string | undefined
  /** The business `code` or `details.errorCode`, if any. */
  readonly code: string | undefined
  readonly errorCode: string | undefined
  readonly errorGuid: string | undefined
  /** The most human text the body offers. */
  readonly text: string | undefined
  readonly name: string | undefined
}

/** Reads what an error body says; any text, JSON or not, yields an answer. */
export const readErrorBody = (text: string): ErrorInfo => {
  const parsed = decodeErrorBody(text)
  const none: ErrorInfo = {
    errorNumber: undefined,
    code: undefined,
    errorCode: undefined,
    errorGuid: undefined,
    text: text.trim() === "" ? undefined : text.trim().slice(0, 500),
    name: undefined
  }
  if (Option.isNone(parsed)) return none
  const b = parsed.value
  if (b.error === undefined || typeof b.error === "string") {
    return { ...none, text: b.error ?? b.message ?? none.text }
  }
  const e = b.error
  const message = e.message
  const str = (v: string | number | undefined) => (v === undefined ? undefined : String(v))
  return {
    errorNumber: typeof message === "object" ? str(message.error) : undefined,
    code: str(e.code),
    errorCode: str(e.details?.errorCode),
    errorGuid: e.details?.errorGuid,
    text:
      (typeof message === "object" ? message.message : message) ??
      e.details?.description ??
      b.message ??
      e.name,
    name: e.name
  }
}

/**
 * Maps an HTTP status and the raw body text to the typed error — the only place this
 * mapping is written. 400 with 1001/1002/1003 → DeviceBusy/DeviceOffline/
 * CancelNotAllowed; code 3107 → SecurityCodeRequired; 401/403 → Forbidden; 404 →
 * NotFound; 422 → ValidationFailed; 408 and 5xx → OutcomeUnknown; any other status →
 * GatewayRejected.
 */
export const fromResponse = (status: number, bodyText: string): RemoteError => {
  const info = readErrorBody(bodyText)
  const said = info.text === undefined ? "" : `: ${info.text}`
  const number = info.errorNumber ?? info.code
  if (status === 400 && number === "1001")
    return new DeviceBusy({ message: `terminal busy${said}`, body: bodyText })
  if (status === 400 && number === "1002")
    return new DeviceOffline({ message: `terminal offline${said}`, body: bodyText })
  if (status === 400 && number === "1003")
    return new CancelNotAllowed({
      message: `the operation cannot be stopped at its present step${said}`,
      body: bodyText
    })
  if (info.code === "3107" || info.errorCode === "3107")
    return new SecurityCodeRequired({
      message: `the card security code is required${said}`,
      status,
      body: bodyText
    })
  if (status === 401 || status === 403)
    return new Forbidden({ message: `authentication failed (${status})${said}`, status, body: bodyText })
  if (status === 404) return new NotFound({ message: `not found${said}`, body: bodyText })
  if (status === 422) return new ValidationFailed({ message: `validation failed${said}`, body: bodyText })
  if (status === 408 || status >= 500)
    return new OutcomeUnknown({
      message: `the service answered ${status}: the outcome is unknown${said}`,
      reason: "ServerError",
      status,
      body: bodyText
    })
  return new GatewayRejected({
    message: `rejected by the gateway (${status})${said}`,
    status,
    ...(info.code === undefined ? {} : { code: info.code }),
    ...(info.errorCode === undefined ? {} : { errorCode: info.errorCode }),
    ...(info.errorGuid === undefined ? {} : { errorGuid: info.errorGuid }),
    body: bodyText
  })
}

/** The HTTP status a remote error is answered with (what a server of the contract sends). */
export const statusOf = (e: RemoteError): number => {
  switch (e._tag) {
    case "DeviceBusy":
    case "DeviceOffline":
    case "CancelNotAllowed":
      return 400
    case "SecurityCodeRequired":
      return e.status
    case "ValidationFailed":
      return 422
    case "Forbidden":
      return e.status
    case "NotFound":
      return 404
    case "GatewayRejected":
      return e.status
    case "OutcomeUnknown":
      return e.status ?? 500
  }
}

/**
 * The body a server of the contract sends for an error: the kept raw body when there is
 * one, else the service's canonical shape for it (spec 4.2 for 1001/1002/1003, spec 7
 * business errors otherwise).
 */
export const toWireBody = (e: RemoteError): string => {
  if (e.body !== undefined && e.body !== "") return e.body
  const status = statusOf(e)
  const numbered = (n: number) =>
    JSON.stringify({
      error: { statusCode: status, name: "BadRequestError", message: { error: n, message: e.message } }
    })
  switch (e._tag) {
    case "DeviceBusy":
      return numbered(1001)
    case "DeviceOffline":
      return numbered(1002)
    case "CancelNotAllowed":
      return numbered(1003)
    case "SecurityCodeRequired":
      return JSON.stringify({
        error: {
          statusCode: status,
          name: "BadRequestError",
          message: e.message,
          code: "3107",
          details: { errorCode: "3107", description: e.message, httpStatus: String(status) }
        }
      })
    case "ValidationFailed":
      return JSON.stringify({ error: { statusCode: 422, name: "VALIDATION_FAILED", message: e.message } })
    case "GatewayRejected":
      return JSON.stringify({
        error: {
          statusCode: status,
          name: "BadRequestError",
          message: e.message,
          ...(e.code === undefined ? {} : { code: e.code }),
          details: {
            ...(e.errorGuid === undefined ? {} : { errorGuid: e.errorGuid }),
            ...(e.errorCode === undefined ? {} : { errorCode: e.errorCode }),
            description: e.message,
            httpStatus: String(status)
          }
        }
      })
    default:
      return JSON.stringify({ error: { statusCode: status, name: e._tag, message: e.message } })
  }
}

/** A remote error from an unknown value, e.g. a decoded event payload. */
export const decodeRemoteError = Schema.decodeUnknownEither(RemoteError)
/** Whether a value is a remote error. */
export const isRemoteError = (u: unknown): u is RemoteError => Either.isRight(decodeRemoteError(u))
