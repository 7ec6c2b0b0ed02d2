/**
 * Claims lease executions: oldest first, held until the lease ends or is renewed by a
 * heartbeat of the worker that still holds it.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect("a claim leases due executions oldest first; an expired lease makes it claimable again", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const first = yield* enqueue(workflow, { now: 1_000 })
      const second = yield* enqueue(workflow, { now: 1_001 })
      const notYet = yield* enqueue(workflow, { now: 9_000 })
      const claimA = yield* queue.claim({
        workerId: "A",
        workflowNames: [workflow],
        limit: 10,
        leaseMs: 100,
        now: 2_000
      })
      expect(claimA.map((claim) => claim.executionId)).toEqual([first, second])
      expect(claimA.map((claim) => [claim.claims, claim.leaseUntil])).toEqual([
        [1, 2_100],
        [1, 2_100]
      ])
      const info = yield* status(first)
      expect([info.status, info.leaseOwner, info.dueAt]).toEqual(["running", "A", 2_100])
      // Held: nobody else gets them before the lease ends.
      expect(
        yield* queue.claim({
          workerId: "B",
          workflowNames: [workflow],
          limit: 10,
          leaseMs: 100,
          now: 2_050
        })
      ).toEqual([])
      const claimB = yield* queue.claim({
        workerId: "B",
        workflowNames: [workflow],
        limit: 1,
        leaseMs: 100,
        now: 2_101
      })
      expect(claimB.map((claim) => [claim.executionId, claim.claims])).toEqual([[first, 2]])
      expect((yield* status(notYet)).status).toBe("pending")
      // A's release of a claim it lost is ignored.
      expect(
        yield* queue.release({ executionId: first, workerId: "A", release: { _tag: "Stuck" }, now: 2_102 })
      ).toBe(false)
      expect((yield* status(first)).leaseOwner).toBe("B")
    })
  )

  it.effect("a heartbeat renews only the leases the worker still holds", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const one = yield* enqueue(workflow)
      const two = yield* enqueue(workflow)
      yield* queue.claim({ workerId: "A", workflowNames: [workflow], limit: 2, leaseMs: 100, now: 1_000 })
      yield* queue.claim({ workerId: "B", workflowNames: [workflow], limit: 1, leaseMs: 100, now: 1_200 })
      const held = yield* queue.heartbeat({
        workerId: "A",
        executionIds: [one, two],
        leaseMs: 100,
        now: 1_250
      })
      expect(held).toHaveLength(1)
      const kept = held[0] ?? ""
      expect((yield* status(kept)).dueAt).toBe(1_350)
      const lost = kept === one ? two : one
      expect((yield* status(lost)).leaseOwner).toBe("B")
    })
  )
}
