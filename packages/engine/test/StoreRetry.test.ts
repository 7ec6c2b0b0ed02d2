import { describe, expect, it } from "@effect/vitest"
import { StoreRetry } from "@tillflow/engine"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"

class EventStoreError extends Data.TaggedError("EventStoreError")<{}> {}
class ConcurrencyConflict extends Data.TaggedError("ConcurrencyConflict")<{}> {}

/** An operation that fails `failures` times with `error`, recording when each try ran. */
const flaky = (failures: number, error: { readonly _tag: string }) =>
  Effect.gen(function* () {
    const tries = yield* Ref.make<ReadonlyArray<number>>([])
    const operation = Effect.gen(function* () {
      const at = yield* TestClock.currentTimeMillis
      const done = yield* Ref.modify(tries, (ts) => [ts.length, [...ts, at]])
      return done < failures ? yield* Effect.fail(error) : "ok"
    })
    return { tries, operation }
  })

describe("StoreRetry", () => {
  it.effect("quick: a transient failure is tried again after 50 ms, then doubling, 6 retries at most", () =>
    Effect.gen(function* () {
      const { tries, operation } = yield* flaky(100, new EventStoreError())
      const fiber = yield* Effect.fork(StoreRetry.retry(operation, StoreRetry.quick))
      yield* TestClock.adjust("10 seconds")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* Ref.get(tries)).toEqual([0, 50, 150, 350, 750, 1550, 3150])
    })
  )

  it.effect("patient: 100 ms doubling, never more than 5 s apart, 12 retries at most", () =>
    Effect.gen(function* () {
      const { tries, operation } = yield* flaky(100, new EventStoreError())
      const fiber = yield* Effect.fork(StoreRetry.retry(operation, StoreRetry.patient))
      yield* TestClock.adjust("2 minutes")
      yield* Fiber.await(fiber)
      const at = yield* Ref.get(tries)
      expect(at).toHaveLength(13)
      const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0))
      expect(gaps.slice(0, 5)).toEqual([100, 200, 400, 800, 1600])
      expect(Math.max(...gaps)).toBe(5000)
    })
  )

  it.effect("a success after failures ends the retries; what is not transient is not retried", () =>
    Effect.gen(function* () {
      const recovering = yield* flaky(2, new EventStoreError())
      const fiber = yield* Effect.fork(StoreRetry.retry(recovering.operation, StoreRetry.quick))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toBe("ok")
      expect(yield* Ref.get(recovering.tries)).toEqual([0, 50, 150])

      const conflicting = yield* flaky(1, new ConcurrencyConflict())
      const refused = yield* Effect.either(StoreRetry.retry(conflicting.operation, StoreRetry.quick))
      expect(refused._tag).toBe("Left")
      expect(yield* Ref.get(conflicting.tries)).toHaveLength(1)
    })
  )
})
