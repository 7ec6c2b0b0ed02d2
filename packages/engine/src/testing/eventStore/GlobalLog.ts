/**
 * The global log: paged through from a checkpoint in append order, without gaps or repeats.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore } from "../../index.js"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { type EventStoreTests, freshStream, endOfLog, happened } from "./Streams.js"

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("global log", () => {
    it.effect(
      "pages through the global log from a checkpoint, in append order, without gaps or repeats",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const from = yield* endOfLog(store)
          const streams = [freshStream("page"), freshStream("page"), freshStream("page")]
          const appended: Array<string> = []
          for (let i = 0; i < 9; i++) {
            const stream = streams[i % 3]
            const batch = Arr.makeBy(i % 2 === 0 ? 3 : 2, (j) => happened(i * 10 + j))
            yield* store.append(stream, EventStore.AnyVersion, batch)
            const written = yield* store.readStream(stream)
            appended.push(...written.slice(written.length - batch.length).map((e) => e.eventId))
          }
          expect(appended).toHaveLength(23)

          const pages: Array<EventStore.ReadAllPage> = []
          const ours: Array<EventStore.RecordedEvent> = []
          let checkpoint = from
          const deadline = Date.now() + 20_000
          while (true) {
            const page = yield* store.readAll(checkpoint, { maxCount: 10 })
            pages.push(page)
            ours.push(...page.events.filter((e) => streams.includes(e.streamId)))
            checkpoint = page.next
            if (page.caughtUp && (ours.length >= appended.length || Date.now() > deadline)) break
            if (page.caughtUp) yield* Effect.sleep("20 millis")
          }
          // Other tests' events may interleave (see readAllFrom); pages are still full
          // until the reader has caught up, and never longer than asked.
          for (const page of pages) {
            expect(page.events.length).toBeLessThanOrEqual(10)
            if (!page.caughtUp) expect(page.events.length).toBe(10)
          }
          expect(pages.at(-1)?.caughtUp).toBe(true)
          expect(ours.map((e) => e.eventId)).toEqual(appended)
          const read = pages.flatMap((p) => p.events)
          for (let i = 1; i < read.length; i++) {
            expect(EventStore.checkpointOrder(read[i - 1].checkpoint, read[i].checkpoint)).toBe(-1)
          }
          expect(pages[0].next).toEqual(pages[0].events.at(-1)?.checkpoint)
          const after = yield* store.readAll(checkpoint, { maxCount: 10 })
          expect(after).toEqual({ events: [], next: checkpoint, caughtUp: true })
        })
    )
  })
}
