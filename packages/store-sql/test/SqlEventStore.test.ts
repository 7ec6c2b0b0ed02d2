/**
 * Behaviour of the SQL store beyond the shared contract, on PostgreSQL (fresh database,
 * PGlite when DATABASE_URL is unset) and on PGlite: notifications across store instances,
 * migrations applied once, the statements an append sends, heads cached from transactions
 * that rolled back.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore, HashChain } from "@tillflow/engine"
import {
  EventArchive,
  EventStoreMigrations,
  PgliteEventStore,
  SqlEventStore,
  TestDatabase
} from "@tillflow/store-sql"
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { endOfLog, freshStream } from "@tillflow/engine/testing"
import * as StatementCensus from "./StatementCensus.js"

/**
 * The statements an effect sent, by kind: `append` (the append function), `coalesced`
 * (appends coalesced), `all` (a multi-stream append), `groups` (multi-stream appends
 * coalesced), `head` (a read of the `streams` table), `coalesced read`, `read`, or
 * the statement's text.
 */
const statementsOf = StatementCensus.statementsOf((text) =>
  text.includes("tillflow_append_chained(")
    ? "append"
    : text.includes("tillflow_append_many(")
      ? "coalesced"
      : text.includes("tillflow_append_all(")
        ? "all"
        : text.includes("tillflow_append_groups(")
          ? "groups"
          : text.includes("FROM streams")
            ? "head"
            : text.includes("AS wanted")
              ? "coalesced read"
              : text.includes("FROM events")
                ? "read"
                : text
)

const happened = (n: number): EventStore.NewEvent => ({ type: "Happened", data: { n } })

/**
 * Group commit under control: `writer` (a store with ONE append statement in flight at most)
 * gets its slot taken by an append blocked on a row lock (PGlite: on its only session, held
 * by a transaction), then `launch` forks appends, which therefore wait; the lock is then
 * released, and the waiting appends go as the coalesced statement(s) that follow.
 */
const whileSlotTaken = <A, E, R>(
  writer: EventStore.Service,
  launch: Effect.Effect<A, E, R>,
  /** Take the multi-stream appends' slot (`appendStreams`) instead of the single-stream one. */
  multiStream = false
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const blocker = freshStream("blocker")
    yield* writer.append(blocker, EventStore.NoStream, [happened(0)])
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* sql`SELECT stream_id FROM streams WHERE stream_id = ${blocker} FOR UPDATE`.pipe(
      Effect.zipRight(Deferred.succeed(locked, undefined)),
      Effect.zipRight(Deferred.await(release)),
      sql.withTransaction,
      Effect.fork
    )
    yield* Deferred.await(locked)
    const blocked = yield* Effect.fork(
      multiStream
        ? Effect.map(
            writer.appendStreams([
              { streamId: blocker, expectedVersion: EventStore.exactVersion(1), events: [happened(1)] }
            ]),
            ([result]) => result
          )
        : writer.append(blocker, EventStore.exactVersion(1), [happened(1)])
    )
    yield* Effect.sleep("200 millis")
    const launched = yield* launch
    yield* Effect.sleep("200 millis")
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)
    const unblocked = yield* Fiber.join(blocked)
    expect(unblocked.nextVersion).toBe(2)
    return launched
  })

/**
 * Where the event id an append reuses is stored: in `events`, or moved to `events_archive`
 * (migration 10 makes the second refused exactly as the first).
 */
const idHomes = ["hot", "archived"] as const

