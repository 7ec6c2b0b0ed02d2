/**
 * The scan floors (migration `7_scan_floors`): the claim, `nextDueAt` and the start-deadline
 * expiry read their partial indexes from a floor no live row is below, so the dead entries
 * finished runs leave (which only VACUUM removes) are not walked by every scan. Checked by
 * the pages PostgreSQL reads for the queue's own statements over a never-vacuumed history
 * (a count of pages, not a time), and by rows written below a floor that moved up, alone
 * and racing advances. The speed itself is measured by the benchmark, never here.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { expect, layer } from "@effect/vitest"
import { ExecutionQueue } from "@tillflow/engine"
import { ExecutionQueueMigrations, SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Statements from "../src/internal/executionQueue/Statements.js"
import * as QueueHistory from "./QueueHistory.js"

const { now } = QueueHistory
const fillHistory = QueueHistory.fill({ startBy: true })

const Explained = Schema.Array(
  Schema.Struct({
    "QUERY PLAN": Schema.Array(
      Schema.Struct({ Plan: Schema.Record({ key: Schema.String, value: Schema.Unknown }) })
    )
  })
)

class Rollback extends Schema.TaggedError<Rollback>()("Rollback", { pages: Schema.Number }) {}

/** The shared pages (hit or read) the statement touches when run, rolled back afterwards. */
const pagesOf = (statement: Statement.Statement<unknown>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Explained))
    )
    const plan = rows[0]?.["QUERY PLAN"][0]?.Plan ?? {}
    const pages = Number(plan["Shared Hit Blocks"] ?? 0) + Number(plan["Shared Read Blocks"] ?? 0)
    return yield* new Rollback({ pages })
  }).pipe(
    (effect) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect)),
    Effect.catchTag("Rollback", (rollback) => Effect.succeed(rollback.pages)),
    Effect.orDie
  )

const floors = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly due_floor: string | number; readonly start_by_floor: string | number }>`
    SELECT due_floor, start_by_floor FROM tillflow_queue_floors`
  return { due: Number(rows[0]?.due_floor), startBy: Number(rows[0]?.start_by_floor) }
})

const enqueueAt = (executionId: string, at: number, options: { key?: string; startBy?: number } = {}) =>
  Effect.flatMap(ExecutionQueue.ExecutionQueue, (queue) =>
    queue.enqueue({
      executionId,
      workflowName: "Sale",
      concurrencyKey: options.key,
      parentId: undefined,
      attributes: {},
      startBy: options.startBy,
      now: at
    })
  )

const claimAt = (at: number, limit = 8) =>
  Effect.flatMap(ExecutionQueue.ExecutionQueue, (queue) =>
    queue.claim({ workerId: "w", workflowNames: ["Sale"], limit, leaseMs: 1_000_000, now: at })
  ).pipe(Effect.map((claims) => claims.map((claim) => claim.executionId)))

layer(SqlExecutionQueue.layer.pipe(Layer.provideMerge(TestDatabase.layer)), {
  timeout: 120_000,
  excludeTestServices: true
})("SqlExecutionQueue scan floors over a long history", (it) => {
  it.effect(
    "the claim, nextDueAt and the start-deadline expiry read a few pages, not the history's dead entries",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* fillHistory
        for (let i = 0; i < 5; i++) yield* enqueueAt(`live-${i}`, now + i)
        // A claim of another workflow: nothing to take, but it advances the floors.
        yield* Effect.flatMap(ExecutionQueue.ExecutionQueue, (queue) =>
          queue.claim({ workerId: "w", workflowNames: ["Other"], limit: 1, leaseMs: 30_000, now: now + 10 })
        )
        // Up to the earliest live due time, but at most a second below the claim's clock.
        expect((yield* floors).due).toBe(now + 10 - 1_000)
        // The claim of a workflow with nothing due reads only its scans: what it writes
        // (each claimed row's index entries) would not tell the history's share.
        const claim = Statements.claim(
          sql,
          { workerId: "w", workflowNames: ["Idle"], limit: 8, leaseMs: 30_000, now: now + 10 },
          now + 40_000,
          Statements.streamVersionColumn(sql, false)
        )
        // 20,000 completed executions left ~240 pages of dead entries in the two due-time
        // indexes and ~60 in the start-deadline one; the live rows are on a page or two.
        expect(yield* pagesOf(claim)).toBeLessThan(30)
        expect(yield* pagesOf(Statements.nextDueAt(sql, ["Sale"]))).toBeLessThan(30)
        expect(yield* pagesOf(Statements.expireStartDeadlines(sql, now + 10))).toBeLessThan(30)
        // And the statements still answer what they answered: the live ones, oldest first.
        expect(yield* claimAt(now + 10)).toEqual([0, 1, 2, 3, 4].map((i) => `live-${i}`))
      })
  )

  it.effect(
    "a row written below the floors after they moved up (a clock behind) is still claimed and expired",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const later = now + 100_000
        // Nothing live of this test below `later` any more: the floors move up to it.
        yield* enqueueAt("ahead", later)
        expect(yield* claimAt(later)).toEqual(["ahead"])
        expect((yield* floors).due).toBeGreaterThan(now + 10)
        // Inserted, then updated below the floor.
        yield* enqueueAt("behind", 500)
        expect((yield* floors).due).toBe(500)
        expect(yield* queue.nextDueAt(["Sale"])).toEqual(Option.some(500))
        expect(yield* claimAt(later + 2_000)).toEqual(["behind"])
        yield* queue.release({
          executionId: "behind",
          workerId: "w",
          release: { _tag: "Retry", runAt: 400 },
          now: later + 2_000
        })
        expect((yield* floors).due).toBe(400)
        expect(yield* claimAt(later + 4_000)).toEqual(["behind"])
        // A start deadline below its floor.
        yield* enqueueAt("holder", later + 6_000, { key: "k" })
        expect(yield* claimAt(later + 6_000)).toEqual(["holder"])
        yield* enqueueAt("waiting", later + 6_000, { key: "k", startBy: 300 })
        expect((yield* floors).startBy).toBe(300)
        const expire = queue.expireStartDeadlines
        expect(expire).toBeDefined()
        if (expire !== undefined) expect(yield* expire({ now: later + 7_000 })).toEqual(["waiting"])
      })
  )
})

