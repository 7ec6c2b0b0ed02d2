/**
 * The rows the execution queue's statements answer, their decoders, and what they become
 * for the port: `ExecutionInfo`, and `ExecutionQueueError` for a failed statement.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { ExecutionQueue } from "@tillflow/engine"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

// int8 columns arrive as numbers or as text, depending on the driver's parsers.
const Int8 = Schema.Union(Schema.Number, Schema.NumberFromString)

const ExecutionRow = Schema.Struct({
  execution_id: Schema.String,
  workflow_name: Schema.String,
  status: ExecutionQueue.ExecutionStatus,
  due_at: Schema.NullOr(Int8),
  lease_owner: Schema.NullOr(Schema.String),
  concurrency_key: Schema.NullOr(Schema.String),
  parent_id: Schema.NullOr(Schema.String),
  tenant: Schema.NullOr(Schema.String),
  attributes: ExecutionQueue.SearchAttributes,
  claims: Schema.Number,
  created_at: Int8,
  updated_at: Int8
})
export const decodeExecutionRows = Schema.decodeUnknown(Schema.Array(ExecutionRow))

const ClaimedOrNextRow = Schema.Struct({
  execution_id: Schema.NullOr(Schema.String),
  workflow_name: Schema.NullOr(Schema.String),
  parent_id: Schema.NullOr(Schema.String),
  claims: Schema.NullOr(Schema.Number),
  stream_version: Schema.NullOr(Int8),
  next_due: Schema.NullOr(Int8)
})
export const decodeClaimedWithNext = Schema.decodeUnknown(Schema.Array(ClaimedOrNextRow))

const IdRow = Schema.Struct({ execution_id: Schema.String })
export const decodeIds = Schema.decodeUnknown(Schema.Array(IdRow))

const LeasedRow = Schema.Struct({ execution_id: Schema.String, leased: Schema.Boolean })
export const decodeLeased = Schema.decodeUnknown(Schema.Array(LeasedRow))

const ReleasedRow = Schema.Struct({
  execution_id: Schema.String,
  status: ExecutionQueue.ExecutionStatus,
  due_at: Schema.NullOr(Int8)
})
export const decodeReleased = Schema.decodeUnknown(Schema.Array(ReleasedRow))

/** A row a wake or a release changed, as it is after the change. */
export type Released = typeof ReleasedRow.Type

/**
 * True for a row state other processes are told about: due to run (pending, or
 * suspended on a timer), finished (its key may free another), or stuck.
 */
export const announced = (row: Released): boolean =>
  row.status === "suspended" ? row.due_at !== null : row.status !== "running"

const NextRow = Schema.Struct({ next: Schema.NullOr(Int8) })
export const decodeNext = Schema.decodeUnknown(Schema.Array(NextRow))

const TransitionRow = Schema.Struct({
  entry: Schema.Number,
  execution_id: Schema.String,
  status: ExecutionQueue.ExecutionStatus,
  due_at: Schema.NullOr(Int8)
})
export const decodeTransitions = Schema.decodeUnknown(Schema.Array(TransitionRow))

const TenantTallyRow = Schema.Struct({ tenant: Schema.String, running: Int8, waiting: Int8 })
export const decodeTenantTally = Schema.decodeUnknown(Schema.Array(TenantTallyRow))

const StoreTableRow = Schema.Struct({ present: Schema.Boolean })
export const decodeStoreTable = Schema.decodeUnknown(Schema.Array(StoreTableRow))

// The row was decoded by `ExecutionRow`: the class is built without validating it again.
export const toInfo = (row: typeof ExecutionRow.Type): ExecutionQueue.ExecutionInfo =>
  new ExecutionQueue.ExecutionInfo(
    {
      executionId: row.execution_id,
      workflowName: row.workflow_name,
      status: row.status,
      dueAt: row.due_at,
      leaseOwner: row.lease_owner,
      concurrencyKey: row.concurrency_key,
      parentId: row.parent_id,
      tenant: row.tenant,
      attributes: row.attributes,
      claims: row.claims,
      createdAt: row.created_at,
      updatedAt: row.updated_at
    },
    true
  )

/** The port's error for a failed statement or row of `operation`. */
export const failure = (operation: string) => (cause: SqlError | ParseResult.ParseError) =>
  new ExecutionQueue.ExecutionQueueError({ operation, message: cause.message })
