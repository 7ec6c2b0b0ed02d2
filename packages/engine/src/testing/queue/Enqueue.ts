/**
 * Enqueueing: idempotent on the execution id, the first request's details kept.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect("enqueue is idempotent on the execution id", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const id = yield* enqueue(workflow, { attributes: { locker: "L1" } })
      const again = yield* queue.enqueue({
        executionId: id,
        workflowName: workflow,
        concurrencyKey: "other",
        parentId: undefined,
        attributes: { locker: "L2" },
        now: 5_000
      })
      expect(again).toBe(false)
      const info = yield* status(id)
      expect([info.status, info.attributes, info.concurrencyKey, info.createdAt]).toEqual([
        "pending",
        { locker: "L1" },
        null,
        1_000
      ])
    })
  )
}
