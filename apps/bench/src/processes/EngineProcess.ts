/**
 * A worker process of the engine benchmark: tillflow's engine on the PostgreSQL of
 * DATABASE_URL with a worker (concurrency 8) for the steps workflows named in WORKFLOWS.
 * On `{"drive": {workflow, executions, inFlight, steps, prefix}}` it runs that many
 * executions, `inFlight` at a time, each started here and awaited, and answers
 * `{"driven": {executions, steps, seconds, cpuMs}}` (this process's CPU time meanwhile). Prints `{"ready": true}` once started.
 */
import { DurableEngine, EngineWorker } from "@tillflow/engine"
import { PgEventStore, SqlExecutionQueue } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { performance } from "node:perf_hooks"
import * as Child from "../internal/Child.js"
import * as StepsWorkflow from "../internal/StepsWorkflow.js"

interface Drive {
  readonly workflow: string
  readonly executions: number
  readonly inFlight: number
  readonly steps: number
  readonly prefix: string
}

const names = (process.env["WORKFLOWS"] ?? "").split(",")
const workflows = [StepsWorkflow.Single, StepsWorkflow.Shared].filter((w) => names.includes(w.name))
const url = process.env["DATABASE_URL"] ?? ""
const workerId = process.env["WORKER_ID"] ?? "bench-engine"

const app = Layer.mergeAll(
  EngineWorker.layer({ workerId, concurrency: 8, pollInterval: "50 millis" }),
  ...workflows.map(StepsWorkflow.layer)
).pipe(
  Layer.provideMerge(DurableEngine.layer({ pollInterval: "50 millis" })),
  Layer.provideMerge(SqlExecutionQueue.layerWith({ streamVersions: true })),
  Layer.provideMerge(
    PgEventStore.layer({ url: Redacted.make(url), maxConnections: 8, applicationName: workerId })
  ),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const runtime = ManagedRuntime.make(app)

const drive = (command: Drive) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const workflow = workflows.find((w) => w.name === command.workflow)
      if (workflow === undefined)
        return yield* Effect.dieMessage(`${command.workflow} is not registered here`)
      const started = performance.now()
      const cpu = process.cpuUsage()
      yield* Effect.forEach(
        Array.from({ length: command.executions }, (_, i) => i),
        (i) => workflow.execute({ id: `${command.prefix}-${i}`, steps: command.steps }),
        { concurrency: command.inFlight, discard: true }
      )
      return {
        executions: command.executions,
        steps: command.executions * command.steps,
        seconds: (performance.now() - started) / 1000,
        cpuMs: ((used) => (used.user + used.system) / 1000)(process.cpuUsage(cpu))
      }
    })
  )

runtime
  .runPromise(Effect.void)
  .then(() => {
    Child.tell({ ready: true })
    Child.onCommand((command) => {
      const body = Child.field<Drive>("drive")(command)
      if (body === undefined) return
      drive(body).then(
        (driven) => Child.tell({ driven }),
        (error: unknown) => Child.tell({ failed: String(error) })
      )
    })
  })
  .catch((error: unknown) => {
    process.stderr.write(`engine process failed to start: ${String(error)}\n`)
    process.exit(1)
  })

const stop = () => {
  runtime.dispose().finally(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
