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
 * (`tillflow_append_many`, migration 5) when one finishes; see `coalesced` and
 * docs/event-store.md.
 *
 * The global log is read by the (transaction_id, global_position) pair, only below
 * `pg_snapshot_xmin(pg_current_snapshot())`: see `readAll` and docs/event-store.md.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { EventStore, HashChain } from "@tillflow/engine"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as EventStoreMigrations from "./EventStoreMigrations.js"
import * as Coalescer from "./internal/Coalescer.js"
import { sha256, sha256Sync } from "./internal/sha256.js"
import * as PgliteClient from "./PgliteClient.js"

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
}

/** The default number of append statements in flight before appends are coalesced. */
export const defaultMaxInFlight: number = Coalescer.defaultMaxInFlight

/** The most appends coalesced into one statement. */
export const maxCoalesced: number = Coalescer.maxCoalesced

/** The default least time between two notifications of one store. */
export const defaultNotifyInterval: Duration.Duration = Duration.millis(50)

/** The LISTEN/NOTIFY channel; the store notifies it after each append commits. */
export const channel = EventStoreMigrations.channel

const headCacheSize = 10_000

const EventRow = Schema.Struct({
  stream_id: Schema.String,
  version: Schema.NumberFromString,
  global_position: Schema.BigInt,
  transaction_id: Schema.BigInt,
  event_id: Schema.String,
  type: Schema.String,
  schema_version: Schema.Number,
  data: Schema.Unknown,
  metadata: Schema.Unknown,
  recorded_at: Schema.DateFromSelf,
  hash: Schema.String
})
const decodeEventRows = Schema.decodeUnknown(Schema.Array(EventRow))

const HeadRow = Schema.Struct({
  stream_id: Schema.String,
  version: Schema.NumberFromString,
  last_hash: Schema.String
})
const decodeHeadRows = Schema.decodeUnknown(Schema.Array(HeadRow))

/**
 * One append attempt as sent: the batch hashed onto the guessed head (`expected`,
 * `exists`, `previousHash`), its last hash and its rows (`batchJson`).
 */
interface AppendRequest {
  readonly streamId: string
  readonly expected: number
  readonly exists: boolean
  readonly previousHash: string
  readonly lastHash: string
  readonly batch: string
}

/** What the append function answers for one attempt (see `tillflow_append_chained`). */
interface AppendRow {
  readonly inserted: number
  readonly positions: string | null
  readonly head_version: string | null
  readonly head_hash: string | null
}

/** A read of a stream from a version on, to the end. */
interface ReadRequest {
  readonly streamId: string
  readonly fromVersion: number
}

/**
 * The entries of a coalesced statement as one JSON array:
 * `[index, stream_id, expected, stream_exists, previous_hash, next_hash, batch]` per entry.
 */
const entriesJson = (requests: ReadonlyArray<AppendRequest>): string => {
  let json = "["
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i]
    json +=
      (i === 0 ? "[" : ",[") +
      i +
      "," +
      JSON.stringify(request.streamId) +
      "," +
      request.expected +
      "," +
      request.exists +
      ',"' +
      request.previousHash +
      '","' +
      request.lastHash +
      '",' +
      request.batch +
      "]"
  }
  return json + "]"
}

/** The outcome of one append attempt: appended, or a wrong guess and the stream's actual head. */
type Attempt =
  | { readonly _tag: "Appended"; readonly result: EventStore.AppendResult }
  | { readonly _tag: "Missed"; readonly head: Option.Option<HashChain.StreamHead> }

const toRecordedEvent = (row: typeof EventRow.Type): EventStore.RecordedEvent =>
  // Rows come from jsonb columns and typed SQL casts: already valid, so skip re-validation.
  new EventStore.RecordedEvent(
    {
      streamId: row.stream_id,
      version: row.version,
      globalPosition: row.global_position,
      transactionId: row.transaction_id,
      eventId: row.event_id,
      type: row.type,
      schemaVersion: row.schema_version,
      data: row.data as EventStore.Json,
      metadata: row.metadata as EventStore.JsonObject,
      recordedAt: DateTime.unsafeFromDate(row.recorded_at),
      hash: row.hash
    },
    true
  )

