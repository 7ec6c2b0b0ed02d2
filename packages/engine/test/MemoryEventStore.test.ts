import { describe, expect, it } from "@effect/vitest"
import { EventStore, HashChain, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { eventStoreContract, OtherInstance, Tamper } from "@tillflow/engine/testing"

const memoryTamper = Layer.effect(
  Tamper,
  Effect.map(MemoryEventStore.Tampering, (tampering) => ({
    setData: (streamId: string, version: number, data: EventStore.Json) =>
      Effect.asVoid(
        tampering.rewrite(
          streamId,
          version,
          (event) => new EventStore.RecordedEvent({ ...event, data }, true)
        )
      )
  }))
)

// The memory store caches nothing: its "other instance" is itself.
const sameInstance = Layer.effect(
  OtherInstance,
  Effect.map(EventStore.EventStore, (store) => ({ make: Effect.succeed(store) }))
)

eventStoreContract(
  "memory",
  Layer.merge(memoryTamper, sameInstance).pipe(
    Layer.provideMerge(MemoryEventStore.layer({ pollInterval: "50 millis" }))
  )
)

describe("MemoryEventStore and personal data (link version 2)", () => {
  it.effect(
    "an event with a personal wrapper is linked by its digest: it verifies before and after removal",
    () =>
      Effect.gen(function* () {
        const { store } = yield* MemoryEventStore.make()
        const stream = "moto-personal"
        yield* store.append(stream, EventStore.NoStream, [
          { type: "Plain", data: { n: 1 } },
          { type: "MotoSaleRequested", data: { amount: "100", billing: HashChain.personal({ name: "Ada" }) } }
        ])
        const events = yield* store.readStream(stream)
        expect(events.map((e) => e.metadata)).toEqual([{}, { [HashChain.linkVersionKey]: 2 }])
        expect((yield* store.verify(stream)).ok).toBe(true)
        const erased = events.map((e) => ({ ...e, data: HashChain.erasePersonal(e.data) }))
        expect(JSON.stringify(erased.map((e) => e.data))).not.toContain("Ada")
        expect(yield* HashChain.verifyStream(stream, erased)).toEqual(Option.none())
        const altered = erased.map((e, i) =>
          i === 1 ? { ...e, data: { ...(e.data as object), amount: "1" } } : e
        )
        expect(Option.map(yield* HashChain.verifyStream(stream, altered), (b) => b.kind)).toEqual(
          Option.some("HashMismatch")
        )
      })
  )
})
