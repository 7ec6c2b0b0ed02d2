import { describe, expect, it } from "@effect/vitest"
import { SimClock } from "@tillflow/simulator"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"

describe("SimClock", () => {
  it.effect("follows Effect's Clock, so TestClock drives every sleeper", () =>
    Effect.gen(function* () {
      const clock = yield* SimClock.make({ startAt: 1_700_000_000_000 })
      expect(clock.unsafeNow()).toBe(1_700_000_000_000)
      const sleeper = yield* Effect.fork(clock.sleep(90_000))
      yield* TestClock.adjust(89_999)
      expect(sleeper.unsafePoll()).toBeNull()
      yield* TestClock.adjust(1)
      yield* Fiber.join(sleeper)
      expect(clock.unsafeNow()).toBe(1_700_000_090_000)
    })
  )

  it.effect("advance moves simulated time and wakes sleepers whose deadline passed, and only those", () =>
    Effect.gen(function* () {
      const clock = yield* SimClock.make()
      const start = clock.unsafeNow()
      const day = yield* Effect.fork(clock.sleepUntil(start + 86_400_000))
      const year = yield* Effect.fork(clock.sleepUntil(start + 365 * 86_400_000))
      yield* clock.advance(86_400_000)
      yield* Fiber.join(day)
      yield* Effect.yieldNow()
      expect(year.unsafePoll()).toBeNull()
      expect(yield* clock.offset).toBe(86_400_000)
      yield* clock.reset
      expect(clock.unsafeNow()).toBe(start)
      yield* Fiber.interrupt(year)
    })
  )
})
