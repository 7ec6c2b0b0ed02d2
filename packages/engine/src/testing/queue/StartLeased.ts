/**
 * Start leased (`enqueueLeased`): a new execution inserted already claimed by the starting
 * process's worker, with the queue's guarantees unchanged: one runner (no claim takes a
 * leased row before its lease expires), the lease renewed by heartbeat and taken over when
 * it lapses, a concurrency key held by one execution (a start whose key is held waits
 * pending for it), an execution that exists left alone.
 */
import { expect } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import { type QueueTests, unique, enqueue, status } from "./Executions.js"

const leased = (
  workflowName: string,
  options: { readonly key?: string; readonly executionId?: string } = {}
) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    if (queue.enqueueLeased === undefined) return undefined
    const executionId = options.executionId ?? unique()
    const answer = yield* queue.enqueueLeased({
      executionId,
      workflowName,
      concurrencyKey: options.key,
      parentId: undefined,
      attributes: { kind: "leased" },
      now: 1_000,
      workerId: "A",
      leaseMs: 100
    })
    return { executionId, answer }
  })

const claimAll = (workflowName: string, workerId: string, now: number) =>
  Effect.flatMap(ExecutionQueue.ExecutionQueue, (queue) =>
    queue.claim({ workerId, workflowNames: [workflowName], limit: 10, leaseMs: 100, now })
  )

/** Registers this concern's tests on the queue contract's shared layer. */
export const suite = (it: QueueTests): void => {
  it.effect(
    "a start leased (one statement) is inserted running, leased to its worker, and no claim takes it before its lease ends",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const started = yield* leased(workflow)
        if (started === undefined) return
        const { answer, executionId } = started
        expect(answer.inserted).toBe(true)
        expect(answer.claim).toMatchObject({
          executionId,
          workflowName: workflow,
          claims: 1,
          leaseUntil: 1_100
        })
        const info = yield* status(executionId)
        expect(info).toMatchObject({
          status: "running",
          leaseOwner: "A",
          claims: 1,
          attributes: { kind: "leased" }
        })
        expect(yield* claimAll(workflow, "B", 1_050)).toEqual([])
        // Renewed by heartbeat, it stays the worker's past its first lease.
        expect(
          yield* queue.heartbeat({ workerId: "A", executionIds: [executionId], leaseMs: 100, now: 1_090 })
        ).toEqual([executionId])
        expect(yield* claimAll(workflow, "B", 1_150)).toEqual([])
        // Lapsed, another worker takes it over and the first one's release is ignored.
        const taken = yield* claimAll(workflow, "B", 1_200)
        expect(taken.map((claim) => [claim.executionId, claim.claims])).toEqual([[executionId, 2]])
        const late = yield* queue.release({
          executionId,
          workerId: "A",
          release: { _tag: "Finished", status: "succeeded" },
          now: 1_201
        })
        expect(late).toBe(false)
        expect(
          yield* queue.release({
            executionId,
            workerId: "B",
            release: { _tag: "Finished", status: "succeeded" },
            now: 1_202
          })
        ).toBe(true)
      })
  )

  it.effect("a start leased holds its concurrency key; one whose key is held waits pending for it", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const key = `terminal:${unique()}`
      const first = yield* leased(workflow, { key })
      if (first === undefined) return
      expect(first.answer.claim?.executionId).toBe(first.executionId)
      // The key is held: a claimed start of the same key waits, leased or not.
      const second = yield* leased(workflow, { key })
      if (second === undefined) return
      expect(second.answer).toEqual({ inserted: true, claim: undefined })
      const third = yield* enqueue(workflow, { key })
      expect((yield* status(second.executionId)).status).toBe("pending")
      expect(yield* claimAll(workflow, "B", 1_050)).toEqual([])
      yield* queue.release({
        executionId: first.executionId,
        workerId: "A",
        release: { _tag: "Finished", status: "succeeded" },
        now: 1_060
      })
      // Freed with the finish: the next in line (the older one) gets it, one at a time.
      const next = yield* claimAll(workflow, "B", 1_070)
      expect(next.map((claim) => claim.executionId)).toEqual([second.executionId])
      // A key held by a claimed execution makes a start leased wait too.
      const fourth = yield* leased(workflow, { key })
      expect(fourth?.answer.claim).toBeUndefined()
      expect((yield* status(third)).status).toBe("pending")
    })
  )

  it.effect("a start leased leaves an execution that exists alone", () =>
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const workflow = unique()
      const key = `terminal:${unique()}`
      const existing = yield* enqueue(workflow, { key })
      yield* claimAll(workflow, "B", 1_000)
      yield* queue.release({
        executionId: existing,
        workerId: "B",
        release: { _tag: "Finished", status: "succeeded" },
        now: 1_001
      })
      const again = yield* leased(workflow, { key, executionId: existing })
      if (again === undefined) return
      expect(again.answer).toEqual({ inserted: false, claim: undefined })
      expect(yield* status(existing)).toMatchObject({ status: "succeeded", leaseOwner: null, claims: 1 })
      // It took no key: another execution of the key starts leased.
      const other = yield* leased(workflow, { key })
      expect(other?.answer.claim?.executionId).toBe(other?.executionId)
    })
  )
}
