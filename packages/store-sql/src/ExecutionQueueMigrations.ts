/**
 * The schema of the workflow engine's execution queue, as @effect/sql migrations shipped
 * inside the package and recorded in their own table (`tillflow_engine_migrations`), next
 * to the event store's: the two evolve independently on one database. `SqlExecutionQueue`
 * runs them at start-up; the Migrator locks its table, so concurrent start-ups apply each
 * migration once.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** The table where applied migrations are recorded. */
export const table = "tillflow_engine_migrations"

const createExecutionQueue = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // One row per execution. Times are epoch milliseconds from the engine's clock (the same
  // clock that wrote the timers into the event store). `due_at` is when the row is next
  // claimable: its run time (pending), its timer (suspended) or its lease expiry (running).
  yield* sql`
    CREATE TABLE tillflow_executions (
      execution_id    text    PRIMARY KEY,
      workflow_name   text    NOT NULL,
      status          text    NOT NULL CHECK (status IN
                        ('pending', 'running', 'suspended', 'succeeded', 'failed', 'interrupted', 'stuck')),
      due_at          bigint,
      lease_owner     text,
      wake_requested  boolean NOT NULL DEFAULT false,
      concurrency_key text,
      parent_id       text,
      attributes      jsonb   NOT NULL DEFAULT '{}'::jsonb,
      claims          integer NOT NULL DEFAULT 0,
      created_at      bigint  NOT NULL,
      updated_at      bigint  NOT NULL,
      seq             bigint  GENERATED ALWAYS AS IDENTITY
    )`
  yield* sql`
    CREATE INDEX tillflow_executions_due ON tillflow_executions (due_at, seq)
    WHERE status IN ('pending', 'running', 'suspended')`
  yield* sql`CREATE INDEX tillflow_executions_by_workflow ON tillflow_executions (workflow_name, status, seq)`
  yield* sql`CREATE INDEX tillflow_executions_by_attributes ON tillflow_executions USING gin (attributes jsonb_path_ops)`
  yield* sql`
    CREATE INDEX tillflow_executions_by_key ON tillflow_executions (concurrency_key)
    WHERE concurrency_key IS NOT NULL`
  // Which unfinished execution holds a concurrency key. The primary key is the mutex: two
  // workers claiming executions with one key serialise on this row.
  yield* sql`
    CREATE TABLE tillflow_concurrency_holders (
      concurrency_key text PRIMARY KEY,
      execution_id    text NOT NULL
    )`
})

/** The LISTEN/NOTIFY channel on which changed execution ids are announced. */
export const channel = "tillflow_executions"

const notifyChanges = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Announces an execution that became due (pending, or suspended on a timer) or finished
  // (its concurrency key may free another one), so workers and waiting callers in other
  // processes wake at once. Sent at commit; duplicates within a transaction collapse.
  yield* sql`
    CREATE FUNCTION tillflow_executions_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('tillflow_executions', NEW.execution_id);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER tillflow_executions_changed
    AFTER INSERT OR UPDATE OF status, due_at ON tillflow_executions
    FOR EACH ROW
    WHEN (NEW.status IN ('pending', 'succeeded', 'failed', 'interrupted', 'stuck')
          OR (NEW.status = 'suspended' AND NEW.due_at IS NOT NULL))
    EXECUTE FUNCTION tillflow_executions_notify()`
})

// Claims take executions already started (claimed before: woken, timer due, retrying,
// lease expired) before executions never claimed, each group oldest due first; a single
// `ORDER BY due_at, seq` made a woken execution wait behind every first run of a burst of
// new ones. An execution never claimed is always pending, so the two partial indexes
// cover every claimable row between them, and each serves one part of the claim (and of
// `nextDueAt`) in order.
const claimStartedFirst = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX tillflow_executions_due_started ON tillflow_executions (due_at, seq)
    WHERE status IN ('pending', 'running', 'suspended') AND claims > 0`
  yield* sql`
    CREATE INDEX tillflow_executions_due_new ON tillflow_executions (due_at, seq)
    WHERE status = 'pending' AND claims = 0`
  yield* sql`DROP INDEX IF EXISTS tillflow_executions_due`
})

// The queue sends its NOTIFY itself, after its statement commits (`SqlExecutionQueue`).
// A NOTIFY inside the claiming, releasing or enqueuing transaction (the trigger of
// `2_notify_changes`) takes PostgreSQL's server-wide notify lock from pre-commit until
// after the commit's WAL flush, so those commits, and every other notifying commit of the
// server (the event store's appends then), could not share a flush (group commit).
const notifyAfterCommit = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TRIGGER IF EXISTS tillflow_executions_changed ON tillflow_executions`
  yield* sql`DROP FUNCTION IF EXISTS tillflow_executions_notify()`
})

// The execution's event stream, given at enqueue by the engine, so that a queue in the
// event store's own database can answer the stream's version with each claim (the engine
// then skips reading a history it holds at that version). Rows enqueued before, or
// without it, answer no version: the engine reads the stream as before.
const executionStream = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tillflow_executions ADD COLUMN stream_id text`
})

// When an execution waiting for its concurrency key must have started by: past it, it
// leaves the key's line (`expireStartDeadlines`). The partial index holds only the rows
// still waiting, so the check each worker makes every second costs the same however many
// executions were ever stored.
const startBy = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tillflow_executions ADD COLUMN start_by bigint`
  yield* sql`
    CREATE INDEX tillflow_executions_start_by ON tillflow_executions (start_by)
    WHERE status = 'pending' AND claims = 0 AND concurrency_key IS NOT NULL AND start_by IS NOT NULL`
})

/** Every migration of the execution queue, by `id_name`. */
export const migrations = {
  "1_create_execution_queue": createExecutionQueue,
  "2_notify_changes": notifyChanges,
  "3_claim_started_first": claimStartedFirst,
  "4_notify_after_commit": notifyAfterCommit,
  "5_execution_stream": executionStream,
  "6_start_by": startBy
} as const

/** Applies the pending migrations; returns the ones applied now. */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })
