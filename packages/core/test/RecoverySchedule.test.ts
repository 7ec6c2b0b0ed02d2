import { describe, expect, it } from "@effect/vitest"
import { RecoverySchedule } from "@tillflow/core"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

const seconds = (d: Duration.Duration) => Duration.toSeconds(d)

describe("RecoverySchedule", () => {
  it("waits 5 s for the first 100 s, then 8, 16, 32 s", () => {
    const delays = Array.from({ length: 24 }, (_, n) => seconds(RecoverySchedule.delay(n)))
    expect(delays.slice(0, 20)).toEqual(Array.from({ length: 20 }, () => 5))
    expect(delays.slice(20)).toEqual([8, 16, 32, 64])
    expect(seconds(RecoverySchedule.elapsedBefore(20))).toBe(100)
  })

  it("caps a single wait when asked", () => {
    expect(seconds(RecoverySchedule.delay(25, { cap: "1 minute" }))).toBe(60)
    expect(seconds(RecoverySchedule.delay(3, { cap: "1 minute" }))).toBe(5)
  })

  it.effect("the Schedule form waits on the same rhythm", () =>
    Effect.gen(function* () {
      const waits = yield* Schedule.run(
        Schedule.delays(RecoverySchedule.schedule()),
        0,
        Array.from({ length: 23 })
      )
      const asSeconds = Chunk.toReadonlyArray(waits).map(seconds)
      expect(asSeconds.slice(0, 20)).toEqual(Array.from({ length: 20 }, () => 5))
      expect(asSeconds.slice(20)).toEqual([8, 16, 32])
    })
  )
})
