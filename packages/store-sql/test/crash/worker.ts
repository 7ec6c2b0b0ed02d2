/**
 * A worker process for the multi-process tests, run with `npx tsx`: the engine and one
 * worker over the PostgreSQL of DATABASE_URL, with short leases so a killed worker's
 * executions are taken over quickly. Prints `READY <workerId> pid <pid>` once it claims work and,
 * on SIGTERM, `DRAINED <workerId>` once its worker stopped gracefully (runs finished or
 * claims given back), then exits. SIGKILL is the crash under test.
 *
 * Environment: DATABASE_URL, WORKER_ID, HOLD=1 (stop at CrashFlow's hold points),
 * LOG_LEVEL=debug.
 */
import { DurableEngine, EngineWorker } from "@tillflow/engine"
import { PgEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import { crashFlowLayer, sharedLayer } from "./CrashWorkflows.js"

const url = process.env["DATABASE_URL"] ?? ""
const workerId = process.env["WORKER_ID"] ?? `worker-${process.pid}`
const hold = process.env["HOLD"] === "1"

const say = (line: string) =>
  new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()))

// Released right after the worker (it is merged beside it): the worker has drained.
const drained = Layer.scopedDiscard(
  Effect.addFinalizer(() => Effect.promise(() => say(`DRAINED ${workerId}`)))
)

const Stores = SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(
  Layer.provideMerge(
    PgEventStore.layer({ url: Redacted.make(url), maxConnections: 6, applicationName: workerId })
  )
)
const Node = Layer.mergeAll(
  crashFlowLayer({ hold, workerId }),
  sharedLayer({ workerId }),
  EngineWorker.layer({
    workerId,
    concurrency: 4,
    lease: "1500 millis",
    heartbeat: "300 millis",
    pollInterval: "100 millis",
    shutdownTimeout: "5 seconds"
  })
).pipe(
  Layer.provideMerge(Layer.merge(DurableEngine.layer({ pollInterval: "100 millis" }), drained)),
  Layer.provideMerge(Stores)
)

const main = Effect.scoped(
  Effect.gen(function* () {
    yield* Layer.build(Node)
    yield* Effect.promise(() => say(`READY ${workerId} pid ${process.pid}`))
    return yield* Effect.never
  })
)

const fiber = Effect.runFork(
  main.pipe(Logger.withMinimumLogLevel(process.env["LOG_LEVEL"] === "debug" ? LogLevel.Debug : LogLevel.Info))
)
process.on("SIGTERM", () => {
  fiber.unsafeInterruptAsFork(fiber.id())
  // The infrastructure's own teardown (pool, LISTEN) gets a few seconds, then we leave.
  setTimeout(() => process.exit(0), 3_000).unref()
})
fiber.addObserver((exit) => {
  const graceful = exit._tag === "Success" || Cause.isInterruptedOnly(exit.cause)
  if (!graceful && exit._tag === "Failure") process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
  process.exit(graceful ? 0 : 1)
})
