/**
 * Listing executions by workflow, status and search attributes.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect("lists executions by workflow, status and search attributes", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const sender = unique()
      const a = yield* enqueue(workflow, { attributes: { sender, locker: "L1", amount: "1000" } })
      const b = yield* enqueue(workflow, { attributes: { sender, locker: "L2", amount: "1000" } })
      yield* queue.claim({ workerId: "A", workflowNames: [workflow], limit: 1, leaseMs: 100, now: 2_000 })
      yield* queue.setAttributes(b, { trackingNumber: "ref-b" })
      const ids = (infos: ReadonlyArray<ExecutionQueue.ExecutionInfo>) =>
        infos.map((info) => info.executionId)
      expect(ids(yield* queue.list({ workflowName: workflow }))).toEqual([a, b])
      expect(ids(yield* queue.list({ workflowName: workflow, status: "running" }))).toEqual([a])
      expect(ids(yield* queue.list({ status: ["pending", "suspended"], attributes: { sender } }))).toEqual([
        b
      ])
      expect(ids(yield* queue.list({ attributes: { sender, amount: "1000", locker: "L1" } }))).toEqual([a])
      expect(ids(yield* queue.list({ attributes: { trackingNumber: "ref-b" } }))).toEqual([b])
      expect(ids(yield* queue.list({ workflowName: workflow, limit: 1 }))).toEqual([a])
      expect((yield* status(b)).attributes).toEqual({
        sender,
        locker: "L2",
        amount: "1000",
        trackingNumber: "ref-b"
      })
    })
  )
}