layer(SqlExecutionQueue.layerWith({ scanFloorInterval: 0 }).pipe(Layer.provideMerge(TestDatabase.layer)), {
  timeout: 120_000,
  excludeTestServices: true
})("SqlExecutionQueue scan floors advanced on every claim", (it) => {
  it.effect(
    "claims advancing the floors while enqueues with lagging clocks write below them lose no execution and take none twice",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const base = 50_000_000
        const writers = 4
        const perWriter = 50
        const ids: Array<string> = []
        let writing = writers
        const writer = (w: number) =>
          Effect.gen(function* () {
            for (let i = 0; i < perWriter; i++) {
              const executionId = `race-${w}-${i}`
              ids.push(executionId)
              // Clocks from 20 s behind the claimers' to level with them.
              yield* enqueueAt(executionId, base - (((w * perWriter + i) * 7_919) % 20_000))
            }
            writing--
          })
        const claimed: Array<string> = []
        let tick = 0
        const claimer = Effect.gen(function* () {
          let idle = 0
          while (writing > 0 || idle < 3) {
            const now = base + 5_000 + tick++ * 10
            const taken = yield* queue.claim({
              workerId: "w",
              workflowNames: ["Sale"],
              limit: 4,
              leaseMs: 1_000_000,
              now
            })
            idle = taken.length === 0 ? idle + 1 : 0
            for (const claim of taken) {
              claimed.push(claim.executionId)
              yield* queue.release({
                executionId: claim.executionId,
                workerId: "w",
                release: { _tag: "Finished", status: "succeeded" },
                now
              })
            }
          }
        })
        yield* Effect.all([...Array.from({ length: writers }, (_, w) => writer(w)), claimer, claimer], {
          concurrency: "unbounded"
        })
        expect(new Set(claimed).size).toBe(claimed.length)
        expect([...claimed].sort()).toEqual([...ids].sort())
      })
  )
})

layer(TestDatabase.layer, { timeout: 120_000, excludeTestServices: true })(
  "SqlExecutionQueue scan floors on a queue migrated before them",
  (it) => {
    it.effect("an existing queue with rows upgrades: its floors start at its earliest live row", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const {
          "7_scan_floors": _added,
          "8_holders_by_execution": _later,
          "9_search_indexes": _search,
          "10_tenants": _tenants,
          "11_executions_archive": _latest,
          ...before
        } = ExecutionQueueMigrations.migrations
        yield* Migrator.make({})({
          loader: Migrator.fromRecord(before),
          table: ExecutionQueueMigrations.table
        })
        yield* fillHistory
        yield* sql`
          INSERT INTO tillflow_executions (execution_id, workflow_name, status, due_at, created_at, updated_at)
          VALUES ('old-live', 'Sale', 'pending', 5000, 5000, 5000)`
        expect(yield* ExecutionQueueMigrations.run).toEqual([
          [7, "scan_floors"],
          [8, "holders_by_execution"],
          [9, "search_indexes"],
          [10, "tenants"],
          [11, "executions_archive"]
        ])
        expect((yield* floors).due).toBe(5000)
        const claimed = yield* Effect.scoped(
          Effect.flatMap(SqlExecutionQueue.make, (queue) =>
            queue.claim({ workerId: "w", workflowNames: ["Sale"], limit: 8, leaseMs: 30_000, now: 6000 })
          )
        )
        expect(claimed.map((claim) => claim.executionId)).toEqual(["old-live"])
      })
    )
  }
)
