/**
 * The workflow engine's `ExecutionQueue` on @effect/sql, for PostgreSQL and PGlite alike.
 * Workers claim due rows in one transaction with `FOR UPDATE SKIP LOCKED`, so concurrent
 * claimers never block on nor take the same row; a concurrency key is acquired in the same
 * transaction by upserting its holder row, whose primary key serialises the claimers of
 * one key. Leases are `due_at` on a running row: a heartbeat pushes it forward, and once it
 * passes the row is due again and any worker takes it over. Rows that become due or finish
 * are announced on a LISTEN/NOTIFY channel (`changes`), on PostgreSQL and PGlite, by a
 * NOTIFY the queue sends after its statement commits (see `notifyAfterCommit`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { ExecutionQueue } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ExecutionQueueMigrations from "./ExecutionQueueMigrations.js"
import * as PgliteClient from "./PgliteClient.js"

const Int8 = Schema.Union(Schema.Number, Schema.NumberFromString)

const ExecutionRow = Schema.Struct({
  execution_id: Schema.String,
  workflow_name: Schema.String,
  status: ExecutionQueue.ExecutionStatus,
  due_at: Schema.NullOr(Int8),
  lease_owner: Schema.NullOr(Schema.String),
  concurrency_key: Schema.NullOr(Schema.String),
  parent_id: Schema.NullOr(Schema.String),
  attributes: ExecutionQueue.SearchAttributes,
  claims: Schema.Number,
  created_at: Int8,
  updated_at: Int8
})
const decodeExecutionRows = Schema.decodeUnknown(Schema.Array(ExecutionRow))

const ClaimedRow = Schema.Struct({
  execution_id: Schema.String,
  workflow_name: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  claims: Schema.Number,
  stream_version: Schema.NullOr(Int8)
})
const decodeClaimed = Schema.decodeUnknown(Schema.Array(ClaimedRow))

const IdRow = Schema.Struct({ execution_id: Schema.String })
const decodeIds = Schema.decodeUnknown(Schema.Array(IdRow))

const ReleasedRow = Schema.Struct({
  execution_id: Schema.String,
  status: ExecutionQueue.ExecutionStatus,
  due_at: Schema.NullOr(Int8)
})
const decodeReleased = Schema.decodeUnknown(Schema.Array(ReleasedRow))

/**
 * True for a row state other processes are told about: due to run (pending, or
 * suspended on a timer), finished (its key may free another), or stuck.
 */
const announced = (row: typeof ReleasedRow.Type): boolean =>
  row.status === "suspended" ? row.due_at !== null : row.status !== "running"

type Service = ExecutionQueue.ExecutionQueue["Type"]

/** The service with every call run uninterruptibly (the `changes` stream stays interruptible). */
const uninterruptibleCalls = (service: Service): Service =>
  ExecutionQueue.ExecutionQueue.of({
    ...service,
    enqueue: (input) => Effect.uninterruptible(service.enqueue(input)),
    claim: (options) => Effect.uninterruptible(service.claim(options)),
    heartbeat: (options) => Effect.uninterruptible(service.heartbeat(options)),
    release: (options) => Effect.uninterruptible(service.release(options)),
    wake: (options) => Effect.uninterruptible(service.wake(options)),
    setAttributes: (executionId, attributes) =>
      Effect.uninterruptible(service.setAttributes(executionId, attributes)),
    get: (executionId) => Effect.uninterruptible(service.get(executionId)),
    list: (filter) => Effect.uninterruptible(service.list(filter)),
    nextDueAt: (workflowNames) => Effect.uninterruptible(service.nextDueAt(workflowNames))
  })

/** The most execution ids one NOTIFY statement carries (one `pg_notify` each). */
const notifyBatch = 100

const NextRow = Schema.Struct({ next: Schema.NullOr(Int8) })
const decodeNext = Schema.decodeUnknown(Schema.Array(NextRow))

