/**
 * The in-process PGlite client: one session, so transactions and statements must never
 * interleave; savepoints; LISTEN/NOTIFY; result types that match @effect/sql-pg.
 */
import { expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgliteClient } from "@tillflow/store-sql"
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"

class Boom {
  readonly _tag = "Boom"
}

layer(PgliteClient.layer({}), { excludeTestServices: true, timeout: 60_000 })("PgliteClient", (it) => {
  it.effect("serialises transactions: 20 concurrent read-modify-write transactions lose no update", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)`
      yield* sql`INSERT INTO counter VALUES (1, 0)`
      yield* Effect.forEach(
        Arr.range(1, 20),
        () =>
          sql.withTransaction(
            Effect.gen(function* () {
              const [row] = yield* sql<{ readonly n: number }>`SELECT n FROM counter WHERE id = 1`
              yield* Effect.yieldNow()
              yield* Effect.sleep("1 millis")
              yield* sql`UPDATE counter SET n = ${row.n + 1} WHERE id = 1`
            })
          ),
        { concurrency: "unbounded", discard: true }
      )
      const [row] = yield* sql<{ readonly n: number }>`SELECT n FROM counter WHERE id = 1`
      expect(row.n).toBe(20)
    })
  )

  it.effect("a statement outside a transaction waits for the open transaction instead of joining it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE notes (text text NOT NULL)`
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const transaction = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO notes VALUES ('rolled back')`
            yield* Deferred.succeed(inside, undefined)
            yield* Deferred.await(release)
            return yield* Effect.fail(new Boom())
          })
        )
        .pipe(Effect.fork)
      yield* Deferred.await(inside)
      const outside = yield* sql`INSERT INTO notes VALUES ('committed')`.pipe(Effect.fork)
      yield* Effect.sleep("50 millis")
      expect(outside.unsafePoll()).toBeNull()
      yield* Deferred.succeed(release, undefined)
      expect((yield* Effect.flip(Fiber.join(transaction)))._tag).toBe("Boom")
      yield* Fiber.join(outside)
      const rows = yield* sql<{ readonly text: string }>`SELECT text FROM notes`
      expect(rows.map((row) => row.text)).toEqual(["committed"])
    })
  )

  it.effect("a nested transaction rolls back to its savepoint and keeps the outer work", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE steps (step text NOT NULL)`
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`INSERT INTO steps VALUES ('outer')`
          yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* sql`INSERT INTO steps VALUES ('inner')`
                return yield* Effect.fail(new Boom())
              })
            )
            .pipe(Effect.ignore)
        })
      )
      const rows = yield* sql<{ readonly step: string }>`SELECT step FROM steps`
      expect(rows.map((row) => row.step)).toEqual(["outer"])
    })
  )

  it.effect(
    "returns int8 and numeric as strings, timestamptz as Date, jsonb parsed, like @effect/sql-pg",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{
          readonly big: unknown
          readonly amount: unknown
          readonly at: unknown
          readonly doc: unknown
        }>`SELECT 9007199254740993::int8 AS big, 10.25::numeric AS amount,
           '2024-01-02T03:04:05Z'::timestamptz AS at, '{"b":[1,2]}'::jsonb AS doc`
        expect(row.big).toBe("9007199254740993")
        expect(row.amount).toBe("10.25")
        expect(row.at).toEqual(new Date("2024-01-02T03:04:05Z"))
        expect(row.doc).toEqual({ b: [1, 2] })
      })
  )

  it.effect("LISTEN receives a NOTIFY when the notifying transaction commits", () =>
    Effect.gen(function* () {
      const client = yield* PgliteClient.PgliteClient
      const received = yield* Deferred.make<string>()
      const listener = yield* client.listen("pings").pipe(
        Stream.take(1),
        Stream.runForEach((payload) => Deferred.succeed(received, payload)),
        Effect.fork
      )
      // LISTEN is set up on the listener's first pull; notify until one arrives.
      let sent = 0
      while (!(yield* Deferred.isDone(received)) && sent < 20) {
        yield* client.withTransaction(client.notify("pings", `ping ${sent}`))
        sent++
        yield* Deferred.await(received).pipe(Effect.timeout("100 millis"), Effect.ignore)
      }
      expect(yield* Deferred.await(received)).toMatch(/^ping \d+$/)
      yield* Fiber.join(listener)
    })
  )
})
