/**
 * The smallest adapter over the platform's HttpClient that the derived clients call
 * through: it sets `ApiKeyCloud` (the key `Call` chose for the call, else the configured one), records each attempt's exchange for the failure mapping,
 * maps transport failures to `RemoteError` and traces each request with secrets redacted.
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { RemoteApi, type RemoteError } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Redaction from "../Redaction.js"
import * as Exchange from "./Exchange.js"
import { toRemoteError } from "./Failure.js"

const textDecoder = new TextDecoder()

/**
 * The key the calls of this fiber are made with (`Call` sets it from the merchant's keys);
 * unset, the configured one.
 */
export const currentKey: FiberRef.FiberRef<Redacted.Redacted<string> | undefined> = FiberRef.unsafeMake<
  Redacted.Redacted<string> | undefined
>(undefined)

const describeRequest = (
  endpoint: string,
  request: HttpClientRequest.HttpClientRequest
): Exchange.SentRequest => {
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
 * The client with `ApiKeyCloud` set; trace headers kept to ourselves (the service is a
 * third party); each answer read once into memory so that its status and raw text are
 * known to the error mapping (`CurrentExchange`) while `HttpApiClient` still decodes it;
 * transport failures mapped to `RemoteError` right here.
 *
 * It also replaces the platform's HTTP span with one of its own (same name, same
 * semantic-convention attributes, `ApiKeyCloud` and `AUTH-TOKEN` redacted). Why: the
 * platform's span ends with the raw `HttpClientError`, which holds the request — its
 * headers (the API key) and its body (the callback token) — and any tracer that renders
 * a span's end state would print them. Our span ends with the typed error instead.
 */
export const make = (
  client: HttpClient.HttpClient,
  apiKey: Redacted.Redacted<string>
): HttpClient.HttpClient.With<RemoteError.RemoteError | HttpClientError.HttpClientError> =>
  client.pipe(
    HttpClient.mapRequestEffect((request) =>
      Effect.map(FiberRef.get(currentKey), (key) =>
        HttpClientRequest.setHeader(request, RemoteApi.API_KEY_HEADER, Redacted.value(key ?? apiKey))
      )
    ),
    HttpClient.withTracerDisabledWhen(() => true),
    HttpClient.withTracerPropagation(false),
    HttpClient.transform((response, request) =>
      Effect.useSpan(`http.client ${request.method}`, { kind: "client", captureStackTrace: false }, (span) =>
        Effect.gen(function* () {
          const exchange = Option.getOrElse(yield* Effect.serviceOption(Exchange.CurrentExchange), () =>
            Exchange.empty("unknown")
          )
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
