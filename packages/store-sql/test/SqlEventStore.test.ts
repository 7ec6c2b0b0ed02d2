/**
 * Behaviour of the SQL store beyond the shared contract, on PostgreSQL (fresh database,
 * PGlite when DATABASE_URL is unset) and on PGlite: notifications across store instances,
 * migrations applied once.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore, HashChain } from "@tillflow/core"
import { EventStoreMigrations, PgliteEventStore, SqlEventStore, TestDatabase } from "@tillflow/store-sql"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { endOfLog, freshStream } from "./EventStoreContract.js"

const sqlStoreSuite = <E>(
  name: string,
  storeLayer: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient, E>
) =>
  layer(storeLayer, { excludeTestServices: true, timeout: 60_000 })(name, (it) => {
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
          "append_function"
        ])
      })
    )
  })

describe("SqlEventStore", () => {
  sqlStoreSuite("on PostgreSQL (fresh database)", TestDatabase.layer)
  sqlStoreSuite("on PGlite", PgliteEventStore.layer({ pollInterval: "50 millis" }))
})
