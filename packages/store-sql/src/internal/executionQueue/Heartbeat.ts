/**
 * Lease renewal: a worker's heartbeat pushes the lease (`due_at` of a running row) of the
 * executions it still holds forward, so no other worker takes them over while it runs them.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import { decodeIds, failure } from "./Rows.js"
import * as Statements from "./Statements.js"

/** Renews the leases `workerId` still holds; answers the ids it still holds. */
export const heartbeat = (
  sql: SqlClient.SqlClient,
  options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["heartbeat"]>[0]
): Effect.Effect<ReadonlyArray<string>, ExecutionQueue.ExecutionQueueError> =>
  options.executionIds.length === 0
    ? Effect.succeed([])
    : Statements.heartbeat(sql, options).pipe(
        Effect.flatMap(decodeIds),
        Effect.map((rows) => rows.map((row) => row.execution_id)),
        Effect.mapError(failure("heartbeat"))
      )