/** Moves `stream`'s events to the archive (`EventArchive.run`, the stream made idle first). */
const archive = (stream: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE streams SET updated_at = now() - interval '2 days' WHERE stream_id = ${stream}`
    yield* EventArchive.run({ before: new Date(Date.now() - 86_400_000) })
    const [row] = yield* sql<{ readonly n: string }>`
      SELECT count(*)::text AS n FROM events_archive WHERE stream_id = ${stream}`
    expect(row?.n).toBe("1")
  })

/** The transaction ids of a stream's events. */
const transactionsOf = (store: EventStore.Service, stream: string) =>
  Effect.map(store.readStream(stream), (events) => events.map((event) => event.transactionId))

const sqlStoreSuite = <E>(
  name: string,
  storeLayer: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient, E>,
  /** Several sessions at once (PostgreSQL; PGlite has one: a held transaction stops every other). */
  sessions: boolean
) =>
  layer(storeLayer, { excludeTestServices: true, timeout: 60_000 })(name, (it) => {
    it.scoped(
      "an append interrupted while its statement waits completes: no cancel is sent to the connection",
      () =>
        Effect.gen(function* () {
          // @effect/sql-pg answers the interruption of a running statement with a
          // pg_cancel_backend sent through the pool, which can run after the connection went
          // back to the pool and cancel someone else's statement. The store's statements are
          // therefore uninterruptible: an interrupted call waits for its statement.
          const store = yield* EventStore.EventStore
          const sql = yield* SqlClient.SqlClient
          const stream = freshStream("interrupted")
          yield* store.append(stream, EventStore.NoStream, [happened(1)])
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          // Another transaction holds the stream's row (PGlite: its only session).
          const holder =
            yield* sql`SELECT stream_id FROM streams WHERE stream_id = ${stream} FOR UPDATE`.pipe(
              Effect.zipRight(Deferred.succeed(locked, undefined)),
              Effect.zipRight(Deferred.await(release)),
              sql.withTransaction,
              Effect.fork
            )
          yield* Deferred.await(locked)
          const append = yield* Effect.fork(store.append(stream, EventStore.exactVersion(1), [happened(2)]))
          yield* Effect.sleep("200 millis")
          const interrupter = yield* Effect.fork(Fiber.interrupt(append))
          yield* Effect.sleep("300 millis")
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          yield* Fiber.join(interrupter)
          expect(yield* store.streamVersion(stream)).toBe(2)
          expect((yield* store.readStream(stream)).map((event) => event.data)).toEqual([{ n: 1 }, { n: 2 }])
        })
    )

    it.scoped(
      "a subscription is woken by the NOTIFY of an append through another store instance, with polling set to an hour",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          // Another instance over the same database: it shares no in-process signal with `store`.
          const other = yield* SqlEventStore.make()
          const from = yield* endOfLog(store)
          const stream = freshStream("notify")
          const firstDelivered = yield* Deferred.make<EventStore.RecordedEvent>()
          const subscriber = yield* store.subscribe(from, { pollInterval: "1 hour" }).pipe(
            Stream.runForEach((event) => Deferred.succeed(firstDelivered, event)),
            Effect.fork
          )
          // LISTEN is set up in the background when the store starts; append until a
          // notification lands (the first append may precede LISTEN), at most 25 times.
          let appended = 0
          while (!(yield* Deferred.isDone(firstDelivered)) && appended < 25) {
            yield* other.append(stream, EventStore.AnyVersion, [{ type: "Notified", data: { appended } }])
            appended++
            yield* Deferred.await(firstDelivered).pipe(Effect.timeout("200 millis"), Effect.ignore)
          }
          const first = yield* Deferred.await(firstDelivered).pipe(Effect.timeout("1 second"))
          expect(first.streamId).toBe(stream)
          yield* Fiber.interrupt(subscriber)
        })
    )

    it.scoped(
      "notifications are throttled, not delayed: with notifyInterval at an hour, a store's first append still wakes another instance's subscription",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const from = yield* endOfLog(store)
          const delivered = yield* Deferred.make<EventStore.RecordedEvent>()
          const subscriber = yield* store.subscribe(from, { pollInterval: "1 hour" }).pipe(
            Stream.runForEach((event) => Deferred.succeed(delivered, event)),
            Effect.fork
          )
          // Each attempt is a new store whose only NOTIFY is its first one (the next would
          // wait an hour), so a delivery can only come from a first append's notification.
          // LISTEN is set up in the background: try again, at most 25 times.
          let attempts = 0
          while (!(yield* Deferred.isDone(delivered)) && attempts < 25) {
            yield* Effect.scoped(
              Effect.gen(function* () {
                const throttled = yield* SqlEventStore.make({ notifyInterval: "1 hour" })
                yield* throttled.append(freshStream("throttled"), EventStore.NoStream, [
                  { type: "Notified", data: { attempts } }
                ])
                yield* Deferred.await(delivered).pipe(Effect.timeout("200 millis"), Effect.ignore)
              })
            )
            attempts++
          }
          const first = yield* Deferred.await(delivered).pipe(Effect.timeout("1 second"))
          expect(first.type).toBe("Notified")
          expect(first.streamId.startsWith("throttled-")).toBe(true)
          yield* Fiber.interrupt(subscriber)
        })
    )

    it.effect(
      "the chain it stores verifies with core's Web Crypto hashing, as the memory store computes it",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const stream = freshStream("agree")
          yield* store.append(stream, EventStore.NoStream, [
            {
              type: "A",
              data: { amount: "1000", nested: { z: 1, a: [true, null, "é"] } },
              metadata: { k: "v" }
            },
            { type: "B", schemaVersion: 2, data: "plain string" }
          ])
          const events = yield* store.readStream(stream)
          const head = { version: 2, lastHash: events[1].hash }
          // No hasher given: HashChain's default, Web Crypto.
          expect(yield* HashChain.verifyStream(stream, events, Option.some(head))).toEqual(Option.none())
        })
    )

    it.scoped(
      "a multi-stream append is one statement; refused on a later stream after an earlier one was bumped, it writes nothing and burns no position",
      () =>
        Effect.gen(function* () {
          const writer = yield* SqlEventStore.make()
          const other = yield* SqlEventStore.make()
          // Stream ids sort `a` before `b`: the function bumps `a` before it finds `b` moved.
          const prefix = freshStream("all")
          const a = `${prefix}-a`
          const b = `${prefix}-b`
          const created = yield* statementsOf(
            writer.appendStreams([
              { streamId: b, expectedVersion: EventStore.NoStream, events: [happened(1)] },
              { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(1), happened(2)] }
            ])
          )
          expect(created).toMatchObject({ sent: ["all"], result: [{ nextVersion: 1 }, { nextVersion: 2 }] })
          const [before] = (yield* other.append(b, EventStore.exactVersion(1), [happened(2)])).positions
          // `writer` has both heads cached: one statement, refused inside it on `b`.
          const refused = yield* statementsOf(
            Effect.flip(
              writer.appendStreams([
                { streamId: a, expectedVersion: EventStore.exactVersion(2), events: [happened(3)] },
                { streamId: b, expectedVersion: EventStore.exactVersion(1), events: [happened(3)] }
              ])
            )
          )
          expect(refused).toMatchObject({
            sent: ["all"],
            result: { _tag: "ConcurrencyConflict", streamId: b, actual: 2 }
          })
          expect(yield* writer.streamVersion(a)).toBe(2)
          // The refused statement took no value of the global position sequence.
          const [after] = (yield* other.append(b, EventStore.AnyVersion, [happened(3)])).positions
          expect(after).toBe(before + 1n)
          // `writer` learnt b at 2 from the refusal, but b moved on: under Any the head the
          // first attempt answers is used, one more statement, no read.
          const landed = yield* statementsOf(
            writer.appendStreams([
              { streamId: a, expectedVersion: EventStore.exactVersion(2), events: [happened(3)] },
              { streamId: b, expectedVersion: EventStore.AnyVersion, events: [happened(4)] }
            ])
          )
          expect(landed).toMatchObject({
            sent: ["all", "all"],
            result: [{ nextVersion: 3 }, { nextVersion: 4 }]
          })
          expect((yield* writer.readStream(b)).map((e) => e.data)).toEqual([1, 2, 3, 4].map((n) => ({ n })))
          for (const stream of [a, b]) expect((yield* writer.verify(stream)).ok).toBe(true)
        })
    )

    it.scoped(
      "group commit of multi-stream appends: concurrent calls go as ONE statement; a conflict refuses its own call whole, the others land whole in one transaction",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make({ maxInFlight: 1, multiStreamGroupCommit: true })
          const other = yield* SqlEventStore.make()
          // Four calls, each to its own pair of streams `a` (new) and `b` (at 1, head cached
          // by `writer`); `other` moves call 2's `b` to 2, so `writer`'s guess and expected
          // version for it are stale. Stream ids sort `a` before `b`: call 2's `a` is bumped
          // before its `b` is found moved.
          const pairs = Arr.range(0, 3).map(() => {
            const prefix = freshStream("groups")
            return { a: `${prefix}-a`, b: `${prefix}-b` }
          })
          for (const { b } of pairs) yield* writer.append(b, EventStore.NoStream, [happened(1)])
          yield* other.append(pairs[2].b, EventStore.exactVersion(1), [happened(2)])
          const { result: fibers, sent } = yield* statementsOf(
            whileSlotTaken(
              writer,
              Effect.forEach(pairs, ({ a, b }, i) =>
                Effect.fork(
                  Effect.either(
                    writer.appendStreams([
                      { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(10 + i)] },
                      { streamId: b, expectedVersion: EventStore.exactVersion(1), events: [happened(20 + i)] }
                    ])
                  )
                )
              ),
              true
            )
          )
          const results = yield* Effect.forEach(fibers, Fiber.join)
          // The blocker's two writes went alone, the four waiting calls as one statement.
          expect(sent.filter((kind) => kind === "groups")).toHaveLength(1)
          expect(sent.filter((kind) => kind === "all")).toHaveLength(1)
          expect(results[2]).toMatchObject({
            _tag: "Left",
            left: { _tag: "ConcurrencyConflict", streamId: pairs[2].b, actual: 2 }
          })
          // The refused call wrote nothing, not even its `a`, which was bumped first.
          expect(yield* store.streamVersion(pairs[2].a)).toBe(0)
          expect((yield* store.readStream(pairs[2].b)).map((event) => event.data)).toEqual([
            { n: 1 },
            { n: 2 }
          ])
          const transactions = new Set<bigint>()
          for (const i of [0, 1, 3]) {
            const { a, b } = pairs[i]
            expect(results[i]).toMatchObject({
              _tag: "Right",
              right: [{ nextVersion: 1 }, { nextVersion: 2 }]
            })
            const [aEvents, bEvents] = [yield* store.readStream(a), yield* store.readStream(b)]
            expect(aEvents.map((event) => event.data)).toEqual([{ n: 10 + i }])
            expect(bEvents.map((event) => event.data)).toEqual([{ n: 1 }, { n: 20 + i }])
            if (results[i]._tag === "Right") {
              const [aResult, bResult] = (results[i] as { right: ReadonlyArray<EventStore.AppendResult> })
                .right
              expect(aResult.positions).toEqual([aEvents[0].globalPosition])
              expect(bResult.positions).toEqual([bEvents[1].globalPosition])
            }
            transactions.add(aEvents[0].transactionId)
            transactions.add(bEvents[1].transactionId)
            for (const stream of [a, b]) expect((yield* store.verify(stream)).ok).toBe(true)
          }
          expect(transactions.size).toBe(1)
          // The heads cached from the statement are right: the next call is one statement.
          const next = yield* statementsOf(
            writer.appendStreams([
              { streamId: pairs[3].a, expectedVersion: EventStore.exactVersion(1), events: [happened(30)] },
              { streamId: pairs[3].b, expectedVersion: EventStore.exactVersion(2), events: [happened(31)] }
            ])
          )
          expect(next).toMatchObject({ sent: ["all"], result: [{ nextVersion: 2 }, { nextVersion: 3 }] })
        })
    )

    it.scoped(
      "group commit of multi-stream appends: calls naming a common stream go in separate statements; a wrong guess under Any retries its own call",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make({ maxInFlight: 1, multiStreamGroupCommit: true })
          const other = yield* SqlEventStore.make()
          const shared = freshStream("shared")
          const [x, y] = [freshStream("own"), freshStream("own")]
          // `other` creates `shared` behind `writer`'s back: `writer` guesses it new.
          yield* other.append(shared, EventStore.NoStream, [happened(0)])
          const { result: fibers, sent } = yield* statementsOf(
            whileSlotTaken(
              writer,
              Effect.forEach([x, y], (own, i) =>
                Effect.fork(
                  writer.appendStreams([
                    { streamId: own, expectedVersion: EventStore.NoStream, events: [happened(i)] },
                    { streamId: shared, expectedVersion: EventStore.AnyVersion, events: [happened(10 + i)] }
                  ])
                )
              ),
              true
            )
          )
          const results = yield* Effect.forEach(fibers, Fiber.join)
          // Never two calls naming `shared` in one statement: no `groups` statement at all.
          expect(sent.filter((kind) => kind === "groups")).toHaveLength(0)
          expect(results.map((result) => result[0].nextVersion)).toEqual([1, 1])
          expect(new Set(results.map((result) => result[1].nextVersion))).toEqual(new Set([2, 3]))
          expect((yield* store.readStream(shared)).map((event) => event.data)).toEqual(
            results[0][1].nextVersion === 2
              ? [{ n: 0 }, { n: 10 }, { n: 11 }]
              : [{ n: 0 }, { n: 11 }, { n: 10 }]
          )
          expect((yield* store.verify(shared)).ok).toBe(true)
        })
    )

    if (sessions) {
      it.scoped(
        "group commit of multi-stream appends: a stream another writer creates while the statement runs refuses that call whole, and only it",
        () =>
          Effect.gen(function* () {
            const store = yield* EventStore.EventStore
            const sql = yield* SqlClient.SqlClient
            const writer = yield* SqlEventStore.make({ maxInFlight: 1, multiStreamGroupCommit: true })
            const pairs = Arr.range(0, 2).map(() => [freshStream("late"), freshStream("late")] as const)
            // Call 1's second stream is created by another session's transaction, not yet
            // committed when the statement checks it (absent) and creates it (waits).
            const taken = pairs[1][1]
            const inserted = yield* Deferred.make<void>()
            const commit = yield* Deferred.make<void>()
            const other =
              yield* sql`INSERT INTO streams (stream_id, version, last_hash) VALUES (${taken}, 1, ${"f".repeat(64)})`.pipe(
                Effect.zipRight(Deferred.succeed(inserted, undefined)),
                Effect.zipRight(Deferred.await(commit)),
                sql.withTransaction,
                Effect.fork
              )
            yield* Deferred.await(inserted)
            // The other session commits once the blocker's statement has run and the
            // coalesced one waits on `taken`.
            yield* Effect.fork(
              Effect.zipRight(Effect.sleep("700 millis"), Deferred.succeed(commit, undefined))
            )
            const fibers = yield* whileSlotTaken(
              writer,
              Effect.forEach(pairs, ([a, b], i) =>
                Effect.fork(
                  Effect.either(
                    writer.appendStreams([
                      { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(i)] },
                      { streamId: b, expectedVersion: EventStore.NoStream, events: [happened(i)] }
                    ])
                  )
                )
              ),
              true
            )
            yield* Fiber.join(other)
            const results = yield* Effect.forEach(fibers, Fiber.join)
            expect(results[1]).toMatchObject({
              _tag: "Left",
              left: { _tag: "ConcurrencyConflict", streamId: taken, actual: 1 }
            })
            // Its first stream, created by the statement before it found `taken`, is gone.
            expect(yield* store.streamVersion(pairs[1][0])).toBe(0)
            for (const i of [0, 2]) {
              expect(results[i]).toMatchObject({
                _tag: "Right",
                right: [{ nextVersion: 1 }, { nextVersion: 1 }]
              })
              for (const stream of pairs[i]) expect((yield* store.verify(stream)).ok).toBe(true)
            }
            const [first] = yield* transactionsOf(store, pairs[0][0])
            expect(yield* transactionsOf(store, pairs[2][1])).toEqual([first])
          })
      )
    }

    for (const where of idHomes) {
      it.scoped(
        `group commit of multi-stream appends: a duplicate event id (${where}) fails only its caller; the statement's other calls land alone`,
        () =>
          Effect.gen(function* () {
            const store = yield* EventStore.EventStore
            const writer = yield* SqlEventStore.make({ maxInFlight: 1, multiStreamGroupCommit: true })
            const used = globalThis.crypto.randomUUID()
            const owner = freshStream("used")
            yield* writer.append(owner, EventStore.NoStream, [{ ...happened(0), eventId: used }])
            if (where === "archived") yield* archive(owner)
            const pairs = Arr.range(0, 2).map(() => [freshStream("dup"), freshStream("dup")] as const)
            const { result: fibers, sent } = yield* statementsOf(
              whileSlotTaken(
                writer,
                Effect.forEach(pairs, ([a, b], i) =>
                  Effect.fork(
                    Effect.either(
                      writer.appendStreams([
                        { streamId: a, expectedVersion: EventStore.NoStream, events: [happened(i)] },
                        {
                          streamId: b,
                          expectedVersion: EventStore.NoStream,
                          events: [i === 1 ? { ...happened(i), eventId: used } : happened(i)]
                        }
                      ])
                    )
                  )
                ),
                true
              )
            )
            const results = yield* Effect.forEach(fibers, Fiber.join)
            expect(sent.filter((kind) => kind === "groups")).toHaveLength(1)
            expect(results[1]).toMatchObject({
              _tag: "Left",
              left: { _tag: "DuplicateEventId", eventId: used }
            })
            for (const stream of pairs[1]) expect(yield* store.streamVersion(stream)).toBe(0)
            for (const i of [0, 2]) {
              expect(results[i]).toMatchObject({
                _tag: "Right",
                right: [{ nextVersion: 1 }, { nextVersion: 1 }]
              })
              for (const stream of pairs[i]) expect(yield* store.streamVersion(stream)).toBe(1)
            }
          })
      )
    }

    it.scoped(
      "an append is one statement without a head read: Any or NoStream on a new stream, Any on a stream another instance moved, conflicts",
      () =>
        Effect.gen(function* () {
          const writer = yield* SqlEventStore.make()
          const stream = freshStream("one-statement")
          const created = yield* statementsOf(writer.append(stream, EventStore.AnyVersion, [happened(1)]))
          expect(created).toMatchObject({ sent: ["append"], result: { nextVersion: 1 } })
          const next = yield* statementsOf(writer.append(stream, EventStore.AnyVersion, [happened(2)]))
          expect(next).toMatchObject({ sent: ["append"], result: { nextVersion: 2 } })
          const exact = yield* statementsOf(writer.append(stream, EventStore.exactVersion(2), [happened(3)]))
          expect(exact).toMatchObject({ sent: ["append"], result: { nextVersion: 3 } })
          const fresh = freshStream("one-statement")
          expect(
            (yield* statementsOf(writer.append(fresh, EventStore.NoStream, [happened(1)]))).sent
          ).toEqual(["append"])

          // Another instance that never saw `stream`: its guess (a new stream) is wrong, and
          // the attempt answers the head, so the retry needs no read.
          const other = yield* SqlEventStore.make()
          const guessed = yield* statementsOf(other.append(stream, EventStore.AnyVersion, [happened(4)]))
          expect(guessed).toMatchObject({ sent: ["append", "append"], result: { nextVersion: 4 } })
          expect(
            (yield* statementsOf(other.append(stream, EventStore.AnyVersion, [happened(5)]))).sent
          ).toEqual(["append"])
          // `writer` still believes the stream is at 3: one wrong guess, one append.
          const stale = yield* statementsOf(writer.append(stream, EventStore.AnyVersion, [happened(6)]))
          expect(stale).toMatchObject({ sent: ["append", "append"], result: { nextVersion: 6 } })

          // Conflicts name the actual version from the attempt's answer, with no read.
          const third = yield* SqlEventStore.make()
          for (const expected of [EventStore.NoStream, EventStore.exactVersion(0)]) {
            const refused = yield* statementsOf(Effect.flip(third.append(stream, expected, [happened(7)])))
            expect(refused).toMatchObject({
              sent: ["append"],
              result: { _tag: "ConcurrencyConflict", actual: 6 }
            })
          }
          yield* other.append(stream, EventStore.exactVersion(6), [happened(7)])
          const lost = yield* statementsOf(
            Effect.flip(writer.append(stream, EventStore.exactVersion(6), [happened(8)]))
          )
          expect(lost).toMatchObject({ sent: ["append"], result: { _tag: "ConcurrencyConflict", actual: 7 } })

          // Exact(n > 0) without the head at n cached: the batch cannot be hashed without the
          // hash at n, so the head is read first (and a mismatch refused without appending).
          const reader = yield* SqlEventStore.make()
          const readFirst = yield* statementsOf(
            reader.append(stream, EventStore.exactVersion(7), [happened(8)])
          )
          expect(readFirst).toMatchObject({ sent: ["head", "append"], result: { nextVersion: 8 } })
          const late = yield* SqlEventStore.make()
          const refusedAtRead = yield* statementsOf(
            Effect.flip(late.append(stream, EventStore.exactVersion(5), [happened(9)]))
          )
          expect(refusedAtRead).toMatchObject({
            sent: ["head"],
            result: { _tag: "ConcurrencyConflict", actual: 8 }
          })

          const store = yield* EventStore.EventStore
          expect((yield* store.readStream(stream)).map((e) => e.data)).toEqual(
            Arr.range(1, 8).map((n) => ({ n }))
          )
          expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )

    it.scoped(
      "a head cached from an append whose transaction rolled back is only a guess: the next append chains onto the stored head",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make()
          const other = yield* SqlEventStore.make()
          const rolledBack = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
            sql.withTransaction(Effect.zipRight(effect, Effect.fail("roll back" as const))).pipe(Effect.flip)

          // Version 2 written by a transaction that rolled back, then by another writer with
          // another hash: `writer` caches (2, the rolled-back hash).
          const stream = freshStream("rolled-back")
          yield* writer.append(stream, EventStore.NoStream, [happened(1)])
          expect(yield* rolledBack(writer.append(stream, EventStore.exactVersion(1), [happened(-2)]))).toBe(
            "roll back"
          )
          yield* other.append(stream, EventStore.exactVersion(1), [happened(2)])
          expect((yield* writer.append(stream, EventStore.exactVersion(2), [happened(3)])).nextVersion).toBe(
            3
          )
          expect((yield* writer.append(stream, EventStore.AnyVersion, [happened(4)])).nextVersion).toBe(4)
          expect((yield* store.readStream(stream)).map((e) => e.data)).toEqual(
            Arr.range(1, 4).map((n) => ({ n }))
          )
          expect((yield* store.verify(stream)).ok).toBe(true)

          // A stream created by a transaction that rolled back: it does not exist.
          const created = freshStream("rolled-back")
          yield* rolledBack(writer.append(created, EventStore.NoStream, [happened(-1)]))
          const missing = yield* Effect.flip(
            writer.append(created, EventStore.exactVersion(1), [happened(2)])
          )
          expect(missing).toMatchObject({ _tag: "ConcurrencyConflict", actual: 0 })
          yield* rolledBack(writer.append(created, EventStore.NoStream, [happened(-1)]))
          expect((yield* writer.append(created, EventStore.AnyVersion, [happened(1)])).nextVersion).toBe(1)
          expect((yield* store.readStream(created)).map((e) => e.data)).toEqual([{ n: 1 }])
          expect((yield* store.verify(created)).ok).toBe(true)
        })
    )

    it.scoped(
      "maxInFlight that is not a positive integer is refused at construction, naming the option",
      () =>
        Effect.gen(function* () {
          for (const bad of [0, -1, 1.5, Number.NaN]) {
            const exit = yield* Effect.exit(SqlEventStore.make({ maxInFlight: bad }))
            expect(exit._tag).toBe("Failure")
            if (exit._tag === "Failure")
              expect(Cause.pretty(exit.cause)).toContain("maxInFlight must be a positive integer")
          }
          const store = yield* SqlEventStore.make({ maxInFlight: 3 })
          const stream = freshStream("max-in-flight")
          expect((yield* store.append(stream, EventStore.NoStream, [happened(1)])).nextVersion).toBe(1)
        })
    )

    it.scoped(
      "group commit: concurrent appends to many streams go as ONE statement and transaction, each with its own versions, positions and chain",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make({ maxInFlight: 1 })
          // Half the streams exist (written by `writer`, head cached), half are new.
          const streams = Arr.range(1, 10).map(() => freshStream("coalesced"))
          for (const stream of streams.slice(0, 5)) {
            yield* writer.append(stream, EventStore.NoStream, [happened(1), happened(2)])
          }
          const { result: fibers, sent } = yield* statementsOf(
            whileSlotTaken(
              writer,
              Effect.forEach(streams, (stream, i) =>
                Effect.fork(
                  writer.append(stream, i < 5 ? EventStore.exactVersion(2) : EventStore.NoStream, [
                    happened(10 + i),
                    happened(20 + i)
                  ])
                )
              )
            )
          )
          const results = yield* Effect.forEach(fibers, Fiber.join)
          // The blocker's two appends went alone, the ten waiting ones together.
          expect(sent.filter((kind) => kind === "coalesced")).toHaveLength(1)
          expect(sent.filter((kind) => kind === "append")).toHaveLength(2)
          const transactions = new Set<bigint>()
          for (const [i, stream] of streams.entries()) {
            const events = yield* store.readStream(stream)
            const from = i < 5 ? 2 : 0
            expect(results[i].nextVersion).toBe(from + 2)
            expect(events.map((event) => event.data)).toEqual([
              ...(i < 5 ? [{ n: 1 }, { n: 2 }] : []),
              { n: 10 + i },
              { n: 20 + i }
            ])
            expect(results[i].positions).toEqual(events.slice(from).map((event) => event.globalPosition))
            for (const event of events.slice(from)) transactions.add(event.transactionId)
            expect((yield* store.verify(stream)).ok).toBe(true)
          }
          expect(transactions.size).toBe(1)
          // The head cache followed: the next appends are one statement each.
          expect(
            (yield* statementsOf(writer.append(streams[9], EventStore.exactVersion(2), [happened(3)]))).sent
          ).toEqual(["append"])
        })
    )

    it.scoped(
      "group commit: a conflicting entry fails only its caller with ConcurrencyConflict; the others land in the same transaction",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make({ maxInFlight: 1 })
          const other = yield* SqlEventStore.make()
          const taken = freshStream("taken")
          yield* other.append(taken, EventStore.NoStream, [happened(1)])
          const first = freshStream("lands")
          const last = freshStream("lands")
          const fibers = yield* whileSlotTaken(
            writer,
            Effect.forEach(
              [first, taken, last],
              (stream) =>
                Effect.fork(Effect.either(writer.append(stream, EventStore.NoStream, [happened(2)]))),
              { concurrency: 1 }
            )
          )
          const [landed, refused, alsoLanded] = yield* Effect.forEach(fibers, Fiber.join)
          expect(landed).toMatchObject({ _tag: "Right", right: { nextVersion: 1 } })
          expect(alsoLanded).toMatchObject({ _tag: "Right", right: { nextVersion: 1 } })
          expect(refused).toMatchObject({
            _tag: "Left",
            left: { _tag: "ConcurrencyConflict", streamId: taken, actual: 1 }
          })
          expect((yield* store.readStream(taken)).map((event) => event.data)).toEqual([{ n: 1 }])
          const [firstTransaction] = yield* transactionsOf(store, first)
          expect(yield* transactionsOf(store, last)).toEqual([firstTransaction])
        })
    )

    for (const where of idHomes) {
      it.scoped(
        `group commit: a duplicate event id (${where}) fails only its caller with DuplicateEventId; the statement's other entries land alone`,
        () =>
          Effect.gen(function* () {
            const store = yield* EventStore.EventStore
            const writer = yield* SqlEventStore.make({ maxInFlight: 1 })
            const used = globalThis.crypto.randomUUID()
            const owner = freshStream("first-use")
            yield* writer.append(owner, EventStore.NoStream, [{ ...happened(0), eventId: used }])
            if (where === "archived") yield* archive(owner)
            const before = freshStream("alone")
            const duplicate = freshStream("duplicate")
            const after = freshStream("alone")
            const { result: fibers, sent } = yield* statementsOf(
              whileSlotTaken(
                writer,
                Effect.forEach(
                  [before, duplicate, after],
                  (stream) =>
                    Effect.fork(
                      Effect.either(
                        writer.append(stream, EventStore.NoStream, [
                          happened(1),
                          stream === duplicate ? { ...happened(2), eventId: used } : happened(2)
                        ])
                      )
                    ),
                  { concurrency: 1 }
                )
              )
            )
            const [landed, refused, alsoLanded] = yield* Effect.forEach(fibers, Fiber.join)
            // One coalesced statement failed as a whole; its three entries then went alone.
            expect(sent.filter((kind) => kind === "coalesced")).toHaveLength(1)
            expect(sent.filter((kind) => kind === "append")).toHaveLength(2 + 3)
            expect(landed).toMatchObject({ _tag: "Right", right: { nextVersion: 2 } })
            expect(alsoLanded).toMatchObject({ _tag: "Right", right: { nextVersion: 2 } })
            expect(refused).toMatchObject({
              _tag: "Left",
              left: { _tag: "DuplicateEventId", streamId: duplicate, eventId: used }
            })
            expect(yield* store.streamVersion(duplicate)).toBe(0)
            for (const stream of [before, after]) {
              expect((yield* store.readStream(stream)).map((event) => event.data)).toEqual([
                { n: 1 },
                { n: 2 }
              ])
              expect((yield* store.verify(stream)).ok).toBe(true)
            }
          })
      )
    }

    it.scoped(
      "group commit: two waiting appends to one stream go in two statements: both land in order under Any, the second conflicts under an exact version",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make({ maxInFlight: 1 })
          const any = freshStream("any")
          const exact = freshStream("exact")
          yield* writer.append(any, EventStore.NoStream, [happened(1)])
          yield* writer.append(exact, EventStore.NoStream, [happened(1)])
          const fibers = yield* whileSlotTaken(
            writer,
            Effect.forEach(
              [
                writer.append(any, EventStore.AnyVersion, [happened(2)]),
                writer.append(exact, EventStore.exactVersion(1), [happened(2)]),
                writer.append(any, EventStore.AnyVersion, [happened(3)]),
                writer.append(exact, EventStore.exactVersion(1), [happened(3)])
              ],
              (append) => Effect.fork(Effect.either(append)),
              { concurrency: 1 }
            )
          )
          const [any2, exact2, any3, exact3] = yield* Effect.forEach(fibers, Fiber.join)
          expect(any2).toMatchObject({ _tag: "Right", right: { nextVersion: 2 } })
          expect(any3).toMatchObject({ _tag: "Right", right: { nextVersion: 3 } })
          expect(exact2).toMatchObject({ _tag: "Right", right: { nextVersion: 2 } })
          expect(exact3).toMatchObject({ _tag: "Left", left: { _tag: "ConcurrencyConflict", actual: 2 } })
          expect((yield* store.readStream(any)).map((event) => event.data)).toEqual([
            { n: 1 },
            { n: 2 },
            { n: 3 }
          ])
          expect((yield* store.readStream(exact)).map((event) => event.data)).toEqual([{ n: 1 }, { n: 2 }])
          // The first of each went together; the second Any append in a later statement.
          const [, any2Transaction, any3Transaction] = yield* transactionsOf(store, any)
          expect((yield* transactionsOf(store, exact))[1]).toBe(any2Transaction)
          expect(any3Transaction).not.toBe(any2Transaction)
          expect((yield* store.verify(any)).ok).toBe(true)
          expect((yield* store.verify(exact)).ok).toBe(true)
        })
    )

    it.scoped(
      "group commit: appends inside a caller's transaction are never coalesced (they do not wait for the slot and roll back with the caller)",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make({ maxInFlight: 1 })
          const shared = freshStream("shared")
          const inside = freshStream("inside")
          const begun = yield* Deferred.make<void>()
          const outsideSent = yield* Deferred.make<void>()
          // The transaction creates `shared`; an append outside it to `shared` then takes the
          // writer's only slot and waits for the transaction (its row; PGlite: its session).
          // An append inside the transaction that waited for that slot would never return.
          const transaction = yield* writer
            .append(shared, EventStore.NoStream, [happened(-1)])
            .pipe(
              Effect.zipRight(Deferred.succeed(begun, undefined)),
              Effect.zipRight(Deferred.await(outsideSent)),
              Effect.zipRight(
                Effect.all(
                  [
                    writer.append(inside, EventStore.NoStream, [happened(1)]),
                    writer.append(freshStream("inside"), EventStore.NoStream, [happened(1)])
                  ],
                  { concurrency: "unbounded" }
                )
              ),
              Effect.zipRight(Effect.fail("roll back" as const)),
              sql.withTransaction,
              Effect.timeout("10 seconds"),
              Effect.flip,
              Effect.fork
            )
          yield* Deferred.await(begun)
          const outside = yield* Effect.fork(writer.append(shared, EventStore.NoStream, [happened(1)]))
          yield* Effect.sleep("200 millis")
          yield* Deferred.succeed(outsideSent, undefined)
          expect(yield* Fiber.join(transaction)).toBe("roll back")
          expect(yield* Fiber.join(outside)).toMatchObject({ nextVersion: 1 })
          expect(yield* store.streamVersion(inside)).toBe(0)
          expect((yield* store.readStream(shared)).map((event) => event.data)).toEqual([{ n: 1 }])
        })
    )

    it.scoped(
      "group commit: an append interrupted while it waits for the slot still lands, once, before the interruption returns",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const writer = yield* SqlEventStore.make({ maxInFlight: 1 })
          const waiting = freshStream("interrupted-waiting")
          const other = freshStream("interrupted-other")
          const [interrupter, otherAppend] = yield* whileSlotTaken(
            writer,
            Effect.gen(function* () {
              const append = yield* Effect.fork(writer.append(waiting, EventStore.NoStream, [happened(1)]))
              const otherAppend = yield* Effect.fork(writer.append(other, EventStore.NoStream, [happened(1)]))
              yield* Effect.sleep("50 millis")
              const interrupter = yield* Effect.fork(Fiber.interrupt(append))
              yield* Effect.sleep("50 millis")
              // The interruption waits for the append, which waits for the slot.
              expect(yield* Fiber.poll(interrupter)).toEqual(Option.none())
              return [interrupter, otherAppend] as const
            })
          )
          yield* Fiber.join(interrupter)
          expect(yield* Fiber.join(otherAppend)).toMatchObject({ nextVersion: 1 })
          expect((yield* store.readStream(waiting)).map((event) => event.data)).toEqual([{ n: 1 }])
          expect(yield* store.streamVersion(waiting)).toBe(1)
          // The next append sees version 1: nothing was appended twice.
          expect((yield* writer.append(waiting, EventStore.AnyVersion, [happened(2)])).nextVersion).toBe(2)
          expect((yield* store.readStream(waiting)).map((event) => event.data)).toEqual([{ n: 1 }, { n: 2 }])
        })
    )

    it.scoped(
      "coalesced reads: concurrent readStream calls of different streams go as ONE statement, each gets its own events; a read inside a transaction is not coalesced",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const reader = yield* SqlEventStore.make({ maxInFlight: 1 })
          const streams = Arr.range(1, 6).map(() => freshStream("read"))
          for (const [i, stream] of streams.entries()) {
            yield* reader.append(
              stream,
              EventStore.NoStream,
              Arr.range(1, i + 1).map((n) => happened(n))
            )
          }
          // A transaction locks `events` (PGlite: holds its only session): the first read
          // takes the reader's only slot and waits; the others wait for the slot.
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* sql`LOCK TABLE events IN ACCESS EXCLUSIVE MODE`.pipe(
            Effect.zipRight(Deferred.succeed(locked, undefined)),
            Effect.zipRight(Deferred.await(release)),
            sql.withTransaction,
            Effect.fork
          )
          yield* Deferred.await(locked)
          const { result: fibers, sent } = yield* statementsOf(
            Effect.gen(function* () {
              const first = yield* Effect.fork(reader.readStream(streams[0]))
              yield* Effect.sleep("200 millis")
              const others = yield* Effect.forEach(streams.slice(1), (stream, i) =>
                Effect.fork(reader.readStream(stream, { fromVersion: i === 0 ? 1 : 2 }))
              )
              yield* Effect.sleep("200 millis")
              yield* Deferred.succeed(release, undefined)
              yield* Fiber.join(holder)
              return [first, ...others]
            })
          )
          const read = yield* Effect.forEach(fibers, Fiber.join)
          expect(sent).toEqual(["read", "coalesced read"])
          for (const [i, stream] of streams.entries()) {
            const from = i <= 1 ? 1 : 2
            expect(read[i].map((event) => [event.streamId, event.version])).toEqual(
              Arr.range(from, i + 1).map((version) => [stream, version])
            )
            expect(read[i].map((event) => event.data)).toEqual(Arr.range(from, i + 1).map((n) => ({ n })))
          }
          // Inside a transaction the read runs on the transaction's connection, and sees its
          // uncommitted append.
          const inside = freshStream("read-inside")
          const seen = yield* reader.append(inside, EventStore.NoStream, [happened(1)]).pipe(
            Effect.zipRight(reader.readStream(inside)),
            Effect.flatMap((events) => Effect.fail(events.length)),
            sql.withTransaction,
            Effect.flip
          )
          expect(seen).toBe(1)
        })
    )

    it.effect("migrations are applied once: running them again applies nothing and keeps the events", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("migrate")
        yield* store.append(stream, EventStore.NoStream, [{ type: "Kept", data: {} }])
        expect(yield* EventStoreMigrations.run).toEqual([])
        expect(yield* store.streamVersion(stream)).toBe(1)
        const sql = yield* SqlClient.SqlClient
        const applied = yield* sql<{
          readonly name: string
        }>`SELECT name FROM ${sql(EventStoreMigrations.table)}`
        expect(applied.map((row) => row.name)).toEqual([
          "create_event_store",
          "notify_after_commit",
          "append_function",
          "append_reporting_head",
          "append_many",
          "append_all",
          "append_groups",
          "event_archive",
          "archived_event_ids",
          "merchant_registry",
          "merchant_acquirer",
          "merchant_rate_limit"
        ])
      })
    )
  })

describe("SqlEventStore", () => {
  sqlStoreSuite("on PostgreSQL (fresh database)", TestDatabase.layer, process.env.DATABASE_URL !== undefined)
  sqlStoreSuite("on PGlite", PgliteEventStore.layer({ pollInterval: "50 millis" }), false)
})
