/**
 * Crash and sharing tests with real worker processes (`test/crash/worker.ts`, spawned with
 * `npx tsx`) on a fresh PostgreSQL database. The test process only starts executions and
 * reads the database; the workers run them. A worker is killed with SIGKILL while its
 * executions sit at different points (inside an activity whose effect is done but not yet
 * recorded, right after a recorded activity, asleep on a durable clock); another worker
 * finishes them, and the side-effect tables show each idempotent effect exactly once and
 * the non-idempotent one at most once. Then two, then four workers share a batch.
 *
 * Needs PostgreSQL (DATABASE_URL): PGlite lives inside one process, so without it the
 * tests are skipped with a warning.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as SqlClient from "@effect/sql/SqlClient"
import { afterAll, describe, expect, layer, test } from "@effect/vitest"
import { DurableEngine, EngineEvent, EventStore, ExecutionQueue } from "@tillflow/engine"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createTables, CrashFlow, holdPoints, Shared } from "./crash/CrashWorkflows.js"

const workerScript = fileURLToPath(new URL("./crash/worker.ts", import.meta.url))

interface WorkerProcess {
  readonly id: string
  readonly child: ChildProcess
  readonly output: () => string
}

const workers: Array<WorkerProcess> = []

/** Registers the suite's tests as skipped (same shape as `layer(...)`). */
const describeSkipped = (name: string, body: (it: { readonly effect: typeof skippedTest }) => void) =>
  describe.skip(name, () => body({ effect: skippedTest }))
const skippedTest = (name: string, _test: () => unknown, _timeout?: number) => test.skip(name, () => {})

