/**
 * The lifecycle workflows on tillflow's own engine (`DurableEngine` + `EngineWorker`, the
 * memory stores), not only on @effect/workflow's in-memory one: their activities are
 * recorded in the execution's stream beside the business events in `txn-<guid>`.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  LifecycleEvent,
  Lifecycles,
  Money,
  PreAuthorizationWorkflow,
  ReversalWorkflow,
  Timeline,
  TransactionHistory
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import { DurableEngine, EngineWorker, EventStore, ExecutionQueue, MemoryEventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const Node = Layer.mergeAll(
  Lifecycles.layer,
  EngineWorker.layer({ pollInterval: "50 millis", shutdownTimeout: "1 second" })
).pipe(
  Layer.provideMerge(DurableEngine.layer({ pollInterval: "20 millis" })),
  Layer.provideMerge(
    Layer.mergeAll(MemoryEventStore.layer(), ExecutionQueue.layerMemory, ScriptedTerminalLessCloud.layer)
  )
)

describe("lifecycle workflows on DurableEngine", () => {
  it.live("capture once, then the reversal of the capture, each an execution of tillflow's engine", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const control = yield* ScriptedTerminalLessCloud.ScriptedControl
      const guid = Identifiers.Guid.make("pa-durable")
      yield* control.seed({
        guid,
        kind: "preAuthorization",
        amount: eur(10000n),
        reference: "3f0c1f9e-6a3c-4d2b-9a41-0c8b7e2d5a10"
      })
      yield* TransactionHistory.openPreAuthorization(store, {
        guid,
        amount: eur(10000n),
        authorisedAt: yield* DateTime.now,
        scheme: "MasterCard",
        mcc: "7011",
        transactionReference: "3f0c1f9e-6a3c-4d2b-9a41-0c8b7e2d5a10"
      })
      const results = yield* Effect.all(
        ["cap-a", "cap-b"].map((requestId) =>
          Effect.either(
            PreAuthorizationWorkflow.Capture.execute({ requestId, originalGuid: guid, amount: eur(9000n) })
          )
        ),
        { concurrency: "unbounded" }
      )
      expect(results.filter(Either.isRight)).toHaveLength(1)
      expect(results.filter(Either.isLeft).map((r) => (Either.isLeft(r) ? r.left._tag : ""))).toEqual([
        "CaptureAlreadyDone"
      ])
      expect(yield* control.count("preAuthorizationCapture")).toBe(1)
      const reversed = yield* ReversalWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid })
      expect(reversed.target).toBe("capture")
      const lines = yield* Timeline.read(LifecycleEvent.transactionStream(guid))
      expect(lines.at(-1)).toContain("capture of 90.00 EUR reversed: status AUTHORISED")
      const engine = yield* DurableEngine.DurableEngine
      const captureId = yield* PreAuthorizationWorkflow.Capture.executionId({
        requestId: "cap-a",
        originalGuid: guid,
        amount: eur(9000n)
      })
      const history = yield* engine.history(captureId)
      expect(history.some((e) => e.recorded.type === "ActivityCompleted")).toBe(true)
    }).pipe(Effect.provide(Node))
  )
})
