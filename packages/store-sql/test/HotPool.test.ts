/**
 * The append on PostgreSQL goes through the `pg` pool under the `PgClient` as a named
 * prepared statement (STYLE.md, "SQL": the hot statements below @effect/sql); on PGlite,
 * which has no `pg` pool, through @effect/sql. Both answer the same (the contract suites).
 */
import { expect, layer } from "@effect/vitest"
import { EventStore } from "@tillflow/engine"
import { TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { freshStream } from "@tillflow/engine/testing"
import * as HotPool from "../src/internal/HotPool.js"

// ONE connection, so the session the append used is the one asked about afterwards.
layer(TestDatabase.layerWith({ maxConnections: 1 }))("the append's path", (it) => {
  it.effect(
    "on PostgreSQL an append is a named prepared statement of the pg pool, planned once for the session; on PGlite there is no pool",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const database = yield* TestDatabase.TestDatabase
        const pool = yield* Effect.serviceOption(HotPool.HotPool)
        const streamId = freshStream("hot")
        for (let n = 1; n <= 3; n++) {
          const result = yield* store.append(streamId, EventStore.AnyVersion, [
            { type: "Happened", data: { n } }
          ])
          expect(result.nextVersion).toBe(n)
        }
        expect((yield* store.readStream(streamId)).map((event) => event.data)).toEqual([
          { n: 1 },
          { n: 2 },
          { n: 3 }
        ])
        if (database.kind === "pglite") {
          expect(Option.isNone(pool)).toBe(true)
          return
        }
        expect(Option.isSome(pool)).toBe(true)
        const prepared = yield* Effect.promise(() =>
          Option.getOrThrow(pool).query<{ name: string; statement: string }>(
            "SELECT name, statement FROM pg_prepared_statements ORDER BY name"
          )
        )
        const append = prepared.rows.filter((row) => row.name === "tillflow_append_chained_v1")
        expect(append).toHaveLength(1)
        expect(append[0].statement).toContain("tillflow_append_chained($1::text")
      })
  )
})
