/**
 * Subscriptions to the global log: catch-up then live, exactly once, resumable from a
 * checkpoint.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore } from "../../index.js"
import * as Arr from "effect/Array"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { type EventStoreTests, freshStream, endOfLog, readAllFrom, happened } from "./Streams.js"

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("subscriptions", () => {
    it.effect("delivers stored events (catch-up), then live appends, exactly once and in global order", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const from = yield* endOfLog(store)
        const stream = freshStream("sub")
        yield* store.append(
          stream,
          EventStore.NoStream,
          Arr.makeBy(5, (i) => happened(i + 1))
        )
        const caughtUp = yield* Deferred.make<void>()
        const fiber = yield* store.subscribe(from, { batchSize: 2 }).pipe(
          Stream.filter((event) => event.streamId === stream),
          Stream.tap((event) => (event.version === 5 ? Deferred.succeed(caughtUp, undefined) : Effect.void)),
          Stream.take(10),
          Stream.runCollect,
          Effect.fork
        )
        yield* Deferred.await(caughtUp).pipe(Effect.timeout("20 seconds"))
        // Live: appended only after the subscriber has delivered the stored events.
        for (let i = 6; i <= 10; i++)
          yield* store.append(stream, EventStore.exactVersion(i - 1), [happened(i)])
        const delivered = Chunk.toReadonlyArray(yield* Fiber.join(fiber).pipe(Effect.timeout("20 seconds")))
        expect(delivered.map((e) => e.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        expect(delivered.every((e) => e.streamId === stream)).toBe(true)
        const log = yield* readAllFrom(store, from, 1000, [stream], 10)
        expect(delivered.map((e) => e.eventId)).toEqual(log.events.map((e) => e.eventId))
      })
    )

    it.effect("resumes from a delivered event's checkpoint without repeating it", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const from = yield* endOfLog(store)
        const stream = freshStream("resume")
        yield* store.append(
          stream,
          EventStore.NoStream,
          Arr.makeBy(4, (i) => happened(i + 1))
        )
        const ours = (event: EventStore.RecordedEvent) => event.streamId === stream
        const firstTwo = yield* store
          .subscribe(from)
          .pipe(Stream.filter(ours), Stream.take(2), Stream.runCollect, Effect.timeout("20 seconds"))
        const resumeAt = Chunk.unsafeLast(firstTwo).checkpoint
        const rest = yield* store
          .subscribe(resumeAt)
          .pipe(Stream.filter(ours), Stream.take(2), Stream.runCollect, Effect.timeout("20 seconds"))
        expect(Chunk.toReadonlyArray(rest).map((e) => e.version)).toEqual([3, 4])
      })
    )
  })
}
