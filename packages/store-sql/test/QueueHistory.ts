/**
 * A long history for the execution queue's tests: completed executions as runs leave them
 * (enqueued with a key, claimed, suspended, finished), each status change an UPDATE, so the
 * table and its partial indexes hold the dead row versions and entries runs leave behind.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** How many completed executions `fill` writes. */
export const completed = 20_000

/** A clock past every due time of the history. */
export const now = 10_000_000

/** Writes the history; with `startBy`, each execution was enqueued with a start deadline too. */
export const fill = (options: { readonly startBy: boolean }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* options.startBy
      ? sql`
          INSERT INTO tillflow_executions
            (execution_id, workflow_name, status, due_at, concurrency_key, start_by, created_at, updated_at)
          SELECT 'done-' || g, 'Sale', 'pending', 1000 + g, 'terminal:' || (g % 500), 61000 + g, 1000 + g, 1000 + g
          FROM generate_series(1, ${completed}) g`
      : sql`
          INSERT INTO tillflow_executions
            (execution_id, workflow_name, status, due_at, concurrency_key, created_at, updated_at)
          SELECT 'done-' || g, 'Sale', 'pending', 1000 + g, 'terminal:' || (g % 500), 1000 + g, 1000 + g
          FROM generate_series(1, ${completed}) g`
    yield* sql`UPDATE tillflow_executions SET status = 'running', claims = 1, due_at = due_at + 30000, updated_at = updated_at + 1`
    yield* sql`UPDATE tillflow_executions SET status = 'suspended', due_at = due_at + 60000, updated_at = updated_at + 2`
    yield* sql`UPDATE tillflow_executions SET status = 'succeeded', due_at = NULL, updated_at = updated_at + 3`
  })
