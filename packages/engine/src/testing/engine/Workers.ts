/**
 * Workers, claims and leases: an execution whose worker died is taken over once its lease
 * expires, and a stopping worker gives its claims back for another worker to finish.
 */
import { expect } from "@effect/vitest"
import { Activity, Workflow } from "@effect/workflow"
import { DurableEngine, ExecutionQueue } from "../../index.js"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { type EngineTests, startNode, provideNode, tick } from "./Nodes.js"
import { unique, awaitInfo, awaitStatus, historyTypes } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect("an execution whose worker died is taken over once its lease expires", () =>
    Effect.gen(function* () {
      let runs = 0
      const Orphan = Workflow.make({
        name: "Orphan",
        payload: { id: Schema.String },
        success: Schema.Number,
        idempotencyKey: (payload) => payload.id
      })
      const OrphanLive = Orphan.toLayer(() =>
        Activity.make({ name: "Work", success: Schema.Number, execute: Effect.sync(() => ++runs) })
      )
      const payload = { id: unique() }
      // A process without a worker starts it; a worker that then dies claims it.
      const client = yield* Layer.build(DurableEngine.layer())
      const executionId = yield* Orphan.execute(payload, { discard: true }).pipe(Effect.provide(client))
      const queue = yield* ExecutionQueue.ExecutionQueue
      const now = yield* Clock.currentTimeMillis
      const claims = yield* queue.claim({
        workerId: "dead-worker",
        workflowNames: ["Orphan"],
        limit: 10,
        leaseMs: 30_000,
        now
      })
      expect(claims.map((claim) => claim.executionId)).toContain(executionId)
      const node = yield* startNode(OrphanLive)
      for (let i = 0; i < 20; i++) yield* tick
      expect((yield* awaitStatus(executionId, "running")).leaseOwner).toBe("dead-worker")
      yield* TestClock.adjust("31 seconds")
      const done = yield* awaitStatus(executionId, "succeeded")
      expect(done.claims).toBe(2)
      expect(runs).toBe(1)
      yield* node.stop
    }).pipe(Effect.scoped)
  )

  it.effect("a stopping worker gives back the claim of a run in flight, and another worker finishes it", () =>
    Effect.gen(function* () {
      const counts = { started: 0, finished: 0 }
      const block = yield* Deferred.make<void>()
      const Long = Workflow.make({
        name: "Long",
        payload: { id: Schema.String },
        idempotencyKey: (payload) => payload.id
      })
      const LongLive = Long.toLayer(() =>
        Activity.make({
          name: "Slow",
          execute: Effect.gen(function* () {
            counts.started++
            yield* Deferred.await(block)
            counts.finished++
          })
        })
      )
      const payload = { id: unique() }
      const first = yield* startNode(LongLive)
      const executionId = yield* Long.execute(payload, { discard: true }).pipe(provideNode(first.context))
      yield* awaitInfo(executionId, () => counts.started === 1, "started")
      yield* first.stop
      const released = yield* awaitStatus(executionId, "pending")
      expect(released.leaseOwner).toBeNull()
      expect(yield* historyTypes(executionId)).toEqual(["WorkflowStarted"])
      yield* Deferred.succeed(block, undefined)
      const second = yield* startNode(LongLive)
      yield* awaitStatus(executionId, "succeeded")
      expect(counts).toEqual({ started: 2, finished: 1 })
      yield* second.stop
    })
  )
}
