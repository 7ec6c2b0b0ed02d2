/**
 * How a worker finds its next work: a queue that answers the next due time with its claim
 * (`claimWithNextDue`) is never asked `nextDueAt`, and the worker still wakes for a timer
 * by that answer alone (its poll being an hour); a queue without it is asked as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableClock, Workflow } from "@effect/workflow"
import { DurableEngine, EngineWorker, ExecutionQueue, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"

const Later = Workflow.make({
  name: "EngineWorkerLater",
  payload: { id: Schema.String },
  idempotencyKey: (payload) => payload.id
})
const LaterLive = Later.toLayer(() => DurableClock.sleep({ name: "wait", duration: "5 minutes" }))

/** The memory queue, counting the calls a worker makes to find work. */
const countingQueue = (withNextDue: boolean) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.makeMemory
    const calls = { claim: 0, claimWithNextDue: 0, nextDueAt: 0 }
    const { claimWithNextDue, ...rest } = queue
    const counted: ExecutionQueue.ExecutionQueue["Type"] = {
      ...rest,
      claim: (options) =>
        Effect.zipRight(
          Effect.sync(() => calls.claim++),
          queue.claim(options)
        ),
      nextDueAt: (names) =>
        Effect.zipRight(
          Effect.sync(() => calls.nextDueAt++),
          queue.nextDueAt(names)
        )
    }
    if (withNextDue && claimWithNextDue !== undefined) {
      return {
        calls,
        queue: {
          ...counted,
          claimWithNextDue: (options: Parameters<typeof claimWithNextDue>[0]) =>
            Effect.zipRight(
              Effect.sync(() => calls.claimWithNextDue++),
              claimWithNextDue(options)
            )
        }
      }
    }
    return { calls, queue: counted }
  })

/** Lets the worker's fibers run while the test clock stands still. */
const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5))).pipe(
  Effect.repeatN(20)
)

const timerWakes = (withNextDue: boolean) =>
  Effect.gen(function* () {
    const { calls, queue } = yield* countingQueue(withNextDue)
    const node = Layer.merge(
      LaterLive,
      // An hour's poll: only the next due time can wake the worker for the timer.
      EngineWorker.layer({ pollInterval: "1 hour", shutdownTimeout: "1 second" })
    ).pipe(
      Layer.provideMerge(DurableEngine.layer({ pollInterval: "1 hour" })),
      Layer.provideMerge(
        Layer.merge(MemoryEventStore.layer(), Layer.succeed(ExecutionQueue.ExecutionQueue, queue))
      )
    )
    return yield* Effect.gen(function* () {
      const executionId = yield* Later.execute({ id: "later" }, { discard: true })
      yield* settle
      const info = (id: string) => Effect.map(queue.get(id), Option.getOrThrow)
      expect((yield* info(executionId)).status).toBe("suspended")
      yield* TestClock.adjust("5 minutes")
      yield* settle
      expect((yield* info(executionId)).status).toBe("succeeded")
      return calls
    }).pipe(Effect.provide(node), Effect.scoped)
  })

describe("EngineWorker", () => {
  it.effect(
    "a queue answering the next due time with its claim is never asked nextDueAt; the timer still wakes the worker",
    () =>
      Effect.gen(function* () {
        const calls = yield* timerWakes(true)
        expect(calls.nextDueAt).toBe(0)
        expect(calls.claim).toBe(0)
        expect(calls.claimWithNextDue).toBeGreaterThan(0)
      })
  )

  it.effect("a queue without claimWithNextDue is asked claim and nextDueAt, as before", () =>
    Effect.gen(function* () {
      const calls = yield* timerWakes(false)
      expect(calls.nextDueAt).toBeGreaterThan(0)
      expect(calls.claim).toBeGreaterThan(0)
      expect(calls.claimWithNextDue).toBe(0)
    })
  )
})
