/**
 * The event store's reads of streams do not follow the history it stores (issue 29): the
 * coalesced read of several whole streams (`Statements.readMany`, what concurrent
 * `readStream` calls become) reaches each stream's rows through the `(stream_id, version)`
 * key, never by scanning `events`, on a table that is never analysed (autovacuum off, as on
 * the project's server): without statistics PostgreSQL costs an equality on `stream_id` at
 * 0.5 % of the table, and a join over the wanted streams was planned as a hash join over a
 * scan of every event (measured: 666 ms per read at 800,000 events, the cause of the
 * end-to-end throughput falling as the store grew). And the store's connections to
 * PostgreSQL run with JIT off: statistics-free estimates grow with the table, and past
 * `jit_above_cost` every point read would pay a compilation (90 ms in that plan).
 * Checked on the plans, over 20,000 events; the speed is measured by the benchmark
 * (`--only e2e-growth`), never here.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { EventStore } from "@tillflow/engine"
import { TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Statements from "../src/internal/eventStore/Statements.js"

// 2,000 streams of 10 events each, written as appends leave them, never analysed.
const fillHistory = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    INSERT INTO streams (stream_id, version, last_hash)
    SELECT 'history-' || md5(s::text), 10, 'h' FROM generate_series(1, 2000) AS s`
  yield* sql`
    INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, hash)
    SELECT 'history-' || md5(s::text), v, gen_random_uuid(), 'Happened', 1,
      jsonb_build_object('n', v, 'padding', repeat('x', 400)), '{}'::jsonb, 'h'
    FROM generate_series(1, 2000) AS s, generate_series(1, 10) AS v`
})

const plan = (statement: ReturnType<typeof Statements.readMany>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`EXPLAIN ${statement}`
    return rows.map((row) => Object.values(row).join(" ")).join("\n")
  })

layer(TestDatabase.layer, { timeout: 120_000, excludeTestServices: true })(
  "SqlEventStore with a long history",
  (it) => {
    it.effect(
      "a coalesced read of whole streams goes through the stream key, not a scan of every event",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const store = yield* EventStore.EventStore
          yield* fillHistory
          yield* store.append("wanted-a", EventStore.NoStream, [
            { type: "A", data: { n: 1 } },
            { type: "A", data: { n: 2 } }
          ])
          yield* store.append("wanted-b", EventStore.NoStream, [{ type: "B", data: { n: 1 } }])
          const requests = [
            { streamId: "wanted-b", fromVersion: 1 },
            { streamId: "wanted-a", fromVersion: 2 },
            { streamId: "wanted-none", fromVersion: 1 }
          ]
          const text = yield* plan(Statements.readMany(sql, requests))
          expect(text).not.toMatch(/Seq Scan on events/)
          expect(text).toMatch(/events_pkey/)
          // And it still answers what it answered: each stream's events from its version, in order.
          const rows = yield* Statements.readMany(sql, requests)
          expect(
            rows.map((row) => {
              const r = row as { readonly stream_id: string; readonly version: string }
              return `${r.stream_id}@${r.version}`
            })
          ).toEqual(["wanted-a@2", "wanted-b@1"])
        })
    )

    // PGlite has no JIT.
    it.effect.skipIf(!TestDatabase.postgresExpected)(
      "the store's PostgreSQL connections run with JIT off",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ readonly jit: string }>`SHOW jit`
          expect(rows[0]?.jit).toBe("off")
        })
    )
  }
)
