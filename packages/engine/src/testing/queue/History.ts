/**
 * A queue may skip the past it stores (the SQL queue reads its due-time indexes from a
 * floor, past the entries finished runs left): whatever it keeps to do so must never hide
 * a live execution, even one written with a clock far behind every claim it has seen, and
 * finished executions stay visible.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type QueueTests, enqueue, status, unique } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "executions written with a clock behind every claim seen so far are still claimed, looked up and leave their key's line",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const ahead = 9_000_000_000_000
        const claimIds = (now: number) =>
          Effect.map(
            queue.claim({ workerId: "A", workflowNames: [workflow], limit: 10, leaseMs: 1_000, now }),
            (claims) => claims.map((claim) => claim.executionId)
          )
        // Runs on a clock far ahead, claimed and finished a few seconds apart.
        const finished: Array<string> = []
        for (let i = 0; i < 3; i++) {
          const now = ahead + i * 5_000
          const executionId = yield* enqueue(workflow, { now })
          expect(yield* claimIds(now)).toEqual([executionId])
          yield* queue.release({
            executionId,
            workerId: "A",
            release: { _tag: "Finished", status: "succeeded" },
            now
          })
          finished.push(executionId)
        }
        // A process whose clock is far behind: a key's holder, and one waiting in its line
        // with a start deadline.
        const key = `terminal:${unique()}`
        const holder = yield* enqueue(workflow, { now: 40, key })
        expect(yield* queue.nextDueAt([workflow])).toEqual(Option.some(40))
        expect(yield* claimIds(45)).toEqual([holder])
        const waiting = unique()
        yield* queue.enqueue({
          executionId: waiting,
          workflowName: workflow,
          concurrencyKey: key,
          parentId: undefined,
          attributes: {},
          startBy: 70,
          now: 50
        })
        expect(yield* claimIds(60)).toEqual([])
        const expire = queue.expireStartDeadlines
        if (expire !== undefined) {
          expect(yield* expire({ now: 80 })).toContain(waiting)
          expect(yield* claimIds(80)).toEqual([waiting])
        }
        // A retry set before every due time seen.
        yield* queue.release({
          executionId: holder,
          workerId: "A",
          release: { _tag: "Retry", runAt: 30 },
          now: 90
        })
        expect(yield* claimIds(95)).toEqual([holder])
        // The finished ones are still found.
        for (const executionId of finished) expect((yield* status(executionId)).status).toBe("succeeded")
        const listed = yield* queue.list({ workflowName: workflow, status: "succeeded" })
        expect(listed.map((info) => info.executionId)).toEqual(finished)
      })
  )
}
