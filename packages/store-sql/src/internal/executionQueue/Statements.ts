/**
 * The SQL of the execution queue, one named function per statement (or fragment), each
 * taking the `SqlClient` and its parameters. The texts are the queue's contract with the
 * migrations' indexes (`3_claim_started_first`) and with the tests that count statements:
 * the modules that run them decide when, never what.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { ExecutionQueue } from "@tillflow/engine"
import * as ExecutionQueueMigrations from "../../ExecutionQueueMigrations.js"

type Service = ExecutionQueue.ExecutionQueue["Type"]

/** The options of a claim. */
export type ClaimOptions = Parameters<Service["claim"]>[0]

/** The options of a release. */
export type ReleaseOptions = Parameters<Service["release"]>[0]

/** The input of an enqueue. */
export type EnqueueInput = Parameters<Service["enqueue"]>[0]

/** The statuses in which an execution is not finished (nor stuck). */
export const activeStatuses = ["pending", "running", "suspended"] as const

/** The columns of an `ExecutionRow`. */
export const columns = (sql: SqlClient.SqlClient) =>
  sql`execution_id, workflow_name, status, due_at, lease_owner, concurrency_key, parent_id, tenant,
      attributes, claims, created_at, updated_at`

/** One NOTIFY statement sending each payload on the queue's channel. */
export const notify = (sql: SqlClient.SqlClient, texts: ReadonlyArray<string>) =>
  sql`SELECT ${sql.csv(texts.map((text) => sql`pg_notify(${ExecutionQueueMigrations.channel}, ${text})`))}`

/**
 * The claimed execution's stream version, as a column of the claiming statement (see
 * `Claim`), or NULL when the store lives elsewhere (`streamVersions` off).
 */
export const streamVersionColumn = (sql: SqlClient.SqlClient, streamVersions: boolean) =>
  streamVersions
    ? sql`(SELECT s.version FROM streams s WHERE s.stream_id = e.stream_id)::text AS stream_version`
    : sql`NULL AS stream_version`

/**
 * No active execution is due before this (migration `7_scan_floors`): the claim and
 * `nextDueAt` start their due-time index scans here, past the dead entries that finished
 * runs left at older due times (see `Floors`). A scalar subquery, so the plan reads it once
 * and the index scan starts at it (`Index Cond: due_at >= $0`).
 */
const dueFloor = (sql: SqlClient.SqlClient) => sql`(SELECT due_floor FROM tillflow_queue_floors)`

/**
 * `workflow_name IN (names)` as the claim and the due-time look-ups write it: through an
 * expression no index has (`workflow_name || ''`), so that PostgreSQL reads these rows
 * through the partial indexes of live rows (`3_claim_started_first`), ordered by due time,
 * and never through `tillflow_executions_by_workflow`, whose entries cover every version
 * of every execution ever stored. Without statistics (autovacuum off: no ANALYZE either)
 * the planner chose that index, and these statements read the whole history of the
 * workflows: ~1 s per claim and per look-up with 1M completed executions stored, against
 * ~1 ms with 10k (measured in docs/performance.md, "Execution queue and history").
 */
const workflowIn = (
  sql: SqlClient.SqlClient,
  column: "workflow_name" | "e.workflow_name",
  names: ReadonlyArray<string>
) => sql`(${sql.literal(column)} || '') IN ${sql.in(names)}`

/**
 * The earliest time after `now` at which an execution of the workflows falls due by
 * the clock alone: a timer, a retry or a lease, due after its row last changed. A row
 * made due when it changed (enqueued, woken) is announced by its change (a signal in
 * the process, a NOTIFY to the others), so a worker need not sleep for it; counting
 * those made the loop claim back to back while rows kept becoming due. Each part on its
 * own partial index (`3_claim_started_first`), as `nextDueAt` reads them.
 */
export const nextDue = (sql: SqlClient.SqlClient, workflowNames: ReadonlyArray<string>, now: number) => sql`
      SELECT LEAST(
        (SELECT min(due_at) FROM tillflow_executions
         WHERE status IN ${sql.in(activeStatuses)} AND claims > 0
           AND ${workflowIn(sql, "workflow_name", workflowNames)} AND due_at > ${now} AND due_at > updated_at),
        (SELECT min(due_at) FROM tillflow_executions
         WHERE status = 'pending' AND claims = 0 AND ${workflowIn(sql, "workflow_name", workflowNames)}
           AND due_at > ${now} AND due_at > updated_at))`

/** `nextDue` alone, as the row `next`. */
export const nextDueAfter = (sql: SqlClient.SqlClient, workflowNames: ReadonlyArray<string>, now: number) =>
  sql`${nextDue(sql, workflowNames, now)} AS next`

