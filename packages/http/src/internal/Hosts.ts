/**
 * The service's two hosts as clients derived from core's `RemoteApi` contract with
 * `HttpApiClient`, both over the one `Transport`: the terminal host (`baseUrl`: terminals,
 * their transactions and results, and the gateway's follow-ups on a transaction) and the
 * status host (`transactionsUrl`: a transaction's status by its reference).
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import { RemoteApi } from "@tillflow/core"
import * as Effect from "effect/Effect"
import type * as TerminalCloudConfig from "../TerminalCloudConfig.js"
import * as Transport from "./Transport.js"

const withoutTrailingSlash = (url: URL): string => url.href.replace(/\/+$/, "")

/** Derives both hosts' clients over the `HttpClient` in context. */
export const make = (config: TerminalCloudConfig.TerminalCloudConfig) =>
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

/** The terminal host's client. */
export type TerminalHost = Effect.Effect.Success<ReturnType<typeof make>>["terminal"]

/** The status host's client. */
export type StatusHost = Effect.Effect.Success<ReturnType<typeof make>>["status"]

/**
 * A path parameter, percent-encoded: `HttpApiClient` writes path parameters into the URL
 * as they are, so an id containing `/` or `..` would otherwise address another endpoint.
 */
export const segment = <B>(make: (encoded: string) => B, value: string): B => make(encodeURIComponent(value))
