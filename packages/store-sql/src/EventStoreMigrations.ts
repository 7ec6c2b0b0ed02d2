/**
 * The event store's schema, as @effect/sql migrations shipped inside the package
 * (`Migrator.fromRecord`: no files to copy next to a bundle) and recorded in their own table
 * (`tillflow_event_store_migrations`), so other packages can run their own migrations on
 * the same database without colliding. `SqlEventStore.layer` runs them at start-up; the
 * Migrator locks its table, so concurrent start-ups apply each migration once.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** The LISTEN/NOTIFY channel the `events` trigger notifies. */
export const channel = "tillflow_events"

/** The table where applied migrations are recorded. */
export const table = "tillflow_event_store_migrations"

const createEventStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // One row per stream: its version and the hash of its last event. Appends lock this row
  // (SELECT … FOR UPDATE) before inserting anything, which is what makes the version check
  // race-free and keeps the losers of a race from touching the events table.
  yield* sql`
    CREATE TABLE streams (
      stream_id   text        PRIMARY KEY,
      version     bigint      NOT NULL CHECK (version >= 0),
      last_hash   text        NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now(),
      updated_at  timestamptz NOT NULL DEFAULT now()
    )`
  // global_position comes from an identity sequence: unique and increasing in insert order,
  // but NOT in commit order, and a rolled-back insert leaves a gap. Readers of the global
  // log therefore order by (transaction_id, global_position) and read only transactions
  // below the oldest one still running (see SqlEventStore.readAll); gaps are harmless.
  yield* sql`
    CREATE TABLE events (
      global_position bigint      GENERATED ALWAYS AS IDENTITY,
      transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
      stream_id       text        NOT NULL REFERENCES streams (stream_id),
      version         bigint      NOT NULL CHECK (version >= 1),
      event_id        uuid        NOT NULL UNIQUE,
      type            text        NOT NULL,
      schema_version  integer     NOT NULL CHECK (schema_version >= 1),
      data            jsonb       NOT NULL,
      metadata        jsonb       NOT NULL,
      recorded_at     timestamptz NOT NULL DEFAULT now(),
      hash            text        NOT NULL,
      PRIMARY KEY (stream_id, version),
      UNIQUE (global_position)
    )`
  yield* sql`CREATE UNIQUE INDEX events_global_order ON events (transaction_id, global_position)`
  // Wakes subscribers: one notification on `channel` per inserting statement, delivered at
  // commit, for appends made by any writer (another process, another store instance).
  yield* sql`
    CREATE FUNCTION tillflow_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('tillflow_events', 'append');
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER events_notify AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION tillflow_events_notify()`
})

// The NOTIFY moves out of the appending transaction (the store sends it after the commit,
// see SqlEventStore): a NOTIFY inside a transaction takes PostgreSQL's notify lock, one
// lock for the whole server, from pre-commit until after the commit's WAL flush, so every
// appending commit waited for the previous one's flush instead of sharing it (group
// commit). Measured with 8 concurrent writers: appends halved (docs/performance.md).
const notifyAfterCommit = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TRIGGER IF EXISTS events_notify ON events`
  yield* sql`DROP FUNCTION IF EXISTS tillflow_events_notify()`
})

// The append as a function, so that its statements are planned once per connection
// (PL/pgSQL caches their plans) instead of at every append: a client statement of its own
// (a CTE that bumps the stream row and inserts the batch) was parsed and planned anew each
// time, which on PostgreSQL cost more than its execution (measured: the same CTE
// prepared ran ~1.6x as many appends per second). Called as ONE statement; its two
// steps are atomic with it, in the statement's transaction or in the caller's.
//
// The stream row is bumped only if it is still at `expected` (`stream_exists`), or created
// only if it does not exist; a bump that did not happen (a lost race: another writer got
// there first) leaves the function before the insert, so nothing is inserted and no value
// of the global position sequence is taken. Concurrent bumps of one row wait for each
// other on its row lock, and the one that waited re-checks the version against the row the
// winner committed (READ COMMITTED), so two appends can never both pass the check.
//
// `batch` is a JSON array of `[event_id, type, schema_version, data, metadata, hash]` rows,
// one per event in version order; `data` and `metadata` are the canonical JSON the hashes
// were computed over. Answers how many events were inserted (0 = lost race) and their global
// positions in version order, comma-separated.
const appendFunction = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION tillflow_append(
      stream text, expected bigint, stream_exists boolean, last_hash text, batch jsonb
    ) RETURNS TABLE (inserted integer, positions text) LANGUAGE plpgsql AS $$
    DECLARE
      next_version bigint := expected + jsonb_array_length(batch);
    BEGIN
      IF stream_exists THEN
        UPDATE streams SET version = next_version, last_hash = tillflow_append.last_hash, updated_at = now()
          WHERE streams.stream_id = stream AND streams.version = expected;
      ELSE
        INSERT INTO streams (stream_id, version, last_hash) VALUES (stream, next_version, tillflow_append.last_hash)
          ON CONFLICT (stream_id) DO NOTHING;
      END IF;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 0, NULL::text;
        RETURN;
      END IF;
      RETURN QUERY
        WITH appended AS (
          INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, hash)
          SELECT stream, expected + b.n, (b.e->>0)::uuid, b.e->>1, (b.e->>2)::integer,
            b.e->3, b.e->4, b.e->>5
          FROM jsonb_array_elements(batch) WITH ORDINALITY AS b (e, n)
          RETURNING events.version, events.global_position
        )
        SELECT count(*)::integer, string_agg(appended.global_position::text, ',' ORDER BY appended.version)
        FROM appended;
    END
    $$`
})