/**
 * The earliest due time of any active execution of the workflows, as the row `next`, each
 * part read from the due floor on (see `dueFloor`).
 */
export const nextDueAt = (sql: SqlClient.SqlClient, workflowNames: ReadonlyArray<string>) => sql`
              SELECT LEAST(
                (SELECT min(due_at) FROM tillflow_executions
                 WHERE status IN ${sql.in(activeStatuses)} AND claims > 0
                   AND ${workflowIn(sql, "workflow_name", workflowNames)} AND due_at >= ${dueFloor(sql)}),
                (SELECT min(due_at) FROM tillflow_executions
                 WHERE status = 'pending' AND claims = 0 AND ${workflowIn(sql, "workflow_name", workflowNames)}
                   AND due_at >= ${dueFloor(sql)})
              ) AS next`

/**
 * How many executions of each tenant run under a lease unexpired at `now`, as the rows
 * `tenant`, `running`: read through the partial index of started rows
 * (`3_claim_started_first`; a running row has been claimed, and its lease is its `due_at`),
 * from `now` up, so only live leases and the few rows released since they were taken are
 * walked, however long the history.
 */
const runningByTenant = (sql: SqlClient.SqlClient, now: number) => sql`
        SELECT r.tenant, count(*) AS running FROM tillflow_executions r
        WHERE ${leased(sql, now)} AND r.tenant IS NOT NULL
        GROUP BY r.tenant`

/** `r` runs under a lease unexpired at `now` (see `runningByTenant`). */
const leased = (sql: SqlClient.SqlClient, now: number) =>
  sql`r.status IN ${sql.in(activeStatuses)} AND r.claims > 0 AND r.due_at > ${now} AND r.status = 'running'`

/**
 * The candidates of a fair-share claim (`tenantLimit`), as the CTE `candidates`. The due
 * rows are ranked first without locks, in the claim's order (started, then new, each oldest
 * due first), each tenant's numbered in that order after its running executions: those
 * past the limit are left out BEFORE the claim's `limit` is applied, so a flood of one
 * tenant fills at most its share and the rows of others behind it are reached in the same
 * claim. Reading every due row costs in proportion to the backlog (only when a limit is
 * given). The chosen rows are then locked `SKIP LOCKED`, re-checked as still due (a row
 * another claimer took meanwhile is not). Concurrent claimers read the running counts each
 * in its own snapshot: two of them may each take the last place of a tenant (a share, not
 * a hard cap). With `tenantSlots`, the limit is also the tenant's fair part of those slots
 * among the distinct tenants running or due (`ExecutionQueue.tenantShare`), counted from
 * the same two CTEs.
 */
const fairCandidates = (
  sql: SqlClient.SqlClient,
  options: ClaimOptions,
  tenantLimit: number,
  claimable: ReturnType<SqlClient.SqlClient["and"]>
) => sql`
      running AS (${runningByTenant(sql, options.now)}
      ), due AS (
        SELECT e.execution_id, e.tenant, 0 AS rank, e.due_at, e.seq
        FROM tillflow_executions e
        WHERE e.status IN ${sql.in(activeStatuses)} AND e.claims > 0 AND ${claimable}
        UNION ALL
        SELECT e.execution_id, e.tenant, 1 AS rank, e.due_at, e.seq
        FROM tillflow_executions e
        WHERE e.status = 'pending' AND e.claims = 0 AND ${claimable}
      ), ranked AS (
        SELECT d.execution_id, d.tenant, d.rank, d.due_at, d.seq,
               row_number() OVER (PARTITION BY d.tenant ORDER BY d.rank, d.due_at, d.seq) AS place
        FROM due d
      ), fair AS (
        SELECT ${
          options.tenantSlots === undefined
            ? sql`${tenantLimit}::bigint`
            : sql`LEAST(${tenantLimit}::bigint, GREATEST(1, ceil(${options.tenantSlots}::numeric / GREATEST(1, (
                SELECT count(*) FROM (SELECT tenant FROM running UNION SELECT tenant FROM due WHERE tenant IS NOT NULL) t
              )))::bigint))`
        } AS places
      ), shares AS (
        SELECT k.execution_id, k.rank FROM ranked k LEFT JOIN running r ON r.tenant = k.tenant CROSS JOIN fair
        WHERE k.tenant IS NULL OR k.place + COALESCE(r.running, 0) <= fair.places
        ORDER BY k.rank, k.due_at, k.seq
        LIMIT ${options.limit}
      ), candidates AS (
        SELECT e.execution_id, e.concurrency_key, s.rank, e.due_at, e.seq
        FROM tillflow_executions e JOIN shares s ON s.execution_id = e.execution_id
        WHERE e.status IN ${sql.in(activeStatuses)} AND e.due_at <= ${options.now}
        FOR UPDATE OF e SKIP LOCKED
      )`

