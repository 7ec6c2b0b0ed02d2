/**
 * `DurableEngine.awaitChange`: a wait registered before reading an execution's state is
 * woken when the execution ends in this process, with no poll and no time passing (what
 * the intake's `waitSeconds` answers by, instead of re-reading the status every 150 ms).
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableClock, Workflow } from "@effect/workflow"
import { DurableEngine, EngineWorker, ExecutionQueue, MemoryEventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"

const Short = Workflow.make({
  name: "AwaitChangeShort",
  payload: { id: Schema.String },
  idempotencyKey: (payload) => payload.id
})
const ShortLive = Short.toLayer(() => DurableClock.sleep({ name: "wait", duration: "5 minutes" }))

const node = Layer.merge(
  ShortLive,
  // An hour's poll: only the engine's own signals move the worker.
  EngineWorker.layer({ pollInterval: "1 hour", shutdownTimeout: "1 second" })
).pipe(
  Layer.provideMerge(DurableEngine.layer({ pollInterval: "1 hour" })),
  Layer.provideMerge(Layer.merge(MemoryEventStore.layer(), ExecutionQueue.layerMemory))
)

/** Lets the worker's fibers run while the test clock stands still. */
const settle = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5))).pipe(
  Effect.repeatN(20)
)

describe("DurableEngine.awaitChange", () => {
  it.effect("a wait registered before the end of a run in this process is woken by it, at once", () =>
    Effect.gen(function* () {
      const engine = yield* DurableEngine.DurableEngine
      const executionId = yield* Short.execute({ id: "short" }, { discard: true })
      yield* settle
      const status = () => Effect.map(engine.get(executionId), (info) => Option.getOrThrow(info).status)
      expect(yield* status()).toBe("suspended")
      const waiter = yield* Effect.fork(Effect.scoped(Effect.flatten(engine.awaitChange(executionId))))
      yield* settle
      expect(Option.isNone(yield* Fiber.poll(waiter))).toBe(true)
      // The timer fires and the run ends: the wait ends with it, with no poll.
      yield* TestClock.adjust("5 minutes")
      yield* Fiber.join(waiter)
      expect(yield* status()).toBe("succeeded")
    }).pipe(Effect.provide(node), Effect.scoped)
  )
})