// The append without a separate read of the stream's head (migration 4): a writer that
// does not know the head (an `AnyVersion` append to a stream it has not written lately, a
// cached head another writer has since moved) sends its guess, and when the guess is wrong
// the same call answers the stream's actual head, so the retry needs no statement of its own.
//
// As `tillflow_append` (migration 3, kept for the processes of the previous release still
// running during an upgrade), with two changes:
// - The stream row is bumped only if it is still at `expected` AND its last hash is still
//   `previous_hash`, the hash the batch was chained onto. Versions alone could pass a stale
//   guess: a head cached from an append whose (caller's) transaction rolled back, after
//   which another writer wrote that version with another hash; the batch would then be
//   chained onto a hash that is not in the stream.
// - A bump that did not happen answers 0 inserted and the stream's committed head
//   (`head_version`, `head_hash`; NULL, NULL when it has no row), read by a statement of
//   its own inside the function: under READ COMMITTED it takes a new snapshot, so it sees
//   the writer whose commit the bump waited for. Nothing is inserted, so no value of the
//   global position sequence is taken, and the read takes no lock.
// On success it answers the new head (the version reached and `next_hash`).
const appendReportingHead = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION tillflow_append_chained(
      stream text, expected bigint, stream_exists boolean, previous_hash text, next_hash text, batch jsonb
    ) RETURNS TABLE (inserted integer, positions text, head_version bigint, head_hash text)
    LANGUAGE plpgsql AS $$
    DECLARE
      next_version bigint := expected + jsonb_array_length(batch);
    BEGIN
      IF stream_exists THEN
        UPDATE streams SET version = next_version, last_hash = next_hash, updated_at = now()
          WHERE streams.stream_id = stream AND streams.version = expected
            AND streams.last_hash = previous_hash;
      ELSE
        INSERT INTO streams (stream_id, version, last_hash) VALUES (stream, next_version, next_hash)
          ON CONFLICT (stream_id) DO NOTHING;
      END IF;
      IF NOT FOUND THEN
        RETURN QUERY
          SELECT 0, NULL::text, streams.version, streams.last_hash
          FROM (VALUES (1)) AS one (n) LEFT JOIN streams ON streams.stream_id = stream;
        RETURN;
      END IF;
      RETURN QUERY
        WITH appended AS (
          INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, hash)
          SELECT stream, expected + b.n, (b.e->>0)::uuid, b.e->>1, (b.e->>2)::integer,
            b.e->3, b.e->4, b.e->>5
          FROM jsonb_array_elements(batch) WITH ORDINALITY AS b (e, n)
          RETURNING events.version, events.global_position
        )
        SELECT count(*)::integer, string_agg(appended.global_position::text, ',' ORDER BY appended.version),
          next_version, next_hash
        FROM appended;
    END
    $$`
})

// Group commit (migration 5): several appends, of different streams, in ONE statement and
// transaction. `entries` is a JSON array of
// `[entry, stream_id, expected, stream_exists, previous_hash, next_hash, batch]`, the
// arguments of `tillflow_append_chained` (migration 4) with the entry's index first; each
// entry is appended by that function, so each keeps its own outcome: a wrong guess inserts
// nothing for its stream and answers that stream's head, the other entries land. One row per
// entry, with its index. An error (a duplicate event id, a deadlock) rolls back the whole
// statement; the store then sends every entry again alone.
//
// The entries are processed in `stream_id` order, so every coalesced statement takes its
// stream row locks in one fixed order: two of them, concurrent, cannot deadlock each other.
const appendMany = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION tillflow_append_many(entries jsonb)
    RETURNS TABLE (entry integer, inserted integer, positions text, head_version bigint, head_hash text)
    LANGUAGE plpgsql AS $$
    DECLARE
      e record;
    BEGIN
      FOR e IN
        SELECT (x.v->>0)::integer AS n, x.v->>1 AS stream, (x.v->>2)::bigint AS expected,
          (x.v->>3)::boolean AS stream_exists, x.v->>4 AS previous_hash, x.v->>5 AS next_hash,
          x.v->6 AS batch
        FROM jsonb_array_elements(entries) AS x (v)
        ORDER BY x.v->>1
      LOOP
        RETURN QUERY
          SELECT e.n, a.inserted, a.positions, a.head_version, a.head_hash
          FROM tillflow_append_chained(e.stream, e.expected, e.stream_exists, e.previous_hash,
            e.next_hash, e.batch) AS a;
      END LOOP;
    END
    $$`
})

