/**
 * The event store on @effect/sql: one implementation of the `EventStore` port over any
 * `SqlClient` that speaks PostgreSQL, run unchanged on PostgreSQL (`PgEventStore`) and on
 * PGlite (`PgliteEventStore`). The layer applies the package's migrations at start-up.
 *
 * Append: ONE statement per attempt, atomic by itself or inside the caller's transaction:
 * `tillflow_append_chained` (a PL/pgSQL function, migration 4, planned once per connection)
 * gets the batch, sent as one JSON array parameter, hashed onto the head the stream is
 * believed to have (the genesis hash for a new stream, the head this store last wrote, or,
 * for `exactVersion(n)` with no such head at n, the head read first). It bumps the stream
 * row only if it is still at that version and hash (or creates it only if it does not
 * exist), and inserts the batch only if that bump took effect. A wrong guess (a lost race)
 * inserts nothing, so no value of the global position sequence is taken, and answers the
 * stream's actual head: the store retries on it when it satisfies the expected version
 * (always under `AnyVersion`), otherwise fails with `ConcurrencyConflict`. The store sends
 * `NOTIFY` after appends commit (from a fiber of its own, at most one per
 * `notifyInterval`, coalescing the appends made meanwhile), not inside the appending
 * transaction.
 *
 * Group commit: appends made outside a caller's transaction while `maxInFlight` append
 * statements are already in flight wait, and go together as ONE statement and transaction
 * (`tillflow_append_many`, migration 5) when one finishes; see `internal/eventStore/Append`
 * and docs/event-store.md.
 *
 * The global log is read by the (transaction_id, global_position) pair, only below
 * `pg_snapshot_xmin(pg_current_snapshot())`: see `internal/eventStore/Read` and
 * docs/event-store.md.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as EventStoreMigrations from "./EventStoreMigrations.js"
import * as Coalescer from "./internal/Coalescer.js"
import * as HotPool from "./internal/HotPool.js"
import * as Append from "./internal/eventStore/Append.js"
import * as Heads from "./internal/eventStore/Heads.js"
import * as Notifications from "./internal/eventStore/Notifications.js"
import * as Read from "./internal/eventStore/Read.js"
import { storeError } from "./internal/eventStore/Rows.js"
import * as Verify from "./internal/eventStore/Verify.js"

/** Options of the SQL event store. */
export interface Options {
  /** How often an idle subscription polls (default 500 ms). Notifications wake it sooner. */
  readonly pollInterval?: Duration.DurationInput | undefined
  /**
   * The least time between two notifications this store sends (default 50 ms): the first
   * append after a quiet spell notifies at once, appends made within the interval share the
   * next one (a notification is a wake-up: subscriptions poll anyway).
   */
  readonly notifyInterval?: Duration.DurationInput | undefined
  /**
   * Group commit: how many append statements made outside a caller's transaction may be in
   * flight at once (default {@link defaultMaxInFlight}). An append that finds fewer goes at
   * once; otherwise it waits, and when a statement finishes the appends waiting meanwhile
   * go together as ONE statement and transaction (at most {@link maxCoalesced}, one per
   * stream).
   */
  readonly maxInFlight?: number | undefined
  /**
   * How long a subscription woken by an append waits before it reads (default 0: at once).
   * The appends made meanwhile are read by the same statement. On a database of one session
   * (PGlite) every subscription's read waits its turn with the appends and claims of the
   * runs in flight: a payment's dozen appends each woke every subscription (measured: 22
   * reads of the log per sale with two subscriptions, on the embedded worker).
   */
  readonly subscriptionGather?: Duration.DurationInput | undefined
  /**
   * Group commit of multi-stream appends (`appendStreams`) as of single-stream ones
   * (default true): beyond `maxInFlight`, several callers' all-or-nothing appends go as ONE
   * statement (`tillflow_append_groups`, at most 64, no stream in two of them), each still
   * written all or none. Measured on the callback receiver's one-write reply: 1.19–1.21×
   * the deliveries per second of each append alone, at 0.80–0.87× the CPU per request
   * (docs/performance.md, "Callback receiver"). false: each goes alone, at once, through
   * @effect/sql (the path before; kept for the benchmark's A/B).
   */
  readonly multiStreamGroupCommit?: boolean | undefined
}

/** The default number of append statements in flight before appends are coalesced. */
export const defaultMaxInFlight: number = Coalescer.defaultMaxInFlight

/** The most appends coalesced into one statement. */
export const maxCoalesced: number = Coalescer.maxCoalesced

