/**
 * The standalone worker as one layer: the store, the remote service (or the built-in
 * simulator), the engine with its workflows and an engine worker, the callback receiver,
 * the live ledger projection feeding the metrics, the periodic archive run (retention), and
 * the intake API on one HTTP server.
 * Releasing the layer (SIGTERM) stops in this order: the intake's routes answer 503;
 * the engine worker stops claiming, lets runs in flight finish for the shutdown timeout
 * and gives back the rest; the ledger takes a last snapshot; the HTTP server stops
 * accepting (the callback route, on its lean path, takes results until then: each is
 * durable before its 200); the receiver's forwardings drain; the store closes.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import {
  CallbackRegistration,
  LedgerProjection,
  LogMetrics,
  MerchantRegistry,
  ProtocolSettings,
  TerminalOutcomeRecorder
} from "@tillflow/core"
import { Redaction } from "@tillflow/http"
import { EventArchive, PgliteLock } from "@tillflow/store-sql"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Tracer from "effect/Tracer"
import * as ExitAttributesBackfill from "./internal/ExitAttributesBackfill.js"
import * as IntakeHttp from "./IntakeHttp.js"
import * as IntakeLocal from "./IntakeLocal.js"
import * as Stack from "./Stack.js"
import type * as WorkerConfig from "./WorkerConfig.js"

/** A fresh intake token: 32 random bytes, base64url. */
export const generateToken = (): Redacted.Redacted<string> => {
  const bytes = new Uint8Array(32)
  globalThis.crypto.getRandomValues(bytes)
  return Redacted.make(Buffer.from(bytes).toString("base64url"))
}

/** The token of the intake: configured, or generated on embedded defaults. */
export const tokenOf = (config: WorkerConfig.WorkerConfig) =>
  Effect.gen(function* () {
    if (Option.isSome(config.intake.token)) return { token: config.intake.token.value, generated: false }
    if (config.store._tag === "Postgres" || config.cloud._tag === "Remote") {
      return yield* new Stack.StartupError({
        message:
          "TILLFLOW_INTAKE_TOKEN is required when the worker runs on PostgreSQL or against the real service (at least 16 characters); only the embedded defaults generate one"
      })
    }
    return { token: generateToken(), generated: true }
  })

const addressOf = (server: HttpServer.HttpServer): string =>
  server.address._tag === "TcpAddress"
    ? `http://${server.address.hostname === "0.0.0.0" ? "127.0.0.1" : server.address.hostname}:${server.address.port}`
    : `unix:${server.address.path}`

/** The lines printed at start (the token only when it was generated here). */
export const banner = (info: {
  readonly intakeUrl: string
  /** Whether the web console is served (at `/console`). */
  readonly console?: boolean | undefined
  readonly token: Option.Option<string>
  readonly store: Stack.StoreInfo
  readonly cloud: Stack.CloudInfo
  readonly workerId: string
  readonly concurrency: number
  readonly callbackBase: Option.Option<string>
}): ReadonlyArray<string> => [
  "tillflow worker started",
  `  intake      ${info.intakeUrl}`,
  ...(info.console === true
    ? [
        `  console     ${info.intakeUrl}/console  (log in with the token; TILLFLOW_CONSOLE=false turns it off)`
      ]
    : []),
  `  reference   ${info.intakeUrl}/docs  and  ${info.intakeUrl}/openapi.json  (no token needed)`,
  `  health      ${info.intakeUrl}/health  and  ${info.intakeUrl}/ready`,
  ...Option.match(info.token, {
    onNone: () => ["  token       from TILLFLOW_INTAKE_TOKEN"],
    onSome: (t) => [
      `  token       ${t}`,
      "              (generated for this run and shown only now; set TILLFLOW_INTAKE_TOKEN to choose one)"
    ]
  }),
  `  callbacks   ${Option.getOrElse(info.callbackBase, () => "none (results by polling; set TILLFLOW_CALLBACK_BASE_URL)")}`,
  info.store.kind === "postgres"
    ? "  store       PostgreSQL (DATABASE_URL)"
    : `  store       embedded PGlite in ${info.store.dataDir ?? "?"}`,
  ...(info.store.warning === undefined ? [] : [`              WARNING: ${info.store.warning}`]),
  info.cloud.kind === "simulator"
    ? `  service     THE BUILT-IN SIMULATOR, not a real payment service (set TERMINAL_CLOUD_API_KEY and URLs for the real one)`
    : `  service     ${info.cloud.baseUrl} (status host ${info.cloud.transactionsUrl})`,
  ...(info.cloud.kind === "simulator"
    ? [
        `  simulator   ${info.cloud.baseUrl}  (status host ${info.cloud.transactionsUrl}; admin ${info.cloud.adminUrl ?? "?"})`,
        `  terminals   ${info.cloud.terminals.map((t) => `${t.serialNumber} (${t.terminalType})`).join(", ")}`
      ]
    : []),
  `  worker      ${info.workerId}, ${info.concurrency} executions at a time; SIGTERM stops it gracefully`
]

/** The worker, configured: a layer to launch (what it builds is for itself alone). */
export const layer = (config: WorkerConfig.WorkerConfig): Layer.Layer<never, Stack.StartupError> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const { token, generated } = yield* tokenOf(config)
      const workerId = Option.getOrElse(config.worker.id, () => `worker-${globalThis.crypto.randomUUID()}`)
      const store = Stack.storeLayer(config.store, "worker")
      const cloud = Stack.cloudLayer(config.cloud)
      const server = IntakeHttp.serverLayer(config.intake).pipe(
        Layer.mapError(
          (error) =>
            new Stack.StartupError({
              message: `the intake cannot listen on ${config.intake.host}:${config.intake.port} (${
                error.cause instanceof Error ? error.cause.message : String(error.cause)
              }); set TILLFLOW_INTAKE_PORT to a free port, or 0`
            })
        )
      )

      // Callbacks reach this server only from this machine: the built-in simulator can use
      // its loopback address; a real service needs TILLFLOW_CALLBACK_BASE_URL.
      const settings = Layer.unwrapEffect(
        Effect.map(HttpServer.HttpServer, (http) =>
          Stack.settingsLayer(
            config.cloud._tag === "Simulator" ? Option.some(`${addressOf(http)}/callbacks`) : Option.none()
          )
        )
      )
      const engine = Stack.engineLayer
      const workflows = Stack.workflowsLayerFor(Stack.merchantOf(config)).pipe(Layer.provide(settings))
      const services = Layer.merge(
        workflows,
        IntakeLocal.layer({
          merchantMcc: config.merchantMcc,
          acquirer: config.acquirer,
          merchantRateLimit: config.worker.merchantRateLimit
        })
      )
      // The receiver is built before the server, whose callback route it serves; one memory
      // of the attempts this process registered, for its workflows and its receiver.
      const receiver = Stack.receiverLayer.pipe(
        Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer())
      )

      const projection = Layer.scopedDiscard(
        Effect.gen(function* () {
          const observer = yield* LogMetrics.makeObserver({ since: yield* Clock.currentTimeMillis })
          yield* LedgerProjection.start({ tap: observer.observe })
        })
      ).pipe(
        Layer.catchAll((error) =>
          Layer.effectDiscard(Effect.logWarning(`ledger projection: ${error.message}`))
        )
      )

      // Every approved terminal outcome opens its transaction's history as the log grows.
      // Each merchant's with its own MCC (the registry's).
      const outcomes = Layer.scopedDiscard(
        Effect.flatMap(MerchantRegistry.mccOfInContext, (mccOf) =>
          TerminalOutcomeRecorder.follow({ mcc: config.merchantMcc, mccOf })
        )
      )

      // Executions that ended before they gained their outcome attributes gain them, once.
      const backfill = Layer.scopedDiscard(Effect.forkScoped(ExitAttributesBackfill.once))

      const engineWorker = Stack.workerLayer({ ...config.worker, id: Option.some(workerId) })

      // Retention on the store's Archiver (every store of a worker is SQL): an archive run
      // every TILLFLOW_RETENTION_INTERVAL, a failed one logged and tried again next time.
      const retention = EventArchive.periodicConfig.pipe(
        Layer.mapError((error) => new Stack.StartupError({ message: `configuration: ${error.message}` }))
      )

      const announce = Layer.scopedDiscard(
        Effect.gen(function* () {
          const http = yield* HttpServer.HttpServer
          const storeInfo = yield* Stack.Store
          const cloudInfo = yield* Stack.Cloud
          const intakeUrl = addressOf(http)
          if (storeInfo.kind === "embedded" && storeInfo.dataDir !== undefined) {
            // The command line finds this worker (and its token) through the lock it holds.
            yield* PgliteLock.publish(storeInfo.dataDir, {
              intakeUrl,
              ...(generated ? { token: Redacted.value(token) } : {})
            }).pipe(Effect.catchAll((error) => Effect.logWarning(error.message)))
          }
          const { callbackBaseUrl } = yield* ProtocolSettings.ProtocolSettings
          // The banner on stderr: stdout holds the JSON log lines alone.
          for (const line of banner({
            intakeUrl,
            console: config.intake.console,
            token: generated ? Option.some(Redacted.value(token)) : Option.none(),
            store: storeInfo,
            cloud: cloudInfo,
            workerId,
            concurrency: config.worker.concurrency,
            callbackBase: callbackBaseUrl
          })) {
            yield* Console.error(line)
          }
          if (cloudInfo.kind === "simulator") {
            yield* Effect.logWarning(
              `The remote service is the built-in simulator at ${cloudInfo.baseUrl}: no real payment is made`
            )
          }
          yield* Effect.logInfo("tillflow worker started").pipe(
            Effect.annotateLogs({ intakeUrl, workerId, store: storeInfo.kind, service: cloudInfo.kind })
          )
          yield* Effect.addFinalizer(() => Effect.logInfo("tillflow worker stopping"))
        })
      )

      // Built bottom-up, released top-down: the intake's app first (its requests answered
      // 503 from then on), then the engine worker, the projection, the periodic archive
      // run, the services, the cloud;
      // then the server closes (callbacks in flight finish), the receiver's forwardings
      // drain, and the engine and the store close.
      const running = Layer.mergeAll(engineWorker, projection, outcomes, retention, backfill)
      const http = IntakeHttp.serve(token, {
        console: config.intake.console ? {} : false,
        operators: config.intake.operators,
        tokens: config.intake.tokens
      })
      return announce.pipe(
        // The same settings as the workflows' (one layer, built once): the address they use.
        Layer.provide(settings),
        Layer.provide(http),
        Layer.provide(running),
        Layer.provideMerge(services),
        Layer.provideMerge(cloud),
        Layer.provideMerge(server),
        Layer.provideMerge(receiver),
        Layer.provideMerge(engine),
        Layer.provideMerge(store),
        // Built first, so every server and client of the worker (the built-in simulator's
        // too) redacts ApiKeyCloud and AUTH-TOKEN in the headers its spans record.
        Layer.provide(Redaction.layer)
      )
    })
  )