// The row was decoded by `ExecutionRow`: the class is built without validating it again.
const toInfo = (row: typeof ExecutionRow.Type): ExecutionQueue.ExecutionInfo =>
  new ExecutionQueue.ExecutionInfo(
    {
      executionId: row.execution_id,
      workflowName: row.workflow_name,
      status: row.status,
      dueAt: row.due_at,
      leaseOwner: row.lease_owner,
      concurrencyKey: row.concurrency_key,
      parentId: row.parent_id,
      attributes: row.attributes,
      claims: row.claims,
      createdAt: row.created_at,
      updatedAt: row.updated_at
    },
    true
  )

const failure = (operation: string) => (cause: SqlError | ParseResult.ParseError) =>
  new ExecutionQueue.ExecutionQueueError({ operation, message: cause.message })

const activeStatuses = ["pending", "running", "suspended"] as const

/** Options of the queue. */
export interface Options {
  /**
   * The engine's event store is a `SqlEventStore` in this very database (the same
   * `SqlClient`): each claim then also answers the version of the claimed execution's
   * stream, read from the store's `streams` table in the claiming statement
   * (`Claim.streamVersion`), and the engine skips reading a history it holds at that
   * version. Leave it off when the store lives elsewhere: a version read from another
   * store's table would let the engine run from a stale history. Default false.
   */
  readonly streamVersions?: boolean | undefined
}

/** Builds the queue over the `SqlClient` in context; run the migrations first (`layer` does). */
export const makeWith = (
  options: Options = {}
): Effect.Effect<ExecutionQueue.ExecutionQueue["Type"], never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* Effect.serviceOption(PgClient.PgClient)
    const pglite = yield* Effect.serviceOption(PgliteClient.PgliteClient)
    const listen = Option.orElse(
      Option.map(pg, (client) => client.listen),
      () => Option.map(pglite, (client) => client.listen)
    )
    const changes: Stream.Stream<string, ExecutionQueue.ExecutionQueueError> = Option.match(listen, {
      onNone: () => Stream.never,
      onSome: (listen) => listen(ExecutionQueueMigrations.channel).pipe(Stream.mapError(failure("listen")))
    })

    // Announcements, sent after the statement that made them commits, by one fiber:
    // ids announced while a NOTIFY is in flight go together in the next one. A NOTIFY
    // inside the enqueuing, releasing or waking transaction would take PostgreSQL's
    // server-wide notify lock from pre-commit until after the WAL flush, so concurrent
    // commits could not share a flush. An announcement only hastens a wake-up: workers
    // and waiting callers poll anyway, so one lost to a failure costs latency, not work.
    const pending = yield* Queue.unbounded<string>()
    yield* Queue.takeBetween(pending, 1, notifyBatch).pipe(
      Effect.flatMap((ids) => notify(Array.from(new Set(ids)))),
      Effect.catchAllCause((cause) => Effect.logDebug("Execution queue NOTIFY failed; workers poll", cause)),
      Effect.forever,
      Effect.forkScoped
    )
    const notify = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.void
        : Effect.asVoid(
            Effect.uninterruptible(
              sql`SELECT ${sql.csv(ids.map((id) => sql`pg_notify(${ExecutionQueueMigrations.channel}, ${id})`))}`
            )
          )
    // Inside a caller's transaction the NOTIFY goes with it (delivered at its commit): sent
    // from the fiber, it could arrive before the change is visible, or for a rollback.
    const announce = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.void
        : Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) =>
            Option.isSome(transaction) ? notify(ids) : Effect.asVoid(Queue.offerAll(pending, ids))
          )

    // The claimed execution's stream version, read by the claiming statement: its snapshot
    // holds every append committed before the claim began, and the rows it can claim were
    // released, or their lease ran out, before that (a row locked or changed since is
    // skipped or re-checked against its newest state), so an engine that holds the history
    // at this version has missed nothing the previous holder recorded in time. A zombie
    // holder appending after the claim is caught by the exact-version append, as it was
    // when the engine read the stream right after the claim.
    const streamVersion =
      options.streamVersions === true
        ? sql`(SELECT s.version FROM streams s WHERE s.stream_id = e.stream_id)::text AS stream_version`
        : sql`NULL AS stream_version`

    const columns = sql`execution_id, workflow_name, status, due_at, lease_owner, concurrency_key, parent_id,
      attributes, claims, created_at, updated_at`

    /**
     * One statement (its own transaction, or part of the caller's): the due candidates are
     * locked (`SKIP LOCKED`: concurrent claimers never wait on nor take the same row),
     * started ones first, then new ones, each oldest due first, each part on its own partial
     * index (`3_claim_started_first`), new ones only in the places the started ones left.
     * For the candidates with a concurrency key, one per key (the first in that order)
     * upserts the key's holder row: the no-op update locks it and returns the holder, either
     * this execution (acquired now or before) or another one (then it is not claimed). Holder
     * rows are locked in key order by every claimer, so two claimers can wait on each other's
     * keys but never in a cycle (no deadlock). The granted candidates are leased.
     */
    const claim = (options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["claim"]>[0]) => {
      if (options.workflowNames.length === 0 || options.limit <= 0) return Effect.succeed([])
      const claimable = sql`e.due_at <= ${options.now}
      AND e.workflow_name IN ${sql.in(options.workflowNames)}
      AND (e.concurrency_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM tillflow_concurrency_holders h
        WHERE h.concurrency_key = e.concurrency_key AND h.execution_id <> e.execution_id))`
      const leaseUntil = options.now + options.leaseMs
      return sql`
      WITH started AS (
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
      ), acquired AS (
        INSERT INTO tillflow_concurrency_holders (concurrency_key, execution_id)
        SELECT DISTINCT ON (concurrency_key) concurrency_key, execution_id
        FROM candidates
        WHERE concurrency_key IS NOT NULL
        ORDER BY concurrency_key, rank, due_at, seq
        ON CONFLICT (concurrency_key) DO UPDATE SET execution_id = tillflow_concurrency_holders.execution_id
        RETURNING concurrency_key, execution_id
      )
      UPDATE tillflow_executions e
      SET status = 'running', lease_owner = ${options.workerId}, due_at = ${leaseUntil},
          wake_requested = false, claims = e.claims + 1, updated_at = ${options.now}
      FROM candidates c
      WHERE e.execution_id = c.execution_id
        AND (c.concurrency_key IS NULL OR EXISTS (
          SELECT 1 FROM acquired a
          WHERE a.concurrency_key = c.concurrency_key AND a.execution_id = c.execution_id))
      RETURNING e.execution_id, e.workflow_name, e.parent_id, e.claims, ${streamVersion}`.pipe(
        Effect.flatMap(decodeClaimed),
        Effect.map((claimed) =>
          claimed.map((row): ExecutionQueue.Claim => ({
            executionId: row.execution_id,
            workflowName: row.workflow_name,
            parentId: row.parent_id,
            claims: row.claims,
            leaseUntil,
            streamVersion: row.stream_version ?? undefined
          }))
        ),
        Effect.mapError(failure("claim"))
      )
    }

    // Every release is one statement: its own transaction, or part of the caller's.
    const release = (options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["release"]>[0]) =>
      Effect.gen(function* () {
        const { executionId, now, workerId } = options
        const held = sql`execution_id = ${executionId} AND lease_owner = ${workerId} AND status = 'running'`
        const outcome = options.release
        switch (outcome._tag) {
          case "Suspended": {
            const wakeAt = outcome.wakeAt ?? null
            return yield* sql`
              UPDATE tillflow_executions
              SET status = CASE WHEN wake_requested THEN 'pending' ELSE 'suspended' END,
                  due_at = CASE WHEN wake_requested THEN ${now} ELSE ${wakeAt}::bigint END,
                  lease_owner = NULL, wake_requested = false, updated_at = ${now}
              WHERE ${held}
              RETURNING execution_id, status, due_at`.pipe(Effect.flatMap(decodeReleased))
          }
          case "Retry":
            return yield* sql`
              UPDATE tillflow_executions
              SET status = 'pending',
                  due_at = CASE WHEN wake_requested THEN LEAST(${now}::bigint, ${outcome.runAt}::bigint)
                                ELSE ${outcome.runAt}::bigint END,
                  lease_owner = NULL, wake_requested = false, updated_at = ${now}
              WHERE ${held}
              RETURNING execution_id, status, due_at`.pipe(Effect.flatMap(decodeReleased))
          case "Stuck":
            return yield* sql`
              UPDATE tillflow_executions
              SET status = 'stuck', due_at = NULL, lease_owner = NULL, wake_requested = false, updated_at = ${now}
              WHERE ${held}
              RETURNING execution_id, status, due_at`.pipe(Effect.flatMap(decodeReleased))
          case "Finished":
            // One statement like the others: the key is freed with the finish, atomically.
            return yield* sql`
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
              SELECT execution_id, status, due_at FROM finished`.pipe(Effect.flatMap(decodeReleased))
        }
      }).pipe(
        Effect.tap((rows) => announce(rows.filter(announced).map((row) => row.execution_id))),
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(failure("release"))
      )

    // Every call runs uninterruptibly, for the reason given in SqlEventStore: @effect/sql-pg
    // cancels an interrupted statement with a pg_cancel_backend that can land on another
    // caller's statement. An interrupted caller waits for its (short) statement instead.
    return uninterruptibleCalls({
      enqueue: (input) =>
        sql`
          INSERT INTO tillflow_executions
            (execution_id, workflow_name, status, due_at, concurrency_key, parent_id, attributes,
             stream_id, created_at, updated_at)
          VALUES (${input.executionId}, ${input.workflowName}, 'pending', ${input.now},
                  ${input.concurrencyKey ?? null}, ${input.parentId ?? null},
                  ${JSON.stringify(input.attributes)}::jsonb, ${input.stream ?? null}, ${input.now}, ${input.now})
          ON CONFLICT (execution_id) DO NOTHING
          RETURNING execution_id`.pipe(
          Effect.flatMap(decodeIds),
          Effect.tap((rows) => announce(rows.map((row) => row.execution_id))),
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(failure("enqueue"))
        ),

      claim,

      heartbeat: (options) =>
        options.executionIds.length === 0
          ? Effect.succeed([])
          : sql`
              UPDATE tillflow_executions
              SET due_at = ${options.now + options.leaseMs}, updated_at = ${options.now}
              WHERE execution_id IN ${sql.in(options.executionIds)}
                AND lease_owner = ${options.workerId} AND status = 'running'
              RETURNING execution_id`.pipe(
              Effect.flatMap(decodeIds),
              Effect.map((rows) => rows.map((row) => row.execution_id)),
              Effect.mapError(failure("heartbeat"))
            ),

      release,

      wake: (options) => {
        const resumeStuck = options.resumeStuck === true
        // Every expression of SET reads the row as it was before the update.
        return sql`
          UPDATE tillflow_executions
          SET wake_requested = (status = 'running') OR wake_requested,
              due_at = CASE
                WHEN status = 'suspended' OR (status = 'stuck' AND ${resumeStuck}) THEN ${options.now}::bigint
                WHEN status = 'pending' THEN LEAST(due_at, ${options.now}::bigint)
                ELSE due_at END,
              status = CASE
                WHEN status = 'suspended' OR (status = 'stuck' AND ${resumeStuck}) THEN 'pending'
                ELSE status END,
              updated_at = ${options.now}
          WHERE execution_id = ${options.executionId}
            AND status NOT IN ('succeeded', 'failed', 'interrupted')
          RETURNING execution_id, status, due_at`.pipe(
          Effect.flatMap(decodeReleased),
          Effect.flatMap((rows) => announce(rows.filter(announced).map((row) => row.execution_id))),
          Effect.mapError(failure("wake"))
        )
      },

      setAttributes: (executionId, attributes) =>
        sql`
          UPDATE tillflow_executions SET attributes = attributes || ${JSON.stringify(attributes)}::jsonb
          WHERE execution_id = ${executionId}`.pipe(Effect.asVoid, Effect.mapError(failure("setAttributes"))),

      get: (executionId) =>
        sql`SELECT ${columns} FROM tillflow_executions WHERE execution_id = ${executionId}`.pipe(
          Effect.flatMap(decodeExecutionRows),
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toInfo)),
          Effect.mapError(failure("get"))
        ),

      list: (filter) => {
        const clauses = [sql`true`]
        if (filter.workflowName !== undefined) clauses.push(sql`workflow_name = ${filter.workflowName}`)
        if (filter.status !== undefined) {
          const statuses = typeof filter.status === "string" ? [filter.status] : filter.status
          if (statuses.length === 0) return Effect.succeed([])
          clauses.push(sql`status IN ${sql.in(statuses)}`)
        }
        if (filter.attributes !== undefined && Object.keys(filter.attributes).length > 0) {
          clauses.push(sql`attributes @> ${JSON.stringify(filter.attributes)}::jsonb`)
        }
        const limit = filter.limit === undefined ? sql`` : sql`LIMIT ${filter.limit}`
        return sql`SELECT ${columns} FROM tillflow_executions WHERE ${sql.and(clauses)} ORDER BY seq ${limit}`.pipe(
          Effect.flatMap(decodeExecutionRows),
          Effect.map((rows) => rows.map(toInfo)),
          Effect.mapError(failure("list"))
        )
      },

      changes,

      nextDueAt: (workflowNames) =>
        workflowNames.length === 0
          ? Effect.succeed(Option.none())
          : sql`
              SELECT LEAST(
                (SELECT min(due_at) FROM tillflow_executions
                 WHERE status IN ${sql.in(activeStatuses)} AND claims > 0
                   AND workflow_name IN ${sql.in(workflowNames)}),
                (SELECT min(due_at) FROM tillflow_executions
                 WHERE status = 'pending' AND claims = 0 AND workflow_name IN ${sql.in(workflowNames)})
              ) AS next`.pipe(
              Effect.flatMap(decodeNext),
              Effect.map((rows) => Option.fromNullable(rows[0]?.next ?? null)),
              Effect.mapError(failure("nextDueAt"))
            )
    })
  })