// The multi-stream append (migration 6): batches for several streams written all or none.
// `entries` is a JSON array of `[entry, stream_id, expected, stream_exists, previous_hash,
// next_hash, batch]` as for `tillflow_append_many`. First every stream row is bumped (or
// created), in `stream_id` order (one lock order for every writer, so no deadlock between
// them), each only if still at `expected` and `previous_hash`; the first bump that does not
// happen raises, which rolls back the bumps made before it (the block's savepoint), and the
// function answers every entry's committed head with 0 inserted: no event row was written
// and no value of the global position sequence taken. Otherwise the events of every entry
// are inserted by one statement. One row per entry, by its index. A duplicate event id
// fails the whole statement, as for the other appends.
const appendAll = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION tillflow_append_all(entries jsonb)
    RETURNS TABLE (entry integer, inserted integer, positions text, head_version bigint, head_hash text)
    LANGUAGE plpgsql AS $$
    DECLARE
      e record;
    BEGIN
      BEGIN
        FOR e IN
          SELECT x.v->>1 AS stream, (x.v->>2)::bigint AS expected, (x.v->>3)::boolean AS stream_exists,
            x.v->>4 AS previous_hash, x.v->>5 AS next_hash, jsonb_array_length(x.v->6) AS n
          FROM jsonb_array_elements(entries) AS x (v)
          ORDER BY x.v->>1
        LOOP
          IF e.stream_exists THEN
            UPDATE streams SET version = e.expected + e.n, last_hash = e.next_hash, updated_at = now()
              WHERE streams.stream_id = e.stream AND streams.version = e.expected
                AND streams.last_hash = e.previous_hash;
          ELSE
            INSERT INTO streams (stream_id, version, last_hash) VALUES (e.stream, e.expected + e.n, e.next_hash)
              ON CONFLICT (stream_id) DO NOTHING;
          END IF;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'tillflow: a stream moved' USING ERRCODE = 'TF001';
          END IF;
        END LOOP;
      EXCEPTION WHEN SQLSTATE 'TF001' THEN
        RETURN QUERY
          SELECT (x.v->>0)::integer, 0, NULL::text, streams.version, streams.last_hash
          FROM jsonb_array_elements(entries) AS x (v) LEFT JOIN streams ON streams.stream_id = x.v->>1;
        RETURN;
      END;
      RETURN QUERY
        WITH appended AS (
          INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, hash)
          SELECT x.v->>1, (x.v->>2)::bigint + b.n, (b.e->>0)::uuid, b.e->>1, (b.e->>2)::integer,
            b.e->3, b.e->4, b.e->>5
          FROM jsonb_array_elements(entries) WITH ORDINALITY AS x (v, i),
            jsonb_array_elements(x.v->6) WITH ORDINALITY AS b (e, n)
          ORDER BY x.i, b.n
          RETURNING events.stream_id, events.version, events.global_position
        )
        SELECT (x.v->>0)::integer, count(appended.global_position)::integer,
          string_agg(appended.global_position::text, ',' ORDER BY appended.version),
          (x.v->>2)::bigint + jsonb_array_length(x.v->6), x.v->>5
        FROM jsonb_array_elements(entries) AS x (v)
          LEFT JOIN appended ON appended.stream_id = x.v->>1
        GROUP BY x.v;
    END
    $$`
})

// Retention (migration 9, issue 31): the archive, a table beside `events` with the same
// columns. `EventArchive.run` moves the events of streams idle since before a cut-off out of
// `events` into it, one statement (and so one transaction) per batch of streams: a crash
// loses nothing and copies nothing twice. The stream rows (`streams`: version and last
// hash, the chain heads) stay where they are, so an append to an archived stream chains onto
// its head as before, and every read of events (a stream, the global log, verification)
// reads the archive and `events` together (`Statements`). Why a table rather than files per
// day: docs/event-store.md, "Retention and archive".
const eventArchive = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE events_archive (
      global_position bigint      NOT NULL,
      transaction_id  xid8        NOT NULL,
      stream_id       text        NOT NULL REFERENCES streams (stream_id),
      version         bigint      NOT NULL CHECK (version >= 1),
      event_id        uuid        NOT NULL,
      type            text        NOT NULL,
      schema_version  integer     NOT NULL CHECK (schema_version >= 1),
      data            jsonb       NOT NULL,
      metadata        jsonb       NOT NULL,
      recorded_at     timestamptz NOT NULL,
      hash            text        NOT NULL,
      archived_at     timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_id, version)
    )`
  yield* sql`CREATE UNIQUE INDEX events_archive_global_order ON events_archive (transaction_id, global_position)`
})

