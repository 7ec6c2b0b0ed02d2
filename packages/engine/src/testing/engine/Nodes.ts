/**
 * The engines a contract test runs workflows on, over the stores the contract shares: a
 * "node" (engine + worker + workflows) started and stopped in its own scope, to show what
 * survives a restart, and engines without workers whose runs a test drives claim by claim.
 */
import type { Vitest } from "@effect/vitest"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { DurableEngine, EngineWorker, EventStore, ExecutionQueue } from "../../index.js"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"

/** The stores the engine contract shares between its tests. */
export type Stores = EventStore.EventStore | ExecutionQueue.ExecutionQueue

/** The test methods of the engine contract, over its shared stores. */
export type EngineTests = Vitest.MethodsNonLive<Stores>

/** A node: the engine, one worker and the given workflows, over the stores in context. */
export const nodeLayer = <E, R>(
  workflows: Layer.Layer<never, E, R>,
  worker: EngineWorker.Options = {},
  engine: DurableEngine.Options = {}
) =>
  Layer.mergeAll(
    workflows,
    // Workers in one process are woken by the engine's signals; the poll interval only
    // bounds how long a timer or another process's work can wait (and how often the
    // TestClock wakes the loop when a test moves time forward by minutes).
    EngineWorker.layer({
      pollInterval: "5 seconds",
      lease: "30 seconds",
      shutdownTimeout: "1 second",
      ...worker
    })
  ).pipe(Layer.provideMerge(DurableEngine.layer({ pollInterval: "50 millis", ...engine })))

/** Starts a node in its own scope; returns its context and a way to stop it. */
export const startNode = <E, R>(
  workflows: Layer.Layer<never, E, R>,
  worker: EngineWorker.Options = {},
  engine: DurableEngine.Options = {}
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(nodeLayer(workflows, worker, engine), scope)
    // Stopping waits for the graceful shutdown, whose timeout runs on the TestClock.
    const stop = Effect.gen(function* () {
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      while (Option.isNone(yield* Fiber.poll(closing))) yield* tick
    })
    return { context, stop }
  })

/**
 * Lets fibers and real I/O (SQL) make progress while virtual time creeps: 10 ms of the
 * TestClock, then one turn of the real event loop.
 */
export const tick = Effect.zipRight(
  TestClock.adjust("10 millis"),
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 1)))
)

/** Runs an effect (executing, polling, resolving) on a started node. */
export const provideNode =
  (context: Context.Context<WorkflowEngine | DurableEngine.DurableEngine>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provide(effect, context)

/** Engines without workers over the stores in context, whose runs a test drives by hand. */
export const manualEngine = <E, R>(
  workflows: Layer.Layer<never, E, R>,
  replace: {
    readonly store?: EventStore.EventStore["Type"]
    readonly queue?: ExecutionQueue.ExecutionQueue["Type"]
  } = {}
) =>
  Layer.build(
    workflows.pipe(
      Layer.provideMerge(DurableEngine.layer()),
      Layer.provide(
        Layer.mergeAll(
          replace.store === undefined ? Layer.empty : Layer.succeed(EventStore.EventStore, replace.store),
          replace.queue === undefined
            ? Layer.empty
            : Layer.succeed(ExecutionQueue.ExecutionQueue, replace.queue)
        )
      )
    )
  )

/** Claims the execution for `workerId` now and runs it once on the given engine. */
export const claimAndRun = (
  context: Context.Context<DurableEngine.DurableEngine>,
  workflowName: string,
  executionId: string,
  workerId: string
) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    const claims = yield* Effect.orDie(
      queue.claim({
        workerId,
        workflowNames: [workflowName],
        limit: 10,
        leaseMs: 30_000,
        now: yield* Clock.currentTimeMillis
      })
    )
    const claim = claims.find((claim) => claim.executionId === executionId)
    if (claim === undefined) return yield* Effect.dieMessage(`${executionId} was not claimable`)
    const outcome = yield* Effect.flatMap(DurableEngine.DurableEngine, (engine) =>
      engine.run(claim, workerId)
    ).pipe(Effect.provide(context))
    return { claim, outcome }
  })
