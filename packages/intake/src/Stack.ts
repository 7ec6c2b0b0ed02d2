/**
 * The layers a tillflow process is made of, composed from the packages: the event store
 * (PostgreSQL, or the embedded PGlite behind its directory lock), the execution queue on
 * the same database, the durable workflow engine, the remote service (the HTTP client,
 * pointed at the real service or at the built-in simulator started in-process), the
 * protocol settings, the workflows and the callback receiver. The worker serves them; the
 * command line runs them in its own process. Nothing here decides anything about payments.
 */
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { CallbackReceiver } from "@tillflow/callback"
import {
  Identifiers,
  KeyWrapper,
  Lifecycles,
  MerchantKeys,
  MerchantRegistry,
  LinkedTerminalRules,
  MotoWorkflow,
  PaymentProtocol,
  ProtocolSettings,
  type RemoteError,
  ReversalWorkflow,
  TerminalCloud
} from "@tillflow/core"
import { DurableEngine, EngineWorker, type EventStore, type ExecutionQueue } from "@tillflow/engine"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { SimulatorServer } from "@tillflow/simulator"
import {
  EventArchive,
  PgEventStore,
  PgliteEventStore,
  PgliteLock,
  SqlExecutionQueue,
  SqlMerchantRegistry
} from "@tillflow/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import * as ExitAttributes from "./internal/ExitAttributes.js"
import * as WorkerConfig from "./WorkerConfig.js"

/** What the remote service of this process is, for the start-up banner and `/ready`. */
export interface CloudInfo {
  readonly kind: "simulator" | "remote"
  readonly baseUrl: string
  readonly transactionsUrl: string
  /** The simulator's admin API. */
  readonly adminUrl?: string | undefined
  /** The simulator's terminals. */
  readonly terminals: ReadonlyArray<{ readonly serialNumber: string; readonly terminalType: string }>
  /** The built-in simulator's virtual terminal (it books terminal-less MOTO payments). */
  readonly virtualTerminal?: string | undefined
}

/** The remote service of this process. */
export class Cloud extends Context.Tag("tillflow/intake/Cloud")<Cloud, CloudInfo>() {}

/** What the store of this process is. */
export interface StoreInfo {
  readonly kind: "postgres" | "embedded"
  /** The embedded store's directory (absolute). */
  readonly dataDir?: string | undefined
  /** The durability caveat to announce, if any. */
  readonly warning?: string | undefined
}

/** The store of this process. */
export class Store extends Context.Tag("tillflow/intake/Store")<Store, StoreInfo>() {}

/** A process could not start: what failed, said for an operator. */
export class StartupError extends Schema.TaggedError<StartupError>()("StartupError", {
  message: Schema.String
}) {}

const startupError = (what: string) => (error: { readonly message: string }) =>
  new StartupError({ message: `${what}: ${error.message}` })

/** The timings of a simulator whose steps take no time (`TILLFLOW_SIMULATOR_FAST`). */
const instant = {
  WaitingForCard: 0,
  PinInput: 0,
  WaitingHostConnect: 0,
  WaitingHostSend: 0,
  WaitingHostReceive: 0,
  PrintingMerchantReceipt: 0,
  Reboot: 0
}

/**
 * The event store and the execution queue on one database. The embedded store is locked
 * for this process first (`PgliteLock`): a second process on the same directory is refused.
 */
export const storeLayer = (
  config: WorkerConfig.StoreConfig,
  holder: string
): Layer.Layer<
  EventStore.EventStore | ExecutionQueue.ExecutionQueue | EventArchive.Archiver | Store | SqlClient.SqlClient,
  StartupError
