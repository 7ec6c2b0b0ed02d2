/**
 * The queue's visibility queries: one execution (`get`), those matching a filter (`list`),
 * as the port's `ExecutionInfo`, how many match (`count`), and the tallies a metrics
 * scrape reads (by workflow and status, `tally`; by tenant, `tallyByTenant`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { decodeExecutionRows, decodeTenantTally, failure, toInfo } from "./Rows.js"
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

/** True when the filter can match nothing: an empty status or tenant list. */
const matchesNothing = (filter: ExecutionQueue.ListFilter, statuses: ReadonlyArray<string> | undefined) =>
  (statuses !== undefined && statuses.length === 0) || filter.tenants?.length === 0

/**
 * Executions matching a filter, oldest first or newest first as it asks; none, without a
 * statement, for an empty status or tenant list.
 */
export const list = (
  sql: SqlClient.SqlClient,
  filter: ExecutionQueue.ListFilter
): Effect.Effect<ReadonlyArray<ExecutionQueue.ExecutionInfo>, ExecutionQueue.ExecutionQueueError> => {
  const statuses = statusesOf(filter)
  if (matchesNothing(filter, statuses)) return Effect.succeed([])
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

/** How many executions match a filter; 0, without a statement, for an empty status or tenant list. */
export const count = (
  sql: SqlClient.SqlClient,
  filter: ExecutionQueue.ListFilter
): Effect.Effect<number, ExecutionQueue.ExecutionQueueError> => {
  const statuses = statusesOf(filter)
  if (matchesNothing(filter, statuses)) return Effect.succeed(0)
  return Statements.count(sql, filter, statuses).pipe(
    Effect.map((rows) => Number(rows[0]?.count ?? 0)),
    Effect.mapError(failure("count"))
  )
}

/** Per tenant, how many executions run under an unexpired lease and how many wait due at `now`. */
export const tallyByTenant = (
  sql: SqlClient.SqlClient,
  now: number
): Effect.Effect<ReadonlyArray<ExecutionQueue.TenantTally>, ExecutionQueue.ExecutionQueueError> =>
  Statements.tallyByTenant(sql, now).pipe(
    Effect.flatMap(decodeTenantTally),
    Effect.map((rows) =>
      rows.map((row) => ({ tenant: row.tenant, running: row.running, waiting: row.waiting }))
    ),
    Effect.mapError(failure("tallyByTenant"))
  )