/**
 * The logger of a worker: JSON lines on stdout (or pretty), at the configured level, and
 * no other. It replaces every logger in place, not only Effect's default one, so a host
 * that installed its own (the command line's, for `tillflow worker`) does not print each
 * record a second time.
 */
export const loggerLayer = (config: WorkerConfig.WorkerConfig): Layer.Layer<never> =>
  Layer.merge(
    Layer.locallyScoped(
      FiberRef.currentLoggers,
      HashSet.make(
        config.logFormat === "json"
          ? Logger.withConsoleLog(traced(Logger.jsonLogger))
          : traced(Logger.prettyLoggerDefault),
        // Log records still become span events.
        Logger.tracerLogger
      )
    ),
    Logger.minimumLogLevel(config.logLevel)
  )

/**
 * `logger` with the trace it was written in: each record gets `traceId` and `spanId` of the
 * span it was logged under, and `executionId` of the execution whose run it belongs to (the
 * nearest span that names one), unless the record is annotated with them already — so a
 * log line leads to its trace, and every line of a payment can be found by its execution.
 */
export const traced = <Message, Output>(
  logger: Logger.Logger<Message, Output>
): Logger.Logger<Message, Output> =>
  Logger.mapInputOptions(logger, (options) => {
    const span = Context.getOption(
      FiberRefs.getOrDefault(options.context, FiberRef.currentContext),
      Tracer.ParentSpan
    )
    if (Option.isNone(span)) return options
    let annotations = options.annotations
    const annotate = (key: string, value: unknown) => {
      if (value !== undefined && !HashMap.has(annotations, key))
        annotations = HashMap.set(annotations, key, value)
    }
    annotate("traceId", span.value.traceId)
    annotate("spanId", span.value.spanId)
    annotate("executionId", executionIdOf(span.value))
    return { ...options, annotations }
  })

/** The `executionId` attribute of the nearest span that has one (the execution's run). */
const executionIdOf = (span: Tracer.AnySpan): unknown => {
  for (let current: Option.Option<Tracer.AnySpan> = Option.some(span); Option.isSome(current);) {
    const at = current.value
    if (at._tag === "ExternalSpan") return undefined
    const id = at.attributes.get("executionId")
    if (id !== undefined) return id
    current = at.parent
  }
  return undefined
}
