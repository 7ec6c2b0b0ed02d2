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
 * - The execution queue's rows go too: an execution finished (succeeded, failed,
 *   interrupted) before the cut-off, by the engine's clock, moves from `tillflow_executions`
 *   to `tillflow_executions_archive` (the queue's migration `11_executions_archive`), in
 *   batches of one statement each as well ({@link archiveExecutions}). The queue still finds
 *   it by id (`get`); its lists and counts are of the hot table; a new start of its id is
 *   answered from its history and never enqueued again (docs/event-store.md).
 * - A worker runs it by itself ({@link periodic}, {@link periodicConfig}): every
 *   `TILLFLOW_RETENTION_INTERVAL` with the cut-off `now − TILLFLOW_RETENTION_HOT_DAYS`, a
 *   failed run logged and tried again at the next interval.
 *
 * @example
 * const report = yield* EventArchive.run({ before: EventArchive.cutoff(new Date(), 30) })
 * // report.streams streams, report.events events moved
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore, ExecutionQueue, HashChain } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as EventStoreMigrations from "./EventStoreMigrations.js"
import * as ExecutionQueueMigrations from "./ExecutionQueueMigrations.js"
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

/** The environment variable naming the fields kept for their own number of days. */
export const personalFieldsVariable = "TILLFLOW_RETENTION_PERSONAL_FIELDS"

const fieldName = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * Reads per-field retention, `name:days` pairs separated by commas (`cardHolderName:30,
 * billing:365`): the member name under which a wrapper sits in an event's data, and the
 * days it is kept (0 to 36500). A field named twice is refused.
 *
 * @example
 * parsePersonalFields("cardHolderName:30, billing:365")
 * // Either.right({ cardHolderName: 30, billing: 365 })
 */
export const parsePersonalFields = (
  text: string
): Either.Either<Readonly<Record<string, number>>, string> => {
  const fields: Record<string, number> = {}
  for (const part of text.split(",")) {
    const pair = part.trim()
    if (pair === "") continue
    const match = /^([^:\s]+)\s*:\s*(\d{1,5})$/.exec(pair)
    const name = match?.[1]
    const days = match?.[2] === undefined ? Number.NaN : Number(match[2])
    if (name === undefined || !fieldName.test(name) || !(days <= 36_500)) {
      return Either.left(`"${pair}" is not name:days (a member name, then 0 to 36500 days)`)
    }
    if (Object.hasOwn(fields, name)) return Either.left(`${name} is named twice`)
    fields[name] = days
  }
  return Either.right(fields)
}

/**
 * How many days each field named in `TILLFLOW_RETENTION_PERSONAL_FIELDS` is kept (the others
 * {@link personalDays}); none by default. A bad value is refused naming the variable.
 */
export const personalFields: Config.Config<Readonly<Record<string, number>>> = Config.string(
  personalFieldsVariable
).pipe(
  Config.withDescription("personal data kept per field: name:days pairs separated by commas"),
  Config.withDefault(""),
  Config.mapOrFail((text) =>
    Either.mapLeft(parsePersonalFields(text), (reason) =>
      ConfigError.InvalidData(
        [personalFieldsVariable],
        `${personalFieldsVariable} must be name:days pairs separated by commas, such as cardHolderName:30,billing:365: ${reason}`
      )
    )
  )
)

/** The cut-off for `days` of hot retention: `days` days before `now`. */
export const cutoff = (now: Date, days: number): Date => new Date(now.getTime() - days * 86_400_000)

