/**
 * The SQL queue's announcements on LISTEN/NOTIFY: executions that become due or finish are
 * announced, so other processes need not wait for a poll; nothing else is.
 */
import { expect, type Vitest } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { enqueue, status, unique } from "./Executions.js"

/** Registers the notification tests on their own layer (test services excluded: real time). */
export const suite = (it: Vitest.MethodsNonLive<ExecutionQueue.ExecutionQueue, true>): void => {
  it.effect(
    "announces executions that become due or finish, so other processes need not wait for a poll",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const workflow = unique()
        const heard = yield* Queue.unbounded<string>()
        yield* queue.changes.pipe(
          Stream.runForEach((id) => Queue.offer(heard, id)),
          Effect.forkScoped
        )
        const next = Queue.take(heard).pipe(Effect.timeout("10 seconds"))
        // Give the LISTEN a moment to be in place before the first NOTIFY.
        yield* Effect.sleep("200 millis")
        const id = yield* enqueue(workflow)
        expect(yield* next).toBe(id)
        yield* queue.claim({
          workerId: "A",
          workflowNames: [workflow],
          limit: 1,
          leaseMs: 1_000,
          now: 2_000
        })
        yield* queue.release({
          executionId: id,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: 9_000 },
          now: 2_001
        })
        expect(yield* next).toBe(id)
        yield* queue.claim({
          workerId: "A",
          workflowNames: [workflow],
          limit: 1,
          leaseMs: 1_000,
          now: 9_000
        })
        yield* queue.release({
          executionId: id,
          workerId: "A",
          release: { _tag: "Finished", status: "succeeded" },
          now: 9_001
        })
        expect(yield* next).toBe(id)
        // A running execution flagged by a wake is not announced (its worker will see it),
        // nor a suspension without a timer; a wake that makes it due is.
        const other = yield* enqueue(workflow, { now: 10_000 })
        expect(yield* next).toBe(other)
        yield* queue.claim({
          workerId: "A",
          workflowNames: [workflow],
          limit: 1,
          leaseMs: 1_000,
          now: 10_000
        })
        yield* queue.wake({ executionId: other, now: 10_001 })
        yield* queue.release({
          executionId: other,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: undefined },
          now: 10_002
        })
        expect(yield* next).toBe(other)
        expect((yield* status(other)).status).toBe("pending")
        yield* queue.claim({
          workerId: "A",
          workflowNames: [workflow],
          limit: 1,
          leaseMs: 1_000,
          now: 10_003
        })
        yield* queue.release({
          executionId: other,
          workerId: "A",
          release: { _tag: "Suspended", wakeAt: undefined },
          now: 10_004
        })
        yield* queue.wake({ executionId: other, now: 10_005 })
        expect(yield* next).toBe(other)
        // Nothing else was announced: the claims, the flagging wake and the suspension
        // without a timer sent nothing (a marker enqueued last is the next one heard).
        const marker = yield* enqueue(workflow, { now: 10_006 })
        expect(yield* next).toBe(marker)
      }).pipe(Effect.scoped)
  )
}
