import { EventStore, MemoryEventStore } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { eventStoreContract, Tamper } from "./EventStoreContract.js"

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

eventStoreContract(
  "memory",
  memoryTamper.pipe(Layer.provideMerge(MemoryEventStore.layer({ pollInterval: "50 millis" })))
)
