/**
 * Start leased: an execution started in a process whose worker has a free slot runs there
 * at once, its queue row inserted already leased to that worker, without a claim; a start
 * that finds every slot taken is enqueued and claimed as before, and one whose
 * concurrency key is held waits for it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Activity, Workflow } from "@effect/workflow"
import { DurableEngine, EngineWorker, ExecutionQueue, MemoryEventStore } from "@tillflow/engine"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const Greet = Workflow.make({
  name: "StartLeasedGreet",
  payload: { id: Schema.String, terminal: Schema.String },
  success: Schema.String,
  idempotencyKey: (payload) => payload.id
}).annotate(DurableEngine.ConcurrencyKey, (payload) => (payload as { terminal: string }).terminal)

/** The memory queue, recording which executions a claim handed out and which started leased. */
const recordingQueue = Effect.gen(function* () {
  const queue = yield* ExecutionQueue.makeMemory
  const claimed: Array<string> = []
  const leased: Array<string> = []
  const record = (claims: ReadonlyArray<ExecutionQueue.Claim>) => {
    for (const claim of claims) claimed.push(claim.executionId)
  }
  const { claimWithNextDue, enqueueLeased } = queue
  if (claimWithNextDue === undefined || enqueueLeased === undefined) throw new Error("memory queue changed")
  const recorded: ExecutionQueue.ExecutionQueue["Type"] = {
    ...queue,
    claim: (options) => Effect.tap(queue.claim(options), record),
    claimWithNextDue: (options) => Effect.tap(claimWithNextDue(options), (result) => record(result.claims)),
    enqueueLeased: (input) =>
      Effect.tap(enqueueLeased(input), (answer) => {
        if (answer.claim !== undefined) leased.push(answer.claim.executionId)
      })
  }
  return { claimed, leased, queue: recorded }
})

const node = (
  queue: ExecutionQueue.ExecutionQueue["Type"],
  gate: Deferred.Deferred<void>,
  concurrency: number
) =>
  Layer.merge(
    Greet.toLayer((payload) =>
      Effect.gen(function* () {
        const greeting = yield* Activity.make({
          name: "greet",
          success: Schema.String,
          execute: Effect.as(Deferred.await(gate), `hello ${payload.id}`)
        })
        return greeting
      })
    ),
    EngineWorker.layer({ concurrency, pollInterval: "50 millis", shutdownTimeout: "1 second" })
  ).pipe(
    Layer.provideMerge(DurableEngine.layer({ pollInterval: "50 millis" })),
    Layer.provideMerge(
      Layer.merge(MemoryEventStore.layer(), Layer.succeed(ExecutionQueue.ExecutionQueue, queue))
    )
  )

describe("start leased", () => {
  it.live("a start in a process with a free worker slot runs there without a claim", () =>
    Effect.gen(function* () {
      const { claimed, leased, queue } = yield* recordingQueue
      const gate = yield* Deferred.make<void>()
      yield* Deferred.succeed(gate, undefined)
      const result = yield* Greet.execute({ id: "a", terminal: "t1" }).pipe(
        Effect.provide(node(queue, gate, 4)),
        Effect.scoped
      )
      expect(result).toBe("hello a")
      const id = yield* Greet.executionId({ id: "a", terminal: "t1" })
      expect(leased).toEqual([id])
      expect(claimed).toEqual([])
      const info = Option.getOrThrow(yield* queue.get(id))
      expect(info).toMatchObject({ status: "succeeded", claims: 1 })
    })
  )

  it.live("with every slot taken a start is claimed as before; one whose key is held waits for it", () =>
    Effect.gen(function* () {
      const { claimed, leased, queue } = yield* recordingQueue
      const gate = yield* Deferred.make<void>()
      const results = yield* Effect.gen(function* () {
        // One slot: the first start takes it; the second (another terminal) finds none.
        const first = yield* Effect.fork(Greet.execute({ id: "b1", terminal: "t1" }))
        const firstId = yield* Greet.executionId({ id: "b1", terminal: "t1" })
        while (!leased.includes(firstId)) yield* Effect.sleep("5 millis")
        const second = yield* Effect.fork(Greet.execute({ id: "b2", terminal: "t2" }))
        yield* Effect.sleep("50 millis")
        yield* Deferred.succeed(gate, undefined)
        return [yield* first.await, yield* second.await]
      }).pipe(Effect.provide(node(queue, gate, 1)), Effect.scoped)
      expect(results.map((exit) => exit._tag)).toEqual(["Success", "Success"])
      const firstId = yield* Greet.executionId({ id: "b1", terminal: "t1" })
      const secondId = yield* Greet.executionId({ id: "b2", terminal: "t2" })
      expect(leased).toEqual([firstId])
      expect(claimed).toEqual([secondId])
    })
  )

  it.live("a start whose concurrency key is held waits for it and is claimed after the holder finishes", () =>
    Effect.gen(function* () {
      const { claimed, leased, queue } = yield* recordingQueue
      const gate = yield* Deferred.make<void>()
      const order = yield* Effect.gen(function* () {
        const first = yield* Effect.fork(Greet.execute({ id: "c1", terminal: "t9" }))
        const firstId = yield* Greet.executionId({ id: "c1", terminal: "t9" })
        while (!leased.includes(firstId)) yield* Effect.sleep("5 millis")
        const second = yield* Effect.fork(Greet.execute({ id: "c2", terminal: "t9" }))
        const secondId = yield* Greet.executionId({ id: "c2", terminal: "t9" })
        yield* Effect.sleep("50 millis")
        const waiting = Option.getOrThrow(yield* queue.get(secondId)).status
        yield* Deferred.succeed(gate, undefined)
        yield* first.await
        yield* second.await
        return waiting
      }).pipe(Effect.provide(node(queue, gate, 4)), Effect.scoped)
      expect(order).toBe("pending")
      const firstId = yield* Greet.executionId({ id: "c1", terminal: "t9" })
      const secondId = yield* Greet.executionId({ id: "c2", terminal: "t9" })
      expect(leased).toEqual([firstId])
      expect(claimed).toEqual([secondId])
    })
  )
})
