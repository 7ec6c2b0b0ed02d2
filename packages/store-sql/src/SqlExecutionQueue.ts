/**
 * The workflow engine's `ExecutionQueue` on @effect/sql, for PostgreSQL and PGlite alike.
 * Workers claim due rows in one transaction with `FOR UPDATE SKIP LOCKED`, so concurrent
 * claimers never block on nor take the same row; a concurrency key is acquired in the same
 * transaction by upserting its holder row, whose primary key serialises the claimers of
 * one key. Leases are `due_at` on a running row: a heartbeat pushes it forward, and once it
 * passes the row is due again and any worker takes it over. Rows that become due or finish
 * are announced on a LISTEN/NOTIFY channel (`changes`), on PostgreSQL and PGlite, by a
 * NOTIFY the queue sends after its statement commits (see `notifyAfterCommit`), at most one
 * per `notifyInterval`, carrying every id announced meanwhile.
 *
 * Group commit: enqueues, and wakes and releases, made outside a caller's transaction while
 * `maxInFlight` statements of their kind are in flight wait, and go together as ONE
 * statement and transaction when one finishes (`internal/Coalescer`), each caller getting
 * its own row's answer; see `enqueueMany` and `transitionMany`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { ExecutionQueue } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ExecutionQueueMigrations from "./ExecutionQueueMigrations.js"
import * as Coalescer from "./internal/Coalescer.js"
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

const ClaimedOrNextRow = Schema.Struct({
  execution_id: Schema.NullOr(Schema.String),
  workflow_name: Schema.NullOr(Schema.String),
  parent_id: Schema.NullOr(Schema.String),
  claims: Schema.NullOr(Schema.Number),
  stream_version: Schema.NullOr(Int8),
  next_due: Schema.NullOr(Int8)
})
const decodeClaimedWithNext = Schema.decodeUnknown(Schema.Array(ClaimedOrNextRow))

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

/** The port, with the optional `claimWithNextDue` this queue has. */
type Service = ExecutionQueue.ExecutionQueue["Type"] & {
  readonly claimWithNextDue: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["claimWithNextDue"]>
}

/** The service with every call run uninterruptibly (the `changes` stream stays interruptible). */
const uninterruptibleCalls = (service: Service): Service => ({
  ...service,
  enqueue: (input) => Effect.uninterruptible(service.enqueue(input)),
  claim: (options) => Effect.uninterruptible(service.claim(options)),
  claimWithNextDue: (options) => Effect.uninterruptible(service.claimWithNextDue(options)),
  heartbeat: (options) => Effect.uninterruptible(service.heartbeat(options)),
  release: (options) => Effect.uninterruptible(service.release(options)),
  wake: (options) => Effect.uninterruptible(service.wake(options)),
  setAttributes: (executionId, attributes) =>
    Effect.uninterruptible(service.setAttributes(executionId, attributes)),
  get: (executionId) => Effect.uninterruptible(service.get(executionId)),
  list: (filter) => Effect.uninterruptible(service.list(filter)),
  nextDueAt: (workflowNames) => Effect.uninterruptible(service.nextDueAt(workflowNames))
})

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
  /**
   * Group commit: how many statements of one kind made outside a caller's transaction may
   * be in flight at once (default {@link defaultMaxInFlight}); the kinds are enqueues, and
   * wakes and releases together. A call that finds fewer goes at once; otherwise it waits,
   * and when a statement finishes the calls waiting meanwhile go together as ONE statement
   * and transaction (at most {@link maxCoalesced}, one per execution).
   */
  readonly maxInFlight?: number | undefined
  /**
   * The least time between two NOTIFY statements of this queue (default
   * {@link defaultNotifyInterval}): the first announcement after a quiet spell goes at once,
   * the ones made within the interval share the next statement (and notification).
   */
  readonly notifyInterval?: Duration.DurationInput | undefined
}

/** The default number of statements of one kind in flight before calls are coalesced. */
export const defaultMaxInFlight: number = Coalescer.defaultMaxInFlight

/** The most calls coalesced into one statement. */
export const maxCoalesced: number = Coalescer.maxCoalesced

/** The default least time between two NOTIFY statements of one queue. */
export const defaultNotifyInterval: Duration.Duration = Duration.millis(50)

/**
 * The most UTF-8 bytes of execution ids (and separators) one notification carries:
 * PostgreSQL refuses a payload of 8000 bytes or more.
 */
const maxPayloadBytes = 7_900

const utf8Length = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    // A surrogate pair is two code units and four bytes.
    bytes += code < 0x80 ? 1 : code < 0x800 || (code >= 0xd800 && code < 0xe000) ? 2 : 3
  }
  return bytes
}

