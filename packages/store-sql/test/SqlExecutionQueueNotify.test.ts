/**
 * The SQL queue's announcements inside a caller's transaction: sent with it (delivered at
 * its commit), never for a rollback, on PostgreSQL (PGlite when DATABASE_URL is unset) and
 * PGlite in memory.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { ExecutionQueue } from "@tillflow/engine"
import { PgliteClient, SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"

const unique = () => globalThis.crypto.randomUUID()

const announcedWithTheTransaction = (name: string, database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(SqlExecutionQueue.layer.pipe(Layer.provideMerge(database)), {
    timeout: 60_000,
    excludeTestServices: true
  })(`SqlExecutionQueue announcements on ${name}`, (it) => {
    it.effect("inside a caller's transaction an announcement goes with it: none for a rollback", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const sql = yield* SqlClient.SqlClient
        const heard = yield* Queue.unbounded<string>()
        yield* queue.changes.pipe(
          Stream.runForEach((id) => Queue.offer(heard, id)),
          Effect.forkScoped
        )
        // Give the LISTEN a moment to be in place before the first NOTIFY.
        yield* Effect.sleep("200 millis")
        const enqueue = (executionId: string) =>
          queue.enqueue({
            executionId,
            workflowName: "w",
            concurrencyKey: undefined,
            parentId: undefined,
            attributes: {},
            now: 1_000
          })
        const rolledBack = unique()
        const outcome = yield* enqueue(rolledBack).pipe(
          Effect.zipRight(Effect.fail("rolled back" as const)),
          sql.withTransaction,
          Effect.flip
        )
        expect(outcome).toBe("rolled back")
        expect(Option.isNone(yield* queue.get(rolledBack))).toBe(true)
        const committed = unique()
        yield* enqueue(committed).pipe(sql.withTransaction)
        // The first announcement heard is the committed one: the rolled-back enqueue sent none.
        expect(yield* Queue.take(heard).pipe(Effect.timeout("10 seconds"))).toBe(committed)
      }).pipe(Effect.scoped)
    )
  })

announcedWithTheTransaction("PostgreSQL (fresh database)", TestDatabase.layer)
announcedWithTheTransaction("PGlite in memory", PgliteClient.layer({}))
