/**
 * Benchmark of the workflow engine (not a test): executions per second of a workflow of
 * N no-op activities, run by one worker and by several workers (in this process, sharing
 * one pool), next to the raw append rate of the event store measured in the same run on
 * the same database (one event per append with an expected version: the engine's write
 * pattern). An execution of N activities writes N + 2 events (started, N activities,
 * completed) and a handful of queue statements, so the ratio
 * "events/s through the engine ÷ raw appends/s" is the engine's overhead.
 *
 * Run: `npm run bench:engine` (DATABASE_URL defaults to postgres://postgres@127.0.0.1:5432/postgres;
 * ROUNDS=3, EXECUTIONS=200, ACTIVITIES=5, WORKERS=4). Prints a Markdown section for
 * docs/performance.md. Without a reachable PostgreSQL it measures PGlite only.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Activity, Workflow } from "@effect/workflow"
import { DurableEngine, EngineWorker, EventStore, ExecutionQueue } from "@tillflow/core"
import { PgEventStore, PgliteEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as os from "node:os"
import { performance } from "node:perf_hooks"
import pg from "pg"

const rounds = Number(process.env.ROUNDS ?? 3)
const executions = Number(process.env.EXECUTIONS ?? 200)
const activities = Number(process.env.ACTIVITIES ?? 5)
const severalWorkers = Number(process.env.WORKERS ?? 4)
const appends = Number(process.env.APPENDS ?? 500)
const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const Bench = Workflow.make({
  name: "Bench",
  payload: { id: Schema.String },
  success: Schema.Number,
  idempotencyKey: (payload) => payload.id
})

const BenchLive = Bench.toLayer(() =>
  Effect.gen(function* () {
    for (let i = 0; i < activities; i++) {
      yield* Activity.make({ name: `Step${i}`, success: Schema.Number, execute: Effect.succeed(i) })
    }
    return activities
  })
)

interface Result {
  readonly target: string
  readonly operation: string
  readonly unit: string
  readonly perRound: ReadonlyArray<number>
  readonly eventsPerUnit: number
}
const results: Array<Result> = []

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

type Stores = EventStore.EventStore | ExecutionQueue.ExecutionQueue | SqlClient.SqlClient

const benchTarget = async (target: string, stores: Layer.Layer<Stores, unknown>) => {
  const quiet = Logger.minimumLogLevel(LogLevel.Error)
  const base = ManagedRuntime.make(Layer.provide(stores, quiet))
  try {
    const context = await base.runtime().then((runtime) => runtime.context)
    const shared = Layer.succeedContext(context)

    // Raw appends through the port, one event per append with an expected version.
    const perRoundAppends: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const seconds = await base.runPromise(
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const started = performance.now()
          for (let i = 0; i < appends; i++) {
            yield* store.append(`raw-${round}`, EventStore.exactVersion(i), [
              {
                type: "ActivityCompleted",
                data: { seq: i, name: `Step${i}`, attempt: 1, exit: { _tag: "Success" } }
              }
            ])
          }
          return (performance.now() - started) / 1000
        })
      )
      perRoundAppends.push(appends / seconds)
      process.stderr.write(
        `${target} raw append round ${round}: ${Math.round(appends / seconds)} appends/s\n`
      )
    }
    results.push({
      target,
      operation: "store: append 1 event with expected version",
      unit: "appends/s",
      perRound: perRoundAppends,
      eventsPerUnit: 1
    })

    for (const workers of target.startsWith("PGlite") ? [1] : [1, severalWorkers]) {
      const perRound: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        // A node: the engine, the workflow and `workers` workers, torn down after the round.
        const node = Layer.mergeAll(
          BenchLive,
          ...Array.from({ length: workers }, (_, w) =>
            EngineWorker.layer({
              workerId: `bench-${workers}-${round}-${w}`,
              concurrency: 16,
              pollInterval: "1 second"
            })
          )
        ).pipe(
          Layer.provideMerge(DurableEngine.layer({ pollInterval: "10 seconds" })),
          Layer.provide(shared),
          Layer.provide(quiet)
        )
        const runtime = ManagedRuntime.make(node)
        try {
          await runtime.runPromise(Effect.void)
          const seconds = await runtime.runPromise(
            Effect.gen(function* () {
              const started = performance.now()
              yield* Effect.forEach(
                Array.from({ length: executions }, (_, i) => `w${workers}-r${round}-${i}`),
                (id) => Bench.execute({ id }),
                { concurrency: "unbounded", discard: true }
              )
              return (performance.now() - started) / 1000
            })
          )
          perRound.push(executions / seconds)
          process.stderr.write(
            `${target} ${workers} worker(s) round ${round}: ${Math.round(executions / seconds)} executions/s\n`
          )
        } finally {
          await runtime.dispose()
        }
      }
      results.push({
        target,
        operation: `engine: workflow of ${activities} no-op activities, ${workers} worker${workers > 1 ? "s" : ""}`,
        unit: "executions/s",
        perRound,
        eventsPerUnit: activities + 2
      })
    }
  } finally {
    await base.dispose()
  }
}

const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

const main = async () => {
  const admin = new pg.Client({ connectionString: adminUrl })
  let postgresVersion: string | undefined
  try {
    await admin.connect()
    const row = await admin.query<{ version: string }>("SELECT version()")
    postgresVersion = row.rows[0]?.version
  } catch {
    process.stderr.write("PostgreSQL unreachable: measuring PGlite only\n")
  }
  if (postgresVersion !== undefined) {
    const database = `tillflow_engine_bench_${Date.now()}`
    await admin.query(`CREATE DATABASE ${database}`)
    try {
      await benchTarget(
        "PostgreSQL",
        SqlExecutionQueue.layer.pipe(
          Layer.provideMerge(
            PgEventStore.layer({ url: Redacted.make(withDatabase(adminUrl, database)), maxConnections: 10 })
          )
        )
      )
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      await admin.end()
    }
  }
  await benchTarget("PGlite", SqlExecutionQueue.layer.pipe(Layer.provideMerge(PgliteEventStore.layer())))

  const cpus = os.cpus()
  const lines = [
    `Machine: ${cpus.length} CPUs (nproc) × ${cpus[0]?.model ?? "unknown"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `Node ${process.version}, ${postgresVersion?.split(",")[0] ?? "no PostgreSQL"} (local), PGlite in memory. ` +
      `${rounds} rounds; ${executions} executions of ${activities} no-op activities per round; median of the rounds.`,
    "",
    "| target | operation | median | rounds | events/s written | ÷ raw appends/s |",
    "|---|---|---:|---|---:|---:|"
  ]
  for (const result of results) {
    const raw = results.find((r) => r.target === result.target && r.unit === "appends/s")
    const rate = median(result.perRound)
    const events = rate * result.eventsPerUnit
    const ratio = raw === undefined || result === raw ? "" : (events / median(raw.perRound)).toFixed(2)
    lines.push(
      `| ${result.target} | ${result.operation} | ${Math.round(rate)} ${result.unit} | ${result.perRound
        .map((value) => Math.round(value))
        .join(", ")} | ${Math.round(events)} | ${ratio} |`
    )
  }
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
