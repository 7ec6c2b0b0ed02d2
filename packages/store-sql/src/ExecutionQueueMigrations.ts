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

// Where the scans of the due-time indexes start (`tillflow_queue_floors`, one row): no
// active execution is due before `due_floor`, none waiting for its key has a start deadline
// before `start_by_floor`. Every finished run leaves dead entries in those partial indexes
// at its old due time and deadline, on pages no insertion reaches again (keys only grow),
// which only VACUUM removes; a scan from the oldest end walked all of them (15,000 pages
// per claim with 1M executions stored). The claim, `nextDueAt` and `expireStartDeadlines`
// read from the floors on; the queue moves them up now and then (`internal/executionQueue/
// Floors`), and these triggers move them down in the writing statement itself when a row
// is written due (or with a deadline) below them, so the floors never pass a live row.
const scanFloors = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE tillflow_queue_floors (
      singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      due_floor      bigint  NOT NULL,
      start_by_floor bigint  NOT NULL
    )`
  yield* sql`
    CREATE FUNCTION tillflow_executions_lower_floors() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      due bigint;
      start bigint;
    BEGIN
      SELECT min(due_at) FILTER (WHERE status IN ('pending', 'running', 'suspended')),
             min(start_by) FILTER (WHERE status = 'pending' AND claims = 0 AND concurrency_key IS NOT NULL)
      INTO due, start FROM changed;
      IF due IS NOT NULL OR start IS NOT NULL THEN
        UPDATE tillflow_queue_floors
        SET due_floor = LEAST(due_floor, due), start_by_floor = LEAST(start_by_floor, start)
        WHERE due_floor > due OR start_by_floor > start;
      END IF;
      RETURN NULL;
    END $$`
  // Transition tables allow one event per trigger: one for inserts, one for updates.
  yield* sql`
    CREATE TRIGGER tillflow_executions_floors_inserted AFTER INSERT ON tillflow_executions
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION tillflow_executions_lower_floors()`
  yield* sql`
    CREATE TRIGGER tillflow_executions_floors_updated AFTER UPDATE ON tillflow_executions
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION tillflow_executions_lower_floors()`
  // An existing queue starts from its live rows (the triggers' lock, taken above, keeps
  // writers out until this migration commits); without any, from its latest change.
  yield* sql`
    INSERT INTO tillflow_queue_floors (due_floor, start_by_floor)
    SELECT
      COALESCE((SELECT min(due_at) FROM tillflow_executions WHERE status IN ('pending', 'running', 'suspended')),
               (SELECT max(updated_at) FROM tillflow_executions), 0),
      COALESCE((SELECT min(start_by) FROM tillflow_executions
                WHERE status = 'pending' AND claims = 0 AND concurrency_key IS NOT NULL AND start_by IS NOT NULL),
               (SELECT max(updated_at) FROM tillflow_executions), 0)`
})

// Keys freed through an index (issue 29). Finishing an execution deletes its row from
// `tillflow_concurrency_holders` by `execution_id` (the release, `transitionMany`), which had
// no index: every finish scanned the table. The table holds at most one live row per key,
// but each payment inserts a row and deletes it, and without VACUUM (autovacuum off) the
// dead rows stay in the heap and new ones go to its end: at 50,000 payments the scan read
// 371 pages for one key. Through this index a finish reads a few pages whatever the
// history; the claim's checks already go through the primary key.
const holdersByExecution = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX IF NOT EXISTS tillflow_concurrency_holders_by_execution
    ON tillflow_concurrency_holders (execution_id)`
})

// The operators' search (`list` with `order: "newest"`): keyset paging newest first over
// any number of executions, and a search by the start of an execution id (the 8
// characters a table shows). `text_pattern_ops` serves `LIKE 'prefix%'` whatever the
// database's collation.
const searchIndexes = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX tillflow_executions_by_created ON tillflow_executions (created_at, execution_id)`
  yield* sql`CREATE INDEX tillflow_executions_by_id_prefix ON tillflow_executions (execution_id text_pattern_ops)`
})

// Tenants (issue 32): the tenant an execution was started for (`Tenant`), NULL for rows
// enqueued before or without one. An operator scoped to tenants pages newest first through
// their executions (`list` with `tenants`): one tenant's page is an ordered range of
// `by_tenant`. The fair-share claim counts a tenant's running executions through the
// partial index of started rows (`3_claim_started_first`: a running row has `claims > 0`,
// its lease is its `due_at`), so it needs no index of its own.
const tenants = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tillflow_executions ADD COLUMN tenant text`
  yield* sql`
    CREATE INDEX tillflow_executions_by_tenant ON tillflow_executions (tenant, created_at, execution_id)
    WHERE tenant IS NOT NULL`
})

// Retention (issue 31): the rows of executions finished before the retention's cut-off move
// here (`EventArchive.run`), out of `tillflow_executions`, whose tables and indexes would
// otherwise grow with every execution ever run. The same columns, `seq` kept as it was (no
// identity: an archived row is never written again). Only its primary key is indexed: the
// queue reads an archived execution by id alone (`get`, after the hot table missed), never
// lists nor claims it, so no statement of the hot path costs more as the archive grows.
const executionsArchive = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS tillflow_executions_archive (
      execution_id    text    PRIMARY KEY,
      workflow_name   text    NOT NULL,
      status          text    NOT NULL,
      due_at          bigint,
      lease_owner     text,
      wake_requested  boolean NOT NULL,
      concurrency_key text,
      parent_id       text,
      attributes      jsonb   NOT NULL,
      claims          integer NOT NULL,
      created_at      bigint  NOT NULL,
      updated_at      bigint  NOT NULL,
      seq             bigint  NOT NULL,
      stream_id       text,
      start_by        bigint,
      tenant          text,
      archived_at     timestamptz NOT NULL DEFAULT now()
    )`
})

/** Every migration of the execution queue, by `id_name`. */
export const migrations = {
  "1_create_execution_queue": createExecutionQueue,
  "2_notify_changes": notifyChanges,
  "3_claim_started_first": claimStartedFirst,
  "4_notify_after_commit": notifyAfterCommit,
  "5_execution_stream": executionStream,
  "6_start_by": startBy,
  "7_scan_floors": scanFloors,
  "8_holders_by_execution": holdersByExecution,
  "9_search_indexes": searchIndexes,
  "10_tenants": tenants,
  "11_executions_archive": executionsArchive
} as const

/** Applies the pending migrations; returns the ones applied now. */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })
