/**
 * The queue's cost does not follow the history it stores: the claim and the due-time
 * look-ups read live executions through the partial indexes of live rows, never through
 * `tillflow_executions_by_workflow`, whose entries cover every version of every execution
 * ever stored. Checked on the plans PostgreSQL makes for the queue's own statements, over
 * a table holding 20,000 completed executions (each gone through three updates, as a run
 * does) and never vacuumed nor analysed (as with autovacuum off), beside a few live ones.
 * The same for the keys: finishing an execution frees its key through an index on the
 * holder's execution, not by scanning `tillflow_concurrency_holders`, whose heap keeps a dead
 * row for every key ever taken and freed (issue 29).
 * The speed itself is measured by the benchmark (docs/performance.md), never here.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { ExecutionQueue } from "@tillflow/engine"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Statements from "../src/internal/executionQueue/Statements.js"
import * as QueueHistory from "./QueueHistory.js"

const { now } = QueueHistory
const fillHistory = QueueHistory.fill({ startBy: false })

const plan = (statement: ReturnType<typeof Statements.nextDueAt> | ReturnType<typeof Statements.release>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly line: string }>`EXPLAIN ${statement}`.pipe(
      Effect.map((rows) => rows.map((row) => Object.values(row).join(" ")))
    )
    return rows.join("\n")
  })

layer(SqlExecutionQueue.layer.pipe(Layer.provideMerge(TestDatabase.layer)), {
  timeout: 120_000,
  excludeTestServices: true
})("SqlExecutionQueue with a long history", (it) => {
  it.effect(
    "the claim and the due-time look-ups read live rows through their partial indexes, not the whole history",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const queue = yield* ExecutionQueue.ExecutionQueue
        yield* fillHistory
        for (let i = 0; i < 5; i++) {
          yield* queue.enqueue({
            executionId: `live-${i}`,
            workflowName: "Sale",
            concurrencyKey: undefined,
            parentId: undefined,
            attributes: {},
            stream: undefined,
            now: now + i
          })
        }
        const claimOptions = {
          workerId: "w",
          workflowNames: ["Sale"],
          limit: 8,
          leaseMs: 30_000,
          now: now + 10
        }
        const plans = [
          yield* plan(Statements.nextDueAfter(sql, ["Sale"], now)),
          yield* plan(Statements.nextDueAt(sql, ["Sale"])),
          yield* plan(
            Statements.claim(sql, claimOptions, now + 40_000, Statements.streamVersionColumn(sql, false))
          )
        ]
        for (const text of plans) {
          expect(text).not.toContain("tillflow_executions_by_workflow")
          expect(text).toMatch(/tillflow_executions_due_(new|started)/)
        }
        // And the statements still answer what they answered: the live ones, oldest first.
        const claimed = yield* queue.claim(claimOptions)
        expect(claimed.map((claim) => claim.executionId)).toEqual([0, 1, 2, 3, 4].map((i) => `live-${i}`))
      })
  )

  it.effect("finishing an execution frees its key through an index, not a scan of every key ever taken", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* ExecutionQueue.ExecutionQueue
      // 40 rounds of 500 terminals' keys taken and freed: 20,000 dead rows, as many payments leave.
      yield* sql`
          DO $$ BEGIN
            FOR i IN 1..40 LOOP
              INSERT INTO tillflow_concurrency_holders (concurrency_key, execution_id)
                SELECT 'terminal:' || k, 'done-' || i || '-' || k FROM generate_series(1, 500) AS k;
              DELETE FROM tillflow_concurrency_holders WHERE concurrency_key LIKE 'terminal:%';
            END LOOP;
          END $$`
      yield* queue.enqueue({
        executionId: "keyed",
        workflowName: "Sale",
        concurrencyKey: "terminal:7",
        parentId: undefined,
        attributes: {},
        stream: undefined,
        now
      })
      const [claimed] = yield* queue.claim({
        workerId: "w",
        workflowNames: ["Sale"],
        limit: 1,
        leaseMs: 30_000,
        now
      })
      expect(claimed?.executionId).toBe("keyed")
      const release = {
        executionId: "keyed",
        workerId: "w",
        now: now + 1,
        release: { _tag: "Finished", status: "succeeded" } as const
      }
      const entries = JSON.stringify([
        {
          entry: 0,
          execution_id: "keyed",
          op: "release",
          now: now + 1,
          worker_id: "w",
          outcome: "Finished",
          finished: "succeeded"
        }
      ])
      for (const text of [
        yield* plan(Statements.release(sql, release)),
        yield* plan(Statements.transitionMany(sql, entries))
      ]) {
        expect(text).not.toMatch(/Seq Scan on tillflow_concurrency_holders/)
      }
      // And the key is freed with the finish.
      yield* queue.release(release)
      const held = yield* sql<{
        readonly n: string
      }>`SELECT count(*)::text AS n FROM tillflow_concurrency_holders`
      expect(held[0]?.n).toBe("0")
    })
  )
})
