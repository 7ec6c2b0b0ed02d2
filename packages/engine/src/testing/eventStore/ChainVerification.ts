/**
 * The hash chain: `verify` passes an intact store and reports the first broken link of a
 * stream whose rows were tampered with.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore } from "../../index.js"
import * as Effect from "effect/Effect"
import { type EventStoreTests, Tamper, freshStream, happened } from "./Streams.js"

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("hash chain", () => {
    it.effect(
      "verify passes an intact store, then reports the first broken link after a row is tampered with",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const tamper = yield* Tamper
          const stream = freshStream("chain")
          yield* store.append(stream, EventStore.NoStream, [happened(1), happened(2)])
          yield* store.append(stream, EventStore.exactVersion(2), [happened(3), happened(4)])
          const intact = yield* store.verify(stream)
          expect(intact.ok).toBe(true)
          expect(intact).toMatchObject({ streamsChecked: 1, eventsChecked: 4 })
          const all = yield* store.verify()
          expect(all.broken.filter((b) => b.streamId === stream)).toEqual([])
          expect(all.eventsChecked).toBeGreaterThanOrEqual(4)

          const before = yield* store.readStream(stream)
          yield* tamper.setData(stream, 3, { n: 3, note: "send 1000 parcels to another address" })
          yield* tamper.setData(stream, 4, { n: 4, note: "also edited" })
          const report = yield* store.verify(stream)
          expect(report.ok).toBe(false)
          expect(report.broken).toHaveLength(1)
          expect(report.broken[0]).toMatchObject({
            streamId: stream,
            version: 3,
            kind: "HashMismatch",
            found: before[2].hash
          })
          expect(report.broken[0].expected).not.toBe(before[2].hash)
          const whole = yield* store.verify()
          expect(whole.broken.find((b) => b.streamId === stream)).toMatchObject({ version: 3 })
        })
    )
  })
}
