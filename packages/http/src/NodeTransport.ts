/**
 * The HTTP transport on Node: @effect/platform-node's undici `HttpClient` over an undici
 * `Agent` of its own, so that a connect timeout can be set (the platform's default
 * dispatcher has none) and the connection pool is closed when the layer is released.
 * Request timeouts are not the transport's: the client applies them with Effect.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Options of the Node transport. */
export interface Options {
  /** Longest wait for a TCP/TLS connection. */
  readonly connectTimeout: Duration.DurationInput
}

/** An undici Agent with the connect timeout, destroyed when the scope closes. */
export const makeDispatcher = (options: Options) =>
  Effect.acquireRelease(
    Effect.sync(
      () =>
        new Undici.Agent({
          connect: { timeout: Math.max(1, Duration.toMillis(options.connectTimeout)) }
        })
    ),
    (dispatcher) => Effect.promise(() => dispatcher.destroy())
  )

/** An `HttpClient` on undici with its own pool and connect timeout. */
export const layer = (options: Options): Layer.Layer<HttpClient.HttpClient> =>
  NodeHttpClient.layerUndiciWithoutDispatcher.pipe(
    Layer.provide(Layer.scoped(NodeHttpClient.Dispatcher, makeDispatcher(options)))
  )
