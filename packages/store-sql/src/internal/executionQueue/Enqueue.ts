/**
 * Enqueues: a new execution's row, due at once. Made outside a caller's transaction while
 * `maxInFlight` of them are in flight, they wait and go together as ONE statement
 * (`Coalescer`, `enqueueMany`); each inserted row is announced.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Coalescer from "../Coalescer.js"
import type { Announce } from "./Announcements.js"
import { decodeIds, decodeLeased, failure } from "./Rows.js"
import * as Statements from "./Statements.js"

// An enqueue alone: one statement.
const enqueueOne = (sql: SqlClient.SqlClient, input: Statements.EnqueueInput) =>
  Statements.enqueueOne(sql, input).pipe(
    Effect.flatMap(decodeIds),
    Effect.map((rows) => rows.length > 0)
  )

// Enqueues of different executions as ONE statement and transaction, each answering
// whether its own row was inserted. Rows are inserted in execution id order, so two
// such statements inserting the same ids wait on each other in one order only.
const enqueueMany = (sql: SqlClient.SqlClient, inputs: ReadonlyArray<Statements.EnqueueInput>) => {
  const entries = JSON.stringify(
    inputs.map((input) => ({
      execution_id: input.executionId,
      workflow_name: input.workflowName,
      concurrency_key: input.concurrencyKey ?? null,
      parent_id: input.parentId ?? null,
      attributes: input.attributes,
      stream_id: input.stream ?? null,
      start_by: Statements.startByOf(input),
      tenant: input.tenant ?? null,
      now: input.now
    }))
  )
  return Statements.enqueueMany(sql, entries).pipe(
    Effect.flatMap(decodeIds),
    Effect.map((rows) => {
      const inserted = new Set(rows.map((row) => row.execution_id))
      return inputs.map((input) => inserted.has(input.executionId))
    })
  )
}

/** The enqueue of a queue over `sql`, coalesced beyond `maxInFlight`. */
export const make = (options: {
  readonly sql: SqlClient.SqlClient
  readonly maxInFlight: number
  readonly maxCoalesced: number
  readonly announce: Announce
}): ((input: Statements.EnqueueInput) => Effect.Effect<boolean, ExecutionQueue.ExecutionQueueError>) => {
  const { announce, maxCoalesced, maxInFlight, sql } = options
  const coalescedEnqueue = Coalescer.make({
    maxInFlight,
    maxCoalesced,
    key: (input: Statements.EnqueueInput) => input.executionId,
    one: (input: Statements.EnqueueInput) => enqueueOne(sql, input),
    many: (inputs: ReadonlyArray<Statements.EnqueueInput>) => enqueueMany(sql, inputs)
  })
  return (input) =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (connection) =>
      Option.isSome(connection) ? enqueueOne(sql, input) : coalescedEnqueue(input)
    ).pipe(
      Effect.tap((inserted) => (inserted ? announce([input.executionId]) : Effect.void)),
      Effect.mapError(failure("enqueue"))
    )
}

/**
 * The start leased of a queue over `sql` (`ExecutionQueue.enqueueLeased`): one statement,
 * never coalesced (its caller runs the execution at once). A row inserted pending, waiting
 * for its key, is announced as an enqueued one is; a row inserted leased is not (it is
 * running, and no other worker may take it).
 */
export const makeLeased =
  (options: { readonly sql: SqlClient.SqlClient; readonly announce: Announce }) =>
  (
    input: Statements.EnqueueLeasedInput
  ): Effect.Effect<ExecutionQueue.EnqueueLeased, ExecutionQueue.ExecutionQueueError> =>
    Statements.enqueueLeased(options.sql, input).pipe(
      Effect.flatMap(decodeLeased),
      Effect.flatMap((rows): Effect.Effect<ExecutionQueue.EnqueueLeased, SqlError> => {
        const row = rows[0]
        if (row === undefined) return Effect.succeed({ inserted: false, claim: undefined })
        if (!row.leased)
          return Effect.as(options.announce([input.executionId]), { inserted: true, claim: undefined })
        return Effect.succeed({
          inserted: true,
          claim: {
            executionId: input.executionId,
            workflowName: input.workflowName,
            parentId: input.parentId ?? null,
            claims: 1,
            leaseUntil: input.now + input.leaseMs
          }
        })
      }),
      Effect.mapError(failure("enqueueLeased"))
    )