/** The queue without `streamVersions` (see `makeWith`). */
export const make: Effect.Effect<
  ExecutionQueue.ExecutionQueue["Type"],
  never,
  SqlClient.SqlClient | Scope.Scope
> = makeWith()

const StoreTableRow = Schema.Struct({ present: Schema.Boolean })

/** The queue over the `SqlClient` in context, migrated at start-up. */
export const layerWith = (
  options: Options = {}
): Layer.Layer<ExecutionQueue.ExecutionQueue, ExecutionQueue.ExecutionQueueError, SqlClient.SqlClient> =>
  Layer.scoped(
    ExecutionQueue.ExecutionQueue,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* ExecutionQueueMigrations.run
      if (options.streamVersions === true) {
        // The store's migrations ran first (its layer is built before this one).
        const rows = yield* Effect.flatMap(
          sql`SELECT to_regclass('streams') IS NOT NULL AS present`,
          Schema.decodeUnknown(Schema.Array(StoreTableRow))
        )
        if (rows[0]?.present !== true) {
          return yield* new ExecutionQueue.ExecutionQueueError({
            operation: "migrate",
            message: "streamVersions: the event store's streams table is not in this database"
          })
        }
      }
      return yield* makeWith(options)
    }).pipe(
      Effect.mapError((cause) =>
        cause._tag === "ExecutionQueueError"
          ? cause
          : new ExecutionQueue.ExecutionQueueError({ operation: "migrate", message: cause.message })
      )
    )
  )

/** The queue over the `SqlClient` in context, migrated at start-up, without `streamVersions`. */
export const layer: Layer.Layer<
  ExecutionQueue.ExecutionQueue,
  ExecutionQueue.ExecutionQueueError,
  SqlClient.SqlClient
> = layerWith()
