/**
 * The append: a batch hashed onto the stream's chain and written in ONE statement per
 * attempt (`tillflow_append_chained`, or `tillflow_append_many` for appends coalesced by
 * group commit), checked against the expected version, retried on the head a wrong guess
 * answers, and announced after it commits.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { EventStore, HashChain } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Coalescer from "../Coalescer.js"
import * as HotPool from "../HotPool.js"
import { sha256Sync } from "../sha256.js"
import type * as Heads from "./Heads.js"
import type * as Notifications from "./Notifications.js"
import { storeError } from "./Rows.js"
import * as Statements from "./Statements.js"

/** The outcome of one append attempt: appended, or a wrong guess and the stream's actual head. */
type Attempt =
  | { readonly _tag: "Appended"; readonly result: EventStore.AppendResult }
  | { readonly _tag: "Missed"; readonly head: Option.Option<HashChain.StreamHead> }

/** The fields PostgreSQL (and PGlite) put on a database error. */
interface DatabaseErrorFields {
  readonly code?: unknown
  readonly constraint?: unknown
  readonly detail?: unknown
}

const databaseErrorOf = (error: SqlError): DatabaseErrorFields =>
  typeof error.cause === "object" && error.cause !== null ? (error.cause as DatabaseErrorFields) : {}

// The unique keys of an event id: in `events`, and in `events_archive`, which migration 10's
// trigger checks an append against (an archived event's id is taken, as a hot one is).
const eventIdKeys: ReadonlySet<string> = new Set(["events_event_id_key", "events_archive_event_id_key"])

const mapAppendSqlError =
  (streamId: string, prepared: ReadonlyArray<EventStore.PreparedEvent>) =>
  (error: SqlError): EventStore.DuplicateEventId | EventStore.EventStoreError => {
    const db = databaseErrorOf(error)
    if (db.code === "23505" && typeof db.constraint === "string" && eventIdKeys.has(db.constraint)) {
      const fromDetail =
        typeof db.detail === "string" ? /\(event_id\)=\(([^)]+)\)/.exec(db.detail)?.[1] : undefined
      return new EventStore.DuplicateEventId({
        streamId,
        eventId: fromDetail ?? prepared[0]?.eventId ?? "unknown"
      })
    }
    return storeError("append")(error)
  }

const readHead = (sql: SqlClient.SqlClient, streamId: string) =>
  Effect.map(Statements.readHead(sql, streamId), (rows): Option.Option<HashChain.StreamHead> =>
    rows.length === 0
      ? Option.none()
      : Option.some({ version: Number(rows[0].version), lastHash: rows[0].last_hash })
  )

// The statement of one attempt alone: in the caller's transaction if it has one,
// otherwise its own.
// Outside a transaction, with a `pg` pool (PostgreSQL), through that pool (`HotPool`).
const executeOne = (
  sql: SqlClient.SqlClient,
  pool: HotPool.HotPool["Type"] | undefined,
  request: Statements.AppendRequest
): Effect.Effect<Statements.AppendRow | undefined, SqlError> =>
  Effect.map(
    pool === undefined
      ? Statements.appendChained(sql, request)
      : HotPool.query<Statements.AppendRow>(
          sql,
          pool,
          Statements.appendChainedHot.name,
          Statements.appendChainedHot.text,
          Statements.appendChainedHot.values(request)
        ),
    (rows) => rows[0]
  )

// The rows of a multi-stream statement by entry (its index), `count` entries from `first`.
const rowsByEntry = (
  rows: ReadonlyArray<Statements.AppendRow & { readonly entry: number }>,
  first: number,
  count: number
): Array<Statements.AppendRow | undefined> => {
  const byEntry = new Array<Statements.AppendRow | undefined>(count).fill(undefined)
  for (const row of rows) {
    const i = Number(row.entry) - first
    if (i >= 0 && i < count) byEntry[i] = row
  }
  return byEntry
}

// A statement over several entries, each answered by its index: in the caller's
// transaction if it has one (`plain`), otherwise through the pool (`hot`, PostgreSQL).
const executeEntries =
  (
    plain: (
      sql: SqlClient.SqlClient,
      requests: ReadonlyArray<Statements.AppendRequest>
    ) => Effect.Effect<ReadonlyArray<Statements.AppendRow & { readonly entry: number }>, SqlError>,
    hot: {
      readonly name: string
      readonly text: string
      readonly values: (requests: ReadonlyArray<Statements.AppendRequest>) => ReadonlyArray<unknown>
    }
  ) =>
  (
    sql: SqlClient.SqlClient,
    pool: HotPool.HotPool["Type"] | undefined,
    requests: ReadonlyArray<Statements.AppendRequest>
  ): Effect.Effect<Array<Statements.AppendRow | undefined>, SqlError> =>
    Effect.map(
      pool === undefined
        ? plain(sql, requests)
        : HotPool.query<Statements.AppendRow & { readonly entry: number }>(
            sql,
            pool,
            hot.name,
            hot.text,
            hot.values(requests)
          ),
      (rows) => rowsByEntry(rows, 0, requests.length)
    )

