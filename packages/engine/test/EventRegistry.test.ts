import { describe, expect, it } from "@effect/vitest"
import { EventRegistry, EventStore, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"

// Version 1 stored the amount as a JSON number of minor units; version 2 stores a string
// (money is never a float) and added the currency.
const PaymentRequested = EventRegistry.define(
  "PaymentRequested",
  Schema.Struct({ amount: Schema.BigInt, currency: Schema.String }),
  {
    schemaVersion: 2,
    upcasters: {
      1: (data) => {
        const v1 = data as { readonly amount: number }
        return { amount: String(v1.amount), currency: "EUR" }
      }
    }
  }
)
const PaymentCancelled = EventRegistry.define("PaymentCancelled", Schema.Struct({ reason: Schema.String }))
const registry = EventRegistry.make(PaymentRequested, PaymentCancelled)

describe("EventRegistry", () => {
  it.effect("encodes a typed event at its current schema version, in its encoded JSON form", () =>
    Effect.gen(function* () {
      const encoded = yield* registry.encode(PaymentRequested.make({ amount: 1000n, currency: "EUR" }))
      expect(encoded).toMatchObject({
        type: "PaymentRequested",
        schemaVersion: 2,
        data: { amount: "1000", currency: "EUR" }
      })
    })
  )

  it.effect("round-trips typed events through the store", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const events = yield* registry.encodeAll([
        PaymentRequested.make({ amount: 250n, currency: "JPY" }),
        PaymentCancelled.make({ reason: "customer" }, { metadata: { by: "operator" } })
      ])
      yield* store.append("p-1", EventStore.NoStream, events)
      const decoded = yield* registry.decodeAll(yield* store.readStream("p-1"))
      expect(decoded.map((d) => [d.type, d.data])).toEqual([
        ["PaymentRequested", { amount: 250n, currency: "JPY" }],
        ["PaymentCancelled", { reason: "customer" }]
      ])
      expect(decoded[1].recorded.metadata).toEqual({ by: "operator" })
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("reads an event stored at an old schema version as the new shape through the upcaster", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      yield* store.append("p-2", EventStore.NoStream, [
        { type: "PaymentRequested", schemaVersion: 1, data: { amount: 1999 } }
      ])
      const [decoded] = yield* registry.decodeAll(yield* store.readStream("p-2"))
      expect(decoded.type).toBe("PaymentRequested")
      expect(decoded.data).toEqual({ amount: 1999n, currency: "EUR" })
      expect(decoded.recorded.schemaVersion).toBe(1)
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("fails with UnknownEventType for a type it does not know", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      yield* store.append("p-3", EventStore.NoStream, [{ type: "Mystery", data: {} }])
      const [recorded] = yield* store.readStream("p-3")
      const exit = yield* Effect.exit(registry.decode(recorded))
      expect(exit).toEqual(Exit.fail(new EventRegistry.UnknownEventType({ eventType: "Mystery" })))
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("refuses a schema version newer than the code and an old version without an upcaster", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      yield* store.append("p-4", EventStore.NoStream, [
        { type: "PaymentRequested", schemaVersion: 3, data: { amount: "1", currency: "EUR" } },
        { type: "PaymentCancelled", schemaVersion: 1, data: { reason: "x" } }
      ])
      const [future] = yield* store.readStream("p-4")
      const error = yield* Effect.flip(registry.decode(future))
      expect(error._tag).toBe("EventCodecError")
      expect(error.message).toContain("reads up to schema version 2")

      const NoUpcaster = EventRegistry.define("PaymentCancelled", Schema.Struct({ reason: Schema.String }), {
        schemaVersion: 2
      })
      const strict = EventRegistry.make(NoUpcaster)
      const [, cancelled] = yield* store.readStream("p-4")
      const missing = yield* Effect.flip(strict.decode(cancelled))
      expect(missing.message).toContain("no upcaster from schema version 1")
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("reports an encode failure by issue and path, without the offending value", () =>
    Effect.gen(function* () {
      const bad = {
        type: "PaymentCancelled",
        data: { reason: 4111111111111111 }
      } as unknown as EventRegistry.Event<typeof PaymentCancelled>
      const error = yield* Effect.flip(registry.encode(bad))
      expect(error.direction).toBe("encode")
      expect(error.reason).toContain("reason")
      expect(error.message).not.toContain("4111111111111111")
    })
  )

  it("throws when one type is defined twice", () => {
    expect(() => EventRegistry.make(PaymentCancelled, PaymentCancelled)).toThrow(/defined twice/)
  })
})
