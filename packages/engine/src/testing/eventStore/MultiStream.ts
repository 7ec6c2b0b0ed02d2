/**
 * The multi-stream append (`appendStreams`): every stream's expected version checked in one
 * atomic write, all streams written or none, and the refusals that name what was wrong.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore } from "../../index.js"
import * as Effect from "effect/Effect"
import {
  type EventStoreTests,
  OtherInstance,
  endOfLog,
  freshStream,
  happened,
  readAllFrom
} from "./Streams.js"

const numbers = (events: ReadonlyArray<EventStore.RecordedEvent>) =>
  events.map((e) => (e.data as { readonly n: number }).n)

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("multi-stream append: all or none", () => {
    it.scoped("appends to every stream at its expected version, in one transaction of the global log", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const from = yield* endOfLog(store)
        const existing = freshStream("multi-existing")
        const created = freshStream("multi-created")
        const any = freshStream("multi-any")
        yield* store.append(existing, EventStore.NoStream, [happened(1), happened(2)])
        yield* store.append(any, EventStore.NoStream, [happened(1)])
        const results = yield* store.appendStreams([
          {
            streamId: existing,
            expectedVersion: EventStore.exactVersion(2),
            events: [happened(3), happened(4)]
          },
          { streamId: created, expectedVersion: EventStore.NoStream, events: [happened(1)] },
          { streamId: any, expectedVersion: EventStore.AnyVersion, events: [happened(2)] }
        ])
        expect(results.map((r) => r.nextVersion)).toEqual([4, 1, 2])
        expect(results.map((r) => r.positions.length)).toEqual([2, 1, 1])
        expect(numbers(yield* store.readStream(existing))).toEqual([1, 2, 3, 4])
        expect(numbers(yield* store.readStream(created))).toEqual([1])
        expect(numbers(yield* store.readStream(any))).toEqual([1, 2])
        const { events } = yield* readAllFrom(store, from, 1000, [existing, created, any], 6)
        const written = events.filter((e) => results.some((r) => r.positions.includes(e.globalPosition)))
        expect(written).toHaveLength(4)
        // One write: readers see all of it or none of it.
        expect(new Set(written.map((e) => e.transactionId)).size).toBe(1)
        for (const stream of [existing, created, any]) expect((yield* store.verify(stream)).ok).toBe(true)
      })
    )

    it.scoped(
      "one stream not at its expected version: ConcurrencyConflict naming it, nothing written to any stream",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const ok = freshStream("multi-ok")
          const stale = freshStream("multi-stale")
          const fresh = freshStream("multi-fresh")
          yield* store.append(ok, EventStore.NoStream, [happened(1)])
          yield* store.append(stale, EventStore.NoStream, [happened(1), happened(2)])
          const error = yield* Effect.flip(
            store.appendStreams([
              { streamId: ok, expectedVersion: EventStore.exactVersion(1), events: [happened(2)] },
              { streamId: fresh, expectedVersion: EventStore.NoStream, events: [happened(1)] },
              { streamId: stale, expectedVersion: EventStore.exactVersion(1), events: [happened(3)] }
            ])
          )
          expect(error).toEqual(
            new EventStore.ConcurrencyConflict({
              streamId: stale,
              expected: EventStore.exactVersion(1),
              actual: 2
            })
          )
          expect(yield* store.streamVersion(ok)).toBe(1)
          expect(yield* store.streamVersion(fresh)).toBe(0)
          expect(yield* store.streamVersion(stale)).toBe(2)
          // The streams are usable at the versions they had: the refused write left no trace.
          const retried = yield* store.appendStreams([
            { streamId: ok, expectedVersion: EventStore.exactVersion(1), events: [happened(2)] },
            { streamId: fresh, expectedVersion: EventStore.NoStream, events: [happened(1)] },
            { streamId: stale, expectedVersion: EventStore.exactVersion(2), events: [happened(3)] }
          ])
          expect(retried.map((r) => r.nextVersion)).toEqual([2, 1, 3])
          for (const stream of [ok, fresh, stale]) expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )

    it.scoped(
      "an event id already stored refuses the whole write with DuplicateEventId, nothing written to any stream",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const first = freshStream("multi-dup")
          const second = freshStream("multi-dup")
          const eventId = globalThis.crypto.randomUUID()
          yield* store.append(freshStream("multi-dup-owner"), EventStore.NoStream, [happened(1, { eventId })])
          const error = yield* Effect.flip(
            store.appendStreams([
              { streamId: first, expectedVersion: EventStore.NoStream, events: [happened(1)] },
              { streamId: second, expectedVersion: EventStore.NoStream, events: [happened(1, { eventId })] }
            ])
          )
          expect(error._tag).toBe("DuplicateEventId")
          expect(yield* store.streamVersion(first)).toBe(0)
          expect(yield* store.streamVersion(second)).toBe(0)
        })
    )

    it.effect(
      "refuses before writing: no stream, a stream named twice, a stream without events, one event id in two streams",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const a = freshStream("multi-refused")
          const b = freshStream("multi-refused")
          const none = yield* Effect.flip(store.appendStreams([]))
          expect(none._tag).toBe("InvalidEvent")
          expect(none.message).toContain("at least one stream")
          const twice = yield* Effect.flip(
            store.appendStreams([
              { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(1)] },
              { streamId: a, expectedVersion: EventStore.AnyVersion, events: [happened(2)] }
            ])
          )
          expect(twice.message).toContain("named twice")
          const empty = yield* Effect.flip(
            store.appendStreams([
              { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(1)] },
              { streamId: b, expectedVersion: EventStore.NoStream, events: [] }
            ])
          )
          expect(empty.message).toContain("at least one")
          const eventId = globalThis.crypto.randomUUID()
          const shared = yield* Effect.flip(
            store.appendStreams([
              { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(1, { eventId })] },
              { streamId: b, expectedVersion: EventStore.NoStream, events: [happened(1, { eventId })] }
            ])
          )
          expect(shared).toEqual(new EventStore.DuplicateEventId({ streamId: b, eventId }))
          expect(yield* store.streamVersion(a)).toBe(0)
          expect(yield* store.streamVersion(b)).toBe(0)
        })
    )

    it.scoped(
      "heads another instance moved: Any lands on the new heads, a stale Exact refuses all; concurrent writers never half-write",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const other = yield* (yield* OtherInstance).make
          const a = freshStream("multi-race")
          const b = freshStream("multi-race")
          yield* store.appendStreams([
            { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(1)] },
            { streamId: b, expectedVersion: EventStore.NoStream, events: [happened(1)] }
          ])
          yield* other.append(a, EventStore.AnyVersion, [happened(2)])
          // `store` cached a at 1: its guess is stale, the write retries on the actual head.
          const moved = yield* store.appendStreams([
            { streamId: a, expectedVersion: EventStore.AnyVersion, events: [happened(3)] },
            { streamId: b, expectedVersion: EventStore.exactVersion(1), events: [happened(2)] }
          ])
          expect(moved.map((r) => r.nextVersion)).toEqual([3, 2])
          yield* other.append(b, EventStore.AnyVersion, [happened(3)])
          const stale = yield* Effect.flip(
            store.appendStreams([
              { streamId: a, expectedVersion: EventStore.AnyVersion, events: [happened(4)] },
              { streamId: b, expectedVersion: EventStore.exactVersion(2), events: [happened(4)] }
            ])
          )
          expect(stale).toEqual(
            new EventStore.ConcurrencyConflict({
              streamId: b,
              expected: EventStore.exactVersion(2),
              actual: 3
            })
          )
          expect(yield* store.streamVersion(a)).toBe(3)
          // Writers racing on both streams with Exact at the same versions: one wins both.
          const outcomes = yield* Effect.all(
            [store, other, store, other].map((writer) =>
              Effect.either(
                writer.appendStreams([
                  { streamId: a, expectedVersion: EventStore.exactVersion(3), events: [happened(4)] },
                  { streamId: b, expectedVersion: EventStore.exactVersion(3), events: [happened(4)] }
                ])
              )
            ),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((o) => o._tag === "Right")).toHaveLength(1)
          expect(yield* store.streamVersion(a)).toBe(4)
          expect(yield* store.streamVersion(b)).toBe(4)
          for (const stream of [a, b]) expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )
  })
}
