/**
 * The service's two hosts as clients derived from core's `RemoteApi` contract with
 * `HttpApiClient`, both over the one `Transport`: the terminal host (`baseUrl`: terminals,
 * their transactions and results, and the gateway's follow-ups on a transaction) and the
 * status host (`transactionsUrl`: a transaction's status by its reference).
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClient from "@effect/platform/HttpClient"
import { RemoteApi } from "@tillflow/core"
import * as Effect from "effect/Effect"
import type * as TerminalCloudConfig from "../TerminalCloudConfig.js"
import * as Transport from "./Transport.js"

const withoutTrailingSlash = (url: URL): string => url.href.replace(/\/+$/, "")

/** The groups of core's `RemoteApi`: what both clients are derived from. */
type Groups =
  typeof RemoteApi.RemoteApi extends HttpApi.HttpApi<string, infer G, infer _E, infer _R> ? G : never

/** The errors of core's `RemoteApi` itself (a body that does not decode). */
type ApiError =
  typeof RemoteApi.RemoteApi extends HttpApi.HttpApi<string, infer _G, infer E, infer _R> ? E : never

/** The terminal host's client. */
export type TerminalHost = HttpApiClient.Client.Group<
  Groups,
  "terminal",
  ApiError | HttpClientError.HttpClientError,
  never
>

/** The status host's client. */
export type StatusHost = HttpApiClient.Client.Group<
  Groups,
  "status",
  ApiError | HttpClientError.HttpClientError,
  never
>

/** Derives both hosts' clients over the `HttpClient` in context. */
export const make = (
  config: TerminalCloudConfig.TerminalCloudConfig
): Effect.Effect<
  { readonly terminal: TerminalHost; readonly status: StatusHost },
  never,
  HttpClient.HttpClient
> =>
  Effect.gen(function* () {
    const httpClient = Transport.make(yield* HttpClient.HttpClient, config.apiKey)
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
    return { terminal, status }
  })

/**
 * A path parameter, percent-encoded: `HttpApiClient` writes path parameters into the URL
 * as they are, so an id containing `/` or `..` would otherwise address another endpoint.
 */
export const segment = <B>(make: (encoded: string) => B, value: string): B => make(encodeURIComponent(value))