> => {
  if (config._tag === "Postgres") {
    const pg = PgEventStore.layer({ url: config.url, maxConnections: config.poolSize }).pipe(
      Layer.mapError(startupError("PostgreSQL event store"))
    )
    // Workers started together race to create the tables on a fresh database: the losers
    // retry (by then the tables exist and the migrations are recorded).
    return Layer.mergeAll(
      SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(
        Layer.mapError(startupError("execution queue"))
      ),
      EventArchive.layer,
      Layer.succeed(Store, { kind: "postgres" })
    ).pipe(
      Layer.provideMerge(pg),
      Layer.retry(Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(4))))
    )
  }
  const dataDir = Path.resolve(config.dataDir)
  const lock = Layer.scopedDiscard(PgliteLock.acquire(dataDir, holder)).pipe(
    Layer.mapError(startupError("embedded store"))
  )
  const pglite = PgliteEventStore.layer({ dataDir }).pipe(
    Layer.mapError(startupError("embedded event store"))
  )
  return Layer.mergeAll(
    SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(
      Layer.mapError(startupError("execution queue"))
    ),
    EventArchive.layer,
    Layer.succeed(Store, { kind: "embedded", dataDir, warning: PgliteEventStore.durabilityWarning(dataDir) })
  ).pipe(Layer.provideMerge(pglite), Layer.provideMerge(lock))
}

/**
 * The remote service: the HTTP client, to the configured service or to the built-in
 * simulator, which then runs in this process on a loopback port (its state lives and
 * dies with the process).
 */
export const cloudLayer = (
  config: WorkerConfig.CloudConfig
): Layer.Layer<
  TerminalCloud.TerminalCloud | Cloud | MerchantKeys.MerchantKeys | MerchantRegistry.MerchantRegistry,
  StartupError,
  SqlClient.SqlClient | EventStore.EventStore
> => {
  if (config._tag === "Remote") {
    return Layer.merge(
      HttpTerminalCloud.layer(config.config).pipe(Layer.provideMerge(merchantsLayer(config.config.apiKey))),
      Layer.succeed(Cloud, {
        kind: "remote",
        baseUrl: config.config.baseUrl.toString(),
        transactionsUrl: config.config.transactionsUrl.toString(),
        terminals: []
      })
    )
  }
  const simulator = SimulatorServer.layer({
    seed: config.seed,
    // Serials and key from the seed, transaction ids fresh on every start: the store outlives
    // this simulator, and a guid it handed out before a restart must not come again.
    transactionSeed: "random",
    port: config.port,
    ...(config.fast ? { timings: instant } : {})
  }).pipe(
    Layer.mapError((error) => new StartupError({ message: `built-in simulator: ${String(error.cause)}` }))
  )
  const client = Layer.unwrapEffect(
    Effect.map(SimulatorServer.SimulatorInfo, (info) =>
      Layer.merge(
        HttpTerminalCloud.layer(
          TerminalCloudConfig.make({
            apiKey: Redacted.make(info.apiKey),
            baseUrl: new URL(info.baseUrl),
            transactionsUrl: new URL(info.transactionsUrl)
          })
        ).pipe(Layer.provideMerge(merchantsLayer(Redacted.make(info.apiKey)))),
        Layer.succeed(Cloud, {
          kind: "simulator",
          baseUrl: info.baseUrl,
          transactionsUrl: info.transactionsUrl,
          adminUrl: info.adminUrl,
          terminals: info.terminals.map((t) => ({
            serialNumber: t.serial_number,
            terminalType: t.terminal_type
          })),
          virtualTerminal: info.virtualTerminal === "" ? undefined : info.virtualTerminal
        })
      )
    )
  )
  return client.pipe(Layer.provide(simulator))
}

/**
 * The merchants of this deployment (issue 32): with a key-encryption key configured
 * (`TILLFLOW_KEK`), the registry on this process's store and the calls of a registered
 * merchant made with its keys (`MerchantKeys.fromRegistry`); without one, a registry that
 * says why it cannot be used, and the deployment's own merchant alone, with `own`.
 */
export const merchantsLayer = (
  own: Redacted.Redacted<string> | undefined
): Layer.Layer<
  MerchantKeys.MerchantKeys | MerchantRegistry.MerchantRegistry,
  StartupError,
  SqlClient.SqlClient | EventStore.EventStore
> =>
  Layer.unwrapEffect(
    Effect.map(Config.option(Config.redacted("TILLFLOW_KEK")), (kek) =>
      Option.isNone(kek)
        ? Layer.merge(
            Layer.succeed(MerchantKeys.MerchantKeys, MerchantKeys.single(own)),
            Layer.succeed(
              MerchantRegistry.MerchantRegistry,
              MerchantRegistry.unconfigured(
                "merchants need a key-encryption key to seal their API keys: set TILLFLOW_KEK (<id>:<base64 of 32 bytes>)"
              )
            )
          )
        : MerchantKeys.layerFromRegistry(own).pipe(
            Layer.provideMerge(SqlMerchantRegistry.layer),
            Layer.provide(KeyWrapper.layerConfig)
          )
    )
  ).pipe(Layer.mapError(startupError("merchants (TILLFLOW_KEK)")))

