/**
 * The merchant registry on the store's database (issue 32), on PostgreSQL (fresh database;
 * PGlite when DATABASE_URL is unset) and on PGlite: merchants registered, keys added sealed,
 * listed without the key, opened only as the active keys, retired, a merchant disabled; the
 * tables hold no key in the clear (what a dump would show); a key-encryption key rotated by
 * rewrapping the keys, after which the old KEK is no longer needed.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { KeyWrapper, MerchantRegistry } from "@tillflow/core"
import { PgliteEventStore, SqlMerchantRegistry, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

const bytes = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))
const kek = (id: string, fill: number) => Either.getOrThrow(KeyWrapper.parseKek(`${id}:${bytes(fill)}`))
const keys = ["sk_live_first_0123456789abcdef0123", "sk_live_second_fedcba9876543210fedc"] as const

/** The registry under `wrapper`, on the database in context. */
const registryUnder = (wrapper: KeyWrapper.Service) =>
  Effect.provide(
    MerchantRegistry.MerchantRegistry,
    SqlMerchantRegistry.layer.pipe(Layer.provide(Layer.succeed(KeyWrapper.KeyWrapper, wrapper)))
  )

const suite = <E>(name: string, storeLayer: Layer.Layer<SqlClient.SqlClient, E>) =>
  layer(storeLayer, { excludeTestServices: true, timeout: 60_000 })(name, (it) => {
    it.effect(
      "registers merchants and their keys sealed: listed without keys, opened only as active keys",
      () =>
        Effect.gen(function* () {
          const registry = yield* registryUnder(KeyWrapper.aesGcm(kek("kek-1", 7)))
          const merchant = yield* registry.register({
            id: "m-7",
            name: "Café Sol",
            mcc: "5812",
            virtualTerminal: "V-7"
          })
          expect(merchant).toMatchObject({ id: "m-7", enabled: true, keys: [] })
          expect(
            (yield* Effect.flip(registry.register({ id: "m-7", name: "again", mcc: "5812" }))).message
          ).toContain("already registered")
          expect(
            (yield* Effect.flip(registry.register({ id: "m 8", name: "x", mcc: "58" }))).message
          ).toMatch(/merchant id[\s\S]*MCC is 4 digits/)
          const first = yield* registry.addKey("m-7", "merchant", Redacted.make(keys[0]))
          const second = yield* registry.addKey("m-7", "partner", Redacted.make(keys[1]))
          expect((yield* Effect.flip(registry.addKey("nobody", "merchant", Redacted.make("x"))))._tag).toBe(
            "MerchantNotFound"
          )
          const listed = yield* registry.list
          expect(JSON.stringify(listed)).not.toContain("sk_live")
          expect(
            listed.find((m) => m.id === "m-7")?.keys.map((k) => [k.keyId, k.kind, k.state, k.kek])
          ).toEqual([
            [first.keyId, "merchant", "active", "kek-1"],
            [second.keyId, "partner", "active", "kek-1"]
          ])
          const active = yield* registry.activeKeys("m-7")
          expect(active.map((k) => [k.keyId, Redacted.value(k.key)])).toEqual([
            [first.keyId, keys[0]],
            [second.keyId, keys[1]]
          ])

          // What a dump of the tables shows: no key in the clear.
          const sql = yield* SqlClient.SqlClient
          const dump = yield* sql<{ readonly row: string }>`
          SELECT row_to_json(k)::text AS row FROM tillflow_merchant_keys k
          UNION ALL SELECT row_to_json(m)::text FROM tillflow_merchants m`
          const text = dump.map((r) => r.row).join("\n")
          for (const key of keys) {
            expect(text).not.toContain(key)
            expect(text).not.toContain(btoa(key).slice(0, 12))
          }

          // Retired: never handed out again; the merchant disabled and enabled.
          expect((yield* registry.retireKey("m-7", first.keyId)).state).toBe("retired")
          expect((yield* registry.activeKeys("m-7")).map((k) => k.keyId)).toEqual([second.keyId])
          expect((yield* registry.setEnabled("m-7", false)).enabled).toBe(false)
          expect((yield* registry.get("m-7")).enabled).toBe(false)
          expect((yield* Effect.flip(registry.setEnabled("nobody", false)))._tag).toBe("MerchantNotFound")
        })
    )

    it.effect(
      "rotates the key-encryption key: rewrapped under the new one, the old one no longer needed",
      () =>
        Effect.gen(function* () {
          const before = yield* registryUnder(KeyWrapper.aesGcm(kek("kek-1", 7)))
          yield* before.register({ id: "m-9", name: "Hotel Mar", mcc: "7011" })
          yield* before.addKey("m-9", "merchant", Redacted.make(keys[0]))
          const during = yield* registryUnder(KeyWrapper.aesGcm(kek("kek-2", 9), [kek("kek-1", 7)]))
          expect(yield* during.rewrapKeys).toBeGreaterThanOrEqual(1)
          expect(yield* during.rewrapKeys).toBe(0)
          const after = yield* registryUnder(KeyWrapper.aesGcm(kek("kek-2", 9)))
          expect((yield* after.activeKeys("m-9")).map((k) => Redacted.value(k.key))).toEqual([keys[0]])
          expect((yield* after.get("m-9")).keys.map((k) => k.kek)).toEqual(["kek-2"])
        })
    )

    it.effect(
      "what a merchant's acquirer supports: registered, changed, set back to the deployment's; read per merchant over the deployment's",
      () =>
        Effect.gen(function* () {
          const registry = yield* registryUnder(KeyWrapper.aesGcm(kek("kek-1", 7)))
          const partial = yield* registry.register({
            id: "m-partial",
            name: "Partial",
            mcc: "5812",
            partialReversal: true
          })
          expect([partial.partialReversal, partial.captureReversal]).toEqual([true, undefined])
          const plain = yield* registry.register({ id: "m-plain", name: "Plain", mcc: "5812" })
          expect("partialReversal" in plain || "captureReversal" in plain).toBe(false)
          const changed = yield* registry.setAcquirer(
            "m-plain",
            MerchantRegistry.changedAcquirer(plain, { captureReversal: false })
          )
          expect([changed.partialReversal, changed.captureReversal]).toEqual([undefined, false])
          expect((yield* registry.list).find((m) => m.id === "m-plain")?.captureReversal).toBe(false)
          // null: back to the deployment's; a capability left out unchanged.
          const back = yield* registry.setAcquirer(
            "m-partial",
            MerchantRegistry.changedAcquirer(partial, { partialReversal: null, captureReversal: false })
          )
          expect([back.partialReversal, back.captureReversal]).toEqual([undefined, false])
          expect(
            (yield* Effect.flip(
              registry.setAcquirer("nobody", { partialReversal: true, captureReversal: undefined })
            ))._tag
          ).toBe("MerchantNotFound")
          // Read per merchant: the registered capability, else none (the deployment's holds).
          const acquirerOf = MerchantRegistry.acquirerOf(registry, { cacheMillis: 0 })
          expect(yield* acquirerOf("m-plain")).toEqual(
            Option.some({ partialReversal: undefined, captureReversal: false })
          )
          expect(yield* acquirerOf("nobody")).toEqual(Option.none())
        })
    )

    it.effect(
      "a merchant's own rate limit: registered, changed, set back to the deployment's; out of bounds refused",
      () =>
        Effect.gen(function* () {
          const registry = yield* registryUnder(KeyWrapper.aesGcm(kek("kek-1", 7)))
          const limited = yield* registry.register({
            id: "m-limited",
            name: "Limited",
            mcc: "5812",
            rateLimit: { count: 2, intervalMillis: 1_000, burst: 2 }
          })
          expect(limited.rateLimit).toEqual({ count: 2, intervalMillis: 1_000, burst: 2 })
          const free = yield* registry.register({ id: "m-free", name: "Free", mcc: "5812" })
          expect("rateLimit" in free).toBe(false)
          const changed = yield* registry.setRateLimit("m-free", {
            count: 600,
            intervalMillis: 60_000,
            burst: 30
          })
          expect(changed.rateLimit).toEqual({ count: 600, intervalMillis: 60_000, burst: 30 })
          expect((yield* registry.list).find((m) => m.id === "m-free")?.rateLimit?.burst).toBe(30)
          const back = yield* registry.setRateLimit("m-limited", undefined)
          expect("rateLimit" in back).toBe(false)
          expect(
            (yield* Effect.flip(
              registry.setRateLimit("m-free", { count: 0, intervalMillis: 1_000, burst: 1 })
            )).message
          ).toContain("from 1 to 100000")
          expect((yield* registry.get("m-free")).rateLimit?.count).toBe(600)
          expect(
            (yield* Effect.flip(
              registry.setRateLimit("nobody", { count: 1, intervalMillis: 1_000, burst: 1 })
            ))._tag
          ).toBe("MerchantNotFound")
        })
    )
  })

describe("SqlMerchantRegistry", () => {
  suite("on PostgreSQL (fresh database)", TestDatabase.layer)
  suite("on PGlite", PgliteEventStore.layer({ pollInterval: "50 millis" }))
})
