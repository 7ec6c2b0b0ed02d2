/**
 * Which API key a call to the service is made with (issue 32). Every call is made for the
 * merchant the current execution, or the current request, acts for — the engine's tenant
 * (`Tenant.current`): `undefined` is the deployment's own merchant, configured by
 * `TERMINAL_CLOUD_API_KEY` as before. A merchant may hold several keys: the transport tries
 * them in `keysFor`'s order, and a key the service refuses (403) is reported (`refused`)
 * and the call made again with the next one — a 403 means the request was not processed,
 * so nothing is sent twice — which is how a key is rotated mid-traffic without losing a
 * sale: add the new key, revoke the old, retire it here.
 *
 * The port lives in core; the transport (`@tillflow/http`) asks it, and the application
 * composes the implementation: {@link single} for one merchant, {@link fromRegistry} over
 * the `MerchantRegistry`, which remembers the keys refused so that the next calls start
 * with a key that works, and records each refusal (`MerchantKeyRefused`, in the stream
 * `merchant-<id>`) for the alerts. A key never leaves it but `Redacted`.
 */
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { EventRegistry, EventStore, Tenant } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as MerchantRegistry from "./MerchantRegistry.js"

/** The merchant the current fiber acts for: the engine's tenant (`undefined`: the deployment's own). */
export const currentMerchant: Effect.Effect<string | undefined> = Tenant.current

/** Runs `effect` for `merchant`: its calls use that merchant's keys, the executions it starts are its. */
export const forMerchant: (
  merchant: string | undefined
) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = Tenant.within

/** A key to call the service with. */
export interface CallKey {
  readonly keyId: string
  readonly key: Redacted.Redacted<string>
}

/** The id the configured key (`TERMINAL_CLOUD_API_KEY`) goes by. */
export const configuredKeyId = "configured"

/** The port. */
export interface Service {
  /**
   * The keys to call the service with for `merchant` (`undefined`: the deployment's own),
   * the one to try first first. Empty: the merchant has no key that may be used (unknown,
   * or every key retired) — the call is not made.
   */
  readonly keysFor: (
    merchant: string | undefined
  ) => Effect.Effect<ReadonlyArray<CallKey>, MerchantRegistry.RegistryUnavailable>
  /** The service refused `keyId` of `merchant` (403) on `endpoint`: try it last from now on. */
  readonly refused: (refusal: {
    readonly merchant: string | undefined
    readonly keyId: string
    readonly endpoint: string
  }) => Effect.Effect<void>
}

/** The keys of this process. */
export class MerchantKeys extends Context.Tag("tillflow/MerchantKeys")<MerchantKeys, Service>() {}

/** One merchant with one key (`TERMINAL_CLOUD_API_KEY`): any other merchant has none. */
export const single = (key: Redacted.Redacted<string> | undefined): Service => ({
  keysFor: (merchant) =>
    Effect.succeed(merchant === undefined && key !== undefined ? [{ keyId: configuredKeyId, key }] : []),
  refused: (refusal) =>
    Effect.logWarning("the service refused this worker's API key").pipe(
      Effect.annotateLogs({ keyId: refusal.keyId, endpoint: refusal.endpoint })
    )
})

/** A key of a merchant the service refused: recorded for the alerts, never the key itself. */
export const MerchantKeyRefused = EventRegistry.define(
  "MerchantKeyRefused",
  Schema.Struct({
    merchant: Schema.String,
    keyId: Schema.String,
    endpoint: Schema.String,
    /** The execution whose call was refused, if a call of an execution. */
    executionId: Schema.optional(Schema.String),
    at: Schema.Number
  })
)

/** The merchants' own events. */
export const events = EventRegistry.make(MerchantKeyRefused)

/** The stream of a merchant's own events (its keys' refusals). */
export const streamOf = (merchant: string): string => `merchant-${merchant}`

/** How long a merchant's opened keys are kept before the registry is asked again. */
export const defaultCacheMillis = 10_000

/**
 * The keys of the `MerchantRegistry`'s merchants (their active keys, oldest first, those
 * refused lately last), `undefined` being the deployment's own merchant with `configured`
 * (none when this deployment has no key of its own). A merchant's keys are kept for
 * `cacheMillis`; a refusal forgets them, so a key added meanwhile is found at once.
 */
