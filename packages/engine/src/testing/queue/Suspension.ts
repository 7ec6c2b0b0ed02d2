/**
 * Suspended executions sleep until their timer or a wake-up, and a wake-up during a run
 * is not lost.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "a suspended execution sleeps until its timer, or until woken; a wake during a run is not lost",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const timed = yield* enqueue(workflow)
        const signalled = yield* enqueue(workflow)
        const raced = yield* enqueue(workflow)
        yield* queue.claim({
          workerId: "A",
          workflowNames: [workflow],
          limit: 3,
          leaseMs: 1_000,
          now: 1_000
        })
        yield* queue.release({
          executionId: timed,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: 5_000 },
          now: 1_100
        })
        yield* queue.release({
          executionId: signalled,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: undefined },
          now: 1_100
        })
        // A signal arrives while `raced` is still running: its suspension must not sleep.
        yield* queue.wake({ executionId: raced, now: 1_150 })
        yield* queue.release({
          executionId: raced,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: undefined },
          now: 1_200
        })
        expect((yield* status(raced)).status).toBe("pending")
        expect(Option.getOrUndefined(yield* queue.nextDueAt([workflow]))).toBe(1_200)

        const early = yield* queue.claim({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 1_000,
          now: 4_999
        })
        expect(early.map((claim) => claim.executionId)).toEqual([raced])
        yield* queue.wake({ executionId: signalled, now: 5_000 })
        const due = yield* queue.claim({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 1_000,
          now: 5_000
        })
        expect(due.map((claim) => claim.executionId).sort()).toEqual([timed, signalled].sort())
      })
  )
}