/** What a run archived (or, with `dryRun`, would archive). */
export class ArchiveReport extends Schema.Class<ArchiveReport>("tillflow/EventArchive/ArchiveReport")({
  before: Schema.Date,
  dryRun: Schema.Boolean,
  streams: Schema.Int,
  events: Schema.Int,
  /** Execution rows moved out of the queue's hot table (0 without a queue in this database). */
  executions: Schema.Int
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

const finishedStatuses = ExecutionQueue.finishedStatuses

// The columns of a queue row, in `tillflow_executions` and `tillflow_executions_archive` alike.
const executionColumns = `execution_id, workflow_name, status, due_at, lease_owner, wake_requested,
  concurrency_key, parent_id, attributes, claims, created_at, updated_at, seq, stream_id, start_by, tenant`

/** How many execution rows finished before `before` (by the engine's clock) are still hot. */
const countFinishedExecutions = (sql: SqlClient.SqlClient, before: Date) =>
  Effect.gen(function* () {
    const [row] = yield* sql<{ readonly n: string }>`
      SELECT count(*)::text AS n FROM tillflow_executions
      WHERE ${sql.in("status", finishedStatuses)} AND updated_at < ${before.getTime()}::bigint`
    return Number(row?.n ?? 0)
  })

const executionBatchRow = Schema.Struct({
  moved: Schema.NumberFromString,
  scanned: Schema.NumberFromString,
  last_created: Schema.NullOr(Schema.NumberFromString),
  last_id: Schema.NullOr(Schema.String)
})
const decodeExecutionBatch = Schema.decodeUnknown(Schema.Array(executionBatchRow))

/**
 * Moves the rows of executions finished before `before` (their `updated_at`, the engine's
 * epoch milliseconds) from `tillflow_executions` into `tillflow_executions_archive`; answers
 * how many moved. The queue's migrations run first (an idle queue's database may not have
 * the archive table yet; the Migrator applies each once).
 *
 * The hot table is walked once, in pages of `batchSize` rows of its `by_created` index
 * (`created_at, execution_id`), up to the cut-off (an execution updated before it was
 * created before it): each page is ONE statement, a DELETE of its finished rows feeding the
 * INSERT into the archive, so a row is in one table or the other, never both, never neither,
 * and a run killed midway leaves whole pages moved. The DELETE re-checks each row's status
 * under its lock, so a row that changed since the page was read stays. The page after the
 * last key starts past the rows already moved (their index entries stay until VACUUM, but a
 * page never walks back over them), so a run costs one pass however many pages it takes.
 * An archived id met again (moved, then enqueued by a caller that raced the move, then
 * finished) keeps its first archived row.
 */
export const archiveExecutions = (sql: SqlClient.SqlClient, before: Date, batchSize: number) =>
  Effect.gen(function* () {
    yield* ExecutionQueueMigrations.run
    const cut = before.getTime()
    let after: readonly [number, string] = [Number.MIN_SAFE_INTEGER, ""]
    let moved = 0
    while (true) {
      const rows = yield* sql`
        WITH scanned AS (
          SELECT execution_id, created_at FROM tillflow_executions
          WHERE (created_at, execution_id) > (${after[0]}::bigint, ${after[1]}::text)
            AND created_at < ${cut}::bigint
          ORDER BY created_at, execution_id
          LIMIT ${batchSize}
        ), moved AS (
          DELETE FROM tillflow_executions x USING scanned s
          WHERE x.execution_id = s.execution_id
            AND ${sql.in("x.status", finishedStatuses)} AND x.updated_at < ${cut}::bigint
          RETURNING ${sql.literal(executionColumns.replaceAll(/(\w+)/g, "x.$1"))}
        ), archived AS (
          INSERT INTO tillflow_executions_archive (${sql.literal(executionColumns)})
          SELECT ${sql.literal(executionColumns)} FROM moved
          ON CONFLICT (execution_id) DO NOTHING
          RETURNING execution_id
        ), last AS (
          SELECT created_at, execution_id FROM scanned ORDER BY created_at DESC, execution_id DESC LIMIT 1
        )
        SELECT (SELECT count(*) FROM moved)::text AS moved, (SELECT count(*) FROM scanned)::text AS scanned,
          (SELECT created_at FROM last)::text AS last_created, (SELECT execution_id FROM last) AS last_id`
      const [page] = yield* decodeExecutionBatch(rows)
      moved += page?.moved ?? 0
      if (page === undefined || page.last_created === null || page.last_id === null) break
      after = [page.last_created, page.last_id]
      if (page.scanned < batchSize) break
    }
    return moved
  })

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
    const queuePresent = queue?.present === true
    const keep = keepOpenExecutions(sql, queuePresent)
    const report = (dryRun: boolean, streams: number, events: number, executions: number) =>
      new ArchiveReport({ before: options.before, dryRun, streams, events, executions })

    if (options.dryRun === true) {
      const rows = yield* sql`
        SELECT count(DISTINCT streams.stream_id)::text AS streams, count(*)::text AS events
        FROM streams JOIN events ON events.stream_id = streams.stream_id
        WHERE streams.updated_at < ${before}::timestamptz ${keep}`
      const [counts] = yield* decodeCounts(rows)
      const executions = queuePresent ? yield* countFinishedExecutions(sql, options.before) : 0
      return report(true, counts?.streams ?? 0, counts?.events ?? 0, executions)
    }

    // An archived event's id stays taken: the check is installed before the first event
    // moves (migration 10 installs it for an archive that already holds events).
    const [installed] = yield* sql<{ readonly present: boolean }>`
      SELECT EXISTS (SELECT 1 FROM pg_trigger
        WHERE tgname = 'events_refuse_archived_ids' AND tgrelid = 'events'::regclass) AS present`
    if (installed?.present !== true) yield* sql.unsafe(EventStoreMigrations.installArchivedIdsTrigger)

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
    const executions = queuePresent ? yield* archiveExecutions(sql, options.before, batchSize) : 0
    return report(false, streams, events, executions)
  }).pipe(Effect.mapError(storeError("archive")), Effect.withSpan("EventArchive.run"))

