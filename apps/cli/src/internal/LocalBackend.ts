/**
 * The `Intake` of a command that runs in this process (`Backend` when no worker is there):
 * the library on the configured store and remote service, with an engine worker of its own
 * while the command runs. Loaded by `Backend` only then (a dynamic import), so a command
 * that talks to a running worker never loads the store, PGlite, the HTTP client of the
 * remote service or the simulator.
 */
import { TerminalCloud } from "@tillflow/core"
import * as IntakeLocal from "@tillflow/intake/IntakeLocal"
import * as Stack from "@tillflow/intake/Stack"
import type * as WorkerConfig from "@tillflow/intake/WorkerConfig"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { BackendInfo, type Needs } from "../Backend.js"

const noCloud = Stack.noCloud

/** The intake of this process on the configured store (and remote service, when `needs.cloud`). */
export const layer = (config: WorkerConfig.WorkerConfig, needs: Needs) => {
  const store = Stack.storeLayer(config.store, "cli")
  const cloud = needs.cloud
    ? Stack.cloudLayer(config.cloud)
    : Layer.merge(
        Layer.succeed(TerminalCloud.TerminalCloud, noCloud),
        Layer.succeed(Stack.Cloud, {
          kind: "remote" as const,
          baseUrl: "",
          transactionsUrl: "",
          terminals: []
        })
      )
  const settings = Stack.settingsLayer(Option.none())
  const workflows = Stack.workflowsLayerFor(Stack.merchantOf(config)).pipe(Layer.provide(settings))
  const engineWorker = needs.worker
    ? Stack.workerLayer({ ...config.worker, concurrency: Math.min(config.worker.concurrency, 4) })
    : Layer.empty
  const describe = Layer.effect(
    BackendInfo,
    Effect.gen(function* () {
      const storeInfo = yield* Stack.Store
      const cloudInfo = yield* Stack.Cloud
      const where =
        storeInfo.kind === "postgres" ? "PostgreSQL" : `the embedded store in ${storeInfo.dataDir ?? "?"}`
      const service = !needs.cloud
        ? ""
        : cloudInfo.kind === "simulator"
          ? `, the built-in simulator (in this process, not a real payment service)`
          : `, the service at ${cloudInfo.baseUrl}`
      return {
        description: `this process on ${where}${service}`,
        remote: false,
        simulator: cloudInfo.kind === "simulator" && needs.cloud
      }
    })
  )
  return Layer.mergeAll(
    IntakeLocal.layer({ merchantMcc: config.merchantMcc, acquirer: config.acquirer }),
    describe
  ).pipe(
    Layer.provideMerge(Layer.merge(workflows, engineWorker)),
    Layer.provideMerge(Stack.engineLayer),
    Layer.provideMerge(cloud),
    Layer.provideMerge(store)
  )
}