/**
 * The claim (see `Claim.claimWithNextDue`): the due candidates locked with `SKIP LOCKED`,
 * the concurrency keys of the keyed ones upserted, the granted ones leased until
 * `leaseUntil`; its rows are the claimed executions, then one row for `nextDue`. With a
 * `tenantLimit`, the candidates are a fair-share claim's (`fairCandidates`); without one,
 * the statement is the claim as it was before tenants, at the same cost.
 */
export const claim = (
  sql: SqlClient.SqlClient,
  options: ClaimOptions,
  leaseUntil: number,
  streamVersion: ReturnType<typeof streamVersionColumn>
) => {
  const claimable = sql`e.due_at <= ${options.now} AND e.due_at >= ${dueFloor(sql)}
      AND ${workflowIn(sql, "e.workflow_name", options.workflowNames)}
      AND (e.concurrency_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM tillflow_concurrency_holders h
        WHERE h.concurrency_key = e.concurrency_key AND h.execution_id <> e.execution_id))`
  const candidates =
    options.tenantLimit === undefined
      ? sql`started AS (
        SELECT e.execution_id, e.concurrency_key, 0 AS rank, e.due_at, e.seq
        FROM tillflow_executions e
        WHERE e.status IN ${sql.in(activeStatuses)} AND e.claims > 0 AND ${claimable}
        ORDER BY e.due_at, e.seq
        LIMIT ${options.limit}
        FOR UPDATE OF e SKIP LOCKED
      ), fresh AS (
        SELECT e.execution_id, e.concurrency_key, 1 AS rank, e.due_at, e.seq
        FROM tillflow_executions e
        WHERE e.status = 'pending' AND e.claims = 0 AND ${claimable}
        ORDER BY e.due_at, e.seq
        LIMIT (${options.limit} - (SELECT count(*) FROM started))
        FOR UPDATE OF e SKIP LOCKED
      ), candidates AS (
        SELECT * FROM started UNION ALL SELECT * FROM fresh
      )`
      : fairCandidates(sql, options, options.tenantLimit, claimable)
  return sql`
      WITH ${candidates}, acquired AS (
        INSERT INTO tillflow_concurrency_holders (concurrency_key, execution_id)
        SELECT DISTINCT ON (concurrency_key) concurrency_key, execution_id
        FROM candidates
        WHERE concurrency_key IS NOT NULL
        ORDER BY concurrency_key, rank, due_at, seq
        ON CONFLICT (concurrency_key) DO UPDATE SET execution_id = tillflow_concurrency_holders.execution_id
        RETURNING concurrency_key, execution_id
      ), claimed AS (
        UPDATE tillflow_executions e
        SET status = 'running', lease_owner = ${options.workerId}, due_at = ${leaseUntil},
            wake_requested = false, claims = e.claims + 1, updated_at = ${options.now}
        FROM candidates c
        WHERE e.execution_id = c.execution_id
          AND (c.concurrency_key IS NULL OR EXISTS (
            SELECT 1 FROM acquired a
            WHERE a.concurrency_key = c.concurrency_key AND a.execution_id = c.execution_id))
        RETURNING e.execution_id, e.workflow_name, e.parent_id, e.claims, ${streamVersion}
      )
      SELECT execution_id, workflow_name, parent_id, claims, stream_version, NULL::text AS next_due FROM claimed
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, NULL, (${nextDue(sql, options.workflowNames, options.now)})::text`
}

/**
 * Renews the leases `workerId` still holds. The rows are locked in execution id order, as
 * coalesced releases lock them: a heartbeat and a release of the same rows never wait on
 * each other in a cycle.
 */
export const heartbeat = (sql: SqlClient.SqlClient, options: Parameters<Service["heartbeat"]>[0]) =>
  sql`
              WITH locked AS (
                SELECT execution_id FROM tillflow_executions
                WHERE execution_id IN ${sql.in(options.executionIds)}
                  AND lease_owner = ${options.workerId} AND status = 'running'
                ORDER BY execution_id
                FOR UPDATE
              )
              UPDATE tillflow_executions t
              SET due_at = ${options.now + options.leaseMs}, updated_at = ${options.now}
              FROM locked l
              WHERE t.execution_id = l.execution_id AND t.lease_owner = ${options.workerId} AND t.status = 'running'
              RETURNING t.execution_id`

