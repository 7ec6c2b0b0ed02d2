/**
 * Merchants as data (issue 32): the merchants a deployment serves — id, name, MCC, the
 * virtual terminal of their MOTO sales, what their acquirer supports (each unset one the
 * deployment's), their own rate limit (unset: the deployment's), enabled or not — and
 * their API keys, several per
 * merchant, of the merchant's or a partner's kind, each active or retired. A key is kept
 * sealed (`KeyWrapper`: envelope encryption under the deployment's key-encryption key) and
 * is only ever handed out opened to what calls the service (`activeKeys`); listings show a
 * key's id, kind, state and dates, never the key.
 *
 * This module is the port and its rules (what an id, a name, an MCC may be); the store
 * behind it is an adapter's (`@tillflow/store-sql`'s `SqlMerchantRegistry`).
 */
import * as Tenant from "@tillflow/engine/Tenant"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as KeyWrapper from "./KeyWrapper.js"

/**
 * A merchant's id: letters, digits, `.`, `_`, `-`, 1 to 64 of them — a merchant is the
 * engine's tenant, so its id is what the engine's `Tenant` allows.
 */
export const MerchantId = Tenant.Id("a merchant id")

/** The kind of an API key: the merchant's own, or a partner's (which some endpoints refuse). */
export const KeyKind = Schema.Literal("merchant", "partner")
/** @see KeyKind */
export type KeyKind = typeof KeyKind.Type

/** The largest count of operations per second or per minute, and the largest burst, a rate limit may name. */
export const maxRateCount = 100_000

const rateCount = (what: string) =>
  Schema.Int.pipe(
    Schema.between(1, maxRateCount, {
      message: () => `${what} is a whole number from 1 to ${maxRateCount}`
    })
  )

/**
 * A rate limit of operations started: `count` per `intervalMillis` (a second or a minute),
 * at most `burst` at once. A merchant's own, or the deployment's
 * (`TILLFLOW_MERCHANT_RATE_LIMIT`); the intake's `MerchantRateLimit` applies it.
 */
export const RateLimit = Schema.Struct({
  count: rateCount("a rate limit's count"),
  intervalMillis: Schema.Literal(1_000, 60_000).annotations({
    message: () => "a rate limit's interval is 1000 (per second) or 60000 (per minute) milliseconds"
  }),
  burst: rateCount("a rate limit's burst")
}).annotations({
  identifier: "MerchantRateLimit",
  description:
    "Operations started: count per intervalMillis (1000: per second, 60000: per minute), at most burst at once."
})
/** @see RateLimit */
export type RateLimit = typeof RateLimit.Type

/** What registers a merchant. */
export const NewMerchant = Schema.Struct({
  id: MerchantId,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  /** The merchant category code: 4 digits (it decides pre-authorization windows). */
  mcc: Schema.String.pipe(Schema.pattern(/^\d{4}$/, { message: () => "an MCC is 4 digits" })),
  /** The virtual terminal that books the merchant's MOTO sales. */
  virtualTerminal: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))),
  /**
   * Whether the merchant's acquirer accepts partial reversals; unset: the deployment's
   * (`TILLFLOW_ACQUIRER_PARTIAL_REVERSAL`).
   */
  partialReversal: Schema.optional(Schema.Boolean),
  /**
   * Whether the merchant's acquirer reverses a capture before settlement; unset: the
   * deployment's (`TILLFLOW_ACQUIRER_CAPTURE_REVERSAL`).
   */
  captureReversal: Schema.optional(Schema.Boolean),
  /**
   * How fast the merchant may start operations; unset: the deployment's
   * (`TILLFLOW_MERCHANT_RATE_LIMIT`, none when that is unset).
   */
  rateLimit: Schema.optional(RateLimit)
})
/** @see NewMerchant */
export type NewMerchant = typeof NewMerchant.Type

/** A merchant as listed. */
export interface Merchant extends NewMerchant {
  readonly enabled: boolean
  /** When it was registered (epoch ms). */
  readonly createdAt: number
  readonly keys: ReadonlyArray<KeyInfo>
}

