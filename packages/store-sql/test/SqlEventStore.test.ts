/**
 * Behaviour of the SQL store beyond the shared contract, on PostgreSQL (fresh database,
 * PGlite when DATABASE_URL is unset) and on PGlite: notifications across store instances,
 * migrations applied once, the statements an append sends, heads cached from transactions
 * that rolled back.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { EventStore, HashChain } from "@tillflow/core"
import { EventStoreMigrations, PgliteEventStore, SqlEventStore, TestDatabase } from "@tillflow/store-sql"
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { endOfLog, freshStream } from "./EventStoreContract.js"

/**
 * Runs `effect` and lists the statements it sent through @effect/sql (a statement
 * transformer sees every statement the fiber executes), by kind: `append` (the append
 * function), `head` (a read of the `streams` table) or the statement's text.
 */
const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sent: Array<string> = []
    const result = yield* Statement.withTransformer(effect, (statement) =>
      Effect.sync(() => {
        const [text] = statement.compile()
        sent.push(
          text.includes("tillflow_append_chained(") ? "append" : text.includes("FROM streams") ? "head" : text
        )
        return statement
      })
    )
    return { result, sent }
  })

const happened = (n: number): EventStore.NewEvent => ({ type: "Happened", data: { n } })

const sqlStoreSuite = <E>(
  name: string,
  storeLayer: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient, E>
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
          "append_reporting_head"
        ])
      })
    )
  })

describe("SqlEventStore", () => {
  sqlStoreSuite("on PostgreSQL (fresh database)", TestDatabase.layer)
  sqlStoreSuite("on PGlite", PgliteEventStore.layer({ pollInterval: "50 millis" }))
})