export const fromRegistry = (
  configured: Redacted.Redacted<string> | undefined,
  options: { readonly cacheMillis?: number | undefined } = {}
): Effect.Effect<Service, never, MerchantRegistry.MerchantRegistry | EventStore.EventStore> =>
  Effect.gen(function* () {
    const registry = yield* MerchantRegistry.MerchantRegistry
    const store = yield* EventStore.EventStore
    const cacheMillis = options.cacheMillis ?? defaultCacheMillis
    const cache = new Map<string, { readonly at: number; readonly keys: ReadonlyArray<CallKey> }>()
    // merchant -> key ids refused, most recent last
    const refusedKeys = new Map<string, Array<string>>()
    const own: ReadonlyArray<CallKey> =
      configured === undefined ? [] : [{ keyId: configuredKeyId, key: configured }]

    const ordered = (merchant: string, keys: ReadonlyArray<CallKey>): ReadonlyArray<CallKey> => {
      const refused = refusedKeys.get(merchant) ?? []
      const rank = (key: CallKey) => refused.indexOf(key.keyId)
      return [...keys].sort((a, b) => rank(a) - rank(b))
    }

    const keysFor = (merchant: string | undefined) =>
      Effect.gen(function* () {
        if (merchant === undefined) return own
        const now = yield* Clock.currentTimeMillis
        const cached = cache.get(merchant)
        if (cached !== undefined && now - cached.at < cacheMillis) return ordered(merchant, cached.keys)
        const keys = yield* registry.activeKeys(merchant).pipe(
          Effect.map((active): ReadonlyArray<CallKey> => active.map(({ key, keyId }) => ({ keyId, key }))),
          Effect.catchTag("MerchantNotFound", () => Effect.succeed<ReadonlyArray<CallKey>>([])),
          Effect.catchTag("MerchantRefused", (error) =>
            Effect.fail(new MerchantRegistry.RegistryUnavailable({ message: error.message }))
          )
        )
        cache.set(merchant, { at: now, keys })
        return ordered(merchant, keys)
      })

    const refused: Service["refused"] = (refusal) =>
      Effect.gen(function* () {
        yield* Effect.logWarning("the service refused a merchant's API key: the next key is tried").pipe(
          Effect.annotateLogs({
            merchant: refusal.merchant ?? "(own)",
            keyId: refusal.keyId,
            endpoint: refusal.endpoint
          })
        )
        if (refusal.merchant === undefined) return
        const merchant = refusal.merchant
        const list = (refusedKeys.get(merchant) ?? []).filter((id) => id !== refusal.keyId)
        refusedKeys.set(merchant, [...list, refusal.keyId])
        cache.delete(merchant)
        const at = yield* Clock.currentTimeMillis
        // The execution whose call it was, when a workflow's activity made it.
        const executionId = Option.getOrUndefined(
          Option.map(yield* Effect.serviceOption(WorkflowInstance), (instance) => instance.executionId)
        )
        yield* events
          .encode(
            MerchantKeyRefused.make({
              merchant,
              keyId: refusal.keyId,
              endpoint: refusal.endpoint,
              ...(executionId === undefined ? {} : { executionId }),
              at
            })
          )
          .pipe(
            Effect.flatMap((event) => store.append(streamOf(merchant), EventStore.AnyVersion, [event])),
            Effect.catchAll((error) =>
              Effect.logWarning("the refusal of a merchant's key could not be recorded").pipe(
                Effect.annotateLogs({ merchant, keyId: refusal.keyId, reason: error.message })
              )
            )
          )
      })

    return { keysFor, refused }
  })

/** {@link fromRegistry} as a layer. */
export const layerFromRegistry = (
  configured: Redacted.Redacted<string> | undefined,
  options: { readonly cacheMillis?: number | undefined } = {}
): Layer.Layer<MerchantKeys, never, MerchantRegistry.MerchantRegistry | EventStore.EventStore> =>
  Layer.effect(MerchantKeys, fromRegistry(configured, options))
