/**
 * Every failure of one attempt as core's typed `RemoteError`, and which of them leave the
 * outcome unknown: 5xx, a broken connection, a timeout and an answer we cannot read all
 * become `OutcomeUnknown` carrying what was sent, never a plain failure — the workflow
 * reconciles, the transport never resends a POST. What was refused before it could be
 * processed (not sent, not decodable by the service) is `ValidationFailed`.
 */
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import { RemoteError } from "@tillflow/core"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as ParseResult from "effect/ParseResult"
import * as Redaction from "../Redaction.js"
import type { Exchange } from "./Exchange.js"

/** The attempt's own deadline passed (mapped to `OutcomeUnknown` "Timeout"). */
export class AttemptTimedOut extends Data.TaggedError("AttemptTimedOut")<{
  readonly after: Duration.Duration
}> {}

/** What one attempt may fail with before the mapping. */
export type Failure =
  | RemoteError.RemoteError
  | HttpApiDecodeError
  | HttpClientError.HttpClientError
  | ParseResult.ParseError
  | AttemptTimedOut

const formatIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    // Only where and what: the "actual" value of an issue may hold a secret (an ssk).
    .map((issue) => {
      const what = issue.message.replace(/,? actual [\s\S]*$/, "")
      return issue.path.length === 0 ? what : `${issue.path.join(".")}: ${what}`
    })
    .join("; ")

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

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const code = (cause as { readonly code?: unknown }).code
    return typeof code === "string" ? `${code}: ${cause.message}` : cause.message
  }
  return String(cause)
}

/**
 * Every failure of one attempt as a `RemoteError`. Error statuses go through core's one
 * mapping (`RemoteError.fromResponse`), whether `HttpApiClient` decoded them (declared
 * statuses) or not (e.g. 502, 504). Nothing that may have reached the service fails as
 * anything but a typed error of the service or `OutcomeUnknown`.
 */
export const toRemoteError = (failure: Failure, exchange: Exchange): RemoteError.RemoteError => {
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

/** Whether a failed read may be tried again: the service may not have answered it. */
export const isTransient = (error: RemoteError.RemoteError): boolean =>
  error._tag === "OutcomeUnknown" && error.reason !== "UndecodableResponse"