// Several attempts (of different streams) as ONE statement and transaction:
// `tillflow_append_many` (migration 5) runs `tillflow_append_chained` for each entry in
// stream order and answers one row per entry, by index. A wrong guess inserts nothing
// for its stream only; an error (a duplicate event id, a deadlock) rolls back all.
const executeMany = executeEntries(Statements.appendMany, Statements.appendManyHot)

// One multi-stream append alone: `tillflow_append_all` (migration 6).
const executeAll = executeEntries(Statements.appendAll, Statements.appendAllHot)

// Several callers' multi-stream appends (no stream in two of them) as ONE statement and
// transaction: `tillflow_append_groups` (migration 8) writes each group all or none,
// independently of the others. One answer per group, its rows by entry.
const executeGroups = (
  sql: SqlClient.SqlClient,
  pool: HotPool.HotPool["Type"] | undefined,
  groups: ReadonlyArray<ReadonlyArray<Statements.AppendRequest>>
): Effect.Effect<Array<Array<Statements.AppendRow | undefined>>, SqlError> =>
  Effect.map(
    pool === undefined
      ? Statements.appendGroups(sql, groups)
      : HotPool.query<Statements.AppendRow & { readonly entry: number }>(
          sql,
          pool,
          Statements.appendGroupsHot.name,
          Statements.appendGroupsHot.text,
          Statements.appendGroupsHot.values(groups)
        ),
    (rows) => {
      let first = 0
      return groups.map((group) => {
        const byEntry = rowsByEntry(rows, first, group.length)
        first += group.length
        return byEntry
      })
    }
  )

/** The most multi-stream appends coalesced into one statement. */
export const maxGroupsCoalesced = 64

/**
 * The appends of a store over `sql`: the single-stream one and the multi-stream one (all
 * or none per call), each coalesced beyond `maxInFlight`.
 */
