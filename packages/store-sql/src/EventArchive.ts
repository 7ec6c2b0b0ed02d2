/**
 * Retention (issue 31): moves the events of streams idle since before a cut-off out of the
 * hot `events` table into `events_archive` (migration 9), on PostgreSQL and PGlite alike.
 *
 * - Nothing is lost to a reader: every read of the store (a stream, the global log,
 *   verification) reads the archive and `events` together, so the money rules, `audit
 *   verify`, `audit ledger` and the timelines give the same answers after a run.
 * - The chain heads stay: the `streams` rows (version and last hash) are not touched, so
 *   verification still checks each archived chain against its head, and an append to an
 *   archived stream chains onto it as before.
 * - Idempotent and crash-safe: each batch of streams is moved by ONE statement (a DELETE
 *   feeding an INSERT), so it is in the archive or in `events`, never both, never neither;
 *   a run that is killed midway leaves whole batches moved and the next run moves the rest.
 * - The stream of an execution still pending, running or suspended is kept hot (its
 *   engine reads and appends to it); every other stream idle since before the cut-off is
 *   archived. A still-open transaction's streams need no exception: they are read through
 *   the archive.
 *
 * @example
 * const report = yield* EventArchive.run({ before: EventArchive.cutoff(new Date(), 30) })
 * // report.streams streams, report.events events moved
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore, HashChain } from "@tillflow/engine"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { storeError } from "./internal/eventStore/Rows.js"

/** Options of {@link run}. */
export interface Options {
  /** Streams whose last event was appended before this instant are archived. */
  readonly before: Date
  /** Count what would be archived, move nothing (default false). */
  readonly dryRun?: boolean | undefined
  /** How many streams one statement moves (default {@link defaultBatchSize}). */
  readonly batchSize?: number | undefined
}

/** The default number of streams moved by one statement. */
export const defaultBatchSize = 200

/** The environment variable naming how many days events stay hot. */
export const hotDaysVariable = "TILLFLOW_RETENTION_HOT_DAYS"

/** How many days events stay in the hot table: `TILLFLOW_RETENTION_HOT_DAYS`, default 90. */
export const hotDays: Config.Config<number> = Config.integer(hotDaysVariable).pipe(
  Config.validate({ message: "must be a whole number of days, 0 or more", validation: (days) => days >= 0 }),
  Config.withDefault(90)
)

/** The environment variable naming how many days personal data is kept. */
export const personalDaysVariable = "TILLFLOW_RETENTION_PERSONAL_DAYS"

/** How many days personal data is kept: `TILLFLOW_RETENTION_PERSONAL_DAYS`, default 180. */
export const personalDays: Config.Config<number> = Config.integer(personalDaysVariable).pipe(
  Config.validate({ message: "must be a whole number of days, 0 or more", validation: (days) => days >= 0 }),
  Config.withDefault(180)
)

/** The cut-off for `days` of hot retention: `days` days before `now`. */
export const cutoff = (now: Date, days: number): Date => new Date(now.getTime() - days * 86_400_000)

/** What a run archived (or, with `dryRun`, would archive). */
export class ArchiveReport extends Schema.Class<ArchiveReport>("tillflow/EventArchive/ArchiveReport")({
  before: Schema.Date,
  dryRun: Schema.Boolean,
  streams: Schema.Int,
  events: Schema.Int
}) {}

const openExecutionStatuses = ["pending", "running", "suspended"] as const

// The engine's stream id of an execution (`EngineEvent.streamId`) written in SQL: every run
// of 12 digits followed by a digit gets an `_` after it.
const keepOpenExecutions = (sql: SqlClient.SqlClient, queuePresent: boolean) =>
  queuePresent
    ? sql`AND streams.stream_id NOT IN (
          SELECT 'execution-' || regexp_replace(x.execution_id, '(\\d{12})(?=\\d)', '\\1_', 'g')
          FROM tillflow_executions AS x WHERE ${sql.in("x.status", openExecutionStatuses)})`
    : sql``

const countRow = Schema.Struct({ streams: Schema.NumberFromString, events: Schema.NumberFromString })
const decodeCounts = Schema.decodeUnknown(Schema.Array(countRow))

/** Archives (or counts, with `dryRun`) the streams idle since before `options.before`. */
export const run = (
  options: Options
): Effect.Effect<ArchiveReport, EventStore.EventStoreError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? defaultBatchSize))
    const before = options.before.toISOString()
    const [queue] = yield* sql<{ readonly present: boolean }>`
      SELECT to_regclass('tillflow_executions') IS NOT NULL AS present`
    const keep = keepOpenExecutions(sql, queue?.present === true)
    const report = (dryRun: boolean, streams: number, events: number) =>
      new ArchiveReport({ before: options.before, dryRun, streams, events })

    if (options.dryRun === true) {
      const rows = yield* sql`
        SELECT count(DISTINCT streams.stream_id)::text AS streams, count(*)::text AS events
        FROM streams JOIN events ON events.stream_id = streams.stream_id
        WHERE streams.updated_at < ${before}::timestamptz ${keep}`
      const [counts] = yield* decodeCounts(rows)
      return report(true, counts?.streams ?? 0, counts?.events ?? 0)
    }

    let streams = 0
    let events = 0
    while (true) {
      // The stream rows are locked (FOR UPDATE) while their events move: an append to one
      // waits, and one that committed meanwhile moved `updated_at` past the cut-off, which
      // the lock's re-check sees, so that stream stays hot.
      const rows = yield* sql`
        WITH chosen AS (
          SELECT streams.stream_id FROM streams
          WHERE streams.updated_at < ${before}::timestamptz ${keep}
            AND EXISTS (SELECT 1 FROM events WHERE events.stream_id = streams.stream_id)
          ORDER BY streams.stream_id
          LIMIT ${batchSize}
          FOR UPDATE OF streams
        ), moved AS (
          DELETE FROM events WHERE events.stream_id IN (SELECT stream_id FROM chosen)
          RETURNING global_position, transaction_id, stream_id, version, event_id, type, schema_version,
            data, metadata, recorded_at, hash
        ), archived AS (
          INSERT INTO events_archive (global_position, transaction_id, stream_id, version, event_id, type,
            schema_version, data, metadata, recorded_at, hash)
          SELECT global_position, transaction_id, stream_id, version, event_id, type, schema_version,
            data, metadata, recorded_at, hash
          FROM moved
          RETURNING stream_id
        )
        SELECT (SELECT count(*) FROM chosen)::text AS streams, (SELECT count(*) FROM archived)::text AS events`
      const [counts] = yield* decodeCounts(rows)
      const moved = counts?.streams ?? 0
      streams += moved
      events += counts?.events ?? 0
      if (moved === 0) break
    }
    return report(false, streams, events)
  }).pipe(Effect.mapError(storeError("archive")), Effect.withSpan("EventArchive.run"))

/** What {@link erasePersonal} removed. */
export class ErasureReport extends Schema.Class<ErasureReport>("tillflow/EventArchive/ErasureReport")({
  before: Schema.Date,
  events: Schema.Int
}) {}

const personalRow = Schema.Struct({
  stream_id: Schema.String,
  version: Schema.NumberFromString,
  data: Schema.Unknown
})
const decodePersonalRows = Schema.decodeUnknown(Schema.Array(personalRow))

/**
 * Removes the personal data (`HashChain.personal` wrappers) of every event recorded before
 * `options.before`, hot or archived: each wrapper is replaced by the digest its event's link
 * (version 2) already covers (`HashChain.erasePersonal`), so every chain still verifies.
 * A batch of events is rewritten in one transaction; a run is idempotent (an erased event
 * holds no wrapper) and a killed run leaves whole batches erased.
 */
export const erasePersonal = (options: {
  readonly before: Date
  readonly batchSize?: number | undefined
}): Effect.Effect<ErasureReport, EventStore.EventStoreError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? defaultBatchSize))
    const before = options.before.toISOString()
    const marker = `%"${HashChain.personalKey}"%`
    const linkVersion2 = JSON.stringify({ [HashChain.linkVersionKey]: 2 })
    let events = 0
    for (const table of ["events_archive", "events"] as const) {
      // Keyset pages: an event matched but holding no wrapper is passed, never read again.
      let after: readonly [string, number] = ["", 0]
      while (true) {
        const page = yield* Effect.gen(function* () {
          const rows = yield* decodePersonalRows(
            yield* sql`SELECT stream_id, version::text AS version, data FROM ${sql(table)}
              WHERE (stream_id, version) > (${after[0]}, ${after[1]})
                AND metadata @> ${linkVersion2}::jsonb AND recorded_at < ${before}::timestamptz
                AND data::text LIKE ${marker}
              ORDER BY stream_id, version LIMIT ${batchSize} FOR UPDATE`
          )
          let changed = 0
          for (const row of rows) {
            const data = HashChain.erasePersonal(row.data)
            if (data === row.data) continue
            yield* sql`UPDATE ${sql(table)} SET data = ${JSON.stringify(data)}::jsonb
              WHERE stream_id = ${row.stream_id} AND version = ${row.version}`
            changed += 1
          }
          return { rows, changed }
        }).pipe(sql.withTransaction)
        events += page.changed
        const last = page.rows[page.rows.length - 1]
        if (last === undefined) break
        after = [last.stream_id, last.version]
      }
    }
    return new ErasureReport({ before: options.before, events })
  }).pipe(Effect.mapError(storeError("erasePersonal")), Effect.withSpan("EventArchive.erasePersonal"))

/** {@link run} on the database of the layer that built it: what a process composes. */
export interface Service {
  readonly run: (options: Options) => Effect.Effect<ArchiveReport, EventStore.EventStoreError>
  readonly erasePersonal: (options: {
    readonly before: Date
  }) => Effect.Effect<ErasureReport, EventStore.EventStoreError>
}

/** The archiver of this process's event store. */
export class Archiver extends Context.Tag("tillflow/EventArchive/Archiver")<Archiver, Service>() {}

/** The archiver over the `SqlClient` in context (the event store's). */
export const layer: Layer.Layer<Archiver, never, SqlClient.SqlClient> = Layer.effect(
  Archiver,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    run: (options: Options) => Effect.provideService(run(options), SqlClient.SqlClient, sql),
    erasePersonal: (options: { readonly before: Date }) =>
      Effect.provideService(erasePersonal(options), SqlClient.SqlClient, sql)
  }))
)