// An archived event's id stays taken (migration 10): `events.event_id` is UNIQUE, but an
// event moved to `events_archive` (migration 9) left that index, and an append of the same
// id was accepted as new — a retried step, a late callback recorded twice. Every append
// function inserts into `events`, so one check there covers them all: a statement-level
// trigger joins the rows the statement inserted (its transition table) with the archive's
// `event_id` index, one probe per event whatever the archive's size, and raises the
// unique violation a duplicate in `events` raises (SQLSTATE 23505, the detail naming the
// id), under the archive index's name, so the store answers `DuplicateEventId` and the
// statement writes nothing, exactly as for a duplicate in `events`. The index also keeps
// the archive itself free of duplicates.
//
// A race with the archiver cannot let a duplicate through: an append of an id the archiver
// is moving waits on `events`' unique index for the mover's commit, and the trigger's
// query, run after that under READ COMMITTED, sees the moved row in the archive.
/** Installs the trigger refusing an archived event's id (idempotent): see {@link archivedEventIds}. */
export const installArchivedIdsTrigger = `CREATE OR REPLACE TRIGGER events_refuse_archived_ids AFTER INSERT ON events
    REFERENCING NEW TABLE AS appended
    FOR EACH STATEMENT EXECUTE FUNCTION tillflow_refuse_archived_event_ids()`

