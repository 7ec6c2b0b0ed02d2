/**
 * Which executions a claim takes: those in progress before new ones, only the given
 * workflows, and never one execution for two concurrent claimers.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "executions in progress (woken, retrying) are claimed before new ones due earlier, so a burst does not starve them",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const claimAt = (now: number, limit: number) =>
          queue
            .claim({ workerId: "A", workflowNames: [workflow], limit, leaseMs: 1_000, now })
            .pipe(Effect.map((claims) => claims.map((claim) => claim.executionId).sort()))
        // Two executions start, then wait: one for a signal, one to retry after a crash.
        const woken = yield* enqueue(workflow, { now: 100 })
        const retrying = yield* enqueue(workflow, { now: 101 })
        expect(yield* claimAt(200, 2)).toEqual([woken, retrying].sort())
        yield* queue.release({
          executionId: woken,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: undefined },
          now: 300
        })
        yield* queue.release({
          executionId: retrying,
          workerId: "A",
          release: { _tag: "Retry", runAt: 2_500 },
          now: 300
        })
        // A burst of new executions, all due before either of them.
        const burst: Array<string> = []
        for (let i = 0; i < 20; i++) burst.push(yield* enqueue(workflow, { now: 1_000 + i }))
        yield* queue.wake({ executionId: woken, now: 2_000 })
        expect(Option.getOrUndefined(yield* queue.nextDueAt([workflow]))).toBe(1_000)

        // The ones in progress first, then the burst oldest first (the order of the
        // claims handed back is not the claim order: compared as sets).
        expect(yield* claimAt(3_000, 3)).toEqual([woken, retrying, burst[0]].sort())
        expect(yield* claimAt(3_000, 5)).toEqual(burst.slice(1, 6).sort())
        // A lease that ran out puts its execution ahead of the rest of the burst too.
        expect(yield* claimAt(5_000, 9)).toEqual([woken, retrying, ...burst.slice(0, 7)].sort())
      })
  )

  it.effect("only the given workflows are claimed", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const mine = unique()
      const other = unique()
      const id = yield* enqueue(mine)
      yield* enqueue(other)
      const claims = yield* queue.claim({
        workerId: "A",
        workflowNames: [mine],
        limit: 10,
        leaseMs: 100,
        now: 2_000
      })
      expect(claims.map((claim) => claim.executionId)).toEqual([id])
    })
  )

  it.effect("concurrent claimers never receive the same execution, nor two executions of one key", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const keys = Array.from({ length: 5 }, () => `locker:${unique()}`)
      const ids: Array<string> = []
      for (let i = 0; i < 40; i++) ids.push(yield* enqueue(workflow))
      for (let i = 0; i < 20; i++) ids.push(yield* enqueue(workflow, { key: keys[i % keys.length] ?? "" }))
      const claims = yield* Effect.all(
        Array.from({ length: 12 }, (_, worker) =>
          queue.claim({
            workerId: `W${worker}`,
            workflowNames: [workflow],
            limit: 6,
            leaseMs: 60_000,
            now: 2_000
          })
        ),
        { concurrency: "unbounded" }
      )
      const claimed = claims.flat().map((claim) => claim.executionId)
      expect(new Set(claimed).size).toBe(claimed.length)
      const withKey = yield* Effect.forEach(claimed, status)
      const heldKeys = withKey.flatMap((info) => (info.concurrencyKey === null ? [] : [info.concurrencyKey]))
      expect(new Set(heldKeys).size).toBe(heldKeys.length)
      // Whatever was left unclaimed is still there for the next claim.
      const rest = yield* queue.claim({
        workerId: "late",
        workflowNames: [workflow],
        limit: 100,
        leaseMs: 60_000,
        now: 2_001
      })
      const all = [...claimed, ...rest.map((claim) => claim.executionId)]
      expect(new Set(all).size).toBe(all.length)
      expect(all.filter((id) => ids.slice(0, 40).includes(id))).toHaveLength(40)
    })
  )
}