/** The default least time between two notifications of one store. */
export const defaultNotifyInterval: Duration.Duration = Duration.millis(50)

/** The LISTEN/NOTIFY channel; the store notifies it after each append commits. */
export const channel = EventStoreMigrations.channel

/**
 * Builds the store over the `SqlClient` in context; run the migrations first (`layer` does).
 * It holds what the parts share (the client, the head cache, the wake-ups, the
 * group-commit limit) and wires them: `internal/eventStore` has one module per operation,
 * and the SQL of all of them in `Statements`.
 */
export const make = (
  options: Options = {}
): Effect.Effect<EventStore.Service, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pollInterval = options.pollInterval ?? EventStore.defaultPollInterval
    const maxInFlight = yield* Coalescer.maxInFlightOption("SqlEventStore", options.maxInFlight)
    const notifications = yield* Notifications.make(
      sql,
      Duration.decode(options.notifyInterval ?? defaultNotifyInterval)
    )
    const { readAll, readStream, streamVersion } = Read.make({ sql, maxInFlight, maxCoalesced })
    // PostgreSQL through a `pg` pool we hold (`PgEventStore`, `TestDatabase`): the append
    // goes through that pool as a prepared statement (STYLE.md, "SQL"); PGlite: @effect/sql.
    const pool = Option.getOrUndefined(yield* Effect.serviceOption(HotPool.HotPool))
    const { append, appendStreams } = Append.make({
      sql,
      pool,
      maxInFlight,
      maxCoalesced,
      multiStreamGroupCommit: options.multiStreamGroupCommit ?? true,
      heads: Heads.make(),
      notifications,
      streamVersion
    })
    const verify = Verify.make(sql)
    const gatherMs = Duration.toMillis(options.subscriptionGather ?? Duration.zero)
    const liveClock = Clock.make()

    const subscribe = (
      checkpoint: EventStore.Checkpoint,
      subscribeOptions: EventStore.SubscribeOptions = {}
    ) =>
      EventStore.pollingSubscription({
        from: checkpoint,
        readAll: (from: EventStore.Checkpoint, readOptions: EventStore.ReadAllOptions) =>
          Effect.uninterruptible(readAll(from, readOptions)),
        wakeups: Effect.map(PubSub.subscribe(notifications.wakeups), (queue) =>
          gatherMs > 0
            ? Effect.zipRight(
                Queue.take(queue),
                // The live clock: a test clock never holds a woken subscription back.
                Effect.withClock(Effect.sleep(Duration.millis(gatherMs)), liveClock)
              )
            : Queue.take(queue)
        ),
        pollInterval: subscribeOptions.pollInterval ?? pollInterval,
        batchSize: subscribeOptions.batchSize ?? EventStore.defaultBatchSize
      })

    // Every call runs uninterruptibly: an interrupted caller waits for its statement (they
    // are short) instead of cancelling it. @effect/sql-pg answers the interruption of a
    // running statement with `pg_cancel_backend(pid)` sent through the pool; with the pool
    // busy that cancel waits for a connection (holding the interrupted one), and it can run
    // after the interrupted connection went back to the pool, cancelling whatever statement
    // runs there then: another caller's append, or the cancel itself. Seen in the e2e
    // benchmark as cancelled appends and 5-second stalls of the whole pool.
    return {
      append: (streamId, expectedVersion, events) =>
        Effect.uninterruptible(append(streamId, expectedVersion, events)),
      appendStreams: (appends) => Effect.uninterruptible(appendStreams(appends)),
      readStream: (streamId, readOptions) => Effect.uninterruptible(readStream(streamId, readOptions)),
      streamVersion: (streamId) => Effect.uninterruptible(streamVersion(streamId)),
      readAll: (checkpoint, readOptions) => Effect.uninterruptible(readAll(checkpoint, readOptions)),
      subscribe,
      verify: (streamId) => Effect.uninterruptible(verify(streamId))
    } satisfies EventStore.Service
  })

/** Applies the event store's migrations, failing with `EventStoreError`. */
export const migrate: Effect.Effect<void, EventStore.EventStoreError, SqlClient.SqlClient> = Effect.asVoid(
  EventStoreMigrations.run
).pipe(Effect.mapError(storeError("migrate")))

/** The event store over the `SqlClient` in context, migrated at start-up. */
export const layer = (
  options: Options = {}
): Layer.Layer<EventStore.EventStore, EventStore.EventStoreError, SqlClient.SqlClient> =>
  Layer.scoped(EventStore.EventStore, Effect.zipRight(migrate, make(options)))