const archivedEventIds = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX events_archive_event_id_key ON events_archive (event_id)`
  yield* sql`
    CREATE FUNCTION tillflow_refuse_archived_event_ids() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      taken uuid;
    BEGIN
      SELECT appended.event_id INTO taken
        FROM appended JOIN events_archive ON events_archive.event_id = appended.event_id
        LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'duplicate key value violates unique constraint "events_archive_event_id_key"'
          USING ERRCODE = 'unique_violation', CONSTRAINT = 'events_archive_event_id_key',
            TABLE = 'events', DETAIL = format('Key (event_id)=(%s) already exists.', taken);
      END IF;
      RETURN NULL;
    END
    $$`
  // The trigger costs every append a little (about 6 % of the 100-event batch rate, measured
  // in interleaved rounds): it is installed only once the archive holds events — here for a
  // store archived before this migration, else by the first archive run (`EventArchive`),
  // so a store that never archives pays nothing.
  yield* sql.unsafe(
    `DO $$ BEGIN IF EXISTS (SELECT 1 FROM events_archive) THEN ${installArchivedIdsTrigger}; END IF; END $$`
  )
})

// Group commit of multi-stream appends (migration 8): several callers' all-or-nothing
// appends (each a GROUP of entries, as `tillflow_append_all` takes them) in ONE statement
// and transaction, each group still written all or none, independently of the others.
// `entries` is a JSON array of `[entry, stream_id, expected, stream_exists, previous_hash,
// next_hash, batch, group]`: `tillflow_append_all`'s entries with the group's index last.
// No two groups name the same stream (the store coalesces only disjoint ones).
//
// Set-based, without a subtransaction per group (measured: a block per group cost as much
// server time as a statement per group):
// 1. every existing stream row of the statement is locked, in `stream_id` order (one lock
//    order for every writer, as the other append functions keep: no deadlock between them);
// 2. a group is refused if one of its streams is not at `expected` and `previous_hash`
//    (the rows are locked: that cannot change), or exists when the group guessed it new;
// 3. the new streams of the other groups are created; one that another writer created
//    meanwhile (its insert waited for that writer's commit) refuses its group, whose rows
//    this statement just created are deleted again (never a row of another writer);
// 4. the existing streams of the groups left are bumped (locked and checked: every bump
//    takes effect), and their events inserted by one statement.
// One row per entry, by its index: a refused group's entries answer 0 inserted and their
// streams' committed heads, as `tillflow_append_all` does; no event row is written for it
// and no value of the global position sequence taken. A duplicate event id fails the whole
// statement; the store then sends each group again alone (`tillflow_append_all`).
const appendGroups = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION tillflow_append_groups(entries jsonb)
    RETURNS TABLE (entry integer, inserted integer, positions text, head_version bigint, head_hash text)
    LANGUAGE plpgsql AS $$
    DECLARE
      refused integer[];
      created text[];
      late integer[];
    BEGIN
      PERFORM 1 FROM streams
        WHERE streams.stream_id IN (SELECT x.v->>1 FROM jsonb_array_elements(entries) AS x (v))
        ORDER BY streams.stream_id
        FOR UPDATE;
      SELECT coalesce(array_agg(DISTINCT (x.v->>7)::integer), '{}') INTO refused
        FROM jsonb_array_elements(entries) AS x (v) LEFT JOIN streams ON streams.stream_id = x.v->>1
        WHERE CASE WHEN (x.v->>3)::boolean
          THEN streams.stream_id IS NULL OR streams.version <> (x.v->>2)::bigint
            OR streams.last_hash <> x.v->>4
          ELSE streams.stream_id IS NOT NULL END;
      WITH made AS (
        INSERT INTO streams (stream_id, version, last_hash)
          SELECT x.v->>1, (x.v->>2)::bigint + jsonb_array_length(x.v->6), x.v->>5
          FROM jsonb_array_elements(entries) AS x (v)
          WHERE NOT (x.v->>3)::boolean AND NOT ((x.v->>7)::integer = ANY (refused))
          ORDER BY x.v->>1
          ON CONFLICT (stream_id) DO NOTHING
          RETURNING streams.stream_id
      )
      SELECT coalesce(array_agg(made.stream_id), '{}') INTO created FROM made;
      SELECT coalesce(array_agg(DISTINCT (x.v->>7)::integer), '{}') INTO late
        FROM jsonb_array_elements(entries) AS x (v)
        WHERE NOT (x.v->>3)::boolean AND NOT ((x.v->>7)::integer = ANY (refused))
          AND NOT (x.v->>1 = ANY (created));
      IF cardinality(late) > 0 THEN
        DELETE FROM streams WHERE streams.stream_id = ANY (created) AND streams.stream_id IN (
          SELECT x.v->>1 FROM jsonb_array_elements(entries) AS x (v) WHERE (x.v->>7)::integer = ANY (late));
        refused := refused || late;
      END IF;
      UPDATE streams
        SET version = (x.v->>2)::bigint + jsonb_array_length(x.v->6), last_hash = x.v->>5, updated_at = now()
        FROM jsonb_array_elements(entries) AS x (v)
        WHERE streams.stream_id = x.v->>1 AND (x.v->>3)::boolean
          AND NOT ((x.v->>7)::integer = ANY (refused));
      RETURN QUERY
        WITH landing AS (
          SELECT x.v, x.i FROM jsonb_array_elements(entries) WITH ORDINALITY AS x (v, i)
          WHERE NOT ((x.v->>7)::integer = ANY (refused))
        ), appended AS (
          INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, hash)
          SELECT landing.v->>1, (landing.v->>2)::bigint + b.n, (b.e->>0)::uuid, b.e->>1, (b.e->>2)::integer,
            b.e->3, b.e->4, b.e->>5
          FROM landing, jsonb_array_elements(landing.v->6) WITH ORDINALITY AS b (e, n)
          ORDER BY landing.i, b.n
          RETURNING events.stream_id, events.version, events.global_position
        )
        SELECT (landing.v->>0)::integer, count(appended.global_position)::integer,
          string_agg(appended.global_position::text, ',' ORDER BY appended.version),
          (landing.v->>2)::bigint + jsonb_array_length(landing.v->6), landing.v->>5
        FROM landing LEFT JOIN appended ON appended.stream_id = landing.v->>1
        GROUP BY landing.v
        UNION ALL
        SELECT (x.v->>0)::integer, 0, NULL::text, streams.version, streams.last_hash
        FROM jsonb_array_elements(entries) AS x (v) LEFT JOIN streams ON streams.stream_id = x.v->>1
        WHERE (x.v->>7)::integer = ANY (refused);
    END
    $$`
})

// The merchant registry (migration 11, issue 32): merchants and their API keys, each key
// sealed (`KeyWrapper`: the ciphertext and its wrapped data key, never the key) with the id
// of the key-encryption key it is under, so a rotation finds the keys to rewrap. Rows, not
// events: a rotation rewrites the sealed form in place, which an event log must not.
const merchantRegistry = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE tillflow_merchants (
      merchant_id      text    PRIMARY KEY,
      name             text    NOT NULL,
      mcc              text    NOT NULL,
      virtual_terminal text,
      enabled          boolean NOT NULL DEFAULT true,
      created_at       bigint  NOT NULL
    )`
  yield* sql`
    CREATE TABLE tillflow_merchant_keys (
      key_id      text   PRIMARY KEY,
      merchant_id text   NOT NULL REFERENCES tillflow_merchants (merchant_id),
      kind        text   NOT NULL CHECK (kind IN ('merchant', 'partner')),
      sealed      jsonb  NOT NULL,
      kek         text   NOT NULL,
      created_at  bigint NOT NULL,
      retired_at  bigint
    )`
  yield* sql`CREATE INDEX tillflow_merchant_keys_by_merchant ON tillflow_merchant_keys (merchant_id, created_at)`
  yield* sql`CREATE INDEX tillflow_merchant_keys_by_kek ON tillflow_merchant_keys (kek)`
})

