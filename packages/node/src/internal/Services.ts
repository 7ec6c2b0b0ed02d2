/**
 * The layers of an embedded instance, composed from `@tillflow/intake`'s `Stack` the way
 * the worker composes them, without its HTTP server: the store (PostgreSQL, or the
 * embedded PGlite), the remote service (or the built-in simulator), the engine with its
 * workflows and an engine worker, the callback receiver (served by the host through
 * `tf.callbackHandler`) and the local intake the Promise API calls. One `ManagedRuntime`
 * holds them; releasing it stops the engine worker, then the services, then the store.
 */
import { CallbackHttp, type CallbackReceiver } from "@tillflow/callback"
import { CallbackRegistration, type TerminalCloud } from "@tillflow/core"
import type { DurableEngine, EventStore } from "@tillflow/engine"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { type Intake, IntakeLocal, Stack, Worker, WorkerConfig } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** What an instance's runtime holds. */
export type Services =
  | Intake.Intake
  | CallbackReceiver.CallbackReceiver
  | DurableEngine.DurableEngine
  | WorkflowEngine
  | EventStore.EventStore
  | TerminalCloud.TerminalCloud
  | Stack.Cloud
  | Stack.Store

/** The services of an instance, from the configuration in context. */
export const layer: Layer.Layer<Services, Stack.StartupError> = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* WorkerConfig.load
    const workerId = Option.getOrElse(config.worker.id, () => `node-${globalThis.crypto.randomUUID()}`)
    const store = Stack.storeLayer(config.store, "node")
    const cloud = Stack.cloudLayer(config.cloud)
    // Callbacks only when the host says where it serves `tf.callbackHandler`; else polling.
    const settings = Stack.settingsLayer(Option.none())
    const workflows = Stack.workflowsLayerFor(Stack.merchantOf(config)).pipe(Layer.provide(settings))
    const services = Layer.mergeAll(
      workflows,
      Stack.receiverLayer,
      IntakeLocal.layer({
        merchantMcc: config.merchantMcc,
        acquirer: config.acquirer,
        merchantRateLimit: config.worker.merchantRateLimit
      })
    ).pipe(Layer.provide(CallbackRegistration.registeredAttemptsLayer()))
    const engineWorker = Stack.workerLayer({ ...config.worker, id: Option.some(workerId) })
    // Released first: the engine worker stops claiming and lets runs in flight finish.
    return Layer.mergeAll(engineWorker, CallbackHttp.redactedHeaders).pipe(
      Layer.provideMerge(services),
      Layer.provideMerge(Stack.engineLayer),
      Layer.provideMerge(cloud),
      Layer.provideMerge(store),
      Layer.provide(Worker.loggerLayer(config))
    )
  })
).pipe(
  Layer.mapError((error) =>
    error instanceof Stack.StartupError
      ? error
      : new Stack.StartupError({ message: `configuration: ${error.message}` })
  )
)