const storeError = (operation: string) => (cause: unknown) =>
  new EventStore.EventStoreError({
    operation,
    detail: cause instanceof Error ? cause.message : String(cause),
    cause
  })

/** The fields PostgreSQL (and PGlite) put on a database error. */
interface DatabaseErrorFields {
  readonly code?: unknown
  readonly constraint?: unknown
  readonly detail?: unknown
}

const databaseErrorOf = (error: SqlError): DatabaseErrorFields =>
  typeof error.cause === "object" && error.cause !== null ? (error.cause as DatabaseErrorFields) : {}

/**
 * The rows of a batch as one JSON array, the append statement's only per-event parameter:
 * `[eventId, type, schemaVersion, data, metadata, hash]` per event, `data` and `metadata`
 * being the canonical JSON texts that were hashed. Ids are lowercase UUIDs and hashes
 * lowercase hex, so they need no escaping; the type goes through `JSON.stringify`.
 */
const batchJson = (
  prepared: ReadonlyArray<EventStore.PreparedEvent>,
  hashes: ReadonlyArray<string>
): string => {
  let json = "["
  for (let i = 0; i < prepared.length; i++) {
    const event = prepared[i]
    json +=
      (i === 0 ? '["' : ',["') +
      event.eventId +
      '",' +
      JSON.stringify(event.type) +
      "," +
      event.schemaVersion +
      "," +
      event.dataJson +
      "," +
      event.metadataJson +
      ',"' +
      hashes[i] +
      '"]'
  }
  return json + "]"
}

