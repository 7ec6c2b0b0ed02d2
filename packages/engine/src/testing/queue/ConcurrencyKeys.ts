/**
 * Concurrency keys: held by one unfinished execution, suspended or stuck, until it finishes.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, unique, enqueue } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "a concurrency key is held by one unfinished execution, suspended or stuck, until it finishes",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const key = `locker:${unique()}`
        const first = yield* enqueue(workflow, { key })
        const second = yield* enqueue(workflow, { key })
        const free = yield* enqueue(workflow, { key: `locker:${unique()}` })
        const claimed = yield* queue.claim({
          workerId: "A",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 2_000
        })
        expect(claimed.map((claim) => claim.executionId).sort()).toEqual([first, free].sort())
        yield* queue.release({
          executionId: first,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: undefined },
          now: 2_001
        })
        yield* queue.wake({ executionId: first, now: 2_002 })
        // Woken again, the holder can be claimed; the other execution of its key cannot.
        const again = yield* queue.claim({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 2_003
        })
        expect(again.map((claim) => claim.executionId)).toEqual([first])
        yield* queue.release({ executionId: first, workerId: "B", release: { _tag: "Stuck" }, now: 2_004 })
        const whileStuck = yield* queue.claim({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 3_000
        })
        expect(whileStuck.map((claim) => claim.executionId)).not.toContain(second)
        expect(whileStuck.map((claim) => claim.executionId)).not.toContain(first)
        yield* queue.wake({ executionId: first, now: 3_001, resumeStuck: true })
        yield* queue.claim({ workerId: "B", workflowNames: [workflow], limit: 1, leaseMs: 100, now: 3_002 })
        yield* queue.release({
          executionId: first,
          workerId: "B",
          release: { _tag: "Finished", status: "succeeded" },
          now: 3_003
        })
        const next = yield* queue.claim({
          workerId: "C",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 3_004
        })
        expect(next.map((claim) => claim.executionId)).toEqual([second])
      })
  )
}