// Whatever happens to the tests, no worker process outlives them.
afterAll(() => {
  for (const worker of workers) {
    if (worker.child.pid !== undefined && worker.child.exitCode === null) {
      try {
        process.kill(-worker.child.pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  }
})

/** Spawns a worker process (its own process group, so a kill reaches tsx's node child). */
const spawnWorker = (url: string, id: string, env: Record<string, string> = {}) =>
  Effect.sync((): WorkerProcess => {
    let output = ""
    const child = spawn("npx", ["--no-install", "tsx", "--conditions=@tillflow/source", workerScript], {
      env: { ...process.env, DATABASE_URL: url, WORKER_ID: id, LOG_LEVEL: "debug", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    child.stdout?.on("data", (chunk: Buffer) => void (output += chunk.toString()))
    child.stderr?.on("data", (chunk: Buffer) => void (output += chunk.toString()))
    const worker = { id, child, output: () => output }
    workers.push(worker)
    return worker
  })

/** SIGKILL goes to the whole process group (npx, tsx and the worker's node) at once. */
const kill = (worker: WorkerProcess) =>
  Effect.sync(() => {
    if (worker.child.pid !== undefined && worker.child.exitCode === null) {
      try {
        process.kill(-worker.child.pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  })

/**
 * SIGTERM goes to the worker's own node process only (the pid it printed): npx and tsx
 * react to a group-wide SIGTERM in their own ways, and the test is about the worker's.
 */
const terminate = (worker: WorkerProcess) =>
  Effect.sync(() => {
    const pid = /READY \S+ pid (\d+)/.exec(worker.output())?.[1]
    if (pid !== undefined) process.kill(Number(pid), "SIGTERM")
  })

const exited = (worker: WorkerProcess) =>
  Effect.async<void>((resume) => {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resume(Effect.void)
    worker.child.once("exit", () => resume(Effect.void))
  })

/** Polls `check` every 50 ms until it returns a value, failing after `seconds`. */
const eventually = <A, E, R>(what: string, seconds: number, check: Effect.Effect<A | undefined, E, R>) =>
  Effect.gen(function* () {
    const deadline = Date.now() + seconds * 1_000
    while (Date.now() < deadline) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.dieMessage(
      `timed out after ${seconds} s waiting for ${what}\n${workers.map((w) => `--- ${w.id}\n${w.output()}`).join("\n")}`
    )
  })

const waitForLine = (worker: WorkerProcess, line: string, seconds = 40) =>
  eventually(
    `"${line}" from ${worker.id}`,
    seconds,
    Effect.sync(() => (worker.output().includes(line) ? true : undefined))
  )

const count = (query: Effect.Effect<ReadonlyArray<Record<string, unknown>>, unknown, SqlClient.SqlClient>) =>
  Effect.map(Effect.orDie(query), (rows) => Number(rows[0]?.["n"] ?? -1))

// The client: an engine without a worker, over the test's database, to start executions.
const Client = DurableEngine.layer({ pollInterval: "100 millis" }).pipe(
  Layer.provideMerge(SqlExecutionQueue.layerWith({ streamVersions: true })),
  Layer.provideMerge(TestDatabase.layer)
)

// PGlite lives inside one process: without PostgreSQL these tests are reported as skipped,
// except where TILLFLOW_REQUIRE_POSTGRES=1 (CI): there they run, and fail without a server.
const hasPostgres = TestDatabase.postgresExpected
const suite = hasPostgres ? layer(Client, { timeout: 120_000, excludeTestServices: true }) : describeSkipped

// Real time throughout: the workers are other processes with real clocks.
suite("worker processes on one PostgreSQL (skipped without DATABASE_URL)", (it) => {
  const databaseUrl = Effect.gen(function* () {
    const database = yield* TestDatabase.TestDatabase
    if (database.kind !== "postgres" || Option.isNone(database.url)) {
      return yield* Effect.dieMessage("the crash tests need the PostgreSQL of DATABASE_URL")
    }
    return Redacted.value(database.url.value)
  })

  it.effect(
    "executions of a worker killed with SIGKILL complete on another worker: idempotent effects once, the other at most once",
    () =>
      Effect.gen(function* () {
        const url = yield* databaseUrl
        yield* createTables
        const sql = yield* SqlClient.SqlClient
        const doomed = yield* spawnWorker(url, "doomed", { HOLD: "1" })
        yield* waitForLine(doomed, "READY doomed")

        // Three executions stop inside or between activities; a fourth, started once they
        // are in place, goes to sleep on a 6 s durable clock.
        const queue = yield* ExecutionQueue.ExecutionQueue
        const start = (holdAt: string, sleepMillis: number) =>
          Effect.map(
            CrashFlow.execute({ id: `crash-${holdAt}`, holdAt, sleepMillis }, { discard: true }),
            (executionId) => ({ holdAt, sleepMillis, executionId })
          )
        const held = yield* Effect.forEach(holdPoints, (holdAt) => start(holdAt, 500))
        for (const { executionId, holdAt } of held) {
          yield* waitForLine(doomed, `REACHED ${holdAt} ${executionId}`)
        }
        const sleeper = yield* start("sleeping", 6_000)
        yield* eventually(
          "the sleeper to be suspended on its clock",
          30,
          Effect.map(queue.get(sleeper.executionId), (info) =>
            Option.isSome(info) && info.value.status === "suspended" ? true : undefined
          )
        )
        const started = [...held, sleeper]

        // The crash: no graceful shutdown, no lease released.
        yield* kill(doomed)
        yield* exited(doomed)
        const stranded = yield* queue.list({ workflowName: "CrashFlow", status: "running" })
        expect(stranded.map((info) => info.leaseOwner)).toEqual(["doomed", "doomed", "doomed"])

        yield* spawnWorker(url, "rescuer")
        yield* eventually(
          "every CrashFlow execution to succeed",
          60,
          Effect.map(queue.list({ workflowName: "CrashFlow", status: "succeeded" }), (done) =>
            done.length === started.length ? true : undefined
          )
        )
        const store = yield* EventStore.EventStore
        for (const { executionId, holdAt, sleepMillis } of started) {
          // Each charge happened exactly once, whatever the number of runs of its activity.
          expect(yield* count(sql`SELECT count(*) AS n FROM charges WHERE key = ${executionId}`)).toBe(1)
          const chargeRuns = yield* count(
            sql`SELECT count(*) AS n FROM activity_runs WHERE execution_id = ${executionId} AND activity = 'Charge'`
          )
          expect(chargeRuns).toBe(holdAt === "charge-before-record" ? 2 : 1)
          // The notification was sent at most once: once here, since every run got that far.
          expect(
            yield* count(sql`SELECT count(*) AS n FROM notifications WHERE execution_id = ${executionId}`)
          ).toBe(1)
          const result = yield* CrashFlow.execute({ id: `crash-${holdAt}`, holdAt, sleepMillis })
          expect(result).toBe(holdAt === "notify-before-record" ? "unknown" : "sent")
          const events = yield* store.readStream(EngineEvent.streamId(executionId))
          const recorded = events.flatMap((event) => {
            const decoded = EngineEvent.fromStored(event)
            return Option.isSome(decoded) &&
              decoded.value._tag === "Right" &&
              decoded.value.right._tag === "ActivityCompleted"
              ? [decoded.value.right.name]
              : []
          })
          expect(recorded).toEqual(["Charge", "Announce", "Notify"])
          // The clock fired no earlier than it was set for, after the crash for the sleeper.
          const scheduled = events.find((event) => event.type === "ClockScheduled")
          const fired = events.find((event) => event.type === "ClockFired")
          const fireAt = Schema.decodeUnknownSync(Schema.Struct({ fireAt: Schema.Number }))(
            scheduled?.data
          ).fireAt
          expect(fired?.recordedAt.epochMillis ?? 0).toBeGreaterThanOrEqual(fireAt)
        }
        const charged = yield* count(sql`SELECT count(*) AS n FROM charges`)
        expect(charged).toBe(started.length)
      }),
    90_000
  )

  const shareBatch = (prefix: string, size: number, expectedWorkers: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* ExecutionQueue.ExecutionQueue
      const ids = yield* Effect.forEach(
        Array.from({ length: size }, (_, index) => `${prefix}-${index}`),
        (id) => Shared.execute({ id }, { discard: true }),
        { concurrency: 8 }
      )
      yield* eventually(
        `${size} Shared executions to succeed`,
        60,
        Effect.map(queue.list({ workflowName: "Shared", status: "succeeded" }), (done) =>
          ids.every((id) => done.some((info) => info.executionId === id)) ? true : undefined
        )
      )
      const inBatch = sql`execution_id IN ${sql.in(ids)}`
      // No activity body ran twice: one run per step, three steps per execution.
      expect(yield* count(sql`SELECT count(*) AS n FROM activity_runs WHERE ${inBatch}`)).toBe(size * 3)
      expect(
        yield* count(
          sql`SELECT count(*) AS n FROM (SELECT DISTINCT execution_id, activity FROM activity_runs WHERE ${inBatch}) d`
        )
      ).toBe(size * 3)
      const workersSeen = yield* Effect.orDie(
        sql<{
          readonly worker: string
        }>`SELECT DISTINCT worker FROM activity_runs WHERE ${inBatch} ORDER BY worker`
      )
      expect(workersSeen.map((row) => row.worker)).toEqual([...expectedWorkers].sort())
      const store = yield* EventStore.EventStore
      for (const id of ids) {
        const types = (yield* store.readStream(EngineEvent.streamId(id))).map((event) => event.type)
        expect(types).toEqual([
          "WorkflowStarted",
          "ActivityCompleted",
          "ActivityCompleted",
          "ActivityCompleted",
          "WorkflowCompleted"
        ])
      }
    })

  it.effect(
    "two worker processes share a batch without running any execution twice",
    () =>
      Effect.gen(function* () {
        const url = yield* databaseUrl
        const second = yield* spawnWorker(url, "second")
        yield* waitForLine(second, "READY second")
        yield* shareBatch("pair", 24, ["rescuer", "second"])
      }),
    90_000
  )

  it.effect(
    "four worker processes share a batch without running any execution twice",
    () =>
      Effect.gen(function* () {
        const url = yield* databaseUrl
        const more = yield* Effect.all([spawnWorker(url, "third"), spawnWorker(url, "fourth")])
        yield* Effect.forEach(more, (worker) => waitForLine(worker, `READY ${worker.id}`))
        yield* shareBatch("quad", 40, ["rescuer", "second", "third", "fourth"])
      }),
    90_000
  )

  it.effect(
    "a worker stopped with SIGTERM shuts down gracefully",
    () =>
      Effect.gen(function* () {
        const queue = yield* ExecutionQueue.ExecutionQueue
        const running = workers.filter((worker) => worker.id !== "doomed")
        yield* Effect.forEach(running, terminate)
        // Each worker process says when its worker stopped (runs finished or claims given
        // back), then exits.
        yield* Effect.forEach(running, (worker) => waitForLine(worker, `DRAINED ${worker.id}`, 20))
        yield* Effect.forEach(running, exited)
        // Nothing is left claimed by a stopped worker.
        expect(yield* queue.list({ status: "running" })).toEqual([])
      }),
    90_000
  )
})