/** Options of {@link erasePersonal}: the cut-offs, the default one and each field's own. */
export interface ErasureOptions {
  /**
   * Personal data recorded before this instant is removed, unless its field has a cut-off of
   * its own in `fields`; absent: only the fields in `fields` are removed.
   */
  readonly before?: Date | undefined
  /**
   * Cut-offs by field, the member name under which a wrapper sits in the event's data
   * (`cardHolderName`, `billing`): its personal data recorded before it is removed.
   */
  readonly fields?: Readonly<Record<string, Date>> | undefined
  /** How many events one transaction rewrites (default {@link defaultBatchSize}). */
  readonly batchSize?: number | undefined
}

/** What {@link erasePersonal} removed. */
export class ErasureReport extends Schema.Class<ErasureReport>("tillflow/EventArchive/ErasureReport")({
  before: Schema.optional(Schema.Date),
  fields: Schema.Record({ key: Schema.String, value: Schema.Date }),
  events: Schema.Int
}) {}

/** The cut-offs of each field, the default one and the per-field ones, from `days`. */
export const personalCutoffs = (
  now: Date,
  days: number | undefined,
  fieldDays: Readonly<Record<string, number>>
): { readonly before: Date | undefined; readonly fields: Readonly<Record<string, Date>> } => ({
  before: days === undefined ? undefined : cutoff(now, days),
  fields: Object.fromEntries(Object.entries(fieldDays).map(([name, d]) => [name, cutoff(now, d)]))
})

const personalRow = Schema.Struct({
  stream_id: Schema.String,
  version: Schema.NumberFromString,
  /** `recorded_at` in microseconds since the epoch, compared with each field's cut-off. */
  recorded_us: Schema.NumberFromString,
  data: Schema.Unknown
})
const decodePersonalRows = Schema.decodeUnknown(Schema.Array(personalRow))

/**
 * Removes the personal data (`HashChain.personal` wrappers) of every event recorded before
 * its field's cut-off (`options.fields`, else `options.before`), hot or archived: each such
 * wrapper is replaced by the digest its event's link (version 2) already covers
 * (`HashChain.erasePersonalFields`), so every chain still verifies, also when an event's
 * other fields are kept longer. A batch of events is rewritten in one transaction; a run is
 * idempotent (a removed wrapper is a digest) and a killed run leaves whole batches erased.
 *
 * @example
 * EventArchive.erasePersonal({ before: cutoff(now, 180), fields: { cardHolderName: cutoff(now, 30) } })
 */
