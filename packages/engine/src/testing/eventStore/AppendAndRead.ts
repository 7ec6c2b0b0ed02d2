/**
 * Appending and reading a stream: versions and global positions in order, batches of every
 * size, awkward values that must round-trip exactly.
 */
import { describe, expect } from "@effect/vitest"
import { EventStore, HashChain } from "../../index.js"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type EventStoreTests, freshStream, endOfLog, readAllFrom, happened } from "./Streams.js"

/** Registers this concern's tests on the event store contract's shared layer. */
export const suite = (it: EventStoreTests): void => {
  describe("append and read", () => {
    // First in the suite, so on a fresh store the positions cross 9 → 10 as well.
    it.effect("orders versions and global positions as numbers, not as text (9 before 10)", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("numeric")
        const from = yield* endOfLog(store)
        for (let i = 0; i < 12; i++)
          yield* store.append(stream, EventStore.exactVersion(i), [happened(i + 1)])
        yield* store.append(
          stream,
          EventStore.exactVersion(12),
          Arr.makeBy(100, (i) => happened(i + 13))
        )
        const events = yield* store.readStream(stream)
        expect(events.map((e) => e.version)).toEqual(Arr.range(1, 112))
        const log = yield* readAllFrom(store, from, 7, [stream], 112)
        expect(log.events.map((e) => e.version)).toEqual(Arr.range(1, 112))
        for (let i = 1; i < log.events.length; i++) {
          expect(log.events[i].globalPosition > log.events[i - 1].globalPosition).toBe(true)
        }
        expect(
          (yield* store.readStream(stream, { fromVersion: 9, maxCount: 3 })).map((e) => e.version)
        ).toEqual([9, 10, 11])
        expect((yield* store.verify(stream)).ok).toBe(true)
      })
    )

    it.effect("appends a batch and reads it back in version order with ids, positions and hashes", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("read")
        const eventId = "3f1c1b4e-6a55-4d5e-9d0a-6f3a8e2b7c10"
        const result = yield* store.append(stream, EventStore.NoStream, [
          happened(1, { eventId, metadata: { correlationId: "c-1" } }),
          { type: "Other", schemaVersion: 3, data: [1, "two", { three: null }] },
          happened(3)
        ])
        expect(result.nextVersion).toBe(3)
        expect(result.positions).toHaveLength(3)
        expect(result.positions[0] < result.positions[1] && result.positions[1] < result.positions[2]).toBe(
          true
        )

        const events = yield* store.readStream(stream)
        expect(events.map((e) => e.version)).toEqual([1, 2, 3])
        expect(events.map((e) => e.globalPosition)).toEqual(result.positions)
        expect(events[0]).toMatchObject({
          streamId: stream,
          eventId,
          type: "Happened",
          schemaVersion: 1,
          data: { n: 1, note: "event 1" },
          metadata: { correlationId: "c-1" }
        })
        expect(events[1]).toMatchObject({
          type: "Other",
          schemaVersion: 3,
          data: [1, "two", { three: null }]
        })
        expect(events[2].metadata).toEqual({})
        expect(new Set(events.map((e) => e.transactionId)).size).toBe(1)
        expect(new Set(events.map((e) => e.hash)).size).toBe(3)
        for (const e of events) expect(e.hash).toMatch(/^[0-9a-f]{64}$/)
        expect(events[1].eventId).toMatch(/^[0-9a-f-]{36}$/)
      })
    )

    it.effect("reads a stream from a version, at most maxCount events", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("slice")
        yield* store.append(
          stream,
          EventStore.NoStream,
          Arr.makeBy(6, (i) => happened(i + 1))
        )
        const slice = yield* store.readStream(stream, { fromVersion: 3, maxCount: 2 })
        expect(slice.map((e) => e.version)).toEqual([3, 4])
        expect((yield* store.readStream(stream, { fromVersion: 6 })).map((e) => e.version)).toEqual([6])
        expect(yield* store.readStream(stream, { fromVersion: 7 })).toEqual([])
        expect(yield* store.readStream(freshStream("none"))).toEqual([])
      })
    )

    it.effect("reports a stream's version: 0 when it has no event, then its last version", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("version")
        expect(yield* store.streamVersion(stream)).toBe(0)
        yield* store.append(stream, EventStore.AnyVersion, [happened(1), happened(2)])
        expect(yield* store.streamVersion(stream)).toBe(2)
      })
    )

    it.effect("an empty append only checks the expected version", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("empty")
        expect(yield* store.append(stream, EventStore.NoStream, [])).toEqual({
          nextVersion: 0,
          positions: []
        })
        yield* store.append(stream, EventStore.NoStream, [happened(1)])
        expect(yield* store.append(stream, EventStore.exactVersion(1), [])).toEqual({
          nextVersion: 1,
          positions: []
        })
        const conflict = yield* Effect.flip(store.append(stream, EventStore.exactVersion(0), []))
        expect(conflict._tag).toBe("ConcurrencyConflict")
      })
    )

    it.effect(
      "a batch of awkward values (unicode, escapes, numbers, deep nesting, a 1 MB string) round-trips exactly and verifies",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const stream = freshStream("awkward-ünïcødé-😀")
          const events: ReadonlyArray<EventStore.NewEvent> = [
            {
              type: 'Quoted "type" \\ with ünïcode 😀',
              data: {
                emoji: "😀 👩‍👩‍👧 🇫🇷",
                accents: "é ü ñ ø Å",
                cjk: "支払い 결제",
                rtl: "دفع",
                escapes: 'quote " backslash \\ slash / newline \n tab \t cr \r',
                controls: "\u0001\u0008\u000b\u000c\u001f\u007f",
                separators: "\u2028\u2029",
                'key with "quotes" and \\': "v",
                "ünïcode kéy 😀": "v",
                "": "empty key",
                numbers: [
                  0,
                  1,
                  -1,
                  0.1,
                  1e21,
                  1.5e-7,
                  Number.MAX_SAFE_INTEGER,
                  -Number.MAX_SAFE_INTEGER,
                  123.456
                ],
                nested: { z: [[[]], {}, [{ b: null, a: false }]], a: { deeper: { deepest: ["x", true] } } },
                Zupper: 1,
                lower: 2
              },
              metadata: { "correlation-id": "c-😀", nested: { list: ["a", "b"] } }
            },
            { type: "Plain", schemaVersion: 7, data: "a bare string 😀" },
            { type: "Plain", data: 42 },
            { type: "Plain", data: null },
            { type: "Plain", data: [1, "two", { three: [3] }] },
            {
              type: "Big",
              data: { text: "é😀".repeat(1024 * 175), list: Arr.makeBy(2000, (i) => ({ i })) }
            }
          ]
          const result = yield* store.append(stream, EventStore.NoStream, events)
          expect(result.nextVersion).toBe(events.length)
          const stored = yield* store.readStream(stream)
          expect(stored.map((e) => e.streamId)).toEqual(events.map(() => stream))
          expect(stored.map((e) => e.type)).toEqual(events.map((e) => e.type))
          expect(stored.map((e) => e.schemaVersion)).toEqual(events.map((e) => e.schemaVersion ?? 1))
          expect(stored.map((e) => e.data)).toEqual(events.map((e) => e.data))
          expect(stored.map((e) => e.metadata)).toEqual(events.map((e) => e.metadata ?? {}))
          expect(stored.map((e) => e.globalPosition)).toEqual(result.positions)
          expect((yield* store.verify(stream)).ok).toBe(true)
          // Verified again with core's own (Web Crypto) hashing, from what was read back.
          const head = { version: stored.length, lastHash: stored[stored.length - 1].hash }
          expect(yield* HashChain.verifyStream(stream, stored, Option.some(head))).toEqual(Option.none())
        })
    )

    it.effect("appends batches of 1 and of 1000 events: versions, positions and the chain line up", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("sizes")
        const one = yield* store.append(stream, EventStore.NoStream, [happened(1)])
        expect(one).toMatchObject({ nextVersion: 1 })
        expect(one.positions).toHaveLength(1)
        const thousand = yield* store.append(
          stream,
          EventStore.exactVersion(1),
          Arr.makeBy(1000, (i) => happened(i + 2, { metadata: { i } }))
        )
        expect(thousand.nextVersion).toBe(1001)
        expect(thousand.positions).toHaveLength(1000)
        for (let i = 1; i < thousand.positions.length; i++) {
          expect(thousand.positions[i] > thousand.positions[i - 1]).toBe(true)
        }
        expect(thousand.positions[0] > one.positions[0]).toBe(true)
        const stored = yield* store.readStream(stream)
        expect(stored.map((e) => e.version)).toEqual(Arr.range(1, 1001))
        expect(stored.map((e) => e.globalPosition)).toEqual([...one.positions, ...thousand.positions])
        expect(stored.map((e) => e.data)).toEqual(
          Arr.makeBy(1001, (i) => ({ n: i + 1, note: `event ${i + 1}` }))
        )
        expect(stored[500].metadata).toEqual({ i: 499 })
        expect(yield* store.verify(stream)).toMatchObject({ ok: true, eventsChecked: 1001 })
        const next = yield* store.append(stream, EventStore.exactVersion(1001), [happened(1002)])
        expect(next.nextVersion).toBe(1002)
        expect((yield* store.verify(stream)).ok).toBe(true)
      })
    )
  })
}
