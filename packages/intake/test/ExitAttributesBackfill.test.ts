/**
 * Executions that finished before the engine gave them exit attributes (an older version)
 * gain them from their stored exit: the outcome filter and the searches by guid then find
 * them. Run once more, nothing changes; once done, a worker starting later skips it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Identifiers, Lifecycles, Money, MotoWorkflow } from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import { DurableEngine, EngineWorker, EventStore, ExecutionQueue, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ExitAttributesBackfill from "../src/internal/ExitAttributesBackfill.js"

// The engine of an older version: no exit attributes given as executions finish.
const OlderEngine = Layer.mergeAll(
  Lifecycles.layer,
  EngineWorker.layer({ pollInterval: "50 millis", shutdownTimeout: "1 second" })
).pipe(
  Layer.provideMerge(DurableEngine.layer({ pollInterval: "20 millis" })),
  Layer.provideMerge(
    Layer.mergeAll(MemoryEventStore.layer(), ExecutionQueue.layerMemory, ScriptedTerminalLessCloud.layer)
  )
)

describe("exit attributes backfilled", () => {
  it.live(
    "a MOTO sale finished without them gains outcome, verdict and guid; a second run changes nothing",
    () =>
      Effect.gen(function* () {
        const engine = yield* DurableEngine.DurableEngine
        const payload = {
          requestId: "old-sale",
          cardToken: Identifiers.CardToken.make("tok_4f2a9c"),
          amount: Money.make(1050n, "EUR")
        }
        const outcome = yield* MotoWorkflow.Sale.execute(payload)
        yield* MotoWorkflow.Sale.execute({ ...payload, requestId: "old-sale-2" })
        const executionId = yield* MotoWorkflow.Sale.executionId(payload)
        const before = Option.getOrThrow(yield* engine.get(executionId))
        expect(before.attributes["outcome"]).toBeUndefined()
        expect(yield* engine.count({ attributes: { outcome: "approved" } })).toBe(0)

        // A page at a time (keyset paging, newest first).
        expect(yield* ExitAttributesBackfill.run({ batchSize: 1 })).toEqual({ examined: 2, updated: 2 })
        const after = Option.getOrThrow(yield* engine.get(executionId))
        expect(after.attributes).toMatchObject({ outcome: "approved", guid: outcome.guid })
        expect(yield* engine.count({ attributes: { outcome: "approved" } })).toBe(2)
        expect(yield* ExitAttributesBackfill.run()).toEqual({ examined: 2, updated: 0 })

        // Once done it is noted, and not run again.
        yield* ExitAttributesBackfill.once
        const store = yield* EventStore.EventStore
        expect(yield* store.streamVersion(ExitAttributesBackfill.doneStream)).toBe(1)
        yield* ExitAttributesBackfill.once
        expect(yield* store.streamVersion(ExitAttributesBackfill.doneStream)).toBe(1)
      }).pipe(Effect.provide(OlderEngine))
  )
})
