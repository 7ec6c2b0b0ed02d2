/**
 * The workflow engine's `ExecutionQueue` on @effect/sql, for PostgreSQL and PGlite alike.
 * Workers claim due rows in one transaction with `FOR UPDATE SKIP LOCKED`, so concurrent
 * claimers never block on nor take the same row; a concurrency key is acquired in the same
 * transaction by upserting its holder row, whose primary key serialises the claimers of
 * one key. Leases are `due_at` on a running row: a heartbeat pushes it forward, and once it
 * passes the row is due again and any worker takes it over. Rows that become due or finish
 * are announced on a LISTEN/NOTIFY channel (`changes`), on PostgreSQL and PGlite, by a
 * NOTIFY the queue sends after its statement commits, at most one per `notifyInterval`,
 * carrying every id announced meanwhile (`internal/executionQueue/Announcements`).
 *
 * Group commit: enqueues, and wakes and releases, made outside a caller's transaction while
 * `maxInFlight` statements of their kind are in flight wait, and go together as ONE
 * statement and transaction when one finishes (`internal/Coalescer`), each caller getting
 * its own row's answer; see `internal/executionQueue/Enqueue` and `Transition`.
 *
 * Tenants: a row keeps the tenant its execution was started for (migration `10_tenants`);
 * `list` and `count` can be scoped to tenants, and a claim given a `tenantLimit` ranks the
 * due rows per tenant first (`Statements.claim`), so that no tenant runs more than its
 * share; without one, the claim's statement is the same as before tenants.
 *
 * History: finished executions stay in the table until retention moves them to
 * `tillflow_executions_archive` (`EventArchive.run`, migration `11_executions_archive`),
 * where `get` still finds them (`list` and `count` read the hot table only); the claim and
 * due-time look-ups read their partial indexes from scan floors (migration `7_scan_floors`)
 * that claims move up and writes below them move down, past the dead index entries
 * finished runs leave, which only VACUUM would remove (`internal/executionQueue/Floors`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { ExecutionQueue } from "@tillflow/engine"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as ExecutionQueueMigrations from "./ExecutionQueueMigrations.js"
import * as Channel from "./internal/Channel.js"
import * as Coalescer from "./internal/Coalescer.js"
import * as HotPool from "./internal/HotPool.js"
import * as Announcements from "./internal/executionQueue/Announcements.js"
import * as Claim from "./internal/executionQueue/Claim.js"
import * as Enqueue from "./internal/executionQueue/Enqueue.js"
import * as Floors from "./internal/executionQueue/Floors.js"
import { heartbeat } from "./internal/executionQueue/Heartbeat.js"
import * as Lookup from "./internal/executionQueue/Lookup.js"
import * as NextDue from "./internal/executionQueue/NextDue.js"
import { decodeIds, decodeStoreTable, failure } from "./internal/executionQueue/Rows.js"
import * as Statements from "./internal/executionQueue/Statements.js"
import * as Transition from "./internal/executionQueue/Transition.js"

/** The port, with the optional `claimWithNextDue` this queue has. */
type Service = ExecutionQueue.ExecutionQueue["Type"] & {
  readonly claimWithNextDue: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["claimWithNextDue"]>
  readonly expireStartDeadlines: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["expireStartDeadlines"]>
  readonly enqueueLeased: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["enqueueLeased"]>
  readonly count: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["count"]>
  readonly tally: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["tally"]>
  readonly tallyByTenant: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["tallyByTenant"]>
}

/** The service with every call run uninterruptibly (the `changes` stream stays interruptible). */
const uninterruptibleCalls = (service: Service): Service => ({
  ...service,
  enqueue: (input) => Effect.uninterruptible(service.enqueue(input)),
  enqueueLeased: (input) => Effect.uninterruptible(service.enqueueLeased(input)),
  claim: (options) => Effect.uninterruptible(service.claim(options)),
  claimWithNextDue: (options) => Effect.uninterruptible(service.claimWithNextDue(options)),
  heartbeat: (options) => Effect.uninterruptible(service.heartbeat(options)),
  release: (options) => Effect.uninterruptible(service.release(options)),
  wake: (options) => Effect.uninterruptible(service.wake(options)),
  setAttributes: (executionId, attributes) =>
    Effect.uninterruptible(service.setAttributes(executionId, attributes)),
  get: (executionId) => Effect.uninterruptible(service.get(executionId)),
  list: (filter) => Effect.uninterruptible(service.list(filter)),
  count: (filter) => Effect.uninterruptible(service.count(filter)),
  tally: Effect.uninterruptible(service.tally),
  tallyByTenant: (options) => Effect.uninterruptible(service.tallyByTenant(options)),
  nextDueAt: (workflowNames) => Effect.uninterruptible(service.nextDueAt(workflowNames)),
  expireStartDeadlines: (options) => Effect.uninterruptible(service.expireStartDeadlines(options))
})

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
  /**
   * The least time, in milliseconds of the callers' clock (the claims' `now`), between two
   * advances of the scan floors by this queue (default {@link defaultScanFloorInterval}).
   * The floors are where claims and due-time look-ups start reading their indexes, past
   * the dead entries finished runs left (migration `7_scan_floors`): the longer the
   * interval, the more of those a scan may walk before the next advance.
   */
  readonly scanFloorInterval?: number | undefined
}

