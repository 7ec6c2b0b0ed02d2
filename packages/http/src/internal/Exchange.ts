/**
 * What one attempt of a call saw on the wire, in a context cell the transport fills and
 * the failure mapping reads. Why a cell: `HttpApiClient` decodes the response itself and,
 * when decoding fails, hands back a `ParseError` without the status or body — but the body
 * of an undecodable payment answer must be kept, and whether the request left at all
 * decides between "not sent" and "outcome unknown".
 */
import * as Context from "effect/Context"

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
export interface Exchange {
  readonly endpoint: string
  request: SentRequest | undefined
  response: { readonly status: number; readonly text: string } | undefined
}

/** The exchange of the running attempt. */
export class CurrentExchange extends Context.Tag("tillflow/http/CurrentExchange")<
  CurrentExchange,
  Exchange
>() {}

/** A fresh exchange for one attempt at `endpoint`. */
export const empty = (endpoint: string): Exchange => ({ endpoint, request: undefined, response: undefined })
