/**
 * The SQL of the event store, one named function per statement (or fragment), each taking
 * the `SqlClient` and its parameters, with the JSON the append statements take their batch
 * in. The texts are the store's contract with its migrations (`tillflow_append_chained`,
 * `tillflow_append_many`) and with the tests that count statements: the modules that run
 * them decide when, never what.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { EventStore } from "@tillflow/engine"
import * as Option from "effect/Option"
import * as EventStoreMigrations from "../../EventStoreMigrations.js"

/**
 * One append attempt as sent: the batch hashed onto the guessed head (`expected`,
 * `exists`, `previousHash`), its last hash and its rows (`batchJson`).
 */
export interface AppendRequest {
  readonly streamId: string
  readonly expected: number
  readonly exists: boolean
  readonly previousHash: string
  readonly lastHash: string
  readonly batch: string
}

/** What the append function answers for one attempt (see `tillflow_append_chained`). */
export interface AppendRow {
  readonly inserted: number
  readonly positions: string | null
  readonly head_version: string | null
  readonly head_hash: string | null
}

/** A read of a stream from a version on, to the end. */
export interface ReadRequest {
  readonly streamId: string
  readonly fromVersion: number
}

/**
 * The rows of a batch as one JSON array, the append statement's only per-event parameter:
 * `[eventId, type, schemaVersion, data, metadata, hash]` per event, `data` and `metadata`
 * being the canonical JSON texts that were hashed. Ids are lowercase UUIDs and hashes
 * lowercase hex, so they need no escaping; the type goes through `JSON.stringify`.
 */
export const batchJson = (
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

/**
 * The entries of a coalesced statement as one JSON array:
 * `[index, stream_id, expected, stream_exists, previous_hash, next_hash, batch]` per entry.
 */
const entriesJson = (requests: ReadonlyArray<AppendRequest>): string => "[" + entriesOf(requests, 0, "") + "]"

/**
 * The entries of `requests`, numbered from `first`, each closed by `tail` (`",<group>"` for
 * `tillflow_append_groups`), comma-separated, without the enclosing brackets.
 */
const entriesOf = (requests: ReadonlyArray<AppendRequest>, first: number, tail: string): string => {
  let json = ""
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i]
    json +=
      (i === 0 ? "[" : ",[") +
      (first + i) +
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
      tail +
      "]"
  }
  return json
}

/**
 * The groups of a coalesced multi-stream statement as one JSON array of entries, numbered
 * across the groups in order, each entry's group index last:
 * `[index, stream_id, expected, stream_exists, previous_hash, next_hash, batch, group]`.
 */
const groupsJson = (groups: ReadonlyArray<ReadonlyArray<AppendRequest>>): string => {
  let json = "["
  let first = 0
  for (let g = 0; g < groups.length; g++) {
    json += (g === 0 ? "" : ",") + entriesOf(groups[g], first, "," + g)
    first += groups[g].length
  }
  return json + "]"
}

/** The NOTIFY that wakes the store's subscriptions (in every process). */
export const notify = (sql: SqlClient.SqlClient) =>
  sql`SELECT pg_notify(${EventStoreMigrations.channel}, 'append')`

/**
 * The columns of an event row. The casts keep int8/xid8 exact whatever the driver's
 * parsers. They reuse the column names, so ORDER BY must name the table's columns
 * (`events.version`): a bare `version` would sort by the text alias ("10" before "9").
 */
export const columns = (
  sql: SqlClient.SqlClient
) => sql`stream_id, version::text AS version, global_position::text AS global_position,
      transaction_id::text AS transaction_id, event_id::text AS event_id, type, schema_version,
      data, metadata, recorded_at, hash`

/**
 * The stored columns of an event, the same in `events` and `events_archive` (migration 9):
 * every read of events reads both, as the UNION ALL of the two, so that a stream, the
 * global log and verification see archived events where they were. Each side is reached
 * through its own index (`(stream_id, version)` or `(transaction_id, global_position)`), so
 * the archive adds one index probe to a read, whatever its size.
 */
const stored = (sql: SqlClient.SqlClient) =>
  sql`stream_id, version, global_position, transaction_id, event_id, type, schema_version, data, metadata,
      recorded_at, hash`

/** The head (version and last hash) of one stream: no row if it does not exist. */
export const readHead = (sql: SqlClient.SqlClient, streamId: string) =>
  sql<{ readonly version: string; readonly last_hash: string }>`
          SELECT version::text AS version, last_hash FROM streams WHERE stream_id = ${streamId}`

