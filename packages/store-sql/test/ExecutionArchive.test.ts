/**
 * Retention of the execution queue's rows (issue 31) on PostgreSQL (fresh database; PGlite
 * when DATABASE_URL is unset) and on PGlite: `EventArchive.run` moves the rows of executions
 * finished before the cut-off from `tillflow_executions` into `tillflow_executions_archive`
 * and never an open (pending, running, suspended) or stuck one; a run is idempotent and a
 * batch rolled back moves nothing; the queue finds an archived execution by id (`get`) while
 * its lists and counts are of the hot table; and a second start of an archived execution's
 * id answers its recorded result without running it, nor putting it back in the queue.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Activity, Workflow } from "@effect/workflow"
import { DurableEngine, EngineWorker, type EventStore, ExecutionQueue } from "@tillflow/engine"
import { EventArchive, PgliteEventStore, SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** Where an execution's row is: hot, archived, both (never), or nowhere. */
const whereIs = (executionId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ readonly hot: string; readonly archived: string }>`
      SELECT (SELECT count(*) FROM tillflow_executions WHERE execution_id = ${executionId})::text AS hot,
             (SELECT count(*) FROM tillflow_executions_archive WHERE execution_id = ${executionId})::text AS archived`
    const hot = row?.hot === "1"
    const archived = row?.archived === "1"
    return hot && archived ? "both" : hot ? "hot" : archived ? "archived" : "nowhere"
  })

/** A cut-off after every execution these tests write (their clock is epoch milliseconds near 0). */
const cutoff = new Date(1_000_000)