/** Builds the store over the `SqlClient` in context; run the migrations first (`layer` does). */
export const make = (
  options: Options = {}
): Effect.Effect<EventStore.Service, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const pollInterval = options.pollInterval ?? EventStore.defaultPollInterval
    const maxInFlight = yield* Coalescer.maxInFlightOption("SqlEventStore", options.maxInFlight)

    // Wake-ups for subscriptions: one LISTEN per store (PgClient shares one connection for
    // all listeners, and an UNLISTEN by one subscription would silence the others), fanned
    // out through a PubSub. Local appends publish too, without waiting for the round trip.
    const wakeups = yield* PubSub.sliding<void>(1)
    const pg = yield* Effect.serviceOption(PgClient.PgClient)
    const pglite = yield* Effect.serviceOption(PgliteClient.PgliteClient)
    const listen = Option.orElse(
      Option.map(pg, (client) => client.listen),
      () => Option.map(pglite, (client) => client.listen)
    )
    if (Option.isSome(listen)) {
      yield* listen.value(channel).pipe(
        Stream.runForEach(() => PubSub.publish(wakeups, undefined)),
        Effect.tapErrorCause((cause) =>
          Effect.logWarning("Event store LISTEN failed; subscriptions poll until it is back", cause)
        ),
        Effect.retry(Schedule.spaced("5 seconds")),
        Effect.forkScoped
      )
    }

    // Notifications of appends, sent after their commit by one fiber, at most one per
    // `notifyInterval`: the first append after a quiet spell notifies at once, the appends
    // made while a NOTIFY is in flight or within the interval after it share the next one.
    // A NOTIFY inside the appending transaction would take PostgreSQL's server-wide notify
    // lock from pre-commit until after the WAL flush, so concurrent appending commits could
    // not share a flush (measured: 8 concurrent writers halved, docs/performance.md). One
    // NOTIFY per append, even after the commit, cost a second statement on another
    // connection, a wake-up of every listening backend and of this process's LISTEN
    // connection: more Node CPU than the append's own statement (docs/performance.md). A
    // notification is only a wake-up: subscriptions poll anyway, so one delayed by the
    // interval or lost to a failure costs latency, not events. The pause runs on the live
    // clock, so a test clock never holds notifications back.
    const notifyInterval = Duration.decode(options.notifyInterval ?? defaultNotifyInterval)
    const notifications = yield* Queue.sliding<void>(1)
    const liveClock = Clock.make()
    yield* Queue.take(notifications).pipe(
      Effect.zipRight(Effect.uninterruptible(sql`SELECT pg_notify(${channel}, 'append')`)),
      Effect.catchAllCause((cause) =>
        Effect.logDebug("Event store NOTIFY failed; subscriptions poll", cause)
      ),
      Effect.zipRight(Effect.withClock(Effect.sleep(notifyInterval), liveClock)),
      Effect.forever,
      Effect.forkScoped
    )
    // Inside a caller's transaction the NOTIFY goes with it (delivered at its commit):
    // sent from the notifier fiber, it would arrive before the events are visible.
    const notifyAppended = (inTransaction: boolean) =>
      inTransaction
        ? Effect.asVoid(sql`SELECT pg_notify(${channel}, 'append')`)
        : Queue.offer(notifications, undefined)

    // The casts keep int8/xid8 exact whatever the driver's parsers. They reuse the column
    // names, so ORDER BY must name the table's columns (`events.version`): a bare `version`
    // would sort by the text alias ("10" before "9").
    const columns = sql`stream_id, version::text AS version, global_position::text AS global_position,
      transaction_id::text AS transaction_id, event_id::text AS event_id, type, schema_version,
      data, metadata, recorded_at, hash`

    const decodeEvents = (operation: string) => (rows: ReadonlyArray<unknown>) =>
      decodeEventRows(rows).pipe(Effect.map(Arr.map(toRecordedEvent)), Effect.mapError(storeError(operation)))

    // The heads this store last wrote (or was last told by a wrong guess), so that a writer
    // appending at the version it just wrote (the usual case: one worker per stream) skips
    // reading the head. An entry is only ever a guess: the append function checks both the
    // version and the hash (a head written by a transaction that rolled back may have been
    // rewritten since with another hash), so a stale entry costs one attempt, never a
    // broken chain or a wrong conflict.
    const heads = new Map<string, HashChain.StreamHead>()
    const rememberHead = (streamId: string, head: HashChain.StreamHead) => {
      heads.delete(streamId)
      heads.set(streamId, head)
      if (heads.size > headCacheSize) {
        const oldest = heads.keys().next()
        if (oldest.done !== true) heads.delete(oldest.value)
      }
    }

    const readHead = (streamId: string) =>
      Effect.map(
        sql<{ readonly version: string; readonly last_hash: string }>`
          SELECT version::text AS version, last_hash FROM streams WHERE stream_id = ${streamId}`,
        (rows): Option.Option<HashChain.StreamHead> =>
          rows.length === 0
            ? Option.none()
            : Option.some({ version: Number(rows[0].version), lastHash: rows[0].last_hash })
      )

    // The statement of one attempt alone: in the caller's transaction if it has one,
    // otherwise its own.
    const executeOne = (request: AppendRequest): Effect.Effect<AppendRow | undefined, SqlError> =>
      Effect.map(
        sql<AppendRow>`SELECT inserted, positions, head_version::text AS head_version, head_hash
          FROM tillflow_append_chained(${request.streamId}::text, ${request.expected}::bigint,
            ${request.exists}::boolean, ${request.previousHash}::text, ${request.lastHash}::text,
            ${request.batch}::jsonb)`,
        (rows) => rows[0]
      )

    // Several attempts (of different streams) as ONE statement and transaction:
    // `tillflow_append_many` (migration 5) runs `tillflow_append_chained` for each entry in
    // stream order and answers one row per entry, by index. A wrong guess inserts nothing
    // for its stream only; an error (a duplicate event id, a deadlock) rolls back all.
    const executeMany = (
      requests: ReadonlyArray<AppendRequest>
    ): Effect.Effect<Array<AppendRow | undefined>, SqlError> =>
      Effect.map(
        sql<AppendRow & { readonly entry: number }>`SELECT entry, inserted, positions,
            head_version::text AS head_version, head_hash
          FROM tillflow_append_many(${entriesJson(requests)}::jsonb)`,
        (rows) => {
          const byEntry: Array<AppendRow | undefined> = new Array<AppendRow | undefined>(
            requests.length
          ).fill(undefined)
          for (const row of rows) byEntry[Number(row.entry)] = row
          return byEntry
        }
      )

    // Group commit of the appends made outside a caller's transaction (`Coalescer`): N
    // concurrent appends cost one statement, one transaction and one WAL flush instead of
    // N. An append is reported as done only from its own row.
    const coalesced = Coalescer.make({
      maxInFlight,
      maxCoalesced,
      key: (request: AppendRequest) => request.streamId,
      one: executeOne,
      many: executeMany
    })

    // One attempt, ONE statement: hash the batch onto `guess` (the head the stream is
    // believed to have; None: no stream yet) and call `tillflow_append_chained` (migration
    // 4, where its race-freedom is argued), alone or coalesced with other appends
    // (`coalesced`). It bumps the stream row only if it is still at that version and hash
    // (or creates it only if it does not exist) and inserts the batch only if the bump took
    // effect. A wrong guess (a lost race, a stale or absent cache entry) inserts no row, so
    // it takes no value of the global position sequence, and the same call answers the
    // stream's actual head for the next attempt. The statement is its own transaction (or
    // part of the caller's, then never coalesced); the NOTIFY follows it
    // (`notifyAppended`). The function's statements are planned once per connection.
    //
    // The batch travels as ONE parameter, a JSON array of rows (`batchJson`) that the server
    // unpacks with `jsonb_array_elements`: the statement has the same text and six
    // parameters whatever the batch size, so there is little to build per append, and each
    // row's `data` and `metadata` are the canonical JSON texts the hashes were computed
    // over, embedded as they are (jsonb parses them exactly as it would parse them alone).
    // It answers one row: how many events it inserted, their global positions in version
    // order, and the stream's head.
    const appendOnce = (
      streamId: string,
      guess: Option.Option<HashChain.StreamHead>,
      prepared: ReadonlyArray<EventStore.PreparedEvent>,
      inTransaction: boolean
    ): Effect.Effect<Attempt, SqlError> => {
      const expected = Option.isSome(guess) ? guess.value.version : 0
      const previousHash = Option.isSome(guess) ? guess.value.lastHash : HashChain.genesis
      const hashes = HashChain.chainSync(previousHash, streamId, expected + 1, prepared, sha256Sync)
      const nextVersion = expected + prepared.length
      const lastHash = hashes[hashes.length - 1]
      const request: AppendRequest = {
        streamId,
        expected,
        exists: Option.isSome(guess),
        previousHash,
        lastHash,
        batch: batchJson(prepared, hashes)
      }
      return Effect.flatMap(
        inTransaction ? executeOne(request) : coalesced(request),
        (result): Effect.Effect<Attempt> => {
          const inserted = result === undefined ? -1 : Number(result.inserted)
          if (result !== undefined && inserted === 0) {
            const head: Option.Option<HashChain.StreamHead> =
              result.head_version === null || result.head_hash === null
                ? Option.none()
                : Option.some({ version: Number(result.head_version), lastHash: result.head_hash })
            if (Option.isSome(head)) rememberHead(streamId, head.value)
            else heads.delete(streamId)
            return Effect.succeed({ _tag: "Missed", head } as const)
          }
          if (inserted !== prepared.length || result?.positions == null) {
            // Cannot happen (the function answers one row per attempt, counting the rows of
            // the array just sent); refuse to report a partial or missing batch as appended.
            return Effect.die(
              new Error(`append to ${streamId} answered ${inserted} events inserted of ${prepared.length}`)
            )
          }
          rememberHead(streamId, { version: nextVersion, lastHash })
          const positions = result.positions.split(",").map((position) => BigInt(position))
          return Effect.succeed({ _tag: "Appended", result: { nextVersion, positions } } as const)
        }
      )
    }

    // The first guess of the stream's head, without a statement where one will do:
    // - `NoStream`, `Exact(0)`: no stream (the genesis hash is known);
    // - `Any`: the head this store last wrote, or no stream: a wrong guess costs nothing but
    //   the attempt, which answers the actual head;
    // - `Exact(n)`, n > 0: the cached head if it is at n; otherwise the batch cannot be
    //   hashed without the hash at n, so read the head (and refuse at once if it is not at n).
    const firstGuess = (
      streamId: string,
      expectedVersion: EventStore.ExpectedVersion
    ): Effect.Effect<Option.Option<HashChain.StreamHead>, EventStore.ConcurrencyConflict | SqlError> => {
      switch (expectedVersion._tag) {
        case "NoStream":
          return Effect.succeed(Option.none())
        case "Any":
          return Effect.succeed(Option.fromNullable(heads.get(streamId)))
        case "Exact": {
          if (expectedVersion.version === 0) return Effect.succeed(Option.none())
          const cached = heads.get(streamId)
          if (cached !== undefined && cached.version === expectedVersion.version)
            return Effect.succeed(Option.some(cached))
          return Effect.flatMap(readHead(streamId), (head) => {
            const actual = Option.isSome(head) ? head.value.version : 0
            return EventStore.satisfies(expectedVersion, actual)
              ? Effect.succeed(head)
              : Effect.fail(
                  new EventStore.ConcurrencyConflict({ streamId, expected: expectedVersion, actual })
                )
          })
        }
      }
    }

    // Attempts until one appends: after a wrong guess, the next attempt chains onto the head
    // the last one answered if that head satisfies the expected version (always under `Any`;
    // under `NoStream` and `Exact` only when the guess was wrong about the hash or the row,
    // not about the version); otherwise `ConcurrencyConflict` naming the actual version.
    const appendBatch = (
      streamId: string,
      expectedVersion: EventStore.ExpectedVersion,
      prepared: ReadonlyArray<EventStore.PreparedEvent>,
      inTransaction: boolean
    ): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | SqlError> => {
      const attempt = (
        guess: Option.Option<HashChain.StreamHead>
      ): Effect.Effect<EventStore.AppendResult, EventStore.ConcurrencyConflict | SqlError> =>
        Effect.flatMap(appendOnce(streamId, guess, prepared, inTransaction), (outcome) => {
          if (outcome._tag === "Appended") return Effect.succeed(outcome.result)
          const actual = Option.isSome(outcome.head) ? outcome.head.value.version : 0
          return EventStore.satisfies(expectedVersion, actual)
            ? attempt(outcome.head)
            : Effect.fail(new EventStore.ConcurrencyConflict({ streamId, expected: expectedVersion, actual }))
        })
      return Effect.flatMap(firstGuess(streamId, expectedVersion), attempt)
    }

    const mapAppendSqlError =
      (streamId: string, prepared: ReadonlyArray<EventStore.PreparedEvent>) =>
      (error: SqlError): EventStore.DuplicateEventId | EventStore.EventStoreError => {
        const db = databaseErrorOf(error)
        if (db.code === "23505" && db.constraint === "events_event_id_key") {
          const fromDetail =
            typeof db.detail === "string" ? /\(event_id\)=\(([^)]+)\)/.exec(db.detail)?.[1] : undefined
          return new EventStore.DuplicateEventId({
            streamId,
            eventId: fromDetail ?? prepared[0]?.eventId ?? "unknown"
          })
        }
        return storeError("append")(error)
      }

    const streamVersion = Effect.fn("EventStore.streamVersion")(function* (streamId: string) {
      const rows = yield* sql<{ readonly version: string }>`
        SELECT version::text AS version FROM streams WHERE stream_id = ${streamId}`.pipe(
        Effect.mapError(storeError("streamVersion"))
      )
      return rows.length === 0 ? 0 : Number(rows[0].version)
    })

    // Not a span of its own (`Effect.fn`): the append is the store's hot path, and a span
    // per call cost ~30 µs of CPU even without a captured stack trace (~75 µs with one),
    // as much as the rest of the store's own work on a single event (docs/performance.md).
    // Its statement is still traced, by @effect/sql's `sql.execute` span.
    const append = Effect.fnUntraced(function* (
      streamId: string,
      expectedVersion: EventStore.ExpectedVersion,
      events: ReadonlyArray<EventStore.NewEvent>
    ) {
      const prepared = yield* EventStore.prepareBatch(streamId, events)
      if (prepared.length === 0) {
        const actual = yield* streamVersion(streamId)
        if (!EventStore.satisfies(expectedVersion, actual)) {
          return yield* new EventStore.ConcurrencyConflict({ streamId, expected: expectedVersion, actual })
        }
        return { nextVersion: actual, positions: [] }
      }
      const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
      const result = yield* appendBatch(streamId, expectedVersion, prepared, Option.isSome(transaction)).pipe(
        Effect.tap(() => notifyAppended(Option.isSome(transaction))),
        Effect.catchTag("SqlError", (error) => Effect.fail(mapAppendSqlError(streamId, prepared)(error)))
      )
      yield* PubSub.publish(wakeups, undefined)
      return result
    })

    // Reads of whole streams (from a version on, no `maxCount`) made outside a caller's
    // transaction are coalesced as appends are (`Coalescer`): concurrent reads of different
    // streams go as ONE statement, its rows split by stream.
    const readOne = (
      request: ReadRequest,
      maxCount?: number | undefined
    ): Effect.Effect<ReadonlyArray<unknown>, SqlError> =>
      sql`SELECT ${columns} FROM events
        WHERE stream_id = ${request.streamId} AND version >= ${request.fromVersion}
        ORDER BY events.version ${maxCount === undefined ? sql`` : sql`LIMIT ${maxCount}`}`
    const readMany = (
      requests: ReadonlyArray<ReadRequest>
    ): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> => {
      const wanted = JSON.stringify(requests.map((request) => [request.streamId, request.fromVersion]))
      return Effect.map(
        sql`SELECT ${columns} FROM events
          JOIN (SELECT w->>0 AS wanted_stream, (w->>1)::bigint AS from_version
                FROM jsonb_array_elements(${wanted}::jsonb) AS w) AS wanted
            ON events.stream_id = wanted.wanted_stream AND events.version >= wanted.from_version
          ORDER BY events.stream_id, events.version`,
        (rows) => {
          const byStream = new Map<string, Array<unknown>>()
          for (const row of rows) {
            const streamId = (row as { readonly stream_id: string }).stream_id
            const found = byStream.get(streamId)
            if (found === undefined) byStream.set(streamId, [row])
            else found.push(row)
          }
          return requests.map((request) => byStream.get(request.streamId) ?? [])
        }
      )
    }
    const coalescedRead = Coalescer.make({
      maxInFlight,
      maxCoalesced,
      key: (request: ReadRequest) => request.streamId,
      one: (request) => readOne(request),
      many: readMany
    })

    const readStream = Effect.fn("EventStore.readStream")(function* (
      streamId: string,
      readOptions: EventStore.ReadStreamOptions = {}
    ) {
      const fromVersion = Math.max(1, Math.floor(readOptions.fromVersion ?? 1))
      const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
      const rows = yield* (
        readOptions.maxCount === undefined && Option.isNone(transaction)
          ? coalescedRead({ streamId, fromVersion })
          : readOne(
              { streamId, fromVersion },
              readOptions.maxCount === undefined ? undefined : Math.max(0, Math.floor(readOptions.maxCount))
            )
      ).pipe(Effect.mapError(storeError("readStream")))
      return yield* decodeEvents("readStream")(rows)
    })

    const readAll = Effect.fn("EventStore.readAll")(function* (
      checkpoint: EventStore.Checkpoint,
      readOptions: EventStore.ReadAllOptions
    ) {
      const maxCount = Math.max(1, Math.floor(readOptions.maxCount))
      // Only transactions below the snapshot's xmin: every one of them has committed or
      // aborted, so nothing can still appear before the checkpoint we hand out. A bare
      // `global_position > checkpoint` would skip an event whose transaction took its
      // position early and committed late (docs/event-store.md shows the race).
      const rows = yield* sql`SELECT ${columns} FROM events
        WHERE (transaction_id, global_position) > (${checkpoint.transactionId.toString()}::xid8, ${checkpoint.globalPosition.toString()}::bigint)
          AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY events.transaction_id, events.global_position
        LIMIT ${maxCount}`.pipe(Effect.mapError(storeError("readAll")))
      const events = yield* decodeEvents("readAll")(rows)
      const last = events[events.length - 1]
      return {
        events,
        next: last === undefined ? checkpoint : last.checkpoint,
        caughtUp: events.length < maxCount
      }
    })

    const subscribe = (
      checkpoint: EventStore.Checkpoint,
      subscribeOptions: EventStore.SubscribeOptions = {}
    ) =>
      EventStore.pollingSubscription({
        from: checkpoint,
        readAll: (from: EventStore.Checkpoint, readOptions: EventStore.ReadAllOptions) =>
          Effect.uninterruptible(readAll(from, readOptions)),
        wakeups: Effect.map(PubSub.subscribe(wakeups), (queue) => Queue.take(queue)),
        pollInterval: subscribeOptions.pollInterval ?? pollInterval,
        batchSize: subscribeOptions.batchSize ?? EventStore.defaultBatchSize
      })

    const verifyStreams = (heads: ReadonlyArray<typeof HeadRow.Type>) =>
      Effect.gen(function* () {
        if (heads.length === 0) return { eventsChecked: 0, broken: [] as Array<HashChain.BrokenLink> }
        const rows = yield* sql`SELECT ${columns} FROM events
          WHERE ${sql.in(
            "stream_id",
            heads.map((head) => head.stream_id)
          )}
          ORDER BY events.stream_id, events.version`.pipe(Effect.mapError(storeError("verify")))
        const events = yield* decodeEvents("verify")(rows)
        const byStream = Arr.groupBy(events, (event) => event.streamId)
        const broken: Array<HashChain.BrokenLink> = []
        for (const head of heads) {
          const found = yield* HashChain.verifyStream(
            head.stream_id,
            byStream[head.stream_id] ?? [],
            Option.some({ version: head.version, lastHash: head.last_hash }),
            sha256
          )
          if (Option.isSome(found)) broken.push(found.value)
        }
        return { eventsChecked: events.length, broken }
      })

    const verifyPageSize = 100

    const verify = Effect.fn("EventStore.verify")(function* (streamId?: string) {
      let streamsChecked = 0
      let eventsChecked = 0
      const broken: Array<HashChain.BrokenLink> = []
      let after: Option.Option<string> = Option.none()
      while (true) {
        const filter =
          streamId !== undefined
            ? sql`WHERE stream_id = ${streamId}`
            : Option.isSome(after)
              ? sql`WHERE stream_id > ${after.value}`
              : sql``
        const rows = yield* sql`SELECT stream_id, version::text AS version, last_hash FROM streams ${filter}
          ORDER BY stream_id LIMIT ${verifyPageSize}`.pipe(Effect.mapError(storeError("verify")))
        const heads = (yield* decodeHeadRows(rows).pipe(Effect.mapError(storeError("verify")))).filter(
          // A row at version 0 is a stream created by an append still in flight (or rolled back).
          (head) => head.version > 0
        )
        const page = yield* verifyStreams(heads)
        streamsChecked += heads.length
        eventsChecked += page.eventsChecked
        broken.push(...page.broken)
        if (streamId !== undefined || rows.length < verifyPageSize) break
        after = Option.some(String((rows[rows.length - 1] as { readonly stream_id: unknown }).stream_id))
      }
      // Code-unit order, as the memory store reports, whatever the database's collation.
      broken.sort((a, b) => (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0))
      return new HashChain.VerifyReport({ streamsChecked, eventsChecked, broken })
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
