/**
 * tillflow's process of the peer section: the durable engine, the SQL execution queue and
 * a worker (concurrency 64) on the PostgreSQL event store of DATABASE_URL (pool of
 * POOL_SIZE connections, 10 by default as DBOS's), running the peer workflow
 * (`internal/PeerWorkflow.ts`: its steps with `DurableStep`, or with `Activity.make` when
 * PEER_STEP=activity); driven as `internal/PeerDrive.ts` says.
 */
import "../internal/StatementCount.js"
import { DurableEngine, EngineWorker } from "@tillflow/engine"
import { PgEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as PeerDrive from "../internal/PeerDrive.js"
import * as PeerWorkflow from "../internal/PeerWorkflow.js"

const url = process.env["DATABASE_URL"] ?? ""
const pool = Number(process.env["POOL_SIZE"] ?? "10")

const app = Layer.mergeAll(
  EngineWorker.layer({ workerId: "bench-peer", concurrency: 64, pollInterval: "50 millis" }),
  process.env["PEER_STEP"] === "activity" ? PeerWorkflow.tillflowActivityLayer : PeerWorkflow.tillflowLayer
).pipe(
  Layer.provideMerge(DurableEngine.layer({ pollInterval: "50 millis" })),
  Layer.provideMerge(SqlExecutionQueue.layerWith({ streamVersions: true })),
  Layer.provideMerge(
    PgEventStore.layer({ url: Redacted.make(url), maxConnections: pool, applicationName: "bench-peer" })
  ),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const runtime = ManagedRuntime.make(app)

runtime
  .runPromise(DurableEngine.DurableEngine)
  .then(() => PeerDrive.serve((id) => runtime.runPromise(PeerWorkflow.Tillflow.execute({ id }))))
  .catch((error: unknown) => {
    process.stderr.write(`tillflow peer process failed to start: ${String(error)}\n`)
    process.exit(1)
  })

const stop = () => {
  runtime.dispose().finally(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