/** A key as listed: never the key itself. */
export interface KeyInfo {
  readonly keyId: string
  readonly kind: KeyKind
  readonly state: "active" | "retired"
  readonly createdAt: number
  readonly retiredAt: number | undefined
  /** The key-encryption key it is sealed under (a rotation rewraps those under an older one). */
  readonly kek: string
}

/** An active key, opened for the service call that needs it. */
export interface ActiveKey {
  readonly keyId: string
  readonly kind: KeyKind
  readonly key: Redacted.Redacted<string>
}

/** No merchant under that id. */
export class MerchantNotFound extends Schema.TaggedError<MerchantNotFound>()("MerchantNotFound", {
  message: Schema.String
}) {}

/** A merchant, or a key, that cannot be registered or changed as asked: what and why. */
export class MerchantRefused extends Schema.TaggedError<MerchantRefused>()("MerchantRefused", {
  message: Schema.String
}) {}

/** The store did not answer, or a key could not be sealed or opened. */
export class RegistryUnavailable extends Schema.TaggedError<RegistryUnavailable>()("RegistryUnavailable", {
  message: Schema.String
}) {}

/**
 * What a merchant's acquirer supports, as registered: each capability set for the merchant,
 * or unset (`undefined`: the deployment's).
 */
export interface Acquirer {
  readonly partialReversal: boolean | undefined
  readonly captureReversal: boolean | undefined
}

/**
 * A merchant's acquirer after a change: each capability given (`null`: back to the
 * deployment's), the others as `merchant` has them.
 */
export const changedAcquirer = (
  merchant: Pick<NewMerchant, "partialReversal" | "captureReversal">,
  change: {
    readonly partialReversal?: boolean | null | undefined
    readonly captureReversal?: boolean | null | undefined
  }
): Acquirer => ({
  partialReversal:
    change.partialReversal === undefined ? merchant.partialReversal : (change.partialReversal ?? undefined),
  captureReversal:
    change.captureReversal === undefined ? merchant.captureReversal : (change.captureReversal ?? undefined)
})

/** Every error of the registry. */
export type RegistryError = MerchantNotFound | MerchantRefused | RegistryUnavailable

/** The port. */
export interface Service {
  /** Registers a merchant, enabled, without keys; refused when the id is taken. */
  readonly register: (merchant: NewMerchant) => Effect.Effect<Merchant, RegistryError>
  readonly list: Effect.Effect<ReadonlyArray<Merchant>, RegistryError>
  readonly get: (id: string) => Effect.Effect<Merchant, RegistryError>
  /** Enables or disables a merchant: a disabled one's operations are refused. */
  readonly setEnabled: (id: string, enabled: boolean) => Effect.Effect<Merchant, RegistryError>
  /**
   * Sets what the merchant's acquirer supports: each capability given, or unset
   * (`undefined`: the deployment's from then on).
   */
  readonly setAcquirer: (id: string, acquirer: Acquirer) => Effect.Effect<Merchant, RegistryError>
  /**
   * Sets the merchant's own rate limit, or unsets it (`undefined`: the deployment's from
   * then on); a limit outside {@link RateLimit}'s bounds is refused.
   */
  readonly setRateLimit: (
    id: string,
    rateLimit: RateLimit | undefined
  ) => Effect.Effect<Merchant, RegistryError>
  /** Seals and stores a key for the merchant; its id. */
  readonly addKey: (
    id: string,
    kind: KeyKind,
    key: Redacted.Redacted<string>
  ) => Effect.Effect<KeyInfo, RegistryError>
  /** Retires a key: never handed out again (kept sealed, for the record). */
  readonly retireKey: (id: string, keyId: string) => Effect.Effect<KeyInfo, RegistryError>
  /** The merchant's active keys, opened, oldest first (the next one is the fail-over). */
  readonly activeKeys: (id: string) => Effect.Effect<ReadonlyArray<ActiveKey>, RegistryError>
  /** Rewraps every key sealed under an older key-encryption key; how many were. */
  readonly rewrapKeys: Effect.Effect<number, RegistryError>
}

