/**
 * The append and the release on PostgreSQL go through the `pg` pool under the `PgClient` as a named
 * prepared statement (STYLE.md, "SQL": the hot statements below @effect/sql); on PGlite,
 * which has no `pg` pool, through @effect/sql. Both answer the same (the contract suites).
 */
import { expect, layer } from "@effect/vitest"
import { EventStore, ExecutionQueue } from "@tillflow/engine"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { freshStream } from "@tillflow/engine/testing"
import * as HotPool from "../src/internal/HotPool.js"

// ONE connection, so the session the append used is the one asked about afterwards.
layer(SqlExecutionQueue.layer.pipe(Layer.provideMerge(TestDatabase.layerWith({ maxConnections: 1 }))))(
  "the append's path",
  (it) => {
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
          expect(prepared.rows.map((row) => row.name)).not.toContain("tillflow_release_finished_v1")
          const append = prepared.rows.filter((row) => row.name === "tillflow_append_chained_v1")
          expect(append).toHaveLength(1)
          expect(append[0].statement).toContain("tillflow_append_chained($1::text")
        })
    )

    it.effect(
      "on PostgreSQL a release is a named prepared statement of the pg pool, and frees the row and its concurrency key",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const database = yield* TestDatabase.TestDatabase
          const pool = yield* Effect.serviceOption(HotPool.HotPool)
          const executionId = freshStream("exec")
          const concurrencyKey = freshStream("terminal")
          const enqueue = (id: string) =>
            queue.enqueue({
              executionId: id,
              workflowName: "hot",
              concurrencyKey,
              parentId: undefined,
              attributes: {},
              now: 1_000
            })
          yield* enqueue(executionId)
          const claimed = yield* queue.claim({
            workerId: "w",
            workflowNames: ["hot"],
            limit: 5,
            leaseMs: 10_000,
            now: 1_000
          })
          expect(claimed.map((claim) => claim.executionId)).toEqual([executionId])
          const next = freshStream("exec")
          yield* enqueue(next)
          const released = yield* queue.release({
            executionId,
            workerId: "w",
            release: { _tag: "Finished", status: "succeeded" },
            now: 2_000
          })
          expect(released).toBe(true)
          // Its key freed with the finish: the next execution of the key is claimed.
          const after = yield* queue.claim({
            workerId: "w",
            workflowNames: ["hot"],
            limit: 5,
            leaseMs: 10_000,
            now: 2_000
          })
          expect(after.map((claim) => claim.executionId)).toEqual([next])
          // A second release of a finished execution changes nothing.
          expect(
            yield* queue.release({
              executionId,
              workerId: "w",
              release: { _tag: "Finished", status: "succeeded" },
              now: 3_000
            })
          ).toBe(false)
          if (database.kind === "pglite") {
            expect(Option.isNone(pool)).toBe(true)
            return
          }
          const prepared = yield* Effect.promise(() =>
            Option.getOrThrow(pool).query<{ name: string }>("SELECT name FROM pg_prepared_statements")
          )
          expect(prepared.rows.map((row) => row.name)).toContain("tillflow_release_finished_v1")
        })
    )
  }
)
