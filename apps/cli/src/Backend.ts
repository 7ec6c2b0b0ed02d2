/**
 * Where a command runs. The `Intake` a command uses is either a running worker's, over
 * HTTP — when `--worker`/`TILLFLOW_WORKER_URL` names one, or when a live worker holds the
 * embedded store (PGlite allows one process per data directory; the worker publishes its
 * address in the directory's lock) — or the library in this process, on the configured
 * store and remote service, with an engine worker of its own while the command runs.
 * Commands that only read the store never start the remote service.
 */
import { type RemoteError, TerminalCloud } from "@tillflow/core"
import { PgliteLock } from "@tillflow/store-sql"
import { Intake, IntakeClient, IntakeLocal, Stack, WorkerConfig } from "@tillflow/intake"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Path from "node:path"
import * as Output from "./Output.js"

/** What the command runs against, said on stderr. */
export class BackendInfo extends Context.Tag("tillflow/cli/BackendInfo")<
  BackendInfo,
  { readonly description: string; readonly remote: boolean }
>() {}

/** What a command needs. */
export interface Needs {
  /** The remote service (operations, devices, status). */
  readonly cloud: boolean
  /** An engine worker in this process (operations in local mode). */
  readonly worker: boolean
}

const noCloud: TerminalCloud.Service = (() => {
  const refuse = Effect.dieMessage("this command does not use the remote service") as Effect.Effect<
    never,
    RemoteError.RemoteError
  >
  return {
    listDevices: refuse,
    sendTransaction: () => refuse,
    transactionResult: () => refuse,
    transactionStatus: () => refuse,
    deviceCommand: () => refuse,
    tipAdjustment: () => refuse,
    deferredToken: () => refuse,
    reversal: () => refuse,
    preAuthorizationIncrease: () => refuse,
    preAuthorizationCapture: () => refuse,
    motoSale: () => refuse,
    motoRefund: () => refuse,
    motoReversal: () => refuse,
    batchClose: () => refuse,
    batchSummary: () => refuse,
    batchDetail: () => refuse
  }
})()

const remote = (baseUrl: string, token: string, why: string) =>
  Layer.merge(
    IntakeClient.layer({ baseUrl, token: Redacted.make(token) }),
    Layer.succeed(BackendInfo, { description: `the worker at ${baseUrl} (${why})`, remote: true })
  )

/** The intake for a command, chosen as the module says. */
export const layer = (
  options: { readonly worker: Option.Option<string> },
  needs: Needs
): Layer.Layer<Intake.Intake | BackendInfo, Stack.StartupError> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* WorkerConfig.load
      const fromEnv = yield* Config.option(Config.nonEmptyString("TILLFLOW_WORKER_URL"))
      const workerUrl = Option.orElse(options.worker, () => fromEnv)
      const token = Option.map(config.intake.token, Redacted.value)
      if (Option.isSome(workerUrl)) {
        if (Option.isNone(token)) {
          return yield* new Stack.StartupError({
            message: `talking to the worker at ${workerUrl.value} needs its token: set TILLFLOW_INTAKE_TOKEN`
          })
        }
        return remote(workerUrl.value, token.value, "--worker / TILLFLOW_WORKER_URL")
      }
      if (config.store._tag === "Embedded") {
        const dataDir = Path.resolve(config.store.dataDir)
        const holder = yield* PgliteLock.holder(dataDir)
        if (Option.isSome(holder)) {
          const url = holder.value.details["intakeUrl"]
          const published = holder.value.details["token"]
          const usable = Option.orElse(token, () => Option.fromNullable(published))
          if (url !== undefined && Option.isSome(usable)) {
            return remote(url, usable.value, `it holds ${dataDir}`)
          }
          return yield* new Stack.StartupError({
            message:
              `${new PgliteLock.DataDirLocked({ dataDir, holder: holder.value }).message}. ` +
              (url === undefined
                ? "Stop it, or use another TILLFLOW_DATA_DIR."
                : `Set TILLFLOW_INTAKE_TOKEN to that worker's token to go through it.`)
          })
        }
      }
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
      const workflows = Stack.workflowsLayerFor(config.merchantMcc).pipe(Layer.provide(settings))
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
          return { description: `this process on ${where}${service}`, remote: false }
        })
      )
      return Layer.mergeAll(IntakeLocal.layer({ merchantMcc: config.merchantMcc }), describe).pipe(
        Layer.provideMerge(Layer.merge(workflows, engineWorker)),
        Layer.provideMerge(Stack.engineLayer),
        Layer.provideMerge(cloud),
        Layer.provideMerge(store)
      )
    }).pipe(
      Effect.mapError((error) =>
        error._tag === "StartupError"
          ? error
          : new Stack.StartupError({ message: `configuration: ${error.message}` })
      )
    )
  )

/** Runs a command's body on its intake, first saying on stderr which one it is. */
export const provide = <A, E>(
  options: { readonly worker: Option.Option<string> },
  needs: Needs,
  body: Effect.Effect<A, E, Intake.Intake | BackendInfo>
): Effect.Effect<A, E | Stack.StartupError> =>
  Effect.gen(function* () {
    const info = yield* BackendInfo
    yield* Output.note(`tillflow: running against ${info.description}`)
    return yield* body
  }).pipe(Effect.provide(layer({ worker: options.worker }, needs)))
