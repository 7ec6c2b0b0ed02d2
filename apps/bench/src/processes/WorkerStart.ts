/**
 * The worker's cold start for the cold-start benchmark, in a fresh process: the worker's
 * layers on the embedded store in DATA_DIR — PGlite event store with its migrations, SQL
 * execution queue, durable engine, payment protocol, HTTP client (no connection made at
 * start), callback receiver listening on a loopback port, engine worker. Prints
 * `{"ready": {"bootMs", "loadedMs", "readyMs"}}` (milliseconds since the process
 * started: module evaluation began, modules loaded, everything up).
 */
import { evaluatedAt } from "../internal/StartMark.js"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { CallbackHttp, CallbackReceiver } from "@tillflow/callback"
import { DurableEngine, EngineWorker, PaymentProtocol, ProtocolSettings } from "@tillflow/core"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { PgliteEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:http"
import { performance } from "node:perf_hooks"
import * as Child from "../internal/Child.js"

const loadedMs = performance.now()
const dataDir = process.env["DATA_DIR"] ?? "memory://"

const worker = async () => {
  const app = Layer.mergeAll(
    PaymentProtocol.layer,
    EngineWorker.layer({ workerId: "cold-start" }),
    HttpServer.serve(CallbackHttp.app).pipe(Layer.provide(CallbackReceiver.layer))
  ).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(
      ProtocolSettings.layer({ callbackBaseUrl: Option.some("http://127.0.0.1/callbacks") })
    ),
    Layer.provideMerge(
      HttpTerminalCloud.layer(
        TerminalCloudConfig.make({
          apiKey: Redacted.make("cold-start-key"),
          baseUrl: new URL("http://127.0.0.1:9/"),
          transactionsUrl: new URL("http://127.0.0.1:9/")
        })
      )
    ),
    Layer.provideMerge(DurableEngine.layer()),
    Layer.provideMerge(SqlExecutionQueue.layer),
    Layer.provideMerge(PgliteEventStore.layer({ dataDir })),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )
  const runtime = ManagedRuntime.make(app)
  await runtime.runPromise(Effect.void)
  return () => runtime.dispose()
}

worker()
  .then(async (close) => {
    Child.tell({ ready: { bootMs: evaluatedAt, loadedMs, readyMs: performance.now() } })
    await close()
    process.exit(0)
  })
  .catch((error: unknown) => {
    process.stderr.write(`cold start failed: ${String(error)}\n`)
    process.exit(1)
  })