// What a merchant's acquirer supports (issue 32): each capability the merchant's, or NULL
// for the deployment's (TILLFLOW_ACQUIRER_PARTIAL_REVERSAL, …_CAPTURE_REVERSAL).
const merchantAcquirer = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tillflow_merchants ADD COLUMN partial_reversal boolean`
  yield* sql`ALTER TABLE tillflow_merchants ADD COLUMN capture_reversal boolean`
})

// A merchant's own rate limit of operations started (issue 32): all three NULL for the
// deployment's (TILLFLOW_MERCHANT_RATE_LIMIT), else all three set.
const merchantRateLimit = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tillflow_merchants ADD COLUMN rate_limit_count integer`
  yield* sql`ALTER TABLE tillflow_merchants ADD COLUMN rate_limit_interval_millis integer`
  yield* sql`ALTER TABLE tillflow_merchants ADD COLUMN rate_limit_burst integer`
  yield* sql`ALTER TABLE tillflow_merchants ADD CONSTRAINT tillflow_merchants_rate_limit_whole CHECK (
    (rate_limit_count IS NULL) = (rate_limit_interval_millis IS NULL)
    AND (rate_limit_count IS NULL) = (rate_limit_burst IS NULL))`
})

/** Every migration of the event store, by `id_name`. */
export const migrations = {
  "1_create_event_store": createEventStore,
  "2_notify_after_commit": notifyAfterCommit,
  "3_append_function": appendFunction,
  "4_append_reporting_head": appendReportingHead,
  "5_append_many": appendMany,
  "6_append_all": appendAll,
  "8_append_groups": appendGroups,
  "9_event_archive": eventArchive,
  "10_archived_event_ids": archivedEventIds,
  "11_merchant_registry": merchantRegistry,
  "12_merchant_acquirer": merchantAcquirer,
  "13_merchant_rate_limit": merchantRateLimit
} as const

/** Applies the pending migrations; returns the ones applied now. */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })
