/**
 * The late-commit hazard, reproduced on PostgreSQL: transaction T1 takes a global position,
 * T2 takes a higher one and commits first, T1 commits last. A reader that keeps
 * `global_position > checkpoint` moves past T2's event and never sees T1's. The store's
 * (transaction_id, global_position) reader below the snapshot's xmin waits for T1 instead.
 * PGlite has one session, so the race cannot happen there: this file needs PostgreSQL.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@tillflow/engine"
import { TestDatabase } from "@tillflow/store-sql"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { endOfLog, freshStream } from "@tillflow/engine/testing"

const postgresAvailable = TestDatabase.postgresExpected

describe.skipIf(!postgresAvailable)("late-commit hazard (PostgreSQL)", () => {
  layer(TestDatabase.layerWith({ pollInterval: "10 millis" }), {
    excludeTestServices: true,
    timeout: 60_000
  })((it) => {
    it.effect(
      "a subscriber delivers every event exactly once in (transaction, position) order when the lower position commits last, where a position-only reader skips one",
      () =>
        Effect.gen(function* () {
          const db = yield* TestDatabase.TestDatabase
          expect(db.kind).toBe("postgres")
          const sql = yield* SqlClient.SqlClient
          const store = yield* EventStore.EventStore
          const start = yield* endOfLog(store)
          const startPosition = start.globalPosition

          const delivered: Array<EventStore.RecordedEvent> = []
          const sentinelStream = freshStream("late-sentinel")
          const subscriber = yield* store.subscribe(start).pipe(
            Stream.tap((event) => Effect.sync(() => delivered.push(event))),
            Stream.takeUntil((event) => event.streamId === sentinelStream),
            Stream.runDrain,
            Effect.fork
          )

          // T1: appends through the store inside an outer transaction held open (its own
          // connection from the pool), so it has the LOWER global position but does not commit.
          const t1Stream = freshStream("late-t1")
          const t1Appended = yield* Deferred.make<EventStore.AppendResult>()
          const releaseT1 = yield* Deferred.make<void>()
          const t1 = yield* sql
            .withTransaction(
              Effect.gen(function* () {
                const result = yield* store.append(t1Stream, EventStore.NoStream, [
                  { type: "LateCommitted", data: { which: "T1" } }
                ])
                yield* Deferred.succeed(t1Appended, result)
                yield* Deferred.await(releaseT1)
              })
            )
            .pipe(Effect.fork)
          const t1Result = yield* Deferred.await(t1Appended)

          // T2: a later transaction with a HIGHER position commits first.
          const t2Stream = freshStream("late-t2")
          const t2Result = yield* store.append(t2Stream, EventStore.NoStream, [
            { type: "EarlyCommitted", data: { which: "T2" } }
          ])
          expect(t2Result.positions[0]).toBeGreaterThan(t1Result.positions[0])

          // The naive reader, now: sees T2's event only and moves its checkpoint past T1's position.
          const naive = (after: bigint) =>
            sql<{ readonly global_position: string }>`SELECT global_position::text AS global_position
                FROM events WHERE global_position > ${after.toString()}::bigint ORDER BY global_position`.pipe(
              Effect.map((rows) => rows.map((row) => BigInt(row.global_position)))
            )
          const naiveFirst = yield* naive(startPosition)
          expect(naiveFirst).toEqual([t2Result.positions[0]])
          const naiveCheckpoint = naiveFirst[0]

          // The store's reader holds T2's event back while T1 is still running …
          expect((yield* store.readAll(start, { maxCount: 100 })).events).toEqual([])
          // … and so does the subscriber, polling every 10 ms meanwhile.
          yield* Effect.sleep("300 millis")
          expect(delivered).toEqual([])

          // T1 commits last.
          yield* Deferred.succeed(releaseT1, undefined)
          yield* Fiber.join(t1)

          // The hazard is real: after its checkpoint, the naive reader never sees T1's event.
          expect(yield* naive(naiveCheckpoint)).toEqual([])
          expect(yield* naive(startPosition)).toEqual([t1Result.positions[0], t2Result.positions[0]])

          yield* store.append(sentinelStream, EventStore.NoStream, [{ type: "Sentinel", data: {} }])
          yield* Fiber.join(subscriber).pipe(Effect.timeout("20 seconds"))

          expect(delivered.map((e) => e.streamId)).toEqual([t1Stream, t2Stream, sentinelStream])
          const [first, second] = delivered
          expect(first.transactionId < second.transactionId).toBe(true)
          expect(first.globalPosition).toBe(t1Result.positions[0])
          expect(second.globalPosition).toBe(t2Result.positions[0])
          // A fresh read of the log agrees with what was delivered, once each.
          const all = yield* store.readAll(start, { maxCount: 100 })
          expect(all.events.map((e) => e.eventId)).toEqual(delivered.map((e) => e.eventId))
          expect(Chunk.size(Chunk.dedupe(Chunk.fromIterable(delivered.map((e) => e.eventId))))).toBe(3)
        })
    )

    it.effect(
      "a report's read (settle) waits for the transactions in flight at its call: it holds an event committed just before, which a plain read holds back while another transaction is open",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const store = yield* EventStore.EventStore
          const start = yield* endOfLog(store)

          // T1 holds a transaction open that has written (so it holds xmin back).
          const t1Stream = freshStream("settle-t1")
          const t1Appended = yield* Deferred.make<void>()
          const releaseT1 = yield* Deferred.make<void>()
          const t1 = yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* store.append(t1Stream, EventStore.NoStream, [{ type: "Held", data: {} }])
                yield* Deferred.succeed(t1Appended, undefined)
                yield* Deferred.await(releaseT1)
              })
            )
            .pipe(Effect.fork)
          yield* Deferred.await(t1Appended)

          // The write a report is asked about, committed.
          const written = freshStream("settle-written")
          yield* store.append(written, EventStore.NoStream, [{ type: "Resolved", data: {} }])

          // A plain read holds it back while T1 runs; a settled read past its bound too.
          expect((yield* store.readAll(start, { maxCount: 100 })).events).toEqual([])
          expect((yield* store.readAll(start, { maxCount: 100, settle: "100 millis" })).events).toEqual([])

          // A settled read waits for T1 to end (released while it waits) and holds both.
          const report = yield* store
            .readAll(start, { maxCount: 100, settle: "20 seconds" })
            .pipe(Effect.fork)
          yield* Effect.sleep("200 millis")
          yield* Deferred.succeed(releaseT1, undefined)
          yield* Fiber.join(t1)
          const page = yield* Fiber.join(report)
          expect(page.events.map((e) => e.streamId)).toEqual([t1Stream, written])
        })
    )
  })
})