export const erasePersonal = (
  options: ErasureOptions
): Effect.Effect<ErasureReport, EventStore.EventStoreError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? defaultBatchSize))
    const fields = options.fields ?? {}
    const cutoffs = [options.before, ...Object.values(fields)].flatMap((d) => (d === undefined ? [] : [d]))
    if (cutoffs.length === 0) return new ErasureReport({ fields, events: 0 })
    // The latest cut-off bounds the events read; each wrapper is then judged by its field's.
    const before = new Date(Math.max(...cutoffs.map((d) => d.getTime()))).toISOString()
    const cutoffOf = (field: string | undefined): Date | undefined =>
      field !== undefined && Object.hasOwn(fields, field) ? fields[field] : options.before
    const marker = `%"${HashChain.personalKey}"%`
    const linkVersion2 = JSON.stringify({ [HashChain.linkVersionKey]: 2 })
    let events = 0
    for (const table of ["events_archive", "events"] as const) {
      // Keyset pages: an event matched but holding no wrapper is passed, never read again.
      let after: readonly [string, number] = ["", 0]
      while (true) {
        const page = yield* Effect.gen(function* () {
          const rows = yield* decodePersonalRows(
            yield* sql`SELECT stream_id, version::text AS version,
                (extract(epoch FROM recorded_at) * 1000000)::bigint::text AS recorded_us, data
              FROM ${sql(table)}
              WHERE (stream_id, version) > (${after[0]}, ${after[1]})
                AND metadata @> ${linkVersion2}::jsonb AND recorded_at < ${before}::timestamptz
                AND data::text LIKE ${marker}
              ORDER BY stream_id, version LIMIT ${batchSize} FOR UPDATE`
          )
          let changed = 0
          for (const row of rows) {
            const data = HashChain.erasePersonalFields(row.data, (field) => {
              const cut = cutoffOf(field)
              return cut !== undefined && row.recorded_us < cut.getTime() * 1000
            })
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
    return new ErasureReport({
      ...(options.before === undefined ? {} : { before: options.before }),
      fields,
      events
    })
  }).pipe(Effect.mapError(storeError("erasePersonal")), Effect.withSpan("EventArchive.erasePersonal"))

/** {@link run} on the database of the layer that built it: what a process composes. */
export interface Service {
  readonly run: (options: Options) => Effect.Effect<ArchiveReport, EventStore.EventStoreError>
  readonly erasePersonal: (
    options: ErasureOptions
  ) => Effect.Effect<ErasureReport, EventStore.EventStoreError>
}

/** The archiver of this process's event store. */
export class Archiver extends Context.Tag("tillflow/EventArchive/Archiver")<Archiver, Service>() {}

/** The archiver over the `SqlClient` in context (the event store's). */
export const layer: Layer.Layer<Archiver, never, SqlClient.SqlClient> = Layer.effect(
  Archiver,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    run: (options: Options) => Effect.provideService(run(options), SqlClient.SqlClient, sql),
    erasePersonal: (options: ErasureOptions) =>
      Effect.provideService(erasePersonal(options), SqlClient.SqlClient, sql)
  }))
)

/** The environment variable naming how often a worker archives. */
export const intervalVariable = "TILLFLOW_RETENTION_INTERVAL"

/**
 * How often a worker archives: `TILLFLOW_RETENTION_INTERVAL`, a duration (`"1 hour"`,
 * `"15 minutes"`), default 1 hour; `0` or `off` turns the periodic run off (None).
 */
export const interval: Config.Config<Option.Option<Duration.Duration>> = Config.string(intervalVariable).pipe(
  Config.withDescription(
    "time between two archive runs of a worker (a duration such as 1 hour; 0 or off: none)"
  ),
  Config.withDefault("1 hour"),
  Config.mapOrFail((text) => {
    const trimmed = text.trim().toLowerCase()
    if (trimmed === "off" || trimmed === "0") return Either.right(Option.none())
    // A negative duration decodes as zero: refused rather than read as "off".
    const decoded = trimmed.startsWith("-") ? Option.none() : Duration.decodeUnknown(trimmed)
    return Option.match(decoded, {
      onNone: () =>
        Either.left(
          ConfigError.InvalidData(
            [intervalVariable],
            `${intervalVariable} must be a duration such as "1 hour" or "30 minutes", or 0 / off, got "${text}"`
          )
        ),
      onSome: (every) => Either.right(Duration.isZero(every) ? Option.none() : Option.some(every))
    })
  })
)

/** Options of {@link periodic}. */
export interface PeriodicOptions {
  /** The time between two runs; the first run comes one interval after the start. */
  readonly interval: Duration.DurationInput
  /** Days a stream stays hot: each run archives what is idle since `now − hotDays`. */
  readonly hotDays: number
  /**
   * Days personal data is kept: each run also removes the personal data recorded before
   * `now − personalDays` ({@link erasePersonal}); none removed when absent.
   */
  readonly personalDays?: number | undefined
  /**
   * Days kept by field (the member name under which a wrapper sits), instead of
   * `personalDays`: each run removes a listed field's personal data recorded before `now −
   * days`.
   */
  readonly personalFields?: Readonly<Record<string, number>> | undefined
}