/** The default least time between two advances of the scan floors by one queue (ms). */
export const defaultScanFloorInterval: number = Floors.defaults.interval

/** The default number of statements of one kind in flight before calls are coalesced. */
export const defaultMaxInFlight: number = Coalescer.defaultMaxInFlight

/** The most calls coalesced into one statement. */
export const maxCoalesced: number = Coalescer.maxCoalesced

/** The default least time between two NOTIFY statements of one queue. */
export const defaultNotifyInterval: Duration.Duration = Duration.millis(50)

/**
 * Execution ids as the queue's NOTIFY payloads: newline-separated, each payload under
 * PostgreSQL's 8000-byte limit; an id over the limit by itself is left out.
 */
export const payloads: (ids: ReadonlyArray<string>) => Array<string> = Announcements.payloads

/**
 * Builds the queue over the `SqlClient` in context; run the migrations first (`layer` does).
 * It holds what the parts share (the client, the announcer, the group-commit limit) and
 * wires them: `internal/executionQueue` has one module per operation, and the SQL of all
 * of them in `Statements`.
 */
export const makeWith = (
  options: Options = {}
): Effect.Effect<ExecutionQueue.ExecutionQueue["Type"], never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const listen = yield* Channel.listenOption
    // PGlite: announcements in process, without a statement (`Channel.Local`).
    const local = yield* Channel.localOption
    const self = {}
    const maxInFlight = yield* Coalescer.maxInFlightOption("SqlExecutionQueue", options.maxInFlight)
    const announce = yield* Announcements.make(
      sql,
      Duration.decode(options.notifyInterval ?? defaultNotifyInterval),
      local,
      self
    )
    const advanceFloors = Floors.make(sql, {
      ...Floors.defaults,
      interval: options.scanFloorInterval ?? Floors.defaults.interval
    })
    const claims = Claim.make(sql, options.streamVersions === true, advanceFloors)
    // PostgreSQL through a `pg` pool we hold: a release goes through it (`internal/HotPool`).
    const pool = Option.getOrUndefined(yield* Effect.serviceOption(HotPool.HotPool))
    const transitions = Transition.make({ sql, pool, maxInFlight, maxCoalesced, announce })

    // Every call runs uninterruptibly, for the reason given in SqlEventStore: @effect/sql-pg
    // cancels an interrupted statement with a pg_cancel_backend that can land on another
    // caller's statement. An interrupted caller waits for its (short) statement instead.
    return uninterruptibleCalls({
      enqueue: Enqueue.make({ sql, maxInFlight, maxCoalesced, announce }),
      enqueueLeased: Enqueue.makeLeased({ sql, announce }),
      claim: claims.claim,
      claimWithNextDue: claims.claimWithNextDue,
      heartbeat: (options) => heartbeat(sql, options),
      release: transitions.release,
      wake: transitions.wake,
      setAttributes: (executionId, attributes) =>
        Statements.setAttributes(sql, executionId, attributes).pipe(
          Effect.asVoid,
          Effect.mapError(failure("setAttributes"))
        ),
      get: (executionId) => Lookup.get(sql, executionId),
      list: (filter) => Lookup.list(sql, filter),
      count: (filter) => Lookup.count(sql, filter),
      tally: Lookup.tally(sql),
      tallyByTenant: ({ now }) => Lookup.tallyByTenant(sql, now),
      changes: Announcements.changes(listen, local, self),
      nextDueAt: (workflowNames) => NextDue.earliest(sql, workflowNames),
      expireStartDeadlines: ({ now }) =>
        Statements.expireStartDeadlines(sql, now).pipe(
          Effect.flatMap(decodeIds),
          Effect.map((rows) => rows.map((row) => row.execution_id)),
          Effect.tap((ids) => (ids.length > 0 ? announce(ids) : Effect.void)),
          Effect.mapError(failure("expireStartDeadlines"))
        )
    })
  })

/** The queue without `streamVersions` (see `makeWith`). */
export const make: Effect.Effect<
  ExecutionQueue.ExecutionQueue["Type"],
  never,
  SqlClient.SqlClient | Scope.Scope
> = makeWith()

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
        const rows = yield* Effect.flatMap(Statements.storeTablePresent(sql), decodeStoreTable)
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