/** A release alone, one statement per outcome; each answers the released row. */
export const release = (sql: SqlClient.SqlClient, options: ReleaseOptions) => {
  const { executionId, now, workerId } = options
  const held = sql`execution_id = ${executionId} AND lease_owner = ${workerId} AND status = 'running'`
  const outcome = options.release
  switch (outcome._tag) {
    case "Suspended": {
      const wakeAt = outcome.wakeAt ?? null
      return sql`
              UPDATE tillflow_executions
              SET status = CASE WHEN wake_requested THEN 'pending' ELSE 'suspended' END,
                  due_at = CASE WHEN wake_requested THEN ${now} ELSE ${wakeAt}::bigint END,
                  lease_owner = NULL, wake_requested = false, updated_at = ${now}
              WHERE ${held}
              RETURNING execution_id, status, due_at`
    }
    case "Retry":
      return sql`
              UPDATE tillflow_executions
              SET status = 'pending',
                  due_at = CASE WHEN wake_requested THEN LEAST(${now}::bigint, ${outcome.runAt}::bigint)
                                ELSE ${outcome.runAt}::bigint END,
                  lease_owner = NULL, wake_requested = false, updated_at = ${now}
              WHERE ${held}
              RETURNING execution_id, status, due_at`
    case "Stuck":
      return sql`
              UPDATE tillflow_executions
              SET status = 'stuck', due_at = NULL, lease_owner = NULL, wake_requested = false, updated_at = ${now}
              WHERE ${held}
              RETURNING execution_id, status, due_at`
    case "Finished":
      // One statement like the others: the key is freed with the finish, atomically.
      return sql`
              WITH finished AS (
                UPDATE tillflow_executions
                SET status = ${outcome.status}, due_at = NULL, lease_owner = NULL, wake_requested = false,
                    updated_at = ${now}
                WHERE ${held}
                RETURNING execution_id, status, due_at
              ), freed AS (
                DELETE FROM tillflow_concurrency_holders
                WHERE execution_id IN (SELECT execution_id FROM finished)
              )
              SELECT execution_id, status, due_at FROM finished`
  }
}

const heldHot = "execution_id = $1 AND lease_owner = $2 AND status = 'running'"

/**
 * {@link release} through the `pg` pool (`HotPool`): per outcome, the same statement as a
 * fixed text sent as a named prepared statement, `$1` the execution, `$2` the worker, `$3`
 * now, then the outcome's own value.
 */
export const releaseHot = (
  options: ReleaseOptions
): { readonly name: string; readonly text: string; readonly values: ReadonlyArray<unknown> } => {
  const { executionId, now, workerId } = options
  const outcome = options.release
  switch (outcome._tag) {
    case "Suspended":
      return {
        name: "tillflow_release_suspended_v1",
        text: `UPDATE tillflow_executions
              SET status = CASE WHEN wake_requested THEN 'pending' ELSE 'suspended' END,
                  due_at = CASE WHEN wake_requested THEN $3::bigint ELSE $4::bigint END,
                  lease_owner = NULL, wake_requested = false, updated_at = $3::bigint
              WHERE ${heldHot}
              RETURNING execution_id, status, due_at`,
        values: [executionId, workerId, now, outcome.wakeAt ?? null]
      }
    case "Retry":
      return {
        name: "tillflow_release_retry_v1",
        text: `UPDATE tillflow_executions
              SET status = 'pending',
                  due_at = CASE WHEN wake_requested THEN LEAST($3::bigint, $4::bigint) ELSE $4::bigint END,
                  lease_owner = NULL, wake_requested = false, updated_at = $3::bigint
              WHERE ${heldHot}
              RETURNING execution_id, status, due_at`,
        values: [executionId, workerId, now, outcome.runAt]
      }
    case "Stuck":
      return {
        name: "tillflow_release_stuck_v1",
        text: `UPDATE tillflow_executions
              SET status = 'stuck', due_at = NULL, lease_owner = NULL, wake_requested = false,
                  updated_at = $3::bigint
              WHERE ${heldHot}
              RETURNING execution_id, status, due_at`,
        values: [executionId, workerId, now]
      }
    case "Finished":
      return {
        name: "tillflow_release_finished_v1",
        text: `WITH finished AS (
                UPDATE tillflow_executions
                SET status = $4::text, due_at = NULL, lease_owner = NULL, wake_requested = false,
                    updated_at = $3::bigint
                WHERE ${heldHot}
                RETURNING execution_id, status, due_at
              ), freed AS (
                DELETE FROM tillflow_concurrency_holders
                WHERE execution_id IN (SELECT execution_id FROM finished)
              )
              SELECT execution_id, status, due_at FROM finished`,
        values: [executionId, workerId, now, outcome.status]
      }
  }
}