/** What a failed run's cause says, in one line. */
const reasonOf = (cause: Cause.Cause<EventStore.EventStoreError>): string =>
  Option.match(Cause.failureOption(cause), {
    onSome: (error) => error.message,
    onNone: () => {
      const squashed = Cause.squash(cause)
      return squashed instanceof Error ? squashed.message : String(squashed)
    }
  })

/**
 * One scheduled run: the cut-off from the clock, its report logged; a failure (the
 * database unreachable, a statement refused) logged with its reason, never raised, so the
 * next interval tries again.
 */
const runOnce = (archiver: Service, options: PeriodicOptions) =>
  Effect.gen(function* () {
    const before = cutoff(new Date(yield* Clock.currentTimeMillis), options.hotDays)
    const report = yield* archiver.run({ before })
    yield* Effect.logInfo(
      `retention: archived ${report.streams} streams, ${report.events} events idle since before ${before.toISOString()}, ${report.executions} execution rows finished before it`
    ).pipe(
      Effect.annotateLogs({ streams: report.streams, events: report.events, executions: report.executions })
    )
    const fieldDays = options.personalFields ?? {}
    if (options.personalDays !== undefined || Object.keys(fieldDays).length > 0) {
      const cutoffs = personalCutoffs(
        new Date(yield* Clock.currentTimeMillis),
        options.personalDays,
        fieldDays
      )
      const erased = yield* archiver.erasePersonal(cutoffs)
      const perField = Object.entries(cutoffs.fields).map(
        ([name, at]) => `; ${name} before ${at.toISOString()}`
      )
      yield* Effect.logInfo(
        `retention: removed the personal data of ${erased.events} events recorded before ${cutoffs.before?.toISOString() ?? "(no default)"}${perField.join("")}`
      ).pipe(Effect.annotateLogs({ events: erased.events }))
    }
  }).pipe(
    // A defect too (the fiber must outlive any one run); the cause goes with the line.
    Effect.catchAllCause((cause) =>
      Effect.logError(
        `retention: the archive run failed (${reasonOf(cause)}); next try in ${Duration.format(options.interval)}`,
        cause
      )
    ),
    Effect.withSpan("EventArchive.periodic")
  )

/**
 * Archives every `options.interval` (the first run one interval after the layer is built)
 * with the cut-off `now − hotDays`, on a fiber of the layer's scope: released (the worker
 * stopping), it is interrupted, a run in flight with it (a batch is one statement, so it is
 * moved whole or not at all). A run that fails is logged and does not stop the next.
 *
 * @example
 * // a worker's layers, over the store's Archiver
 * EventArchive.periodic({ interval: "1 hour", hotDays: 90 }).pipe(Layer.provide(EventArchive.layer))
 */
export const periodic = (options: PeriodicOptions): Layer.Layer<never, never, Archiver> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const archiver = yield* Archiver
      yield* Effect.forkScoped(
        Effect.forever(Effect.zipRight(Effect.sleep(options.interval), runOnce(archiver, options)))
      )
    })
  )

/**
 * {@link periodic} as configured: every `TILLFLOW_RETENTION_INTERVAL` (default 1 hour; `0` or
 * `off`: nothing scheduled), cut-off `TILLFLOW_RETENTION_HOT_DAYS` (default 90) days back,
 * personal data removed after `TILLFLOW_RETENTION_PERSONAL_DAYS` (default 180), the fields
 * named in `TILLFLOW_RETENTION_PERSONAL_FIELDS` after their own days.
 */
export const periodicConfig: Layer.Layer<never, ConfigError.ConfigError, Archiver> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const every = yield* interval
    const days = yield* hotDays
    const personal = yield* personalDays
    const fields = yield* personalFields
    if (Option.isNone(every)) {
      yield* Effect.logInfo(`retention: no periodic archive run (${intervalVariable} is off)`)
      return Layer.empty
    }
    yield* Effect.logInfo(
      `retention: archiving every ${Duration.format(every.value)}, streams idle for more than ${days} days; personal data kept ${personal} days${Object.entries(
        fields
      )
        .map(([name, d]) => `, ${name} ${d} days`)
        .join("")}`
    )
    return periodic({ interval: every.value, hotDays: days, personalDays: personal, personalFields: fields })
  })
)
