/**
 * The execution queue and its history: what a claim, a due-time look-up and a heartbeat
 * cost with 10k and with 1M completed executions stored in `tillflow_executions`, never
 * vacuumed nor analysed (autovacuum is off on the machine, and a hot path must not rely
 * on it). Each size in its own fresh database, the table made by the queue's migrations,
 * the history written in SQL as runs leave it (each completed execution enqueued, claimed,
 * suspended and finished: three dead row versions and their index entries). The measured
 * cycles go through the SQL queue itself, interleaved between the two databases.
 */
import { ExecutionQueue } from "@tillflow/engine"
import { PgEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { performance } from "node:perf_hooks"
import pg from "pg"
import * as Measure from "./internal/Measure.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

const workflow = "BenchQueueSale"
const leaseMs = 30_000

const fill = async (url: string, completed: number): Promise<number> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const started = performance.now()
  try {
    await client.query(
      `INSERT INTO tillflow_executions (execution_id, workflow_name, status, due_at, concurrency_key, created_at, updated_at)
       SELECT 'done-' || g, $1, 'pending', 1000 + g, 'terminal:' || (g % 1000), 1000 + g, 1000 + g
       FROM generate_series(1, $2::int) g`,
      [workflow, completed]
    )
    await client.query(
      "UPDATE tillflow_executions SET status = 'running', claims = 1, due_at = due_at + 30000, updated_at = updated_at + 1"
    )
    await client.query(
      "UPDATE tillflow_executions SET status = 'suspended', due_at = due_at + 60000, updated_at = updated_at + 2"
    )
    await client.query(
      "UPDATE tillflow_executions SET status = 'succeeded', due_at = NULL, updated_at = updated_at + 3"
    )
  } finally {
    await client.end()
  }
  return (performance.now() - started) / 1000
}

interface Costs {
  readonly enqueueMs: number
  readonly claimMs: number
  readonly nextDueMs: number
  readonly heartbeatMs: number
  readonly releaseMs: number
}

/** One round: 64 executions enqueued, claimed 8 at a time, heartbeat, finished; mean ms per call. */
const cycle = (
  runtime: ManagedRuntime.ManagedRuntime<ExecutionQueue.ExecutionQueue, unknown>,
  round: string
) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const queue = yield* ExecutionQueue.ExecutionQueue
      const claimWithNextDue = queue.claimWithNextDue
      if (claimWithNextDue === undefined)
        return yield* Effect.dieMessage("the SQL queue answers claimWithNextDue")
      const now = Date.now()
      const timed = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.timed(effect), ([duration, value]) => [Duration.toMillis(duration), value] as const)
      let enqueueMs = 0
      for (let i = 0; i < 64; i++) {
        const [ms] = yield* timed(
          queue.enqueue({
            executionId: `live-${round}-${i}`,
            workflowName: workflow,
            concurrencyKey: undefined,
            parentId: undefined,
            attributes: {},
            stream: undefined,
            now
          })
        )
        enqueueMs += ms
      }
      let claimMs = 0
      let claims = 0
      let heartbeatMs = 0
      const held: Array<string> = []
      while (held.length < 64 && claims < 100) {
        const [ms, result] = yield* timed(
          claimWithNextDue({ workerId: "bench", workflowNames: [workflow], limit: 8, leaseMs, now })
        )
        claimMs += ms
        claims++
        held.push(...result.claims.map((claim) => claim.executionId))
      }
      // Eight heartbeats of the 64 leases: one call per round was too few to measure under load.
      for (let i = 0; i < 8; i++) {
        const [beatMs] = yield* timed(
          queue.heartbeat({ workerId: "bench", executionIds: held, now, leaseMs })
        )
        heartbeatMs += beatMs
      }
      let nextDueMs = 0
      for (let i = 0; i < 8; i++) nextDueMs += (yield* timed(queue.nextDueAt([workflow])))[0]
      let releaseMs = 0
      for (const executionId of held) {
        const [ms] = yield* timed(
          queue.release({
            executionId,
            workerId: "bench",
            release: { _tag: "Finished", status: "succeeded" },
            now
          })
        )
        releaseMs += ms
      }
      return {
        enqueueMs: enqueueMs / 64,
        claimMs: claimMs / claims,
        nextDueMs: nextDueMs / 8,
        heartbeatMs: heartbeatMs / 8,
        releaseMs: releaseMs / Math.max(1, held.length)
      } satisfies Costs
    })
  )