/** The deployment's merchant registry. */
export class MerchantRegistry extends Context.Tag("tillflow/MerchantRegistry")<MerchantRegistry, Service>() {}

/** What the registry's adapter needs besides its store. */
export type Requirements = KeyWrapper.KeyWrapper

/**
 * A registry that cannot be used, every call failing with `reason` (a deployment without a
 * key-encryption key cannot seal or open a merchant's key): its callers say why, as a 503.
 */
export const unconfigured = (reason: string): Service => {
  const refuse = Effect.fail(new RegistryUnavailable({ message: reason }))
  return {
    register: () => refuse,
    list: refuse,
    get: () => refuse,
    setEnabled: () => refuse,
    setAcquirer: () => refuse,
    setRateLimit: () => refuse,
    addKey: () => refuse,
    retireKey: () => refuse,
    activeKeys: () => refuse,
    rewrapKeys: refuse
  }
}

/**
 * The MCC of each merchant of `registry`, kept for `cacheMillis` (default 60 s): what opens
 * a merchant's pre-authorizations made on its terminals. None for a merchant the registry
 * does not know or cannot say (the failure logged): its pre-authorizations are not opened.
 */
export const mccOf = (
  registry: Service,
  options: { readonly cacheMillis?: number | undefined } = {}
): ((merchant: string) => Effect.Effect<Option.Option<string>>) => {
  const cacheMillis = options.cacheMillis ?? 60_000
  const cache = new Map<string, { readonly at: number; readonly mcc: Option.Option<string> }>()
  return (merchant) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const kept = cache.get(merchant)
      if (kept !== undefined && now - kept.at < cacheMillis) return kept.mcc
      const mcc = yield* registry.get(merchant).pipe(
        Effect.map((found) => Option.some(found.mcc)),
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logWarning("the MCC of a merchant could not be read").pipe(
              Effect.annotateLogs({ merchant, reason: error.message })
            ),
            Option.none<string>()
          )
        )
      )
      cache.set(merchant, { at: now, mcc })
      return mcc
    })
}

/** {@link mccOf} over the registry in context, if there is one. */
export const mccOfInContext: Effect.Effect<
  ((merchant: string) => Effect.Effect<Option.Option<string>>) | undefined
> = Effect.map(Effect.serviceOption(MerchantRegistry), (registry) =>
  Option.isSome(registry) ? mccOf(registry.value) : undefined
)

/** What {@link acquirerOf} answers: a merchant's acquirer as registered (none when unknown). */
export type AcquirerOf = (merchant: string) => Effect.Effect<Option.Option<Acquirer>>

/**
 * What each merchant's acquirer supports, as `registry` holds it, kept for `cacheMillis`
 * (default 60 s, as {@link mccOf}): the reversal rules decide a merchant's reversals with
 * it, each unset capability the deployment's. None for a merchant the registry does not
 * know or cannot say (the failure logged): the deployment's capabilities hold for it.
 */
export const acquirerOf = (
  registry: Service,
  options: { readonly cacheMillis?: number | undefined } = {}
): AcquirerOf => {
  const cacheMillis = options.cacheMillis ?? 60_000
  const cache = new Map<string, { readonly at: number; readonly acquirer: Option.Option<Acquirer> }>()
  return (merchant) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const kept = cache.get(merchant)
      if (kept !== undefined && now - kept.at < cacheMillis) return kept.acquirer
      const acquirer = yield* registry.get(merchant).pipe(
        Effect.map((found) =>
          Option.some({ partialReversal: found.partialReversal, captureReversal: found.captureReversal })
        ),
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logWarning("what the acquirer of a merchant supports could not be read").pipe(
              Effect.annotateLogs({ merchant, reason: error.message })
            ),
            Option.none<Acquirer>()
          )
        )
      )
      cache.set(merchant, { at: now, acquirer })
      return acquirer
    })
}

/** {@link acquirerOf} over the registry in context, if there is one. */
export const acquirerOfInContext: Effect.Effect<AcquirerOf | undefined> = Effect.map(
  Effect.serviceOption(MerchantRegistry),
  (registry) => (Option.isSome(registry) ? acquirerOf(registry.value) : undefined)
)
