/**
 * The next time something falls due, answered by `claimWithNextDue` for a worker's sleep.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "a claim answers the next time something falls due by the clock after its now (timers, retries, other workers' leases), not the leases it grants nor rows made due by an enqueue or a wake",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const claimWithNextDue = queue.claimWithNextDue
        if (claimWithNextDue === undefined) return expect.fail("the queue has no claimWithNextDue")
        const workflow = unique()
        const other = unique()
        const later = yield* enqueue(workflow, { now: 9_000 })
        yield* enqueue(other, { now: 1_500 })
        const first = yield* claimWithNextDue({
          workerId: "A",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 1_000
        })
        // Nothing due; the run enqueued at 9 000 is announced by its enqueue, not slept for
        // (and the other workflow's 1 500 is not asked for).
        expect(first.claims).toEqual([])
        expect(first.nextDueAt).toEqual(Option.none())
        const timer = yield* enqueue(workflow, { now: 1_000 })
        const leased = yield* enqueue(workflow, { now: 1_000 })
        const retried = yield* enqueue(workflow, { now: 1_000 })
        const claimed = yield* claimWithNextDue({
          workerId: "A",
          workflowNames: [workflow],
          limit: 3,
          leaseMs: 100_000,
          now: 1_000
        })
        expect(claimed.claims.map((claim) => claim.executionId).sort()).toEqual(
          [timer, leased, retried].sort()
        )
        // Its own leases (101 000) are not answered.
        expect(claimed.nextDueAt).toEqual(Option.none())
        yield* queue.release({
          executionId: timer,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: 5_000 },
          now: 1_100
        })
        yield* queue.release({
          executionId: retried,
          workerId: "A",
          release: { _tag: "Retry", runAt: 4_000 },
          now: 1_100
        })
        const byB = yield* claimWithNextDue({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 1_200
        })
        expect(byB.claims).toEqual([])
        expect(byB.nextDueAt).toEqual(Option.some(4_000))
        // At 4 000 the retry is claimed; A's lease (101 000) is the next after the timer.
        const atRetry = yield* claimWithNextDue({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 1_000_000,
          now: 4_000
        })
        expect(atRetry.claims.map((claim) => claim.executionId)).toEqual([retried])
        expect(atRetry.nextDueAt).toEqual(Option.some(5_000))
        const afterAll = yield* claimWithNextDue({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 1_000_000,
          now: 9_000
        })
        expect(afterAll.claims.map((claim) => claim.executionId).sort()).toEqual([timer, later].sort())
        expect(afterAll.nextDueAt).toEqual(Option.some(101_000))
        expect(
          (yield* claimWithNextDue({
            workerId: "B",
            workflowNames: [workflow],
            limit: 0,
            leaseMs: 1,
            now: 9_001
          })).nextDueAt
        ).toEqual(Option.some(101_000))
        expect(yield* status(leased)).toMatchObject({ status: "running", leaseOwner: "A" })
      })
  )
}
