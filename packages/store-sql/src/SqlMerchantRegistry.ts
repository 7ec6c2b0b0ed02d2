/**
 * The merchant registry on the store's database (PostgreSQL, or the embedded PGlite): the
 * `tillflow_merchants` and `tillflow_merchant_keys` tables of migration 11 (what a
 * merchant's acquirer supports: migration 12's nullable columns, NULL the deployment's; its own
 * rate limit: migration 13's, likewise). Keys are sealed
 * by the `KeyWrapper` in context before they are written and opened only by `activeKeys`;
 * no statement reads or writes a key in the clear, and no listing returns one.
 *
 * @example
 * const registry = yield* MerchantRegistry.MerchantRegistry
 * yield* registry.register({ id: "m-7", name: "Café Sol", mcc: "5812" })
 * yield* registry.addKey("m-7", "merchant", Redacted.make(apiKey))
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { KeyWrapper, MerchantRegistry } from "@tillflow/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const MerchantRow = Schema.Struct({
  merchant_id: Schema.String,
  name: Schema.String,
  mcc: Schema.String,
  virtual_terminal: Schema.NullOr(Schema.String),
  partial_reversal: Schema.NullOr(Schema.Boolean),
  capture_reversal: Schema.NullOr(Schema.Boolean),
  rate_limit_count: Schema.NullOr(Schema.Number),
  rate_limit_interval_millis: Schema.NullOr(Schema.Number),
  rate_limit_burst: Schema.NullOr(Schema.Number),
  enabled: Schema.Boolean,
  created_at: Schema.Union(Schema.Number, Schema.NumberFromString)
})
const KeyRow = Schema.Struct({
  key_id: Schema.String,
  merchant_id: Schema.String,
  kind: MerchantRegistry.KeyKind,
  sealed: Schema.Unknown,
  kek: Schema.String,
  created_at: Schema.Union(Schema.Number, Schema.NumberFromString),
  retired_at: Schema.NullOr(Schema.Union(Schema.Number, Schema.NumberFromString))
})
type KeyRow = typeof KeyRow.Type
const decodeMerchants = Schema.decodeUnknown(Schema.Array(MerchantRow))
const decodeKeys = Schema.decodeUnknown(Schema.Array(KeyRow))
const decodeSealed = Schema.decodeUnknown(
  Schema.Union(KeyWrapper.Sealed, Schema.parseJson(KeyWrapper.Sealed))
)
const validateNew = Schema.decodeUnknownEither(MerchantRegistry.NewMerchant)
const validateRateLimit = Schema.decodeUnknownEither(MerchantRegistry.RateLimit)
const decodeStoredRateLimit = Schema.decodeUnknown(MerchantRegistry.RateLimit)

/** A rate limit in the row's three columns: all NULL when unset. */
const rateLimitColumns = (limit: MerchantRegistry.RateLimit | undefined) => ({
  count: limit?.count ?? null,
  intervalMillis: limit?.intervalMillis ?? null,
  burst: limit?.burst ?? null
})

const keyInfo = (row: KeyRow): MerchantRegistry.KeyInfo => ({
  keyId: row.key_id,
  kind: row.kind,
  state: row.retired_at === null ? "active" : "retired",
  createdAt: row.created_at,
  retiredAt: row.retired_at ?? undefined,
  kek: row.kek
})

/** What a key is sealed against: its merchant and its own id (a sealed key copied elsewhere does not open). */
const contextOf = (merchantId: string, keyId: string) => `${merchantId}/${keyId}`

const unavailable = (what: string) => (error: { readonly message: string }) =>
  new MerchantRegistry.RegistryUnavailable({ message: `merchant registry: ${what}: ${error.message}` })

/** The registry over the `SqlClient` and `KeyWrapper` in context. */
export const make: Effect.Effect<
  MerchantRegistry.Service,
  never,
  SqlClient.SqlClient | KeyWrapper.KeyWrapper
> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const wrapper = yield* KeyWrapper.KeyWrapper

  const keysOf = (id: string) =>
    sql`SELECT key_id, merchant_id, kind, sealed, kek, created_at, retired_at FROM tillflow_merchant_keys
        WHERE merchant_id = ${id} ORDER BY created_at, key_id`.pipe(
      Effect.flatMap(decodeKeys),
      Effect.mapError(unavailable("reading keys"))
    )

  const get = (id: string) =>
    Effect.gen(function* () {
      const [row] = yield* sql`SELECT merchant_id, name, mcc, virtual_terminal, partial_reversal,
        capture_reversal, rate_limit_count, rate_limit_interval_millis, rate_limit_burst, enabled, created_at
        FROM tillflow_merchants WHERE merchant_id = ${id}`.pipe(
        Effect.flatMap(decodeMerchants),
        Effect.mapError(unavailable("reading merchants"))
      )
      if (row === undefined)
        return yield* new MerchantRegistry.MerchantNotFound({ message: `no merchant ${id}` })
      const rateLimit =
        row.rate_limit_count === null
          ? undefined
          : yield* decodeStoredRateLimit({
              count: row.rate_limit_count,
              intervalMillis: row.rate_limit_interval_millis,
              burst: row.rate_limit_burst
            }).pipe(Effect.mapError(unavailable(`the rate limit of ${id}`)))
      return {
        id: row.merchant_id,
        name: row.name,
        mcc: row.mcc,
        ...(row.virtual_terminal === null ? {} : { virtualTerminal: row.virtual_terminal }),
        ...(row.partial_reversal === null ? {} : { partialReversal: row.partial_reversal }),
        ...(row.capture_reversal === null ? {} : { captureReversal: row.capture_reversal }),
        ...(rateLimit === undefined ? {} : { rateLimit }),
        enabled: row.enabled,
        createdAt: row.created_at,
        keys: (yield* keysOf(id)).map(keyInfo)
      } satisfies MerchantRegistry.Merchant
    })

  const register = (merchant: MerchantRegistry.NewMerchant) =>
    Effect.gen(function* () {
      const valid = validateNew(merchant, { errors: "all", onExcessProperty: "error" })
      if (Either.isLeft(valid)) {
        return yield* new MerchantRegistry.MerchantRefused({
          message: ParseResult.TreeFormatter.formatErrorSync(valid.left)
        })
      }
      const m = valid.right
      const limit = rateLimitColumns(m.rateLimit)
      const inserted = yield* sql`INSERT INTO tillflow_merchants
          (merchant_id, name, mcc, virtual_terminal, partial_reversal, capture_reversal,
           rate_limit_count, rate_limit_interval_millis, rate_limit_burst, created_at)
        VALUES (${m.id}, ${m.name}, ${m.mcc}, ${m.virtualTerminal ?? null}, ${m.partialReversal ?? null},
          ${m.captureReversal ?? null}, ${limit.count}, ${limit.intervalMillis}, ${limit.burst},
          ${yield* Clock.currentTimeMillis})
        ON CONFLICT (merchant_id) DO NOTHING RETURNING merchant_id`.pipe(
        Effect.mapError(unavailable("registering"))
      )
      if (inserted.length === 0) {
        return yield* new MerchantRegistry.MerchantRefused({
          message: `merchant ${m.id} is already registered`
        })
      }
      return yield* get(m.id)
    })

  const list = Effect.gen(function* () {
    const rows = yield* sql`SELECT merchant_id FROM tillflow_merchants ORDER BY merchant_id`.pipe(
      Effect.mapError(unavailable("listing"))
    )
    return yield* Effect.forEach(rows, (row) => get(String(row["merchant_id"])))
  })

  const setEnabled = (id: string, enabled: boolean) =>
    Effect.gen(function* () {
      const changed = yield* sql`UPDATE tillflow_merchants SET enabled = ${enabled} WHERE merchant_id = ${id}
        RETURNING merchant_id`.pipe(Effect.mapError(unavailable("changing")))
      if (changed.length === 0)
        return yield* new MerchantRegistry.MerchantNotFound({ message: `no merchant ${id}` })
      return yield* get(id)
    })

  const setAcquirer = (id: string, acquirer: MerchantRegistry.Acquirer) =>
    Effect.gen(function* () {
      const changed = yield* sql`UPDATE tillflow_merchants
        SET partial_reversal = ${acquirer.partialReversal ?? null}, capture_reversal = ${acquirer.captureReversal ?? null}
        WHERE merchant_id = ${id} RETURNING merchant_id`.pipe(Effect.mapError(unavailable("changing")))
      if (changed.length === 0)
        return yield* new MerchantRegistry.MerchantNotFound({ message: `no merchant ${id}` })
      return yield* get(id)
    })

  const setRateLimit = (id: string, rateLimit: MerchantRegistry.RateLimit | undefined) =>
    Effect.gen(function* () {
      if (rateLimit !== undefined) {
        const valid = validateRateLimit(rateLimit, { errors: "all", onExcessProperty: "error" })
        if (Either.isLeft(valid)) {
          return yield* new MerchantRegistry.MerchantRefused({
            message: ParseResult.TreeFormatter.formatErrorSync(valid.left)
          })
        }
      }
      const limit = rateLimitColumns(rateLimit)
      const changed = yield* sql`UPDATE tillflow_merchants
        SET rate_limit_count = ${limit.count}, rate_limit_interval_millis = ${limit.intervalMillis},
          rate_limit_burst = ${limit.burst}
        WHERE merchant_id = ${id} RETURNING merchant_id`.pipe(Effect.mapError(unavailable("changing")))
      if (changed.length === 0)
        return yield* new MerchantRegistry.MerchantNotFound({ message: `no merchant ${id}` })
      return yield* get(id)
    })

  const addKey = (
    id: string,
    kind: MerchantRegistry.KeyKind,
    key: Parameters<MerchantRegistry.Service["addKey"]>[2]
  ) =>
    Effect.gen(function* () {
      yield* get(id)
      const keyId = `key-${globalThis.crypto.randomUUID()}`
      const sealed = yield* wrapper
        .seal(key, contextOf(id, keyId))
        .pipe(Effect.mapError(unavailable("sealing")))
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO tillflow_merchant_keys (key_id, merchant_id, kind, sealed, kek, created_at)
        VALUES (${keyId}, ${id}, ${kind}, ${JSON.stringify(sealed)}::jsonb, ${sealed.kek}, ${now})`.pipe(
        Effect.mapError(unavailable("storing the key"))
      )
      return { keyId, kind, state: "active", createdAt: now, retiredAt: undefined, kek: sealed.kek } as const
    })

  const retireKey = (id: string, keyId: string) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* sql`UPDATE tillflow_merchant_keys SET retired_at = ${now}
        WHERE merchant_id = ${id} AND key_id = ${keyId} AND retired_at IS NULL`.pipe(
        Effect.mapError(unavailable("retiring the key"))
      )
      const found = (yield* keysOf(id)).find((row) => row.key_id === keyId)
      if (found === undefined) {
        return yield* new MerchantRegistry.MerchantNotFound({ message: `merchant ${id} has no key ${keyId}` })
      }
      return keyInfo(found)
    })

  const activeKeys = (id: string) =>
    Effect.gen(function* () {
      yield* get(id)
      const rows = (yield* keysOf(id)).filter((row) => row.retired_at === null)
      return yield* Effect.forEach(rows, (row) =>
        Effect.gen(function* () {
          const sealed = yield* decodeSealed(row.sealed).pipe(
            Effect.mapError(unavailable(`key ${row.key_id}`))
          )
          const key = yield* wrapper
            .open(sealed, contextOf(id, row.key_id))
            .pipe(Effect.mapError(unavailable(`opening key ${row.key_id}`)))
          return { keyId: row.key_id, kind: row.kind, key }
        })
      )
    })

  const rewrapKeys = Effect.gen(function* () {
    const rows = yield* sql`SELECT key_id, merchant_id, kind, sealed, kek, created_at, retired_at
      FROM tillflow_merchant_keys WHERE kek <> ${wrapper.currentKek}`.pipe(
      Effect.flatMap(decodeKeys),
      Effect.mapError(unavailable("reading keys"))
    )
    for (const row of rows) {
      const sealed = yield* decodeSealed(row.sealed).pipe(Effect.mapError(unavailable(`key ${row.key_id}`)))
      const rewrapped = yield* wrapper
        .rewrap(sealed)
        .pipe(Effect.mapError(unavailable(`rewrapping ${row.key_id}`)))
      yield* sql`UPDATE tillflow_merchant_keys SET sealed = ${JSON.stringify(rewrapped)}::jsonb, kek = ${rewrapped.kek}
        WHERE key_id = ${row.key_id} AND kek = ${row.kek}`.pipe(Effect.mapError(unavailable("rewrapping")))
    }
    return rows.length
  })

  return {
    register,
    list,
    get,
    setEnabled,
    setAcquirer,
    setRateLimit,
    addKey,
    retireKey,
    activeKeys,
    rewrapKeys
  }
})

/** The registry over the store's `SqlClient` and the deployment's `KeyWrapper`. */
export const layer: Layer.Layer<
  MerchantRegistry.MerchantRegistry,
  never,
  SqlClient.SqlClient | KeyWrapper.KeyWrapper
> = Layer.effect(MerchantRegistry.MerchantRegistry, make)