/** One append attempt: `tillflow_append_chained` (migration 4), answering one row. */
export const appendChained = (sql: SqlClient.SqlClient, request: AppendRequest) =>
  sql<AppendRow>`SELECT inserted, positions, head_version::text AS head_version, head_hash
          FROM tillflow_append_chained(${request.streamId}::text, ${request.expected}::bigint,
            ${request.exists}::boolean, ${request.previousHash}::text, ${request.lastHash}::text,
            ${request.batch}::jsonb)`

/**
 * The append through the `pg` pool (`HotPool`): the same statement as {@link appendChained},
 * a fixed text sent as a named prepared statement, its parameters in the same order.
 */
export const appendChainedHot = {
  name: "tillflow_append_chained_v1",
  text: `SELECT inserted, positions, head_version::text AS head_version, head_hash
          FROM tillflow_append_chained($1::text, $2::bigint, $3::boolean, $4::text, $5::text, $6::jsonb)`,
  values: (request: AppendRequest): ReadonlyArray<unknown> => [
    request.streamId,
    request.expected,
    request.exists,
    request.previousHash,
    request.lastHash,
    request.batch
  ]
} as const

/** {@link appendMany} through the `pg` pool (`HotPool`), as {@link appendChainedHot}. */
export const appendManyHot = {
  name: "tillflow_append_many_v1",
  text: `SELECT entry, inserted, positions, head_version::text AS head_version, head_hash
          FROM tillflow_append_many($1::jsonb)`,
  values: (requests: ReadonlyArray<AppendRequest>): ReadonlyArray<unknown> => [entriesJson(requests)]
} as const

/**
 * Several attempts (of different streams) as ONE statement: `tillflow_append_many`
 * (migration 5), answering one row per attempt, named by its `entry` (its index).
 */
export const appendMany = (sql: SqlClient.SqlClient, requests: ReadonlyArray<AppendRequest>) =>
  sql<AppendRow & { readonly entry: number }>`SELECT entry, inserted, positions,
            head_version::text AS head_version, head_hash
          FROM tillflow_append_many(${entriesJson(requests)}::jsonb)`

/**
 * A multi-stream append as ONE statement: `tillflow_append_all` (migration 6), all entries
 * written or none, answering one row per entry, named by its `entry` (its index).
 */
export const appendAll = (sql: SqlClient.SqlClient, requests: ReadonlyArray<AppendRequest>) =>
  sql<AppendRow & { readonly entry: number }>`SELECT entry, inserted, positions,
            head_version::text AS head_version, head_hash
          FROM tillflow_append_all(${entriesJson(requests)}::jsonb)`

/** {@link appendAll} through the `pg` pool (`HotPool`), as {@link appendChainedHot}. */
export const appendAllHot = {
  name: "tillflow_append_all_v1",
  text: `SELECT entry, inserted, positions, head_version::text AS head_version, head_hash
          FROM tillflow_append_all($1::jsonb)`,
  values: (requests: ReadonlyArray<AppendRequest>): ReadonlyArray<unknown> => [entriesJson(requests)]
} as const

/**
 * Several multi-stream appends (each a group of entries, no stream in two groups) as ONE
 * statement: `tillflow_append_groups` (migration 8), each group written all or none,
 * answering one row per entry, named by its `entry` (its index across the groups, in order).
 */
export const appendGroups = (sql: SqlClient.SqlClient, groups: ReadonlyArray<ReadonlyArray<AppendRequest>>) =>
  sql<AppendRow & { readonly entry: number }>`SELECT entry, inserted, positions,
            head_version::text AS head_version, head_hash
          FROM tillflow_append_groups(${groupsJson(groups)}::jsonb)`

/** {@link appendGroups} through the `pg` pool (`HotPool`), as {@link appendChainedHot}. */
export const appendGroupsHot = {
  name: "tillflow_append_groups_v1",
  text: `SELECT entry, inserted, positions, head_version::text AS head_version, head_hash
          FROM tillflow_append_groups($1::jsonb)`,
  values: (groups: ReadonlyArray<ReadonlyArray<AppendRequest>>): ReadonlyArray<unknown> => [
    groupsJson(groups)
  ]
} as const

/** The version of one stream: no row if it does not exist. */
export const streamVersion = (sql: SqlClient.SqlClient, streamId: string) =>
  sql<{ readonly version: string }>`
        SELECT version::text AS version FROM streams WHERE stream_id = ${streamId}`

/** The events of one stream from a version on, at most `maxCount` of them if given. */
export const readStream = (sql: SqlClient.SqlClient, request: ReadRequest, maxCount: number | undefined) =>
  sql`SELECT ${columns(sql)} FROM (
          SELECT ${stored(sql)} FROM events_archive
          WHERE stream_id = ${request.streamId} AND version >= ${request.fromVersion}
          UNION ALL
          SELECT ${stored(sql)} FROM events
          WHERE stream_id = ${request.streamId} AND version >= ${request.fromVersion}
        ) AS events
        ORDER BY events.version ${maxCount === undefined ? sql`` : sql`LIMIT ${maxCount}`}`