/** A wake alone. Every expression of SET reads the row as it was before the update. */
export const wake = (
  sql: SqlClient.SqlClient,
  options: { readonly executionId: string; readonly now: number; readonly resumeStuck: boolean }
) =>
  sql`
        UPDATE tillflow_executions
        SET wake_requested = (status = 'running') OR wake_requested,
            due_at = CASE
              WHEN status = 'suspended' OR (status = 'stuck' AND ${options.resumeStuck}) THEN ${options.now}::bigint
              WHEN status = 'pending' THEN LEAST(due_at, ${options.now}::bigint)
              ELSE due_at END,
            status = CASE
              WHEN status = 'suspended' OR (status = 'stuck' AND ${options.resumeStuck}) THEN 'pending'
              ELSE status END,
            updated_at = ${options.now}
        WHERE execution_id = ${options.executionId}
          AND status NOT IN ('succeeded', 'failed', 'interrupted')
        RETURNING execution_id, status, due_at`

/**
 * Wakes and releases of different executions as ONE statement (see `Transition`), from
 * `entries`, a JSON array of one object per entry; each answered row names its `entry`.
 */
export const transitionMany = (sql: SqlClient.SqlClient, entries: string) =>
  sql`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(${entries}::jsonb) AS i(
            entry int, execution_id text, op text, now bigint, resume_stuck boolean, worker_id text,
            outcome text, wake_at bigint, run_at bigint, finished text)
        ), locked AS (
          SELECT t.execution_id FROM tillflow_executions t
          WHERE t.execution_id IN (SELECT execution_id FROM input)
          ORDER BY t.execution_id
          FOR UPDATE
        ), woken AS (
          UPDATE tillflow_executions t
          SET wake_requested = (t.status = 'running') OR t.wake_requested,
              due_at = CASE
                WHEN t.status = 'suspended' OR (t.status = 'stuck' AND i.resume_stuck) THEN i.now
                WHEN t.status = 'pending' THEN LEAST(t.due_at, i.now)
                ELSE t.due_at END,
              status = CASE
                WHEN t.status = 'suspended' OR (t.status = 'stuck' AND i.resume_stuck) THEN 'pending'
                ELSE t.status END,
              updated_at = i.now
          FROM input i JOIN locked l ON l.execution_id = i.execution_id
          WHERE i.op = 'wake' AND t.execution_id = i.execution_id
            AND t.status NOT IN ('succeeded', 'failed', 'interrupted')
          RETURNING i.entry, t.execution_id, t.status, t.due_at
        ), released AS (
          UPDATE tillflow_executions t
          SET status = CASE i.outcome
                WHEN 'Suspended' THEN CASE WHEN t.wake_requested THEN 'pending' ELSE 'suspended' END
                WHEN 'Retry' THEN 'pending'
                WHEN 'Stuck' THEN 'stuck'
                ELSE i.finished END,
              due_at = CASE i.outcome
                WHEN 'Suspended' THEN CASE WHEN t.wake_requested THEN i.now ELSE i.wake_at END
                WHEN 'Retry' THEN CASE WHEN t.wake_requested THEN LEAST(i.now, i.run_at) ELSE i.run_at END
                ELSE NULL END,
              lease_owner = NULL, wake_requested = false, updated_at = i.now
          FROM input i JOIN locked l ON l.execution_id = i.execution_id
          WHERE i.op = 'release' AND t.execution_id = i.execution_id
            AND t.lease_owner = i.worker_id AND t.status = 'running'
          RETURNING i.entry, t.execution_id, t.status, t.due_at, i.outcome
        ), freed AS (
          DELETE FROM tillflow_concurrency_holders
          WHERE (SELECT count(*) FROM locked) >= 0
            AND execution_id IN (SELECT execution_id FROM released WHERE outcome = 'Finished')
        )
        SELECT entry, execution_id, status, due_at FROM woken
        UNION ALL
        SELECT entry, execution_id, status, due_at FROM released`

/** An enqueue alone; it answers the row only if it inserted it. */
export const enqueueOne = (sql: SqlClient.SqlClient, input: EnqueueInput) =>
  sql`
        INSERT INTO tillflow_executions
          (execution_id, workflow_name, status, due_at, concurrency_key, parent_id, attributes,
           stream_id, start_by, tenant, created_at, updated_at)
        VALUES (${input.executionId}, ${input.workflowName}, 'pending', ${input.now},
                ${input.concurrencyKey ?? null}, ${input.parentId ?? null},
                ${JSON.stringify(input.attributes)}::jsonb, ${input.stream ?? null},
                ${startByOf(input)}::bigint, ${input.tenant ?? null}::text, ${input.now}, ${input.now})
        ON CONFLICT (execution_id) DO NOTHING
        RETURNING execution_id`

/** The input of a start leased. */
export type EnqueueLeasedInput = Parameters<NonNullable<Service["enqueueLeased"]>>[0]