/**
 * Protocol settings from configuration (`TILLFLOW_DELIVERY`, `TILLFLOW_CALLBACK_BASE_URL` …).
 * When no callback base URL is configured, `fallbackCallbackBase` is used (the worker's own
 * receiver on loopback, which only the built-in simulator on this machine can reach), and
 * results then come by callback unless `TILLFLOW_DELIVERY` says otherwise.
 */
export const settingsLayer = (
  fallbackCallbackBase: Option.Option<string>
): Layer.Layer<ProtocolSettings.ProtocolSettings, StartupError> =>
  Layer.effect(
    ProtocolSettings.ProtocolSettings,
    Effect.gen(function* () {
      const settings = yield* ProtocolSettings.config
      const chosen = yield* Config.option(Config.string("TILLFLOW_DELIVERY"))
      const callbackBaseUrl = Option.orElse(settings.callbackBaseUrl, () => fallbackCallbackBase)
      const defaultDelivery: "callback" | "polling" = Option.isNone(callbackBaseUrl)
        ? "polling"
        : Option.isSome(chosen)
          ? settings.defaultDelivery
          : "callback"
      return { ...settings, callbackBaseUrl, defaultDelivery }
    })
  ).pipe(Layer.mapError(startupError("protocol settings")))

/**
 * The workflows this process registers (and so runs when it has a worker): the payment
 * protocol, whose linked operations go through the lifecycles' money rules
 * (`LinkedTerminalRules`, pre-authorizations opened with the merchant's MCC), and the
 * terminal-less lifecycles; reversals decided with what each merchant's acquirer supports
 * (the registry's, each unset capability the deployment's).
 */
export const workflowsLayerFor = (
  merchant: Merchant
): Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud | ProtocolSettings.ProtocolSettings
> =>
  Layer.merge(
    PaymentProtocol.layer.pipe(
      Layer.provide(
        // Each merchant's pre-authorizations with its MCC, when this process has the registry.
        Layer.unwrapEffect(
          Effect.map(MerchantRegistry.mccOfInContext, (mccOf) =>
            LinkedTerminalRules.layer({ mcc: merchant.mcc, mccOf })
          )
        )
      )
    ),
    Lifecycles.layer.pipe(Layer.provide(virtualTerminalLayer(merchant)))
  ).pipe(
    Layer.provide(
      Layer.merge(
        merchant.acquirer === undefined
          ? Layer.empty
          : Layer.succeed(ReversalWorkflow.AcquirerCapabilities, merchant.acquirer),
        // Each merchant's acquirer as registered, over the deployment's, when this process has the registry.
        Layer.unwrapEffect(
          Effect.map(MerchantRegistry.acquirerOfInContext, (of) =>
            of === undefined ? Layer.empty : Layer.succeed(ReversalWorkflow.MerchantAcquirers, { of })
          )
        )
      )
    )
  )

/**
 * A remote service that refuses every call (a defect): for what must never call it, the
 * replay kit's workflows and the command line's read-only commands.
 */