/**
 * The events of several streams, each from its version on, by stream then version.
 *
 * Each wanted stream is read by a subquery of its own (`LATERAL`, kept from being merged
 * into a join by `OFFSET 0`), so PostgreSQL can only reach the rows through the
 * `(stream_id, version)` key, one stream at a time: as a plain join it was planned as a
 * hash join over a scan of the whole `events` table whenever the table had no statistics
 * (never analysed, as with autovacuum off: an equality on `stream_id` is then costed at
 * 0.5 % of the table, and the wanted list at 100 rows), a read whose cost followed the
 * history stored (issue 29: 666 ms at 800,000 events). The archive is read the same way.
 */
export const readMany = (sql: SqlClient.SqlClient, requests: ReadonlyArray<ReadRequest>) => {
  const wanted = JSON.stringify(requests.map((request) => [request.streamId, request.fromVersion]))
  return sql`SELECT ${columns(sql)}
          FROM jsonb_array_elements(${wanted}::jsonb) AS wanted
          CROSS JOIN LATERAL (
            SELECT ${stored(sql)} FROM events_archive
            WHERE events_archive.stream_id = wanted->>0 AND events_archive.version >= (wanted->>1)::bigint
            UNION ALL
            SELECT ${stored(sql)} FROM events
            WHERE events.stream_id = wanted->>0 AND events.version >= (wanted->>1)::bigint
            OFFSET 0
          ) AS events
          ORDER BY events.stream_id, events.version`
}

/**
 * The global log after `checkpoint`, at most `maxCount` events, only of transactions
 * below the snapshot's xmin (see `Read.readAll`): the first `maxCount` of the archive and
 * of `events` after the checkpoint, each by its `(transaction_id, global_position)` index,
 * merged. An archived event keeps its transaction id and position, so the log's order does
 * not change when a day is archived, and one statement sees the archive and `events` in one
 * snapshot: an event being moved is seen on one side, never both or neither.
 */
export const readAll = (sql: SqlClient.SqlClient, checkpoint: EventStore.Checkpoint, maxCount: number) => {
  const after = sql`(transaction_id, global_position) > (${checkpoint.transactionId.toString()}::xid8, ${checkpoint.globalPosition.toString()}::bigint)
            AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())`
  return sql`SELECT ${columns(sql)} FROM (
          (SELECT ${stored(sql)} FROM events_archive WHERE ${after}
            ORDER BY transaction_id, global_position LIMIT ${maxCount})
          UNION ALL
          (SELECT ${stored(sql)} FROM events WHERE ${after}
            ORDER BY transaction_id, global_position LIMIT ${maxCount})
        ) AS events
        ORDER BY events.transaction_id, events.global_position
        LIMIT ${maxCount}`
}

/**
 * The first transaction id not yet assigned: every transaction that could have committed
 * before this statement is below it (`readAll`'s `settle`).
 */
export const horizon = (sql: SqlClient.SqlClient) =>
  sql<{ readonly horizon: string }>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS horizon`

/** Whether every transaction below `horizon` has ended, so `readAll` reads all of them. */
export const settledBelow = (sql: SqlClient.SqlClient, horizon: string) =>
  sql<{
    readonly settled: boolean
  }>`SELECT pg_snapshot_xmin(pg_current_snapshot()) >= ${horizon}::xid8 AS settled`

/** Every event of the streams, archived or not, by stream then version. */
export const streamsEvents = (sql: SqlClient.SqlClient, streamIds: ReadonlyArray<string>) =>
  sql`SELECT ${columns(sql)} FROM (
            SELECT ${stored(sql)} FROM events_archive WHERE ${sql.in("stream_id", streamIds)}
            UNION ALL
            SELECT ${stored(sql)} FROM events WHERE ${sql.in("stream_id", streamIds)}
          ) AS events
          ORDER BY events.stream_id, events.version`

/** A page of stream heads, by stream id: one stream, or those after `after` (none: from the first). */
export const streamHeads = (
  sql: SqlClient.SqlClient,
  filter: { readonly streamId: string | undefined; readonly after: Option.Option<string> },
  pageSize: number
) => {
  const where =
    filter.streamId !== undefined
      ? sql`WHERE stream_id = ${filter.streamId}`
      : Option.isSome(filter.after)
        ? sql`WHERE stream_id > ${filter.after.value}`
        : sql``
  return sql`SELECT stream_id, version::text AS version, last_hash FROM streams ${where}
          ORDER BY stream_id LIMIT ${pageSize}`
}
