/**
 * Two instances of the store over the same data, each with caches of its own: heads one
 * of them does not know, or knows stale.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore } from "../../index.js"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { type EventStoreTests, OtherInstance, freshStream, happened } from "./Streams.js"

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("two instances: heads one instance does not know or knows stale", () => {
    it.scoped("Any on an existing stream this instance never wrote: appended once, at the next version", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const other = yield* (yield* OtherInstance).make
        const stream = freshStream("any-unknown")
        yield* store.append(stream, EventStore.NoStream, [happened(1), happened(2), happened(3)])
        const appended = yield* other.append(stream, EventStore.AnyVersion, [happened(4), happened(5)])
        expect(appended.nextVersion).toBe(5)
        expect(appended.positions).toHaveLength(2)
        const events = yield* store.readStream(stream)
        expect(events.map((e) => e.version)).toEqual([1, 2, 3, 4, 5])
        expect(events.map((e) => (e.data as { readonly n: number }).n)).toEqual([1, 2, 3, 4, 5])
        expect(events.slice(3).map((e) => e.globalPosition)).toEqual(appended.positions)
        expect((yield* store.verify(stream)).ok).toBe(true)
      })
    )

    it.scoped(
      "NoStream and Exact(0) on a stream this instance never saw: refused, naming the actual version, nothing written",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const other = yield* (yield* OtherInstance).make
          const stream = freshStream("nostream-unknown")
          yield* store.append(stream, EventStore.NoStream, [happened(1), happened(2)])
          for (const expected of [EventStore.NoStream, EventStore.exactVersion(0)]) {
            const error = yield* Effect.flip(other.append(stream, expected, [happened(3)]))
            expect(error).toEqual(
              new EventStore.ConcurrencyConflict({ streamId: stream, expected, actual: 2 })
            )
          }
          expect((yield* store.readStream(stream)).map((e) => e.version)).toEqual([1, 2])
          expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )

    it.scoped(
      "a head one instance wrote and another moved since: Any lands on the new head, Exact at the stale version is refused with the actual one",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const other = yield* (yield* OtherInstance).make
          const stream = freshStream("stale-head")
          yield* store.append(stream, EventStore.NoStream, [happened(1)])
          yield* other.append(stream, EventStore.exactVersion(1), [happened(2)])
          yield* other.append(stream, EventStore.AnyVersion, [happened(3)])
          // `store` last wrote version 1: its guess is stale.
          expect((yield* store.append(stream, EventStore.AnyVersion, [happened(4)])).nextVersion).toBe(4)
          yield* other.append(stream, EventStore.AnyVersion, [happened(5)])
          const stale = yield* Effect.flip(store.append(stream, EventStore.exactVersion(4), [happened(6)]))
          expect(stale).toEqual(
            new EventStore.ConcurrencyConflict({
              streamId: stream,
              expected: EventStore.exactVersion(4),
              actual: 5
            })
          )
          expect((yield* store.append(stream, EventStore.exactVersion(5), [happened(6)])).nextVersion).toBe(6)
          expect((yield* other.append(stream, EventStore.AnyVersion, [happened(7)])).nextVersion).toBe(7)
          const events = yield* store.readStream(stream)
          expect(events.map((e) => (e.data as { readonly n: number }).n)).toEqual([1, 2, 3, 4, 5, 6, 7])
          expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )

    it.scoped(
      "concurrent Any appends from two instances all land once, the chain verifies, and no position is burnt",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const other = yield* (yield* OtherInstance).make
          const stream = freshStream("any-race")
          const perInstance = 15
          const appends = [store, other].flatMap((instance, i) =>
            Arr.range(1, perInstance).map((n) =>
              instance.append(stream, EventStore.AnyVersion, [
                { type: "Raced", data: { instance: i, n } },
                { type: "Raced", data: { instance: i, n, second: true } }
              ])
            )
          )
          const results = yield* Effect.all(appends, { concurrency: "unbounded" })
          const total = 2 * perInstance * 2
          expect(results.map((r) => r.nextVersion).sort((a, b) => a - b)).toEqual(
            Arr.range(1, 2 * perInstance).map((n) => 2 * n)
          )
          const events = yield* store.readStream(stream)
          expect(events.map((e) => e.version)).toEqual(Arr.range(1, total))
          // Each batch once, its two events adjacent.
          for (let i = 0; i < total; i += 2) {
            const first = events[i].data as { readonly instance: number; readonly n: number }
            expect(events[i + 1].data).toEqual({ ...first, second: true })
          }
          expect(new Set(events.map((e) => e.eventId)).size).toBe(total)
          // Wrong guesses took no global position: the events' positions are consecutive.
          const positions = events.map((e) => e.globalPosition).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
          for (let i = 1; i < positions.length; i++) expect(positions[i]).toBe(positions[i - 1] + 1n)
          expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )
  })
}
