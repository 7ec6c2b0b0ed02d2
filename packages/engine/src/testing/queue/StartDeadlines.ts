/**
 * Start deadlines: an execution never claimed whose deadline passed while it waited for its
 * concurrency key leaves the key's line and is claimed at once, beside the key's holder.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, enqueue, status, unique } from "./Executions.js"

const enqueueBy = (workflowName: string, key: string, startBy: number) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    const executionId = unique()
    expect(
      yield* queue.enqueue({
        executionId,
        workflowName,
        concurrencyKey: key,
        parentId: undefined,
        attributes: {},
        startBy,
        now: 1_000
      })
    ).toBe(true)
    return executionId
  })

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "an execution still waiting for its key past its start deadline leaves the key's line and is claimed beside the holder; one not yet due keeps waiting",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const expire = queue.expireStartDeadlines
        expect(expire).toBeDefined()
        if (expire === undefined) return
        const workflow = unique()
        const key = `printer:${unique()}`
        const holder = yield* enqueue(workflow, { key })
        const late = yield* enqueueBy(workflow, key, 5_000)
        const patient = yield* enqueueBy(workflow, key, 60_000)
        const claim = (now: number) =>
          Effect.map(
            queue.claim({ workerId: "A", workflowNames: [workflow], limit: 10, leaseMs: 100_000, now }),
            (claims) => claims.map((c) => c.executionId)
          )
        expect(yield* claim(2_000)).toEqual([holder])
        // Before its deadline nothing moves.
        expect(yield* expire({ now: 4_999 })).not.toContain(late)
        expect(yield* claim(4_999)).toEqual([])
        const moved = yield* expire({ now: 5_000 })
        expect(moved).toContain(late)
        expect(moved).not.toContain(patient)
        expect(yield* claim(5_001)).toEqual([late])
        // It never took the key: the holder still holds it, the patient one still waits.
        expect((yield* status(late)).concurrencyKey).toBeNull()
        yield* queue.release({
          executionId: holder,
          workerId: "A",
          release: { _tag: "Finished", status: "succeeded" },
          now: 5_002
        })
        expect(yield* claim(5_003)).toEqual([patient])
        // A claimed execution is never moved, however late.
        expect(yield* expire({ now: 100_000 })).not.toContain(patient)
      })
  )
}
