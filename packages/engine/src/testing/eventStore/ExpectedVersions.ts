/**
 * Expected versions: NoStream, Exact and Any, and concurrent appenders of which exactly one
 * wins each version without burning a global position.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore } from "../../index.js"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type EventStoreTests, freshStream, endOfLog, readAllFrom, happened } from "./Streams.js"

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("expected versions", () => {
    it.effect("NoStream refuses a stream that exists, naming the actual version", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("nostream")
        yield* store.append(stream, EventStore.NoStream, [happened(1), happened(2)])
        const error = yield* Effect.flip(store.append(stream, EventStore.NoStream, [happened(3)]))
        expect(error).toEqual(
          new EventStore.ConcurrencyConflict({ streamId: stream, expected: EventStore.NoStream, actual: 2 })
        )
        expect(error.message).toContain("is at version 2, expected no stream")
        expect(yield* store.streamVersion(stream)).toBe(2)
      })
    )

    it.effect(
      "Exact refuses a stale or a missing stream and accepts the current version; Any always appends",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const stream = freshStream("exact")
          const missing = yield* Effect.flip(store.append(stream, EventStore.exactVersion(1), [happened(1)]))
          expect(missing).toMatchObject({ _tag: "ConcurrencyConflict", actual: 0 })
          yield* store.append(stream, EventStore.exactVersion(0), [happened(1)])
          yield* store.append(stream, EventStore.exactVersion(1), [happened(2)])
          const stale = yield* Effect.flip(store.append(stream, EventStore.exactVersion(1), [happened(3)]))
          expect(stale).toMatchObject({ _tag: "ConcurrencyConflict", actual: 2 })
          const any = yield* store.append(stream, EventStore.AnyVersion, [happened(3)])
          expect(any.nextVersion).toBe(3)
          expect((yield* store.readStream(stream)).map((e) => e.data)).toEqual([
            { n: 1, note: "event 1" },
            { n: 2, note: "event 2" },
            { n: 3, note: "event 3" }
          ])
        })
    )

    it.effect(
      "20 concurrent appenders per version: exactly one wins each round, every loser gets ConcurrencyConflict, and no position is burnt",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const stream = freshStream("race")
          const from = yield* endOfLog(store)
          const rounds = 5
          const writers = 20
          for (let version = 0; version < rounds; version++) {
            const expected = version === 0 ? EventStore.NoStream : EventStore.exactVersion(version)
            const outcomes = yield* Effect.forEach(
              Arr.range(1, writers),
              (writer) =>
                Effect.either(
                  store.append(stream, expected, [{ type: "Raced", data: { round: version + 1, writer } }])
                ),
              { concurrency: "unbounded" }
            )
            const [losers, winners] = Arr.partitionMap(outcomes, (outcome) => outcome)
            expect(winners).toHaveLength(1)
            expect(winners[0].nextVersion).toBe(version + 1)
            expect(losers).toHaveLength(writers - 1)
            for (const loser of losers) {
              expect(loser).toMatchObject({
                _tag: "ConcurrencyConflict",
                streamId: stream,
                actual: version + 1
              })
            }
          }
          const events = yield* store.readStream(stream)
          expect(events.map((e) => e.version)).toEqual([1, 2, 3, 4, 5])
          // The losers took no global position: the winners' positions are consecutive.
          const positions = events.map((e) => e.globalPosition)
          for (let i = 1; i < positions.length; i++) expect(positions[i]).toBe(positions[i - 1] + 1n)
          // And the global log holds exactly the winners, in order.
          const log = yield* readAllFrom(store, from, 1000, [stream], 5)
          expect(log.events.map((e) => e.eventId)).toEqual(events.map((e) => e.eventId))
          expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )

    it.effect("20 concurrent creators of one new stream with NoStream: exactly one creates it", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("create-race")
        const outcomes = yield* Effect.forEach(
          Arr.range(1, 20),
          (writer) =>
            Effect.either(store.append(stream, EventStore.NoStream, [{ type: "Created", data: { writer } }])),
          { concurrency: "unbounded" }
        )
        expect(outcomes.filter(Either.isRight)).toHaveLength(1)
        expect(outcomes.filter(Either.isLeft).map((o) => o.left._tag)).toEqual(
          Arr.replicate("ConcurrencyConflict", 19)
        )
        expect(yield* store.streamVersion(stream)).toBe(1)
      })
    )
  })
}
