/**
 * The one contract every `EventStore` implementation keeps, as a suite run against a Layer:
 * memory (core), PGlite and PostgreSQL (this package). Tests share the layer (one database
 * per file), so each works on its own stream ids and reads the global log from the end it
 * found when it started. Test services are excluded: subscriptions poll on the real clock.
 */
import { describe, expect, layer as layerTests } from "@effect/vitest"
import { EventStore, HashChain, Redaction } from "../index.js"
import * as Arr from "effect/Array"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/** Overwrites a stored event's data behind the store's back (an SQL UPDATE, or the memory hook). */
export class Tamper extends Context.Tag("test/Tamper")<
  Tamper,
  { readonly setData: (streamId: string, version: number, data: EventStore.Json) => Effect.Effect<void> }
>() {}

/**
 * Another instance of the store over the same data, with caches of its own: for SQL a
 * second `SqlEventStore` on the same database; for memory the same store (it caches
 * nothing, so the cases below hold of it trivially).
 */
export class OtherInstance extends Context.Tag("test/OtherInstance")<
  OtherInstance,
  { readonly make: Effect.Effect<EventStore.Service, never, Scope.Scope> }
>() {}

let counter = 0
/** A stream id unique to this run. */
export const freshStream = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`

/** Reads the global log to its current end and returns the checkpoint there. */
export const endOfLog = (store: EventStore.Service) =>
  Effect.gen(function* () {
    let checkpoint = EventStore.Checkpoint.start
    while (true) {
      const page = yield* store.readAll(checkpoint, { maxCount: 1000 })
      checkpoint = page.next
      if (page.caughtUp) return checkpoint
    }
  })

/**
 * Reads everything after `from`, keeping only the events of `streams` when given.
 *
 * On PostgreSQL the readable end of the log is bounded by the cluster-wide snapshot xmin,
 * so while other databases' transactions are open (tests run in parallel) `endOfLog` can
 * stop short of events that earlier tests of this file appended. Those events then appear
 * after `from`: a test that asserts on the global log therefore looks only at its own
 * streams, where order and exactly-once still must hold.
 */
export const readAllFrom = (
  store: EventStore.Service,
  from: EventStore.Checkpoint,
  pageSize = 1000,
  streams?: ReadonlyArray<string>,
  expectCount?: number
) =>
  Effect.gen(function* () {
    const events: Array<EventStore.RecordedEvent> = []
    let checkpoint = from
    const deadline = Date.now() + 20_000
    while (true) {
      const page = yield* store.readAll(checkpoint, { maxCount: pageSize })
      events.push(...page.events.filter((e) => streams === undefined || streams.includes(e.streamId)))
      checkpoint = page.next
      if (page.caughtUp) {
        // Our events may still sit above the cluster's xmin horizon: wait for them.
        if (expectCount === undefined || events.length >= expectCount || Date.now() > deadline)
          return { events, next: checkpoint }
        yield* Effect.sleep("20 millis")
      }
    }
  })

const happened = (n: number, extra: Partial<EventStore.NewEvent> = {}): EventStore.NewEvent => ({
  type: "Happened",
  data: { n, note: `event ${n}` },
  ...extra
})

/** Runs the contract against `layer`. */
export const eventStoreContract = <E>(
  name: string,
  layer: Layer.Layer<EventStore.EventStore | Tamper | OtherInstance, E>
) =>
  layerTests(layer, { timeout: 120_000, excludeTestServices: true })(`EventStore contract: ${name}`, (it) => {
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
            const missing = yield* Effect.flip(
              store.append(stream, EventStore.exactVersion(1), [happened(1)])
            )
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
              Effect.either(
                store.append(stream, EventStore.NoStream, [{ type: "Created", data: { writer } }])
              ),
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

    describe("two instances: heads one instance does not know or knows stale", () => {
      it.scoped(
        "Any on an existing stream this instance never wrote: appended once, at the next version",
        () =>
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
            expect((yield* store.append(stream, EventStore.exactVersion(5), [happened(6)])).nextVersion).toBe(
              6
            )
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

    describe("refusals", () => {
      it.effect("refuses an event id that is already stored, and writes nothing of the batch", () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const first = freshStream("dup")
          const second = freshStream("dup")
          const eventId = globalThis.crypto.randomUUID()
          yield* store.append(first, EventStore.NoStream, [happened(1, { eventId })])
          const error = yield* Effect.flip(
            store.append(second, EventStore.NoStream, [happened(1), happened(2, { eventId })])
          )
          expect(error).toEqual(new EventStore.DuplicateEventId({ streamId: second, eventId }))
          expect(yield* store.streamVersion(second)).toBe(0)
          const inBatch = yield* Effect.flip(
            store.append(second, EventStore.NoStream, [
              happened(1, { eventId: eventId.toUpperCase() }),
              happened(2, { eventId })
            ])
          )
          expect(inBatch._tag).toBe("DuplicateEventId")
        })
      )

      it.effect(
        "refuses an event carrying a secret with SensitiveDataRefused, naming type and path, storing nothing",
        () =>
          Effect.gen(function* () {
            const store = yield* EventStore.EventStore
            const stream = freshStream("secret")
            const error = yield* Effect.flip(
              store.append(stream, EventStore.NoStream, [
                happened(1),
                { type: "CardCaptured", data: { card: { number: "4111 1111 1111 1111" } } }
              ])
            )
            expect(error).toEqual(
              new Redaction.SensitiveDataRefused({
                eventType: "CardCaptured",
                path: "data.card.number",
                rule: "CardNumber"
              })
            )
            expect(error.message).not.toContain("4111")
            const token = yield* Effect.flip(
              store.append(stream, EventStore.NoStream, [
                { type: "CallbackRegistered", data: { url: "https://x" }, metadata: { callbackToken: "tok" } }
              ])
            )
            expect(token).toMatchObject({
              _tag: "SensitiveDataRefused",
              path: "metadata.callbackToken",
              rule: "Token"
            })
            expect(yield* store.streamVersion(stream)).toBe(0)
          })
      )

      it.effect(
        "refuses a stream id or type with a lone UTF-16 surrogate, which text columns cannot hold",
        () =>
          Effect.gen(function* () {
            const store = yield* EventStore.EventStore
            const stream = freshStream("surrogate")
            const badType = yield* Effect.flip(
              store.append(stream, EventStore.NoStream, [{ type: "Bad\ud800", data: {} }])
            )
            expect(badType).toMatchObject({ _tag: "InvalidEvent", path: "type" })
            const badStream = yield* Effect.flip(
              store.append(`${stream}-\udc00`, EventStore.NoStream, [{ type: "Good", data: {} }])
            )
            expect(badStream).toMatchObject({ _tag: "InvalidEvent", path: "streamId" })
            expect(yield* store.streamVersion(stream)).toBe(0)
          })
      )

      it.effect("refuses data PostgreSQL's jsonb cannot round-trip with InvalidEvent", () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const stream = freshStream("invalid")
          const bigint = yield* Effect.flip(
            store.append(stream, EventStore.NoStream, [
              { type: "Bad", data: { amount: 5n } as unknown as EventStore.Json }
            ])
          )
          expect(bigint).toMatchObject({ _tag: "InvalidEvent", path: "data.amount" })
          const nul = yield* Effect.flip(
            store.append(stream, EventStore.NoStream, [{ type: "Bad", data: { s: "a\u0000" } }])
          )
          expect(nul).toMatchObject({ _tag: "InvalidEvent", path: "data.s" })
          const badId = yield* Effect.flip(
            store.append(stream, EventStore.NoStream, [happened(1, { eventId: "not-a-uuid" })])
          )
          expect(badId).toMatchObject({ _tag: "InvalidEvent", path: "eventId" })
          expect(yield* store.streamVersion(stream)).toBe(0)
        })
      )
    })

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

    describe("subscriptions", () => {
      it.effect(
        "delivers stored events (catch-up), then live appends, exactly once and in global order",
        () =>
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
              Stream.tap((event) =>
                event.version === 5 ? Deferred.succeed(caughtUp, undefined) : Effect.void
              ),
              Stream.take(10),
              Stream.runCollect,
              Effect.fork
            )
            yield* Deferred.await(caughtUp).pipe(Effect.timeout("20 seconds"))
            // Live: appended only after the subscriber has delivered the stored events.
            for (let i = 6; i <= 10; i++)
              yield* store.append(stream, EventStore.exactVersion(i - 1), [happened(i)])
            const delivered = Chunk.toReadonlyArray(
              yield* Fiber.join(fiber).pipe(Effect.timeout("20 seconds"))
            )
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
            yield* tamper.setData(stream, 3, { n: 3, note: "refund 1000 to another card" })
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
  })
