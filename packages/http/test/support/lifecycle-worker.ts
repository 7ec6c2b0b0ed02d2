/**
 * A worker process for the lifecycle tests: tillflow's engine on PostgreSQL (event store
 * and execution queue), the lifecycle workflows, the HTTP client to the simulator, and one
 * `EngineWorker` running one execution at a time. Configured by the environment the test
 * gives it (DATABASE_URL, SIM_BASE_URL, SIM_TRANSACTIONS_URL, SIM_API_KEY, WORKER_ID);
 * prints `ready` once it is claiming work, and runs until killed.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Lifecycles } from "@tillflow/core"
import { DurableEngine, EngineWorker } from "@tillflow/engine"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { PgEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const main = Effect.gen(function* () {
  const url = yield* Config.redacted("DATABASE_URL")
  const workerId = yield* Config.string("WORKER_ID")
  const cloud = HttpTerminalCloud.layer(
    TerminalCloudConfig.make({
      apiKey: yield* Config.redacted("SIM_API_KEY"),
      baseUrl: yield* Config.url("SIM_BASE_URL"),
      transactionsUrl: yield* Config.url("SIM_TRANSACTIONS_URL")
    })
  )
  const app = Layer.mergeAll(
    Lifecycles.layer,
    EngineWorker.layer({ workerId, concurrency: 1, lease: "5 seconds", pollInterval: "100 millis" })
  ).pipe(
    Layer.provideMerge(cloud),
    Layer.provideMerge(DurableEngine.layer({ pollInterval: "50 millis" })),
    Layer.provideMerge(SqlExecutionQueue.layer),
    Layer.provideMerge(PgEventStore.layer({ url, maxConnections: 4, applicationName: workerId }))
  )
  const ready = Effect.sync(() => process.stdout.write("ready\n"))
  return yield* Layer.launch(app.pipe(Layer.tap(() => ready)))
})

NodeRuntime.runMain(main)
