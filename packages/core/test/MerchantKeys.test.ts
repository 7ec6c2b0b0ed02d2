/**
 * `MerchantKeys.fromRegistry`: the deployment's own merchant calls with the configured key;
 * a registered merchant with its active keys, oldest first, read from the registry at most
 * once per cache period; a refused key goes last, the cache is dropped (a key added
 * meanwhile is found at once) and the refusal is recorded in the merchant's stream — never
 * the key; an unknown merchant has no key.
 */
import { describe, expect, it } from "@effect/vitest"
import { MerchantKeys, MerchantRegistry } from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

const fakeRegistry = (keys: Map<string, Array<MerchantRegistry.ActiveKey>>, reads: { count: number }) =>
  Layer.succeed(MerchantRegistry.MerchantRegistry, {
    activeKeys: (id) =>
      Effect.suspend(() => {
        reads.count++
        const found = keys.get(id)
        return found === undefined
          ? Effect.fail(new MerchantRegistry.MerchantNotFound({ message: `no merchant ${id}` }))
          : Effect.succeed(found)
      }),
    register: () => Effect.dieMessage("not used"),
    list: Effect.dieMessage("not used"),
    get: () => Effect.dieMessage("not used"),
    setEnabled: () => Effect.dieMessage("not used"),
    setAcquirer: () => Effect.dieMessage("not used"),
    setRateLimit: () => Effect.dieMessage("not used"),
    addKey: () => Effect.dieMessage("not used"),
    retireKey: () => Effect.dieMessage("not used"),
    rewrapKeys: Effect.dieMessage("not used")
  } satisfies MerchantRegistry.Service)

const key = (keyId: string): MerchantRegistry.ActiveKey => ({
  keyId,
  kind: "merchant",
  key: Redacted.make(`secret-of-${keyId}`)
})

describe("MerchantKeys.fromRegistry", () => {
  it.effect("own key, registered keys oldest first and cached, refused keys last and recorded", () =>
    Effect.gen(function* () {
      const reads = { count: 0 }
      const keys = new Map([["cafe-sol", [key("key-a"), key("key-b")]]])
      const service = yield* MerchantKeys.fromRegistry(Redacted.make("own-secret")).pipe(
        Effect.provide(fakeRegistry(keys, reads))
      )
      const own = yield* service.keysFor(undefined)
      expect(own.map((k) => [k.keyId, Redacted.value(k.key)])).toEqual([["configured", "own-secret"]])

      expect((yield* service.keysFor("cafe-sol")).map((k) => k.keyId)).toEqual(["key-a", "key-b"])
      expect((yield* service.keysFor("cafe-sol")).map((k) => k.keyId)).toEqual(["key-a", "key-b"])
      expect(reads.count).toBe(1)

      keys.set("cafe-sol", [key("key-a"), key("key-b"), key("key-c")])
      yield* service.refused({ merchant: "cafe-sol", keyId: "key-a", endpoint: "sendTransaction" })
      expect((yield* service.keysFor("cafe-sol")).map((k) => k.keyId)).toEqual(["key-b", "key-c", "key-a"])
      expect(reads.count).toBe(2)

      const store = yield* EventStore.EventStore
      const recorded = yield* store.readStream(MerchantKeys.streamOf("cafe-sol"))
      expect(recorded.map((e) => e.type)).toEqual(["MerchantKeyRefused"])
      expect(recorded[0]?.data).toMatchObject({
        merchant: "cafe-sol",
        keyId: "key-a",
        endpoint: "sendTransaction"
      })
      expect(JSON.stringify(recorded.map((e) => [e.data, e.metadata]))).not.toContain("secret-of-")

      expect(yield* service.keysFor("unknown")).toEqual([])
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("the deployment without a key of its own has none for its own merchant", () =>
    Effect.gen(function* () {
      const service = yield* MerchantKeys.fromRegistry(undefined).pipe(
        Effect.provide(fakeRegistry(new Map(), { count: 0 }))
      )
      expect(yield* service.keysFor(undefined)).toEqual([])
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})
