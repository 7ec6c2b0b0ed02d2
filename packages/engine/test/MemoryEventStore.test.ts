import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