/**
 * Execution ids as notification payloads: ids separated by a newline, each payload under
 * PostgreSQL's limit. An id longer than the limit alone is left out (it would fail the
 * whole NOTIFY); a notification is only a wake-up, and listeners poll anyway.
 */
export const payloads = (ids: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  let current = ""
  let bytes = 0
  for (const id of ids) {
    const length = utf8Length(id)
    if (length === 0 || length > maxPayloadBytes) continue
    if (current !== "" && bytes + 1 + length > maxPayloadBytes) {
      out.push(current)
      current = ""
      bytes = 0
    }
    current = current === "" ? id : current + "\n" + id
    bytes += (bytes === 0 ? 0 : 1) + length
  }
  if (current !== "") out.push(current)
  return out
}

/** A wake or a release: the calls coalesced into one statement (`transitionMany`). */
type Transition =
  | {
      readonly _tag: "Wake"
      readonly executionId: string
      readonly now: number
      readonly resumeStuck: boolean
    }
  | {
      readonly _tag: "Release"
      readonly executionId: string
      readonly workerId: string
      readonly release: ExecutionQueue.Release
      readonly now: number
    }

type EnqueueInput = Parameters<ExecutionQueue.ExecutionQueue["Type"]["enqueue"]>[0]

const TransitionRow = Schema.Struct({
  entry: Schema.Number,
  execution_id: Schema.String,
  status: ExecutionQueue.ExecutionStatus,
  due_at: Schema.NullOr(Int8)
})
const decodeTransitions = Schema.decodeUnknown(Schema.Array(TransitionRow))

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
      onSome: (listen) =>
        listen(ExecutionQueueMigrations.channel).pipe(
          // A notification carries one or more ids, one per line (`payloads`).
          Stream.mapConcat((payload) => payload.split("\n").filter((id) => id !== "")),
          Stream.mapError(failure("listen"))
        )
    })

    const maxInFlight = yield* Coalescer.maxInFlightOption("SqlExecutionQueue", options.maxInFlight)

    // Announcements, sent after the statement that made them commits, by one fiber, at
    // most one NOTIFY statement per `notifyInterval`: the first announcement after a quiet
    // spell goes at once, the ones made while a NOTIFY is in flight or within the interval
    // after it go together in the next, as few notifications as their size allows (ids
    // separated by newlines, `payloads`). A NOTIFY inside the enqueuing, releasing or
    // waking transaction would take PostgreSQL's server-wide notify lock from pre-commit
    // until after the WAL flush, so concurrent commits could not share a flush; one NOTIFY
    // per change cost a statement per change and woke every listening process (this one
    // included) once per id. An announcement only hastens a wake-up: workers and waiting
    // callers poll anyway, so one delayed by the interval or lost to a failure costs
    // latency, not work. The pause runs on the live clock, so a test clock never holds
    // announcements back.
    const notifyInterval = Duration.decode(options.notifyInterval ?? defaultNotifyInterval)
    const liveClock = Clock.make()
    const pending = yield* Queue.unbounded<string>()
    yield* Queue.take(pending).pipe(
      Effect.flatMap((first) => Effect.map(Queue.takeAll(pending), (rest) => new Set([first, ...rest]))),
      Effect.flatMap((ids) => notify(Array.from(ids))),
      Effect.catchAllCause((cause) => Effect.logDebug("Execution queue NOTIFY failed; workers poll", cause)),
      Effect.zipRight(Effect.withClock(Effect.sleep(notifyInterval), liveClock)),
      Effect.forever,
      Effect.forkScoped
    )
    const notify = (ids: ReadonlyArray<string>) => {
      const texts = payloads(ids)
      return texts.length === 0
        ? Effect.void
        : Effect.asVoid(
            Effect.uninterruptible(
              sql`SELECT ${sql.csv(texts.map((text) => sql`pg_notify(${ExecutionQueueMigrations.channel}, ${text})`))}`
            )
          )
    }
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

    // The earliest time after `now` at which an execution of the workflows falls due by
    // the clock alone: a timer, a retry or a lease, due after its row last changed. A row
    // made due when it changed (enqueued, woken) is announced by its change (a signal in
    // the process, a NOTIFY to the others), so a worker need not sleep for it; counting
    // those made the loop claim back to back while rows kept becoming due. Each part on its
    // own partial index (`3_claim_started_first`), as `nextDueAt` reads them.
    const nextDue = (workflowNames: ReadonlyArray<string>, now: number) => sql`
      SELECT LEAST(
        (SELECT min(due_at) FROM tillflow_executions
         WHERE status IN ${sql.in(activeStatuses)} AND claims > 0
           AND workflow_name IN ${sql.in(workflowNames)} AND due_at > ${now} AND due_at > updated_at),
        (SELECT min(due_at) FROM tillflow_executions
         WHERE status = 'pending' AND claims = 0 AND workflow_name IN ${sql.in(workflowNames)}
           AND due_at > ${now} AND due_at > updated_at))`
    const nextDueAfter = (workflowNames: ReadonlyArray<string>, now: number) =>
      sql`${nextDue(workflowNames, now)} AS next`.pipe(
        Effect.flatMap(decodeNext),
        Effect.map((rows) => Option.fromNullable(rows[0]?.next ?? null)),
        Effect.mapError(failure("claim"))
      )

    /**
     * One statement (its own transaction, or part of the caller's): the due candidates are
     * locked (`SKIP LOCKED`: concurrent claimers never wait on nor take the same row),
     * started ones first, then new ones, each oldest due first, each part on its own partial
     * index (`3_claim_started_first`), new ones only in the places the started ones left.
     * For the candidates with a concurrency key, one per key (the first in that order)
     * upserts the key's holder row: the no-op update locks it and returns the holder, either
     * this execution (acquired now or before) or another one (then it is not claimed). Holder
     * rows are locked in key order by every claimer, so two claimers can wait on each other's
     * keys but never in a cycle (no deadlock). The granted candidates are leased. One more
     * row answers the earliest due time after `now` (`claimWithNextDue`), read in the
     * claim's snapshot, so the rows it leases count with their due times before the claim
     * (not after `now`).
     */
    const claimWithNextDue = (
      options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["claim"]>[0]
    ): Effect.Effect<ExecutionQueue.ClaimResult, ExecutionQueue.ExecutionQueueError> => {
      if (options.workflowNames.length === 0) return Effect.succeed({ claims: [], nextDueAt: Option.none() })
      if (options.limit <= 0) {
        return Effect.map(nextDueAfter(options.workflowNames, options.now), (nextDueAt) => ({
          claims: [],
          nextDueAt
        }))
      }
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
      SELECT NULL, NULL, NULL, NULL, NULL, (${nextDue(options.workflowNames, options.now)})::text`.pipe(
        Effect.flatMap(decodeClaimedWithNext),
        Effect.map((rows) => {
          const claims: Array<ExecutionQueue.Claim> = []
          let nextDueAt: Option.Option<number> = Option.none()
          for (const row of rows) {
            if (row.execution_id === null) {
              nextDueAt = Option.fromNullable(row.next_due)
              continue
            }
            claims.push({
              executionId: row.execution_id,
              workflowName: row.workflow_name ?? "",
              parentId: row.parent_id,
              claims: row.claims ?? 0,
              leaseUntil,
              streamVersion: row.stream_version ?? undefined
            })
          }
          return { claims, nextDueAt }
        }),
        Effect.mapError(failure("claim"))
      )
    }

    const claim = (options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["claim"]>[0]) =>
      Effect.map(claimWithNextDue(options), (result) => result.claims)

    // A release alone is one statement: its own transaction, or part of the caller's.
    const releaseOne = (options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["release"]>[0]) =>
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
      })

    // A wake alone: one statement. Every expression of SET reads the row as it was before
    // the update.
    const wakeOne = (options: {
      readonly executionId: string
      readonly now: number
      readonly resumeStuck: boolean
    }) =>
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
        RETURNING execution_id, status, due_at`.pipe(Effect.flatMap(decodeReleased))

    const transitionOne = (transition: Transition) =>
      transition._tag === "Wake" ? wakeOne(transition) : releaseOne(transition)

    /**
     * Wakes and releases of different executions as ONE statement and transaction, each
     * entry with exactly the rules of its statement alone (`wakeOne`, `releaseOne`, the same
     * expressions, reading the row as it was before the update), answering each entry's
     * own row, by index. The rows are locked first, in execution id order (`locked`), and
     * the concurrency keys of finished executions are freed only once all of them are
     * (`freed` waits for the whole of `locked`): statements in flight together, heartbeats
     * (which lock in the same order) and claims (which take rows with SKIP LOCKED, then
     * keys) never wait on each other in a cycle. A row another transaction changed while
     * this one waited is checked again in its newest state, as a statement alone would.
     */
    const transitionMany = (transitions: ReadonlyArray<Transition>) => {
      const entries = JSON.stringify(
        transitions.map((transition, entry) =>
          transition._tag === "Wake"
            ? {
                entry,
                execution_id: transition.executionId,
                op: "wake",
                now: transition.now,
                resume_stuck: transition.resumeStuck
              }
            : {
                entry,
                execution_id: transition.executionId,
                op: "release",
                now: transition.now,
                worker_id: transition.workerId,
                outcome: transition.release._tag,
                wake_at: transition.release._tag === "Suspended" ? (transition.release.wakeAt ?? null) : null,
                run_at: transition.release._tag === "Retry" ? transition.release.runAt : null,
                finished: transition.release._tag === "Finished" ? transition.release.status : null
              }
        )
      )
      return sql`
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
        SELECT entry, execution_id, status, due_at FROM released`.pipe(
        Effect.flatMap(decodeTransitions),
        Effect.map((rows) => {
          const byEntry: Array<Array<typeof ReleasedRow.Type>> = transitions.map(() => [])
          for (const row of rows) byEntry[row.entry]?.push(row)
          return byEntry
        })
      )
    }

    // Group commit of the wakes and releases made outside a caller's transaction: one
    // statement for the calls waiting while `maxInFlight` are in flight, one call per
    // execution in each.
    const coalescedTransition = Coalescer.make({
      maxInFlight,
      maxCoalesced,
      key: (transition: Transition) => transition.executionId,
      one: transitionOne,
      many: transitionMany
    })

    const transition = (transition: Transition) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (connection) =>
        Option.isSome(connection) ? transitionOne(transition) : coalescedTransition(transition)
      ).pipe(Effect.tap((rows) => announce(rows.filter(announced).map((row) => row.execution_id))))

    const release = (options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["release"]>[0]) =>
      transition({ _tag: "Release", ...options }).pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(failure("release"))
      )

    // An enqueue alone: one statement.
    const enqueueOne = (input: EnqueueInput) =>
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
        Effect.map((rows) => rows.length > 0)
      )

    // Enqueues of different executions as ONE statement and transaction, each answering
    // whether its own row was inserted. Rows are inserted in execution id order, so two
    // such statements inserting the same ids wait on each other in one order only.
    const enqueueMany = (inputs: ReadonlyArray<EnqueueInput>) => {
      const entries = JSON.stringify(
        inputs.map((input) => ({
          execution_id: input.executionId,
          workflow_name: input.workflowName,
          concurrency_key: input.concurrencyKey ?? null,
          parent_id: input.parentId ?? null,
          attributes: input.attributes,
          stream_id: input.stream ?? null,
          now: input.now
        }))
      )
      return sql`
        INSERT INTO tillflow_executions
          (execution_id, workflow_name, status, due_at, concurrency_key, parent_id, attributes,
           stream_id, created_at, updated_at)
        SELECT i.execution_id, i.workflow_name, 'pending', i.now, i.concurrency_key, i.parent_id,
               i.attributes, i.stream_id, i.now, i.now
        FROM jsonb_to_recordset(${entries}::jsonb) AS i(
          execution_id text, workflow_name text, concurrency_key text, parent_id text, attributes jsonb,
          stream_id text, now bigint)
        ORDER BY i.execution_id
        ON CONFLICT (execution_id) DO NOTHING
        RETURNING execution_id`.pipe(
        Effect.flatMap(decodeIds),
        Effect.map((rows) => {
          const inserted = new Set(rows.map((row) => row.execution_id))
          return inputs.map((input) => inserted.has(input.executionId))
        })
      )
    }

    const coalescedEnqueue = Coalescer.make({
      maxInFlight,
      maxCoalesced,
      key: (input: EnqueueInput) => input.executionId,
      one: enqueueOne,
      many: enqueueMany
    })

    // Every call runs uninterruptibly, for the reason given in SqlEventStore: @effect/sql-pg
    // cancels an interrupted statement with a pg_cancel_backend that can land on another
    // caller's statement. An interrupted caller waits for its (short) statement instead.
    return uninterruptibleCalls({
      enqueue: (input) =>
        Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (connection) =>
          Option.isSome(connection) ? enqueueOne(input) : coalescedEnqueue(input)
        ).pipe(
          Effect.tap((inserted) => (inserted ? announce([input.executionId]) : Effect.void)),
          Effect.mapError(failure("enqueue"))
        ),

      claim,

      claimWithNextDue,

      heartbeat: (options) =>
        options.executionIds.length === 0
          ? Effect.succeed([])
          : // The rows are locked in execution id order, as coalesced releases lock them: a
            // heartbeat and a release of the same rows never wait on each other in a cycle.
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
              RETURNING t.execution_id`.pipe(
              Effect.flatMap(decodeIds),
              Effect.map((rows) => rows.map((row) => row.execution_id)),
              Effect.mapError(failure("heartbeat"))
            ),

      release,

      wake: (options) =>
        transition({
          _tag: "Wake",
          executionId: options.executionId,
          now: options.now,
          resumeStuck: options.resumeStuck === true
        }).pipe(Effect.asVoid, Effect.mapError(failure("wake"))),

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
