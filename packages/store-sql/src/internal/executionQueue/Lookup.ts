/**
 * The queue's visibility queries: one execution (`get`), those matching a filter (`list`),
 * as the port's `ExecutionInfo`, and how many match (`count`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { decodeExecutionRows, failure, toInfo } from "./Rows.js"
import * as Statements from "./Statements.js"

/** One execution. */
export const get = (
  sql: SqlClient.SqlClient,
  executionId: string
): Effect.Effect<Option.Option<ExecutionQueue.ExecutionInfo>, ExecutionQueue.ExecutionQueueError> =>
  Statements.get(sql, executionId).pipe(
    Effect.flatMap(decodeExecutionRows),
    Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toInfo)),
    Effect.mapError(failure("get"))
  )

const statusesOf = (filter: ExecutionQueue.ListFilter) =>
  filter.status === undefined
    ? undefined
    : typeof filter.status === "string"
      ? [filter.status]
      : filter.status

/**
 * Executions matching a filter, oldest first or newest first as it asks; none, without a
 * statement, for an empty status list.
 */
export const list = (
  sql: SqlClient.SqlClient,
  filter: ExecutionQueue.ListFilter
): Effect.Effect<ReadonlyArray<ExecutionQueue.ExecutionInfo>, ExecutionQueue.ExecutionQueueError> => {
  const statuses = statusesOf(filter)
  if (statuses !== undefined && statuses.length === 0) return Effect.succeed([])
  return Statements.list(sql, filter, statuses).pipe(
    Effect.flatMap(decodeExecutionRows),
    Effect.map((rows) => rows.map(toInfo)),
    Effect.mapError(failure("list"))
  )
}

/** How many executions of each workflow are in each status, counted in one statement. */
export const tally = (
  sql: SqlClient.SqlClient
): Effect.Effect<ReadonlyArray<ExecutionQueue.Tally>, ExecutionQueue.ExecutionQueueError> =>
  Statements.tally(sql).pipe(
    Effect.map((rows) =>
      rows.map((row) => ({
        workflowName: row.workflow_name,
        status: row.status as ExecutionQueue.ExecutionStatus,
        count: Number(row.count)
      }))
    ),
    Effect.mapError(failure("tally"))
  )

/** How many executions match a filter; 0, without a statement, for an empty status list. */
export const count = (
  sql: SqlClient.SqlClient,
  filter: ExecutionQueue.ListFilter
): Effect.Effect<number, ExecutionQueue.ExecutionQueueError> => {
  const statuses = statusesOf(filter)
  if (statuses !== undefined && statuses.length === 0) return Effect.succeed(0)
  return Statements.count(sql, filter, statuses).pipe(
    Effect.map((rows) => Number(rows[0]?.count ?? 0)),
    Effect.mapError(failure("count"))
  )
}