/**
 * A start leased (`ExecutionQueue.enqueueLeased`), ONE statement: the execution's key
 * taken when it is free (a holder row inserted, `DO NOTHING` when another execution holds
 * it, as the claim's upsert serialises on the key's primary key), then its row inserted
 * running and leased to the worker when it needs no key or took it, pending as
 * `enqueueOne` inserts it otherwise. With a `tenantLimit` and a tenant, a tenant at its
 * limit takes no key and gets its row pending too (the running count read as the claim's
 * `runningByTenant`); without one, the statement is as it was before tenants. An execution
 * that exists takes no key and is left alone. It answers the row only if it inserted it,
 * with `leased`.
 */
export const enqueueLeased = (sql: SqlClient.SqlClient, input: EnqueueLeasedInput) => {
  const key = input.concurrencyKey ?? null
  const leaseUntil = input.now + input.leaseMs
  const share =
    input.tenantLimit === undefined || input.tenant === undefined
      ? sql``
      : sql`AND (SELECT count(*) FROM tillflow_executions r
                 WHERE ${leased(sql, input.now)} AND r.tenant = ${input.tenant}) < ${input.tenantLimit}`
  return sql`
        WITH acquired AS (
          INSERT INTO tillflow_concurrency_holders (concurrency_key, execution_id)
          SELECT ${key}::text, ${input.executionId}
          WHERE ${key}::text IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM tillflow_executions WHERE execution_id = ${input.executionId})
            ${share}
          ON CONFLICT (concurrency_key) DO NOTHING
          RETURNING execution_id
        ), granted AS (
          SELECT (${key}::text IS NULL OR EXISTS (SELECT 1 FROM acquired)) ${share} AS leased
        )
        INSERT INTO tillflow_executions
          (execution_id, workflow_name, status, due_at, lease_owner, claims, concurrency_key, parent_id,
           attributes, stream_id, start_by, tenant, created_at, updated_at)
        SELECT ${input.executionId}, ${input.workflowName},
               CASE WHEN g.leased THEN 'running' ELSE 'pending' END,
               CASE WHEN g.leased THEN ${leaseUntil}::bigint ELSE ${input.now}::bigint END,
               CASE WHEN g.leased THEN ${input.workerId}::text END,
               CASE WHEN g.leased THEN 1 ELSE 0 END,
               ${key}::text, ${input.parentId ?? null}, ${JSON.stringify(input.attributes)}::jsonb,
               ${input.stream ?? null}, ${startByOf(input)}::bigint, ${input.tenant ?? null}::text,
               ${input.now}, ${input.now}
        FROM granted g
        ON CONFLICT (execution_id) DO NOTHING
        RETURNING execution_id, status = 'running' AS leased`
}

/**
 * Enqueues of different executions as ONE statement, from `entries`, a JSON array of one
 * object per enqueue; it answers the rows it inserted, inserted in execution id order.
 */
export const enqueueMany = (sql: SqlClient.SqlClient, entries: string) =>
  sql`
        INSERT INTO tillflow_executions
          (execution_id, workflow_name, status, due_at, concurrency_key, parent_id, attributes,
           stream_id, start_by, tenant, created_at, updated_at)
        SELECT i.execution_id, i.workflow_name, 'pending', i.now, i.concurrency_key, i.parent_id,
               i.attributes, i.stream_id, i.start_by, i.tenant, i.now, i.now
        FROM jsonb_to_recordset(${entries}::jsonb) AS i(
          execution_id text, workflow_name text, concurrency_key text, parent_id text, attributes jsonb,
          stream_id text, start_by bigint, tenant text, now bigint)
        ORDER BY i.execution_id
        ON CONFLICT (execution_id) DO NOTHING
        RETURNING execution_id`

/** A start deadline counts only for an execution with a concurrency key (a line to leave). */
export const startByOf = (input: EnqueueInput): number | null =>
  input.concurrencyKey === undefined ? null : (input.startBy ?? null)

/**
 * Executions never claimed whose start deadline passed while they waited for their key
 * leave its line: the key dropped, due now (`ExecutionQueue.expireStartDeadlines`). Only
 * rows of the `6_start_by` partial index are read: pending, never claimed, with a key and
 * a deadline — the waiting ones — from the floors on (`Floors`): without statistics the
 * planner may read them through `tillflow_executions_due_new` instead, and either index is
 * then read from its floor, past the dead entries of finished runs.
 */
export const expireStartDeadlines = (sql: SqlClient.SqlClient, now: number) =>
  sql`
        UPDATE tillflow_executions
        SET concurrency_key = NULL, due_at = LEAST(due_at, ${now}::bigint), updated_at = ${now}
        WHERE status = 'pending' AND claims = 0 AND concurrency_key IS NOT NULL
          AND start_by IS NOT NULL AND start_by <= ${now}
          AND start_by >= (SELECT start_by_floor FROM tillflow_queue_floors)
          AND due_at >= ${dueFloor(sql)}
        RETURNING execution_id`