export const noCloud: TerminalCloud.Service = (() => {
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

/**
 * The workflows of {@link workflowsLayerFor} as the replay kit replays them
 * (`ReplayKit.replay`): no remote service (a replay runs no activity) and the default
 * protocol settings (a workflow reads them in its first, recorded, step).
 */
export const replayWorkflowsLayer = (
  merchant: Merchant
): Layer.Layer<never, never, WorkflowEngine | EventStore.EventStore> =>
  workflowsLayerFor(merchant).pipe(
    Layer.provide(
      Layer.merge(Layer.succeed(TerminalCloud.TerminalCloud, noCloud), ProtocolSettings.layer({}))
    )
  )

/** What the workflows know of the merchant they work for (from the worker's configuration). */
export interface Merchant {
  /** The merchant category code (`TILLFLOW_MERCHANT_MCC`). */
  readonly mcc: Option.Option<string>
  /** The virtual terminal's serial (`TILLFLOW_MOTO_TERMINAL`). */
  readonly motoTerminal: Option.Option<string>
  /** What its acquirer supports (`TILLFLOW_ACQUIRER_PARTIAL_REVERSAL`, `…_CAPTURE_REVERSAL`). */
  readonly acquirer?: ReversalWorkflow.AcquirerCapabilities["Type"] | undefined
}

/** The merchant of a configuration. */
export const merchantOf = (config: WorkerConfig.WorkerConfig): Merchant => ({
  mcc: config.merchantMcc,
  motoTerminal: config.motoTerminal,
  acquirer: config.acquirer
})

/**
 * The virtual terminal terminal-less MOTO sales are booked on: the configured one, else the
 * built-in simulator's when this process runs one (`MotoWorkflow.VirtualTerminal`).
 */
const virtualTerminalLayer = (merchant: Merchant) =>
  Layer.effect(
    MotoWorkflow.VirtualTerminal,
    Effect.map(Effect.serviceOption(Cloud), (cloud) =>
      Option.orElse(merchant.motoTerminal, () =>
        Option.flatMapNullable(cloud, (info) => info.virtualTerminal)
      ).pipe(Option.map(Identifiers.SerialNumber.make))
    )
  )

/**
 * The engine over the store and queue in context; each execution gains, as it finishes,
 * the search attributes of its outcome (`internal/ExitAttributes`).
 */
export const engineLayer = DurableEngine.layer({ exitAttributes: ExitAttributes.exitAttributes })

/** The callback receiver over the store and engine in context. */
export const receiverLayer = CallbackReceiver.layer

/** An engine worker of this process. */
export const workerLayer = (config: WorkerConfig.WorkerConfig["worker"]) =>
  EngineWorker.layer({
    ...(Option.isSome(config.id) ? { workerId: config.id.value } : {}),
    concurrency: config.concurrency,
    lease: config.lease,
    shutdownTimeout: config.shutdownTimeout,
    // A merchant's fair share of the worker's slots (the engine's tenants).
    ...(Option.isSome(config.merchantConcurrency)
      ? { tenantConcurrency: config.merchantConcurrency.value }
      : {})
  })

/** What {@link layer} provides: everything the library's operations, lifecycles and audit run on. */
export type Services =
  | EventStore.EventStore
  | ExecutionQueue.ExecutionQueue
  | WorkflowEngine
  | TerminalCloud.TerminalCloud
  | ProtocolSettings.ProtocolSettings
  | Store
  | Cloud

/**
 * The library embedded in a host, as one layer, from a configuration: the store, the
 * remote service (or the built-in simulator), the protocol settings, the engine with the
 * payment and lifecycle workflows registered, and an engine worker of this process that
 * runs them. It serves no HTTP: a host calls `TerminalOperations`, `Lifecycles` and the
 * projections over it, in its own server. Results come by polling unless a callback base
 * URL is configured and the host mounts the callback receiver.
 *
 * @example
 * const Tillflow = Stack.layerConfig() // the worker's defaults: embedded store, simulator
 * const outcome = yield* TerminalOperations.sale(input, { idempotencyKey: "order-42" })
 * // … provided with Effect.provide(Tillflow) or composed into the host's layers
 */
export const layer = (
  config: WorkerConfig.WorkerConfig,
  options: { readonly holder?: string | undefined } = {}
): Layer.Layer<Services, StartupError> => {
  const settings = settingsLayer(Option.none())
  const workflows = workflowsLayerFor(merchantOf(config)).pipe(Layer.provide(settings))
  return Layer.mergeAll(workflows, workerLayer(config.worker), settings).pipe(
    Layer.provideMerge(engineLayer),
    Layer.provideMerge(cloudLayer(config.cloud)),
    Layer.provideMerge(storeLayer(config.store, options.holder ?? "embedded"))
  )
}

/**
 * {@link layer} on the configuration read from the environment (the worker's settings and
 * defaults: `DATABASE_URL` or the embedded store under `.tillflow/data`, the real service
 * or the built-in simulator; docs/operations.md lists them).
 */
export const layerConfig = (options: { readonly holder?: string | undefined } = {}) =>
  Layer.unwrapEffect(
    Effect.map(WorkerConfig.load, (config) => layer(config, options)).pipe(
      Effect.mapError((error) => new StartupError({ message: `configuration: ${error.message}` }))
    )
  )