export const make = (options: {
  readonly sql: SqlClient.SqlClient
  /** The `pg` pool under `sql` (PostgreSQL): appends outside a transaction go through it. */
  readonly pool: HotPool.HotPool["Type"] | undefined
  readonly maxInFlight: number
  readonly maxCoalesced: number
  /** false: every multi-stream append alone, at once, through @effect/sql (the former path). */
  readonly multiStreamGroupCommit: boolean
  readonly heads: Heads.Heads
  readonly notifications: Notifications.Notifications
  readonly streamVersion: EventStore.Service["streamVersion"]
}): Pick<EventStore.Service, "append" | "appendStreams"> => {
  const {
    heads,
    maxCoalesced,
    maxInFlight,
    multiStreamGroupCommit,
    notifications,
    pool,
    sql,
    streamVersion
  } = options

  // Group commit of the appends made outside a caller's transaction (`Coalescer`): N
  // concurrent appends cost one statement, one transaction and one WAL flush instead of
  // N. An append is reported as done only from its own row.
  const coalesced = Coalescer.make({
    maxInFlight,
    maxCoalesced,
    key: (request: Statements.AppendRequest) => request.streamId,
    one: (request: Statements.AppendRequest) => executeOne(sql, pool, request),
    many: (requests: ReadonlyArray<Statements.AppendRequest>) => executeMany(sql, pool, requests)
  })

  // Group commit of the multi-stream appends made outside a caller's transaction, as
  // `coalesced` is for single-stream ones: a call holds every stream it names, so the
  // groups of one statement are disjoint, and each is still written all or none: a
  // conflict refuses its own group only. Its own in-flight slots: a multi-stream append
  // never waits behind single-stream statements.
  const coalescedAll = Coalescer.make({
    maxInFlight,
    maxCoalesced: Math.min(maxCoalesced, maxGroupsCoalesced),
    key: (requests: ReadonlyArray<Statements.AppendRequest>) => requests.map((request) => request.streamId),
    one: (requests: ReadonlyArray<Statements.AppendRequest>) => executeAll(sql, pool, requests),
    many: (groups: ReadonlyArray<ReadonlyArray<Statements.AppendRequest>>) => executeGroups(sql, pool, groups)
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
    const request: Statements.AppendRequest = {
      streamId,
      expected,
      exists: Option.isSome(guess),
      previousHash,
      lastHash,
      batch: Statements.batchJson(prepared, hashes)
    }
    return Effect.flatMap(
      // In the caller's transaction, on its connection (@effect/sql's): never the pool.
      inTransaction ? executeOne(sql, undefined, request) : coalesced(request),
      (result): Effect.Effect<Attempt> => {
        const inserted = result === undefined ? -1 : Number(result.inserted)
        if (result !== undefined && inserted === 0) {
          const head: Option.Option<HashChain.StreamHead> =
            result.head_version === null || result.head_hash === null
              ? Option.none()
              : Option.some({ version: Number(result.head_version), lastHash: result.head_hash })
          if (Option.isSome(head)) heads.remember(streamId, head.value)
          else heads.forget(streamId)
          return Effect.succeed({ _tag: "Missed", head } as const)
        }
        if (inserted !== prepared.length || result?.positions == null) {
          // Cannot happen (the function answers one row per attempt, counting the rows of
          // the array just sent); refuse to report a partial or missing batch as appended.
          return Effect.die(
            new Error(`append to ${streamId} answered ${inserted} events inserted of ${prepared.length}`)
          )
        }
        heads.remember(streamId, { version: nextVersion, lastHash })
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
        return Effect.flatMap(readHead(sql, streamId), (head) => {
          const actual = Option.isSome(head) ? head.value.version : 0
          return EventStore.satisfies(expectedVersion, actual)
            ? Effect.succeed(head)
            : Effect.fail(new EventStore.ConcurrencyConflict({ streamId, expected: expectedVersion, actual }))
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

  // The multi-stream append: every stream hashed onto its first guess and sent as ONE
  // statement (`tillflow_append_all`, migration 6, in the caller's transaction; otherwise
  // alone or coalesced with other callers' in `tillflow_append_groups`, migration 8), which
  // writes all or none. A wrong guess
  // answers every stream's committed head; the next attempt chains onto those heads if each
  // satisfies its expected version, otherwise `ConcurrencyConflict` names the first that
  // does not (in the order given).
  const appendAllOnce = (
    appends: ReadonlyArray<EventStore.StreamAppend>,
    prepared: ReadonlyArray<ReadonlyArray<EventStore.PreparedEvent>>,
    guesses: ReadonlyArray<Option.Option<HashChain.StreamHead>>,
    inTransaction: boolean
  ): Effect.Effect<ReadonlyArray<EventStore.AppendResult>, EventStore.ConcurrencyConflict | SqlError> => {
    const requests = appends.map(({ streamId }, i): Statements.AppendRequest => {
      const guess = guesses[i]
      const expected = Option.isSome(guess) ? guess.value.version : 0
      const previousHash = Option.isSome(guess) ? guess.value.lastHash : HashChain.genesis
      const hashes = HashChain.chainSync(previousHash, streamId, expected + 1, prepared[i], sha256Sync)
      return {
        streamId,
        expected,
        exists: Option.isSome(guess),
        previousHash,
        lastHash: hashes[hashes.length - 1],
        batch: Statements.batchJson(prepared[i], hashes)
      }
    })
    return Effect.flatMap(
      inTransaction || !multiStreamGroupCommit
        ? executeAll(sql, undefined, requests)
        : coalescedAll(requests),
      (byEntry) => {
        if (byEntry.every((row, i) => row !== undefined && Number(row.inserted) === prepared[i].length)) {
          return Effect.succeed(
            requests.map((request, i): EventStore.AppendResult => {
              const nextVersion = request.expected + prepared[i].length
              heads.remember(request.streamId, { version: nextVersion, lastHash: request.lastHash })
              const positions = (byEntry[i]?.positions ?? "").split(",").map((position) => BigInt(position))
              return { nextVersion, positions }
            })
          )
        }
        if (byEntry.some((row) => row === undefined || Number(row.inserted) !== 0)) {
          // Cannot happen (the function answers one row per entry, all written or none).
          return Effect.die(
            new Error(`multi-stream append answered a partial write: ${JSON.stringify(byEntry)}`)
          )
        }
        const actualHeads = byEntry.map((row): Option.Option<HashChain.StreamHead> =>
          row?.head_version == null || row.head_hash === null
            ? Option.none()
            : Option.some({ version: Number(row.head_version), lastHash: row.head_hash })
        )
        for (const [i, { expectedVersion, streamId }] of appends.entries()) {
          const head = actualHeads[i]
          if (Option.isSome(head)) heads.remember(streamId, head.value)
          else heads.forget(streamId)
          const actual = Option.isSome(head) ? head.value.version : 0
          if (!EventStore.satisfies(expectedVersion, actual)) {
            return Effect.fail(
              new EventStore.ConcurrencyConflict({ streamId, expected: expectedVersion, actual })
            )
          }
        }
        return appendAllOnce(appends, prepared, actualHeads, inTransaction)
      }
    )
  }

  const appendStreams = Effect.fnUntraced(function* (appends: ReadonlyArray<EventStore.StreamAppend>) {
    const prepared = yield* EventStore.prepareStreams(appends)
    const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
    const results = yield* Effect.forEach(appends, ({ expectedVersion, streamId }) =>
      firstGuess(streamId, expectedVersion)
    ).pipe(
      Effect.flatMap((guesses) => appendAllOnce(appends, prepared, guesses, Option.isSome(transaction))),
      Effect.tap(() => notifications.notifyAppended(Option.isSome(transaction))),
      Effect.catchTag("SqlError", (error) =>
        Effect.fail(mapAppendSqlError(appends[0].streamId, prepared.flat())(error))
      )
    )
    yield* PubSub.publish(notifications.wakeups, undefined)
    return results
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
      Effect.tap(() => notifications.notifyAppended(Option.isSome(transaction))),
      Effect.catchTag("SqlError", (error) => Effect.fail(mapAppendSqlError(streamId, prepared)(error)))
    )
    yield* PubSub.publish(notifications.wakeups, undefined)
    return result
  })

  return { append, appendStreams }
}