/**
 * Moves the scan floors up to the earliest due time and start deadline of the live rows,
 * never above `cap`; read from the floors on, so the dead entries below them are not
 * walked again. Run under `lockForFloors` (see `Floors`). Answers the floors.
 */
export const advanceFloors = (sql: SqlClient.SqlClient, cap: number) =>
  sql`
        UPDATE tillflow_queue_floors f
        SET due_floor = LEAST(${cap}::bigint,
              (SELECT min(due_at) FROM tillflow_executions
               WHERE status IN ${sql.in(activeStatuses)} AND claims > 0 AND due_at >= f.due_floor),
              (SELECT min(due_at) FROM tillflow_executions
               WHERE status = 'pending' AND claims = 0 AND due_at >= f.due_floor)),
            start_by_floor = LEAST(${cap}::bigint,
              (SELECT min(start_by) FROM tillflow_executions
               WHERE status = 'pending' AND claims = 0 AND concurrency_key IS NOT NULL
                 AND start_by IS NOT NULL AND start_by >= f.start_by_floor))
        RETURNING due_floor, start_by_floor`

/** A lock wait of at most `timeoutMs` for the rest of the transaction. */
export const lockTimeout = (sql: SqlClient.SqlClient, timeoutMs: number) =>
  sql`SELECT set_config('lock_timeout', ${`${timeoutMs}ms`}, true)`

/**
 * What `advanceFloors` needs first, in its transaction: no statement writing the queue's
 * rows in flight, so that its snapshot holds every row a floor must stay under. SHARE ROW
 * EXCLUSIVE waits for the writers' ROW EXCLUSIVE (writers queue behind the request
 * meanwhile: bound it with `lockTimeout`) and excludes another advance.
 */
export const lockForFloors = (sql: SqlClient.SqlClient) =>
  sql`LOCK TABLE tillflow_executions IN SHARE ROW EXCLUSIVE MODE`

/** Merges search attributes into an execution's. */
export const setAttributes = (
  sql: SqlClient.SqlClient,
  executionId: string,
  attributes: ExecutionQueue.SearchAttributes
) =>
  sql`
          UPDATE tillflow_executions SET attributes = attributes || ${JSON.stringify(attributes)}::jsonb
          WHERE execution_id = ${executionId}`

/**
 * One execution's row: from the hot table, else from the archive (`11_executions_archive`,
 * an execution finished before the retention's cut-off). Each part is a probe of its table's
 * primary key; the archive's is read only when the hot table has no row (the `LIMIT 1` of
 * the `UNION ALL` stops at the first), so a live execution's lookup never touches it. One
 * statement, one snapshot: an execution being moved is in one table or the other.
 */
export const get = (sql: SqlClient.SqlClient, executionId: string) =>
  sql`SELECT ${columns(sql)} FROM tillflow_executions WHERE execution_id = ${executionId}
      UNION ALL
      SELECT ${columns(sql)} FROM tillflow_executions_archive WHERE execution_id = ${executionId}
      LIMIT 1`

type SqlFragment = ReturnType<SqlClient.SqlClient["and"]>

/** The WHERE clauses of `filter` (its `after` only when `keyset`); `statuses` as in {@link list}. */
const whereOf = (
  sql: SqlClient.SqlClient,
  filter: ExecutionQueue.ListFilter,
  statuses: ReadonlyArray<ExecutionQueue.ExecutionStatus> | undefined,
  keyset: boolean
) => {
  const clauses: Array<SqlFragment> = [sql`true`]
  if (filter.workflowName !== undefined) clauses.push(sql`workflow_name = ${filter.workflowName}`)
  // An empty list matches nothing (`Lookup` answers it without a statement).
  if (filter.tenants !== undefined) clauses.push(sql`tenant IN ${sql.in(filter.tenants)}`)
  if (statuses !== undefined) clauses.push(sql`status IN ${sql.in(statuses)}`)
  if (filter.attributes !== undefined && Object.keys(filter.attributes).length > 0) {
    clauses.push(sql`attributes @> ${JSON.stringify(filter.attributes)}::jsonb`)
  }
  if (filter.createdFrom !== undefined) clauses.push(sql`created_at >= ${filter.createdFrom}`)
  if (filter.createdBefore !== undefined) clauses.push(sql`created_at < ${filter.createdBefore}`)
  if (filter.anyOf !== undefined) {
    const any: Array<SqlFragment> = [sql`false`]
    const prefix = filter.anyOf.idPrefix
    // Checked hexadecimal: no LIKE wildcard can be in it (index: `by_id_prefix`).
    if (prefix !== undefined && ExecutionQueue.isIdPrefix(prefix)) {
      any.push(sql`execution_id LIKE ${`${prefix}%`}`)
    }
    for (const wanted of filter.anyOf.attributes ?? []) {
      any.push(sql`attributes @> ${JSON.stringify(wanted)}::jsonb`)
    }
    clauses.push(sql.or(any))
  }
  if (keyset && filter.order === "newest" && filter.after !== undefined) {
    clauses.push(sql`(created_at, execution_id) < (${filter.after.createdAt}, ${filter.after.executionId})`)
  }
  return sql.and(clauses)
}

