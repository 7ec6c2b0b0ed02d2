/**
 * When the queue next needs a worker: the earliest due time of the workflows' executions,
 * by the clock alone after a claim (`afterNow`, what a worker sleeps until) or of any
 * active execution (`earliest`, the port's `nextDueAt`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { decodeNext, failure } from "./Rows.js"
import * as Statements from "./Statements.js"

/**
 * The earliest time after `now` at which an execution of the workflows falls due by the
 * clock alone (`Statements.nextDue`); its failure is the claim's, which it answers for.
 */
export const afterNow = (
  sql: SqlClient.SqlClient,
  workflowNames: ReadonlyArray<string>,
  now: number
): Effect.Effect<Option.Option<number>, ExecutionQueue.ExecutionQueueError> =>
  Statements.nextDueAfter(sql, workflowNames, now).pipe(
    Effect.flatMap(decodeNext),
    Effect.map((rows) => Option.fromNullable(rows[0]?.next ?? null)),
    Effect.mapError(failure("claim"))
  )

/** The earliest time any execution of these workflows becomes due (the port's `nextDueAt`). */
export const earliest = (
  sql: SqlClient.SqlClient,
  workflowNames: ReadonlyArray<string>
): Effect.Effect<Option.Option<number>, ExecutionQueue.ExecutionQueueError> =>
  workflowNames.length === 0
    ? Effect.succeed(Option.none())
    : Statements.nextDueAt(sql, workflowNames).pipe(
        Effect.flatMap(decodeNext),
        Effect.map((rows) => Option.fromNullable(rows[0]?.next ?? null)),
        Effect.mapError(failure("nextDueAt"))
      )
