import { ExecutionQueue } from "@tillflow/engine"
import { SqlExecutionQueue } from "@tillflow/store-sql"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * A queue whose `changes` are those a second queue on the same database hears: what "other
 * processes" are told. On PGlite a queue is not told what it announced itself (its process
 * knows), so the notification contract listens from a second queue on both databases.
 */
export const heardByAnotherQueue = <E, R>(
  database: Layer.Layer<SqlClient.SqlClient, E, R>
): Layer.Layer<ExecutionQueue.ExecutionQueue, E | ExecutionQueue.ExecutionQueueError, R> =>
  Layer.scoped(
    ExecutionQueue.ExecutionQueue,
    Effect.gen(function* () {
      const announcer = yield* ExecutionQueue.ExecutionQueue
      const listener = yield* SqlExecutionQueue.make
      return { ...announcer, changes: listener.changes }
    })
  ).pipe(Layer.provide(SqlExecutionQueue.layer), Layer.provide(database))