let counter = 0
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`

const archiveSuite = <E>(
  name: string,
  stores: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient | ExecutionQueue.ExecutionQueue, E>
) =>
  layer(stores, { excludeTestServices: true, timeout: 120_000 })(name, (it) => {
    it.effect(
      "finished rows move (dry run first), open and stuck ones stay, a run is idempotent; get finds an archived execution, lists and counts do not",
      () =>
        Effect.gen(function* () {
          const queue = yield* ExecutionQueue.ExecutionQueue
          const workflow = unique("Archived")
          const ids = {
            succeeded: unique("succeeded"),
            failed: unique("failed"),
            interrupted: unique("interrupted"),
            running: unique("running"),
            suspended: unique("suspended"),
            stuck: unique("stuck"),
            late: unique("late"),
            // Last: the one execution the claim below leaves pending.
            pending: unique("pending")
          }
          for (const [n, id] of Object.values(ids).entries()) {
            yield* queue.enqueue({
              executionId: id,
              workflowName: workflow,
              concurrencyKey: id === ids.suspended ? `key-${id}` : undefined,
              parentId: undefined,
              attributes: { order: id },
              now: 1000 + n
            })
          }
          // All but the pending one claimed, then each released to its state.
          const claimed = yield* queue.claim({
            workerId: "w",
            workflowNames: [workflow],
            limit: 7,
            leaseMs: 60_000,
            now: 2000
          })
          expect(claimed).toHaveLength(7)
          const release = (executionId: string, outcome: ExecutionQueue.Release, now = 3000) =>
            queue.release({ executionId, workerId: "w", now, release: outcome })
          yield* release(ids.succeeded, { _tag: "Finished", status: "succeeded" })
          yield* release(ids.failed, { _tag: "Finished", status: "failed" })
          yield* release(ids.interrupted, { _tag: "Finished", status: "interrupted" })
          yield* release(ids.suspended, { _tag: "Suspended", wakeAt: undefined })
          yield* release(ids.stuck, { _tag: "Stuck" })
          // Finished after the cut-off: stays hot.
          yield* release(ids.late, { _tag: "Finished", status: "succeeded" }, cutoff.getTime() + 1)
          const before = yield* queue.get(ids.succeeded)

          const dry = yield* EventArchive.run({ before: cutoff, dryRun: true })
          expect(dry.executions).toBeGreaterThanOrEqual(3)
          expect(yield* whereIs(ids.succeeded)).toBe("hot")

          const report = yield* EventArchive.run({ before: cutoff, batchSize: 2 })
          expect(report.executions).toBe(dry.executions)
          for (const id of [ids.succeeded, ids.failed, ids.interrupted]) {
            expect(yield* whereIs(id)).toBe("archived")
          }
          for (const id of [ids.running, ids.suspended, ids.pending, ids.stuck, ids.late]) {
            expect(yield* whereIs(id)).toBe("hot")
          }
          const again = yield* EventArchive.run({ before: cutoff })
          expect(again.executions).toBe(0)
          expect(yield* whereIs(ids.succeeded)).toBe("archived")

          // By id: found, exactly as it was.
          expect(yield* queue.get(ids.succeeded)).toEqual(before)
          expect(Option.map(yield* queue.get(ids.failed), (info) => info.status)).toEqual(
            Option.some("failed")
          )
          expect(yield* queue.get(unique("never"))).toEqual(Option.none())
          // Lists and counts: the hot table's executions only.
          const hot = [ids.running, ids.suspended, ids.stuck, ids.late, ids.pending]
          const listed = yield* queue.list({ workflowName: workflow })
          expect(listed.map((info) => info.executionId).sort()).toEqual([...hot].sort())
          const newest = yield* queue.list({ workflowName: workflow, order: "newest", limit: 10 })
          expect(newest.map((info) => info.executionId)).toEqual([...hot].reverse())
          expect(yield* queue.list({ workflowName: workflow, status: "failed" })).toEqual([])
          expect(yield* queue.list({ workflowName: workflow, attributes: { order: ids.succeeded } })).toEqual(
            []
          )
          const count = queue.count
          if (count !== undefined) expect(yield* count({ workflowName: workflow })).toBe(hot.length)

          // The open ones still run: the pending one is claimed, the suspended one woken and claimed.
          yield* queue.wake({ executionId: ids.suspended, now: 4000 })
          const later = yield* queue.claim({
            workerId: "w2",
            workflowNames: [workflow],
            limit: 10,
            leaseMs: 60_000,
            now: 4000
          })
          expect(later.map((claim) => claim.executionId).sort()).toEqual([ids.pending, ids.suspended].sort())
        })
    )

    it.effect("a batch that does not commit (a crash mid-run) moves no row; the next run moves it once", () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const sql = yield* SqlClient.SqlClient
        const workflow = unique("Crashed")
        const id = unique("crashed")
        yield* queue.enqueue({
          executionId: id,
          workflowName: workflow,
          concurrencyKey: undefined,
          parentId: undefined,
          attributes: {},
          now: 1000
        })
        yield* queue.claim({ workerId: "w", workflowNames: [workflow], limit: 1, leaseMs: 1000, now: 1000 })
        yield* queue.release({
          executionId: id,
          workerId: "w",
          now: 1500,
          release: { _tag: "Finished", status: "succeeded" }
        })
        const crashed = yield* EventArchive.run({ before: cutoff }).pipe(
          Effect.zipRight(Effect.fail("crash" as const)),
          sql.withTransaction,
          Effect.flip
        )
        expect(crashed).toBe("crash")
        expect(yield* whereIs(id)).toBe("hot")
        const report = yield* EventArchive.run({ before: cutoff })
        expect(report.executions).toBeGreaterThanOrEqual(1)
        expect(yield* whereIs(id)).toBe("archived")
      })
    )

    it.effect(
      "a second start of an archived execution's id answers its recorded result: not run again, not queued again",
      () =>
        Effect.gen(function* () {
          let runs = 0
          const Once = Workflow.make({
            name: unique("Once"),
            payload: { id: Schema.String },
            success: Schema.Number,
            idempotencyKey: (payload) => payload.id
          })
          const OnceLive = Once.toLayer(() =>
            Activity.make({ name: "Count", success: Schema.Number, execute: Effect.sync(() => ++runs) })
          )
          const node = yield* Layer.build(
            Layer.mergeAll(
              OnceLive,
              EngineWorker.layer({
                pollInterval: "200 millis",
                lease: "30 seconds",
                shutdownTimeout: "1 second"
              })
            ).pipe(Layer.provideMerge(DurableEngine.layer({ pollInterval: "50 millis" })))
          )
          const payload = { id: unique("sale") }
          expect(yield* Once.execute(payload).pipe(Effect.provide(node))).toBe(1)
          const executionId = yield* Once.executionId(payload)
          const queue = yield* ExecutionQueue.ExecutionQueue
          const finished = yield* queue.get(executionId)
          expect(Option.map(finished, (info) => info.status)).toEqual(Option.some("succeeded"))

          // Everything finished up to a minute from now: this execution's row and its events.
          const report = yield* EventArchive.run({ before: new Date(Date.now() + 60_000) })
          expect(report.executions).toBeGreaterThanOrEqual(1)
          expect(yield* whereIs(executionId)).toBe("archived")

          // Started again, on this node and from another process that keeps nothing.
          expect(yield* Once.execute(payload).pipe(Effect.provide(node))).toBe(1)
          const client = yield* Layer.build(DurableEngine.layer({ pollInterval: "50 millis" }))
          expect(yield* Once.execute(payload).pipe(Effect.provide(client))).toBe(1)
          yield* Once.execute(payload, { discard: true }).pipe(Effect.provide(client))
          // Given a worker a chance to claim anything queued.
          yield* Effect.sleep("500 millis")
          expect(runs).toBe(1)
          expect(yield* whereIs(executionId)).toBe("archived")
          expect(yield* queue.get(executionId)).toEqual(finished)
        }).pipe(Effect.scoped)
    )
  })

describe("EventArchive of the execution queue", () => {
  archiveSuite(
    "on PostgreSQL (fresh database)",
    SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(Layer.provideMerge(TestDatabase.layer))
  )
  archiveSuite(
    "on PGlite",
    SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(
      Layer.provideMerge(PgliteEventStore.layer({ pollInterval: "50 millis" }))
    )
  )
})