/**
 * The rows matching `filter`, oldest first (as enqueued) or newest first (creation time,
 * then id, descending: keyset paging from `after`, on the index `by_created`, or on
 * `by_tenant` for one tenant); `statuses` is its status criterion as a list (undefined:
 * any status). A newest-first page of several tenants is each tenant's page, read from its
 * own range of `by_tenant`, merged: as `tenant IN (…)`, the planner walked `by_created`
 * and filtered, the whole table for tenants with few executions (283 ms at 100k rows).
 */
export const list = (
  sql: SqlClient.SqlClient,
  filter: ExecutionQueue.ListFilter,
  statuses: ReadonlyArray<ExecutionQueue.ExecutionStatus> | undefined
) => {
  const limit = filter.limit === undefined ? sql`` : sql`LIMIT ${filter.limit}`
  const newest = sql`ORDER BY created_at DESC, execution_id DESC`
  const order = filter.order === "newest" ? newest : sql`ORDER BY seq`
  const tenants = filter.tenants ?? []
  if (filter.order === "newest" && filter.limit !== undefined && tenants.length > 1) {
    const where = whereOf(sql, { ...filter, tenants: undefined }, statuses, true)
    return sql`
        SELECT p.* FROM (VALUES ${sql.csv(tenants.map((tenant) => sql`(${tenant}::text)`))}) AS t(tenant)
        CROSS JOIN LATERAL (
          SELECT ${columns(sql)} FROM tillflow_executions
          WHERE tenant = t.tenant AND ${where} ${newest} ${limit}
        ) p
        ${newest} ${limit}`
  }
  return sql`SELECT ${columns(sql)} FROM tillflow_executions WHERE ${whereOf(sql, filter, statuses, true)} ${order} ${limit}`
}

/** How many rows match `filter` (its `after` and `limit` aside), as the row `count`. */
export const count = (
  sql: SqlClient.SqlClient,
  filter: ExecutionQueue.ListFilter,
  statuses: ReadonlyArray<ExecutionQueue.ExecutionStatus> | undefined
) =>
  sql<{
    count: string | number
  }>`SELECT count(*) AS count FROM tillflow_executions WHERE ${whereOf(sql, filter, statuses, false)}`

/** How many executions of each workflow are in each status. */
export const tally = (sql: SqlClient.SqlClient) =>
  sql<{
    workflow_name: string
    status: string
    count: string | number
  }>`SELECT workflow_name, status, count(*) AS count FROM tillflow_executions GROUP BY workflow_name, status`

/**
 * Per tenant, how many executions run under a lease unexpired at `now` and how many wait,
 * pending and due, as the rows `tenant`, `running`, `waiting`; each part read through the
 * partial indexes of live rows (`3_claim_started_first`), the waiting ones from the due
 * floor on.
 */
export const tallyByTenant = (sql: SqlClient.SqlClient, now: number) =>
  sql`
        WITH running AS (${runningByTenant(sql, now)}
        ), waiting AS (
          SELECT w.tenant, count(*) AS waiting FROM (
            SELECT tenant FROM tillflow_executions
            WHERE status IN ${sql.in(activeStatuses)} AND claims > 0 AND status = 'pending'
              AND due_at <= ${now} AND due_at >= ${dueFloor(sql)} AND tenant IS NOT NULL
            UNION ALL
            SELECT tenant FROM tillflow_executions
            WHERE status = 'pending' AND claims = 0 AND due_at <= ${now} AND due_at >= ${dueFloor(sql)}
              AND tenant IS NOT NULL) w
          GROUP BY w.tenant
        )
        SELECT COALESCE(r.tenant, w.tenant) AS tenant, COALESCE(r.running, 0) AS running,
               COALESCE(w.waiting, 0) AS waiting
        FROM running r FULL JOIN waiting w ON w.tenant = r.tenant
        ORDER BY 1`

/** Whether the event store's `streams` table is in this database, as the row `present`. */
export const storeTablePresent = (sql: SqlClient.SqlClient) =>
  sql`SELECT to_regclass('streams') IS NOT NULL AS present`
