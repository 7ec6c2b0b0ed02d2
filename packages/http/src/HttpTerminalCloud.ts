/**
 * The `TerminalCloud` port over HTTP: a client derived from core's `RemoteApi` contract
 * with `HttpApiClient` (one derived group per host), wrapped in the few things a
 * payment transport must add: the `ApiKeyCloud` header, per-attempt timeouts, retries of
 * reads only, one span per call with secrets redacted, and the mapping of every failure
 * to core's typed `RemoteError` — where 5xx, a broken connection, a timeout and an
 * answer we cannot read all become `OutcomeUnknown` carrying what was sent, never a
 * plain failure: the workflow reconciles, the transport never resends a POST.
 *
 * Its parts, in `internal/`: `Transport` (the wrapped client), `Failure` (the mapping to
 * `RemoteError`), `Call` (once or read), `Hosts` (the derived clients) and the endpoint
 * groups `TerminalEndpoints`, `StatusEndpoints` and `GatewayEndpoints`.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import { MerchantKeys, TerminalCloud } from "@tillflow/core"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Call from "./internal/Call.js"
import * as GatewayEndpoints from "./internal/GatewayEndpoints.js"
import * as Hosts from "./internal/Hosts.js"
import * as StatusEndpoints from "./internal/StatusEndpoints.js"
import * as TerminalEndpoints from "./internal/TerminalEndpoints.js"
import * as NodeTransport from "./NodeTransport.js"
import * as Redaction from "./Redaction.js"
import * as TerminalCloudConfig from "./TerminalCloudConfig.js"

/** What was sent, as an `OutcomeUnknown` carries it (secrets replaced). */
export type { SentRequest } from "./internal/Exchange.js"

/**
 * Builds the HTTP `TerminalCloud` over the `HttpClient` in context.
 * `config.connectTimeout` is the transport's business (see `NodeTransport`).
 */
export const make = Effect.fn("HttpTerminalCloud.make")(function* (
  config: TerminalCloudConfig.TerminalCloudConfig
) {
  const hosts = yield* Hosts.make(config)
  // The merchants' keys when the application provides them, else the configured key alone.
  const keys = Option.getOrElse(yield* Effect.serviceOption(MerchantKeys.MerchantKeys), () =>
    MerchantKeys.single(config.apiKey)
  )
  const call = Call.make(config, keys)
  const service: TerminalCloud.Service = {
    ...TerminalEndpoints.make(hosts.terminal, call),
    ...StatusEndpoints.make(hosts.status, call),
    ...GatewayEndpoints.make(hosts.terminal, call)
  }
  return service
})

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