/** The section. */
export const section: Section.Section = {
  name: "queue",
  title: "Execution queue and history",
  run: (context) =>
    Scratch.using("queue_small", (small) =>
      Scratch.using("queue_large", async (large) => {
        const sizes = { small: 10_000, large: context.quick ? 100_000 : 1_000_000 }
        const runtimeOf = (url: string) =>
          ManagedRuntime.make(
            SqlExecutionQueue.layer.pipe(
              Layer.provide(
                PgEventStore.layer({
                  url: Redacted.make(url),
                  maxConnections: 2,
                  applicationName: "bench-queue"
                })
              )
            )
          )
        const runtimes = { small: runtimeOf(small.url), large: runtimeOf(large.url) }
        try {
          await Promise.all([runtimes.small.runPromise(Effect.void), runtimes.large.runPromise(Effect.void)])
          const filled = {
            small: await fill(small.url, sizes.small),
            large: await fill(large.url, sizes.large)
          }
          context.log(
            `queue: history written (${sizes.small} in ${filled.small.toFixed(1)} s, ${sizes.large} in ${filled.large.toFixed(1)} s)`
          )
          const kept: Record<"small" | "large", Array<Costs>> = { small: [], large: [] }
          await Measure.interleave(
            context.rounds,
            (["small", "large"] as const).map((size) => ({
              name: `${sizes[size].toLocaleString("en-US")} completed`,
              run: async (round: number) => {
                const costs = await cycle(runtimes[size], `${round}`)
                if (round < context.rounds) kept[size].push(costs)
                return costs.claimMs
              }
            })),
            context.log,
            { warmup: 1 }
          )
          const pick = (size: "small" | "large", key: keyof Costs) => kept[size].map((c) => c[key])
          const label = (n: number) => n.toLocaleString("en-US")
          const figures: Array<Measure.Figure> = [
            {
              section: "queue",
              name: `claim (8 at a time) with ${label(sizes.large)} completed executions stored`,
              unit: "ms",
              rounds: pick("large", "claimMs"),
              baseline: { name: `the same with ${label(sizes.small)}`, rounds: pick("small", "claimMs") },
              target: { _tag: "RatioAtMost", ratio: 1.2 }
            },
            {
              section: "queue",
              name: `next due time (nextDueAt) with ${label(sizes.large)} completed executions stored`,
              unit: "ms",
              rounds: pick("large", "nextDueMs"),
              baseline: { name: `the same with ${label(sizes.small)}`, rounds: pick("small", "nextDueMs") },
              target: { _tag: "RatioAtMost", ratio: 1.2 }
            },
            {
              section: "queue",
              name: `enqueue (one at a time) with ${label(sizes.large)} completed executions stored`,
              unit: "ms",
              rounds: pick("large", "enqueueMs"),
              baseline: { name: `the same with ${label(sizes.small)}`, rounds: pick("small", "enqueueMs") },
              target: { _tag: "RatioAtMost", ratio: 1.2 }
            },
            {
              section: "queue",
              name: `release as finished (one at a time) with ${label(sizes.large)} completed executions stored`,
              unit: "ms",
              rounds: pick("large", "releaseMs"),
              baseline: { name: `the same with ${label(sizes.small)}`, rounds: pick("small", "releaseMs") },
              target: { _tag: "RatioAtMost", ratio: 1.2 }
            },
            {
              section: "queue",
              name: `heartbeat of 64 leases with ${label(sizes.large)} completed executions stored`,
              unit: "ms",
              rounds: pick("large", "heartbeatMs"),
              baseline: { name: `the same with ${label(sizes.small)}`, rounds: pick("small", "heartbeatMs") },
              target: { _tag: "RatioAtMost", ratio: 1.2 }
            }
          ]
          const details = [
            `Per round and size: 64 executions enqueued one at a time, claimed through \`claimWithNextDue\` 8 at a time (the worker's ` +
              "claim, with its next-due part), 8 heartbeats of the 64 leases, 8 `nextDueAt` look-ups, then each released " +
              `finished one at a time; the figure is the mean time of one call, from this process (one pool of 2 connections per database). ` +
              `History written before the rounds in SQL (${label(sizes.small)} in ${filled.small.toFixed(1)} s, ` +
              `${label(sizes.large)} in ${filled.large.toFixed(1)} s): each completed execution inserted pending, then updated ` +
              "to running, suspended and succeeded, so each left three dead row versions and their index entries, as runs " +
              "do; neither database is vacuumed nor analysed (autovacuum off). The queue advances its scan floors after " +
              "claims, at most once a second, as in a worker (the first advance of the 1M database walks the history " +
              "once, in the warm-up round). One warm-up round.",
            "",
            Measure.roundsTable(figures)
          ].join("\n")
          return { figures, details }
        } finally {
          await Promise.all([runtimes.small.dispose(), runtimes.large.dispose()])
        }
      })
    )
}
