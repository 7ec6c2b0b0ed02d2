/**
 * A worker process for the capture race: tillflow's engine on PostgreSQL with the
 * workflows a worker registers (`Stack.workflowsLayerFor`: the payment protocol under the
 * lifecycles' money rules, and the terminal-less lifecycles), the HTTP client to a shared
 * simulator. Configured by the environment the test gives it (DATABASE_URL, SIM_BASE_URL,
 * SIM_TRANSACTIONS_URL, SIM_API_KEY, WORKER_ID); prints `ready` once it claims work, and
 * runs until killed.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ProtocolSettings } from "@tillflow/core"
import { DurableEngine, EngineWorker } from "@tillflow/engine"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { Stack } from "@tillflow/intake"
import { PgEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

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
  const store = PgEventStore.layer({ url, maxConnections: 4, applicationName: workerId })
  const app = Layer.mergeAll(
    Stack.workflowsLayerFor({ mcc: Option.some("7011"), motoTerminal: Option.none() }),
    EngineWorker.layer({ workerId, lease: "2 seconds", pollInterval: "100 millis" })
  ).pipe(
    Layer.provideMerge(cloud),
    Layer.provideMerge(ProtocolSettings.layer({ pollInterval: Duration.millis(250) })),
    Layer.provideMerge(DurableEngine.layer({ pollInterval: "100 millis" })),
    Layer.provideMerge(SqlExecutionQueue.layer),
    Layer.provideMerge(store)
  )
  const ready = Effect.sync(() => process.stdout.write("ready\n"))
  return yield* Layer.launch(app.pipe(Layer.tap(() => ready)))
})

NodeRuntime.runMain(main)
