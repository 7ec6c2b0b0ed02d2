/**
 * The behaviours of tillflow's durable workflow engine, run against each pair of stores
 * (memory, PGlite, PostgreSQL). Workflows are plain @effect/workflow code; every test
 * starts "nodes" (engine + worker + registered workflows) over the shared stores, so a
 * node can be stopped and another started to show what survives a restart. Time is the
 * TestClock: the engine reads it for timers and leases, the SQL queue stores it.
 */
import { expect, it } from "@effect/vitest"
import { Activity, DurableClock, DurableDeferred, Workflow } from "@effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { DurableEngine, EngineEvent, EngineWorker, EventStore, ExecutionQueue } from "../index.js"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"

type Stores = EventStore.EventStore | ExecutionQueue.ExecutionQueue

/** A node: the engine, one worker and the given workflows, over the stores in context. */
const nodeLayer = <E, R>(workflows: Layer.Layer<never, E, R>, worker: EngineWorker.Options = {}) =>
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
  ).pipe(Layer.provideMerge(DurableEngine.layer({ pollInterval: "50 millis" })))

/** Starts a node in its own scope; returns its context and a way to stop it. */
const startNode = <E, R>(workflows: Layer.Layer<never, E, R>, worker: EngineWorker.Options = {}) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(nodeLayer(workflows, worker), scope)
    // Stopping waits for the graceful shutdown, whose timeout runs on the TestClock.
    const stop = Effect.gen(function* () {
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      while (Option.isNone(yield* Fiber.poll(closing))) yield* tick
    })
    return { context, stop }
  })

const unique = () => globalThis.crypto.randomUUID()

/**
 * Lets fibers and real I/O (SQL) make progress while virtual time creeps: 10 ms of the
 * TestClock, then one turn of the real event loop.
 */
const tick = Effect.zipRight(
  TestClock.adjust("10 millis"),
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 1)))
)

const awaitInfo = (
  executionId: string,
  predicate: (info: ExecutionQueue.ExecutionInfo) => boolean,
  what: string
): Effect.Effect<ExecutionQueue.ExecutionInfo, Error, ExecutionQueue.ExecutionQueue> =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    for (let i = 0; i < 1_000; i++) {
      const info = yield* Effect.orDie(queue.get(executionId))
      if (Option.isSome(info) && predicate(info.value)) return info.value
      yield* tick
    }
    const last = yield* Effect.orDie(queue.get(executionId))
    return yield* Effect.fail(
      new Error(`execution ${executionId} never became ${what}: ${JSON.stringify(last)}`)
    )
  })

const awaitStatus = (executionId: string, status: ExecutionQueue.ExecutionStatus) =>
  awaitInfo(executionId, (info) => info.status === status, status)

const historyTypes = (executionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* store.readStream(EngineEvent.streamId(executionId))
    return events.map((event) => event.type)
  })

const engineEvents = (executionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* store.readStream(EngineEvent.streamId(executionId))
    return events.flatMap((event) => {
      const decoded = EngineEvent.fromStored(event)
      return Option.isSome(decoded) && decoded.value._tag === "Right" ? [decoded.value.right] : []
    })
  })

const provideNode =
  (context: Context.Context<WorkflowEngine | DurableEngine.DurableEngine>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provide(effect, context)

// ---------------------------------------------------------------------------------------

/** Engines without workers over the stores in context, whose runs a test drives by hand. */
const manualEngine = <E, R>(
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
const claimAndRun = (
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

export const engineContract = <E>(
  name: string,
  stores: Layer.Layer<Stores, E>,
  options: {
    /** The queue answers each claim with the execution stream's version (`Claim.streamVersion`). */
    readonly claimsAnswerStreamVersions?: boolean
  } = {}
) =>
  it.layer(stores, { timeout: 120_000 })(`DurableEngine on ${name}`, (it) => {
    it.effect(
      "an engine whose cached history went stale while another engine took the execution over reads it again at its next claim",
      () =>
        Effect.gen(function* () {
          const Gate = DurableDeferred.make("Gate")
          const counts = { first: 0, second: 0 }
          const Relay = Workflow.make({
            name: "Relay",
            payload: { id: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const RelayLive = Relay.toLayer(({ id }) =>
            Effect.gen(function* () {
              // A side effect that must happen once: a second run of it is a second charge.
              const first = yield* Activity.make({
                name: "Charge",
                success: Schema.Number,
                execute: Effect.sync(() => ++counts.first)
              })
              yield* DurableDeferred.await(Gate)
              const second = yield* Activity.make({
                name: "Receipt",
                success: Schema.Number,
                execute: Effect.sync(() => ++counts.second)
              })
              return `${id}:${first}:${second}`
            })
          )
          const payload = { id: unique() }
          const a = yield* manualEngine(RelayLive)
          const b = yield* manualEngine(RelayLive)
          // Engine A starts it and keeps its history: WorkflowStarted only.
          const executionId = yield* Relay.execute(payload, { discard: true }).pipe(Effect.provide(a))
          const queue = yield* ExecutionQueue.ExecutionQueue
          // A worker claims it and dies; once its lease ran out, engine B takes it over and
          // records the charge, then suspends on the gate, which B's side resolves.
          const dead = yield* Effect.orDie(
            queue.claim({
              workerId: "dead",
              workflowNames: ["Relay"],
              limit: 10,
              leaseMs: 30_000,
              now: yield* Clock.currentTimeMillis
            })
          )
          expect(dead.map((claim) => claim.executionId)).toContain(executionId)
          yield* TestClock.adjust("31 seconds")
          const taken = yield* claimAndRun(b, "Relay", executionId, "engine-b")
          expect(taken.claim.claims).toBe(2)
          expect(taken.outcome._tag).toBe("Suspended")
          expect(counts).toEqual({ first: 1, second: 0 })
          yield* DurableDeferred.done(Gate, {
            token: DurableDeferred.tokenFromExecutionId(Gate, { workflow: Relay, executionId }),
            exit: Exit.void
          }).pipe(Effect.provide(b))
          // Engine A's next claim: its cached history (WorkflowStarted) is behind the stream.
          const resumed = yield* claimAndRun(a, "Relay", executionId, "engine-a")
          if (options.claimsAnswerStreamVersions === true) {
            expect(resumed.claim.streamVersion).toBeGreaterThan(1)
          }
          expect(resumed.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
          // The charge ran once: A replayed B's record instead of charging again.
          expect(counts).toEqual({ first: 1, second: 1 })
          expect(yield* Relay.execute(payload).pipe(Effect.provide(a))).toBe(`${payload.id}:1:1`)
          const types = yield* historyTypes(executionId)
          expect(types.filter((type) => type === "ActivityCompleted")).toHaveLength(2)
        }).pipe(Effect.scoped)
    )

    it.effect(
      "a claim that answers the stream's version at the cached one is run without reading the stream",
      () =>
        Effect.gen(function* () {
          const trace: Array<string> = []
          const Traced = Workflow.make({
            name: "Traced",
            payload: { id: Schema.String },
            success: Schema.Number,
            idempotencyKey: (payload) => payload.id
          })
          const TracedLive = Traced.toLayer(() =>
            Activity.make({
              name: "Step",
              success: Schema.Number,
              execute: Effect.sync(() => trace.push("step"))
            })
          )
          const store = yield* EventStore.EventStore
          const counting = EventStore.EventStore.of({
            ...store,
            readStream: (stream, readOptions) =>
              Effect.suspend(() => {
                trace.push(`read ${stream}`)
                return store.readStream(stream, readOptions)
              })
          })
          const payload = { id: unique() }
          const a = yield* manualEngine(TracedLive, { store: counting })
          // Started here: the engine keeps its history (WorkflowStarted), which is current.
          const executionId = yield* Traced.execute(payload, { discard: true }).pipe(Effect.provide(a))
          trace.length = 0
          const ran = yield* claimAndRun(a, "Traced", executionId, "engine-a")
          expect(ran.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
          const readsBeforeStep = trace.slice(0, trace.indexOf("step"))
          expect(trace).toContain("step")
          if (options.claimsAnswerStreamVersions === true) {
            expect(ran.claim.streamVersion).toBe(1)
            expect(readsBeforeStep).toEqual([])
          } else {
            // Without a version the engine cannot know its history is current: it reads.
            expect(ran.claim.streamVersion).toBeUndefined()
            expect(readsBeforeStep).toEqual([`read ${EngineEvent.streamId(executionId)}`])
          }
        }).pipe(Effect.scoped)
    )

    it.effect(
      "awaiting an execution whose completion this engine kept reads the result from it, without asking the queue",
      () =>
        Effect.gen(function* () {
          const asked: Array<string> = []
          const Kept = Workflow.make({
            name: "Kept",
            payload: { id: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const KeptLive = Kept.toLayer(({ id }) =>
            Activity.make({ name: "Echo", success: Schema.String, execute: Effect.succeed(`done:${id}`) })
          )
          const queue = yield* ExecutionQueue.ExecutionQueue
          const counting = ExecutionQueue.ExecutionQueue.of({
            ...queue,
            get: (executionId) =>
              Effect.suspend(() => {
                asked.push(executionId)
                return queue.get(executionId)
              })
          })
          const payload = { id: unique() }
          const a = yield* manualEngine(KeptLive, { queue: counting })
          const executionId = yield* Kept.execute(payload, { discard: true }).pipe(Effect.provide(a))
          const ran = yield* claimAndRun(a, "Kept", executionId, "engine-a")
          expect(ran.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
          // The run kept its history, which holds WorkflowCompleted: that is the result.
          asked.length = 0
          expect(yield* Kept.execute(payload).pipe(Effect.provide(a))).toBe(`done:${payload.id}`)
          expect(asked).toEqual([])
          // An engine that kept nothing asks the queue, and reads the same result.
          const b = yield* manualEngine(KeptLive, { queue: counting })
          const polled = yield* Kept.poll(executionId).pipe(Effect.provide(b))
          expect(polled?._tag === "Complete" ? polled.exit : undefined).toEqual(
            Exit.succeed(`done:${payload.id}`)
          )
          expect(asked).toEqual([executionId])
        }).pipe(Effect.scoped)
    )

    it.effect(
      "a deferred resolved by its own run wakes nothing while it runs; a run that suspends after it is due at once",
      () =>
        Effect.gen(function* () {
          const Never = DurableDeferred.make("NeverResolved")
          const runs = { settled: 0, parked: 0 }
          const Settle = Workflow.make({
            name: "Settle",
            payload: { id: Schema.String, park: Schema.Boolean },
            success: Schema.Number,
            idempotencyKey: (payload) => payload.id
          })
          const SettleLive = Settle.toLayer(({ park }) =>
            Effect.gen(function* () {
              // The race's own deferred is resolved by this run (its first effect wins).
              const won = yield* DurableDeferred.raceAll({
                name: "settle",
                success: Schema.Number,
                error: Schema.Never,
                effects: [
                  Activity.make({ name: "Win", success: Schema.Number, execute: Effect.succeed(7) }),
                  DurableDeferred.await(Never).pipe(Effect.as(0))
                ]
              })
              if (park) {
                runs.parked++
                yield* DurableDeferred.await(Never)
              }
              runs.settled++
              return won
            })
          )
          const queue = yield* ExecutionQueue.ExecutionQueue
          const woken: Array<string> = []
          const counting = ExecutionQueue.ExecutionQueue.of({
            ...queue,
            wake: (wakeOptions) =>
              Effect.suspend(() => {
                woken.push(wakeOptions.executionId)
                return queue.wake(wakeOptions)
              })
          })
          const a = yield* manualEngine(SettleLive, { queue: counting })
          const done = { id: unique(), park: false }
          const doneId = yield* Settle.execute(done, { discard: true }).pipe(Effect.provide(a))
          const finished = yield* claimAndRun(a, "Settle", doneId, "engine-a")
          expect(finished.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
          expect(yield* Settle.execute(done).pipe(Effect.provide(a))).toBe(7)
          expect(woken).toEqual([])

          // Resolved its race, then suspended: released due now, so it is claimed again.
          const parked = { id: unique(), park: true }
          const parkedId = yield* Settle.execute(parked, { discard: true }).pipe(Effect.provide(a))
          const first = yield* claimAndRun(a, "Settle", parkedId, "engine-a")
          expect(first.outcome._tag).toBe("Suspended")
          expect(woken).toEqual([])
          const again = yield* claimAndRun(a, "Settle", parkedId, "engine-a")
          expect(again.outcome._tag).toBe("Suspended")
          expect(runs.parked).toBe(2)
          // That run resolved nothing of its own: it waits for a real wake-up now.
          const info = yield* Effect.orDie(queue.get(parkedId))
          expect(Option.map(info, (execution) => [execution.status, execution.dueAt])).toEqual(
            Option.some(["suspended", null])
          )
        }).pipe(Effect.scoped)
    )

    it.effect(
      "a run's look-up of an unresolved deferred reads the stream only when its history was last checked longer ago than recheckAfter; a resolution it skips wakes it",
      () =>
        Effect.gen(function* () {
          const Signal = DurableDeferred.make("Signal")
          const trace: Array<string> = []
          let resolveFromOutside: Effect.Effect<void> = Effect.void
          const afterStep = yield* Deferred.make<void>()
          const proceed = yield* Deferred.make<void>()
          const Recheck = Workflow.make({
            name: "Recheck",
            payload: { id: Schema.String, pause: Schema.Boolean, hold: Schema.Boolean },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const RecheckLive = Recheck.toLayer(({ hold, pause }) =>
            Effect.gen(function* () {
              yield* Activity.make({ name: "Step", execute: Effect.sync(() => void trace.push("step")) })
              // Resolved from outside (another engine) after the step, once.
              yield* resolveFromOutside
              resolveFromOutside = Effect.void
              if (pause) yield* TestClock.adjust("100 millis")
              if (hold) {
                yield* Deferred.succeed(afterStep, undefined)
                yield* Deferred.await(proceed)
              }
              yield* DurableDeferred.await(Signal)
              return yield* Activity.make({
                name: "After",
                success: Schema.String,
                execute: Effect.sync(() => {
                  trace.push("after")
                  return "done"
                })
              })
            })
          )
          const store = yield* EventStore.EventStore
          const counting = EventStore.EventStore.of({
            ...store,
            readStream: (stream, readOptions) =>
              Effect.suspend(() => {
                trace.push("read")
                return store.readStream(stream, readOptions)
              })
          })
          const a = yield* manualEngine(RecheckLive, { store: counting })
          const b = yield* manualEngine(RecheckLive)
          const outside = (executionId: string) =>
            DurableDeferred.done(Signal, {
              token: DurableDeferred.tokenFromExecutionId(Signal, { workflow: Recheck, executionId }),
              exit: Exit.void
            }).pipe(Effect.provide(b))

          // The look-up comes right after the step's append: nothing is read, the resolution
          // is missed and the run suspends; the resolution's wake makes it due, and the next
          // run finishes.
          const quick = { id: unique(), pause: false, hold: false }
          const quickId = yield* Recheck.execute(quick, { discard: true }).pipe(Effect.provide(a))
          resolveFromOutside = outside(quickId)
          trace.length = 0
          const first = yield* claimAndRun(a, "Recheck", quickId, "engine-a")
          expect(first.outcome._tag).toBe("Suspended")
          // One read: the suspension's append met the resolution (a conflict), not a look-up.
          expect(trace.slice(trace.indexOf("step"))).toEqual(["step", "read"])
          const second = yield* claimAndRun(a, "Recheck", quickId, "engine-a")
          expect(second.outcome).toEqual({ _tag: "Finished", status: "succeeded" })

          // 100 ms after the step's append the look-up reads, and finds the resolution.
          const slow = { id: unique(), pause: true, hold: false }
          const slowId = yield* Recheck.execute(slow, { discard: true }).pipe(Effect.provide(a))
          resolveFromOutside = outside(slowId)
          trace.length = 0
          const once = yield* claimAndRun(a, "Recheck", slowId, "engine-a")
          expect(once.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
          expect(trace.slice(trace.indexOf("step"))).toEqual(["step", "read", "after"])

          // Resolved during the run by this very process (its callback receiver, say), from
          // outside the run: the look-up reads whatever the time, and the run goes on.
          const local = { id: unique(), pause: false, hold: true }
          const localId = yield* Recheck.execute(local, { discard: true }).pipe(Effect.provide(a))
          const running = yield* Effect.fork(claimAndRun(a, "Recheck", localId, "engine-a"))
          yield* Deferred.await(afterStep)
          yield* DurableDeferred.done(Signal, {
            token: DurableDeferred.tokenFromExecutionId(Signal, { workflow: Recheck, executionId: localId }),
            exit: Exit.void
          }).pipe(Effect.provide(a))
          yield* Deferred.succeed(proceed, undefined)
          const held = yield* Fiber.join(running)
          expect(held.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
        }).pipe(Effect.scoped)
    )

    it.effect(
      "resolving a deferred through an engine whose cached history is stale records it once, at the stream's head",
      () =>
        Effect.gen(function* () {
          const Late = DurableDeferred.make("Late")
          const Gated = Workflow.make({
            name: "Gated",
            payload: { id: Schema.String },
            idempotencyKey: (payload) => payload.id
          })
          const GatedLive = Gated.toLayer(() =>
            Effect.gen(function* () {
              yield* Activity.make({ name: "Before", execute: Effect.void })
              yield* DurableDeferred.await(Late)
            })
          )
          const payload = { id: unique() }
          const a = yield* manualEngine(GatedLive)
          const b = yield* manualEngine(GatedLive)
          // A keeps WorkflowStarted; B runs it to its suspension (two more events).
          const executionId = yield* Gated.execute(payload, { discard: true }).pipe(Effect.provide(a))
          expect((yield* claimAndRun(b, "Gated", executionId, "engine-b")).outcome._tag).toBe("Suspended")
          const token = DurableDeferred.tokenFromExecutionId(Late, { workflow: Gated, executionId })
          // Through A (stale cache), then again through A and B: one resolution in all.
          yield* DurableDeferred.done(Late, { token, exit: Exit.void }).pipe(Effect.provide(a))
          yield* DurableDeferred.done(Late, { token, exit: Exit.void }).pipe(Effect.provide(a))
          yield* DurableDeferred.done(Late, { token, exit: Exit.void }).pipe(Effect.provide(b))
          expect(yield* historyTypes(executionId)).toEqual([
            "WorkflowStarted",
            "ActivityCompleted",
            "WorkflowSuspended",
            "DeferredResolved"
          ])
          // It woke the execution, which now finishes.
          expect((yield* awaitStatus(executionId, "pending")).status).toBe("pending")
          expect((yield* claimAndRun(a, "Gated", executionId, "engine-a")).outcome).toEqual({
            _tag: "Finished",
            status: "succeeded"
          })
        }).pipe(Effect.scoped)
    )

    it.effect(
      "runs activities in order, returns the result and records every step in the execution's stream",
      () =>
        Effect.gen(function* () {
          const Greet = Workflow.make({
            name: "Greet",
            payload: { id: Schema.String, name: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const GreetLive = Greet.toLayer((payload) =>
            Effect.gen(function* () {
              const hello = yield* Activity.make({
                name: "Hello",
                success: Schema.String,
                execute: Effect.succeed(`hello ${payload.name}`)
              })
              return yield* Activity.make({
                name: "Shout",
                success: Schema.String,
                execute: Effect.succeed(hello.toUpperCase())
              })
            })
          )
          const payload = { id: unique(), name: "ada" }
          const node = yield* startNode(GreetLive)
          const result = yield* Greet.execute(payload).pipe(provideNode(node.context))
          expect(result).toBe("HELLO ADA")
          const executionId = yield* Greet.executionId(payload)
          expect(yield* historyTypes(executionId)).toEqual([
            "WorkflowStarted",
            "ActivityCompleted",
            "ActivityCompleted",
            "WorkflowCompleted"
          ])
          const events = yield* engineEvents(executionId)
          const activities = events.filter((event) => event._tag === "ActivityCompleted")
          expect(activities.map((event) => [event.seq, event.name, event.attempt])).toEqual([
            [0, "Hello", 1],
            [1, "Shout", 1]
          ])
          const info = yield* awaitStatus(executionId, "succeeded")
          expect(info.workflowName).toBe("Greet")
          yield* node.stop
        })
    )

    it.effect(
      "executing twice with the same execution id runs the workflow once and returns the same result",
      () =>
        Effect.gen(function* () {
          let runs = 0
          const Once = Workflow.make({
            name: "Once",
            payload: { id: Schema.String },
            success: Schema.Number,
            idempotencyKey: (payload) => payload.id
          })
          const OnceLive = Once.toLayer(() =>
            Activity.make({ name: "Count", success: Schema.Number, execute: Effect.sync(() => ++runs) })
          )
          const payload = { id: unique() }
          const node = yield* startNode(OnceLive)
          const [first, second] = yield* Effect.all([Once.execute(payload), Once.execute(payload)], {
            concurrency: "unbounded"
          }).pipe(provideNode(node.context))
          const third = yield* Once.execute(payload).pipe(provideNode(node.context))
          expect([first, second, third]).toEqual([1, 1, 1])
          expect(runs).toBe(1)
          const executionId = yield* Once.executionId(payload)
          const types = yield* historyTypes(executionId)
          expect(types.filter((type) => type === "WorkflowStarted")).toHaveLength(1)
          expect(types.filter((type) => type === "WorkflowCompleted")).toHaveLength(1)
          yield* node.stop
        })
    )

    it.effect("retries a failing activity with Activity.retry, recording each attempt's exit", () =>
      Effect.gen(function* () {
        class Flaky extends Schema.TaggedError<Flaky>()("Flaky", { attempt: Schema.Number }) {}
        let calls = 0
        const Retry = Workflow.make({
          name: "Retry",
          payload: { id: Schema.String },
          success: Schema.Number,
          error: Flaky,
          idempotencyKey: (payload) => payload.id
        })
        const RetryLive = Retry.toLayer(() =>
          Activity.make({
            name: "Flaky",
            success: Schema.Number,
            error: Flaky,
            execute: Effect.gen(function* () {
              const attempt = yield* Activity.CurrentAttempt
              calls++
              if (attempt < 3) return yield* new Flaky({ attempt })
              return attempt
            })
          }).pipe(Activity.retry({ times: 5 }))
        )
        const payload = { id: unique() }
        const node = yield* startNode(RetryLive)
        expect(yield* Retry.execute(payload).pipe(provideNode(node.context))).toBe(3)
        expect(calls).toBe(3)
        const events = yield* engineEvents(yield* Retry.executionId(payload))
        const attempts = events.flatMap((event) =>
          event._tag === "ActivityCompleted" ? [[event.attempt, event.exit._tag] as const] : []
        )
        expect(attempts).toEqual([
          [1, "Failure"],
          [2, "Failure"],
          [3, "Success"]
        ])
        yield* node.stop
      })
    )

    it.effect(
      "suspends on a deferred and resumes when it is resolved from outside, without re-running recorded activities",
      () =>
        Effect.gen(function* () {
          const Approval = DurableDeferred.make("Approval", { success: Schema.String })
          const counts = { prepare: 0, finish: 0 }
          const Approve = Workflow.make({
            name: "Approve",
            payload: { id: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const ApproveLive = Approve.toLayer(() =>
            Effect.gen(function* () {
              yield* Activity.make({ name: "Prepare", execute: Effect.sync(() => void counts.prepare++) })
              const answer = yield* DurableDeferred.await(Approval)
              return yield* Activity.make({
                name: "Finish",
                success: Schema.String,
                execute: Effect.sync(() => {
                  counts.finish++
                  return `${answer}!`
                })
              })
            })
          )
          const payload = { id: unique() }
          const node = yield* startNode(ApproveLive)
          const executionId = yield* Approve.execute(payload, { discard: true }).pipe(
            provideNode(node.context)
          )
          yield* awaitStatus(executionId, "suspended")
          expect(yield* Approve.poll(executionId).pipe(provideNode(node.context))).toEqual(
            new Workflow.Suspended({})
          )
          const token = DurableDeferred.tokenFromExecutionId(Approval, { workflow: Approve, executionId })
          yield* DurableDeferred.succeed(Approval, { token, value: "approved" }).pipe(
            provideNode(node.context)
          )
          yield* awaitStatus(executionId, "succeeded")
          expect(yield* Approve.execute(payload).pipe(provideNode(node.context))).toBe("approved!")
          expect(counts).toEqual({ prepare: 1, finish: 1 })
          expect(yield* historyTypes(executionId)).toEqual([
            "WorkflowStarted",
            "ActivityCompleted",
            "WorkflowSuspended",
            "DeferredResolved",
            "ActivityCompleted",
            "WorkflowCompleted"
          ])
          yield* node.stop
        })
    )

    it.effect(
      "a deferred resolved many times, also by engines that never read the execution: recorded once, run once",
      () =>
        Effect.gen(function* () {
          let finished = 0
          const Approval = DurableDeferred.make("ApprovalOnce", { success: Schema.String })
          const Approve = Workflow.make({
            name: "ApproveOnce",
            payload: { id: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const ApproveLive = Approve.toLayer(() =>
            Effect.gen(function* () {
              const value = yield* DurableDeferred.await(Approval)
              return yield* Activity.make({
                name: "Finish",
                success: Schema.String,
                execute: Effect.sync(() => {
                  finished++
                  return `${value}!`
                })
              })
            })
          )
          const payload = { id: unique() }
          const node = yield* startNode(ApproveLive)
          const executionId = yield* Approve.execute(payload, { discard: true }).pipe(
            provideNode(node.context)
          )
          yield* awaitStatus(executionId, "suspended")
          const token = DurableDeferred.tokenFromExecutionId(Approval, { workflow: Approve, executionId })
          const succeed = (value: string) => DurableDeferred.succeed(Approval, { token, value })
          // Two other processes' engines, with nothing of this execution in memory (they append
          // without reading its stream), and the node's own, all at once.
          yield* Effect.scoped(
            Effect.gen(function* () {
              const other = yield* Layer.build(DurableEngine.layer())
              const another = yield* Layer.build(DurableEngine.layer())
              yield* Effect.all(
                [
                  Effect.provide(succeed("first"), other),
                  Effect.provide(succeed("second"), another),
                  provideNode(node.context)(succeed("third"))
                ],
                { concurrency: "unbounded", discard: true }
              )
            })
          )
          yield* awaitStatus(executionId, "succeeded")
          const result = yield* Approve.execute(payload).pipe(provideNode(node.context))
          expect(["first!", "second!", "third!"]).toContain(result)
          expect(finished).toBe(1)
          // Once more after the end, from a process that never read it: still one resolution.
          yield* Effect.scoped(
            Effect.flatMap(Layer.build(DurableEngine.layer()), (fresh) =>
              Effect.provide(succeed("late"), fresh)
            )
          )
          expect((yield* historyTypes(executionId)).filter((type) => type === "DeferredResolved")).toEqual([
            "DeferredResolved"
          ])
          expect(yield* Approve.execute(payload).pipe(provideNode(node.context))).toBe(result)
          yield* node.stop
        })
    )

    it.effect(
      "a durable clock suspends the workflow until its time, and survives a restart of the worker",
      () =>
        Effect.gen(function* () {
          let after = 0
          const Sleepy = Workflow.make({
            name: "Sleepy",
            payload: { id: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const SleepyLive = Sleepy.toLayer(() =>
            Effect.gen(function* () {
              yield* DurableClock.sleep({ name: "cool-off", duration: "10 minutes" })
              return yield* Activity.make({
                name: "After",
                success: Schema.String,
                execute: Effect.sync(() => {
                  after++
                  return "woke"
                })
              })
            })
          )
          const payload = { id: unique() }
          const first = yield* startNode(SleepyLive)
          const executionId = yield* Sleepy.execute(payload, { discard: true }).pipe(
            provideNode(first.context)
          )
          const suspended = yield* awaitStatus(executionId, "suspended")
          const scheduled = (yield* engineEvents(executionId)).find(
            (event) => event._tag === "ClockScheduled"
          )
          expect(scheduled?._tag === "ClockScheduled" && scheduled.durationMillis).toBe(600_000)
          expect(suspended.dueAt).toBe(scheduled?._tag === "ClockScheduled" ? scheduled.fireAt : -1)
          yield* first.stop

          // Nothing runs while no worker is up; the timer is in the store.
          yield* TestClock.adjust("11 minutes")
          expect(after).toBe(0)
          const second = yield* startNode(SleepyLive)
          yield* awaitStatus(executionId, "succeeded")
          expect(yield* Sleepy.execute(payload).pipe(provideNode(second.context))).toBe("woke")
          expect(after).toBe(1)
          expect(yield* historyTypes(executionId)).toEqual([
            "WorkflowStarted",
            "ClockScheduled",
            "WorkflowSuspended",
            "ClockFired",
            "ActivityCompleted",
            "WorkflowCompleted"
          ])
          yield* second.stop
        })
    )

    it.effect("a timer that is not due yet does not wake the workflow early", () =>
      Effect.gen(function* () {
        const Later = Workflow.make({
          name: "Later",
          payload: { id: Schema.String },
          idempotencyKey: (payload) => payload.id
        })
        const LaterLive = Later.toLayer(() => DurableClock.sleep({ name: "wait", duration: "5 minutes" }))
        const payload = { id: unique() }
        const node = yield* startNode(LaterLive)
        const executionId = yield* Later.execute(payload, { discard: true }).pipe(provideNode(node.context))
        yield* awaitStatus(executionId, "suspended")
        yield* TestClock.adjust("4 minutes")
        for (let i = 0; i < 20; i++) yield* tick
        expect((yield* awaitStatus(executionId, "suspended")).claims).toBe(1)
        yield* TestClock.adjust("1 minute")
        yield* awaitStatus(executionId, "succeeded")
        yield* node.stop
      })
    )

    it.effect(
      "interrupting a suspended workflow unwinds it: compensations run and it completes as interrupted",
      () =>
        Effect.gen(function* () {
          const Never = DurableDeferred.make("Never")
          const counts = { reserve: 0, release: 0 }
          const Hold = Workflow.make({
            name: "Hold",
            payload: { id: Schema.String },
            idempotencyKey: (payload) => payload.id
          })
          const HoldLive = Hold.toLayer(() =>
            Effect.gen(function* () {
              yield* Activity.make({
                name: "Reserve",
                execute: Effect.sync(() => void counts.reserve++)
              }).pipe(
                Hold.withCompensation(() =>
                  Activity.make({ name: "Release", execute: Effect.sync(() => void counts.release++) })
                )
              )
              yield* DurableDeferred.await(Never)
            })
          )
          const payload = { id: unique() }
          const node = yield* startNode(HoldLive)
          const waiting = yield* Hold.execute(payload).pipe(provideNode(node.context), Effect.fork)
          const executionId = yield* Hold.executionId(payload)
          yield* awaitStatus(executionId, "suspended")
          yield* Hold.interrupt(executionId).pipe(provideNode(node.context))
          yield* awaitStatus(executionId, "interrupted")
          const exit = yield* Fiber.await(waiting)
          expect(Exit.isInterrupted(exit)).toBe(true)
          expect(counts).toEqual({ reserve: 1, release: 1 })
          const types = yield* historyTypes(executionId)
          expect(types).toContain("WorkflowInterrupted")
          expect(types.at(-1)).toBe("WorkflowCompleted")
          const polled = yield* Hold.poll(executionId).pipe(provideNode(node.context))
          expect(polled?._tag === "Complete" && Exit.isInterrupted(polled.exit)).toBe(true)
          yield* node.stop
        })
    )

    it.effect(
      "a child workflow runs as its own execution; the parent suspends until the child completes",
      () =>
        Effect.gen(function* () {
          const Go = DurableDeferred.make("Go")
          const Child = Workflow.make({
            name: "Child",
            payload: { id: Schema.String },
            success: Schema.Number,
            idempotencyKey: (payload) => payload.id
          })
          const Parent = Workflow.make({
            name: "Parent",
            payload: { id: Schema.String },
            success: Schema.Number,
            idempotencyKey: (payload) => payload.id
          })
          const ChildLive = Child.toLayer(() =>
            Effect.gen(function* () {
              yield* DurableDeferred.await(Go)
              return yield* Activity.make({
                name: "Compute",
                success: Schema.Number,
                execute: Effect.succeed(42)
              })
            })
          )
          const ParentLive = Parent.toLayer((payload) =>
            Effect.map(Child.execute({ id: `${payload.id}/child` }), (value) => value + 1)
          )
          const payload = { id: unique() }
          const node = yield* startNode(Layer.merge(ChildLive, ParentLive))
          const parentId = yield* Parent.execute(payload, { discard: true }).pipe(provideNode(node.context))
          const childId = yield* Child.executionId({ id: `${payload.id}/child` })
          const child = yield* awaitStatus(childId, "suspended")
          expect(child.parentId).toBe(parentId)
          yield* awaitStatus(parentId, "suspended")
          yield* DurableDeferred.succeed(Go, {
            token: DurableDeferred.tokenFromExecutionId(Go, { workflow: Child, executionId: childId }),
            value: undefined
          }).pipe(provideNode(node.context))
          yield* awaitStatus(parentId, "succeeded")
          expect(yield* Parent.execute(payload).pipe(provideNode(node.context))).toBe(43)
          const parentStarted = (yield* engineEvents(childId)).find(
            (event) => event._tag === "WorkflowStarted"
          )
          expect(parentStarted?._tag === "WorkflowStarted" && parentStarted.parent?.workflowName).toBe(
            "Parent"
          )
          yield* node.stop
        })
    )

    it.effect(
      "asking for a different activity than the history recorded stops the execution with a DeterminismError naming both",
      () =>
        Effect.gen(function* () {
          const Gate = DurableDeferred.make("Gate")
          const Evolving = Workflow.make({
            name: "Evolving",
            payload: { id: Schema.String },
            idempotencyKey: (payload) => payload.id
          })
          const step = (name: string) => Activity.make({ name, execute: Effect.void })
          const V1 = Evolving.toLayer(() =>
            Effect.gen(function* () {
              yield* step("Authorise")
              yield* step("Capture")
              yield* DurableDeferred.await(Gate)
              yield* step("Receipt")
            })
          )
          const V2 = Evolving.toLayer(() =>
            Effect.gen(function* () {
              yield* step("Authorise")
              yield* step("Refund")
              yield* DurableDeferred.await(Gate)
              yield* step("Receipt")
            })
          )
          const payload = { id: unique() }
          const v1 = yield* startNode(V1)
          const executionId = yield* Evolving.execute(payload, { discard: true }).pipe(
            provideNode(v1.context)
          )
          yield* awaitStatus(executionId, "suspended")
          yield* v1.stop

          const v2 = yield* startNode(V2)
          yield* DurableDeferred.succeed(Gate, {
            token: DurableDeferred.tokenFromExecutionId(Gate, { workflow: Evolving, executionId }),
            value: undefined
          }).pipe(provideNode(v2.context))
          yield* awaitStatus(executionId, "stuck")
          const exit = yield* Evolving.execute(payload).pipe(provideNode(v2.context), Effect.exit)
          expect(Exit.isFailure(exit)).toBe(true)
          const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
          expect(defect).toBeInstanceOf(DurableEngine.DeterminismError)
          expect(String((defect as Error).message)).toContain('"Capture"')
          expect(String((defect as Error).message)).toContain('"Refund"')
          const violation = (yield* engineEvents(executionId)).find(
            (event) => event._tag === "DeterminismViolated"
          )
          expect(violation).toMatchObject({
            seq: 1,
            recorded: 'activity "Capture" (attempt 1)',
            requested: 'activity "Refund" (attempt 1)'
          })
          // The step that was not asked for never ran with the new code: nothing after it.
          expect(
            (yield* historyTypes(executionId)).filter((type) => type === "ActivityCompleted")
          ).toHaveLength(2)
          yield* v2.stop
        })
    )

    it.effect("a deferred race whose activity won replays without a false determinism error", () =>
      Effect.gen(function* () {
        const Signal = DurableDeferred.make("Signal")
        const Gate = DurableDeferred.make("RaceGate")
        let last = 0
        const Race = Workflow.make({
          name: "Race",
          payload: { id: Schema.String },
          success: Schema.String,
          idempotencyKey: (payload) => payload.id
        })
        const RaceLive = Race.toLayer(() =>
          Effect.gen(function* () {
            yield* Activity.make({ name: "First", execute: Effect.void })
            type Branch = Effect.Effect<string, never, WorkflowEngine | WorkflowInstance>
            const branches: readonly [Branch, Branch] = [
              Effect.as(DurableDeferred.await(Signal), "signal"),
              Activity.make({ name: "Timeout", success: Schema.String, execute: Effect.succeed("timeout") })
            ]
            const winner = yield* DurableDeferred.raceAll({
              name: "signal-or-timeout",
              success: Schema.String,
              error: Schema.Never,
              effects: branches
            })
            yield* DurableDeferred.await(Gate)
            yield* Activity.make({ name: "Last", execute: Effect.sync(() => void last++) })
            return winner
          })
        )
        const payload = { id: unique() }
        const node = yield* startNode(RaceLive)
        const executionId = yield* Race.execute(payload, { discard: true }).pipe(provideNode(node.context))
        yield* awaitStatus(executionId, "suspended")
        yield* DurableDeferred.succeed(Gate, {
          token: DurableDeferred.tokenFromExecutionId(Gate, { workflow: Race, executionId }),
          value: undefined
        }).pipe(provideNode(node.context))
        yield* awaitStatus(executionId, "succeeded")
        expect(yield* Race.execute(payload).pipe(provideNode(node.context))).toBe("timeout")
        expect(last).toBe(1)
        const race = (yield* engineEvents(executionId)).find((event) => event._tag === "DeferredResolved")
        expect(race).toMatchObject({ seqStart: 1, seqEnd: 2 })
        yield* node.stop
      })
    )

    it.effect("executions with the same concurrency key run one at a time, even while one is suspended", () =>
      Effect.gen(function* () {
        const Done = DurableDeferred.make("Done")
        const Op = DurableEngine.withConcurrencyKey(
          Workflow.make({
            name: "TerminalOp",
            payload: { id: Schema.String, terminal: Schema.String },
            idempotencyKey: (payload) => payload.id
          }),
          (payload) => `terminal:${payload.terminal}`
        )
        const OpLive = Op.toLayer(() =>
          Effect.gen(function* () {
            yield* Activity.make({ name: "Send", execute: Effect.void })
            yield* DurableDeferred.await(Done)
          })
        )
        const terminal = unique()
        const a = { id: unique(), terminal }
        const b = { id: unique(), terminal }
        const c = { id: unique(), terminal: unique() }
        const node = yield* startNode(OpLive)
        const run = (payload: typeof a) =>
          Op.execute(payload, { discard: true }).pipe(provideNode(node.context))
        const idA = yield* run(a)
        yield* awaitStatus(idA, "suspended")
        const idB = yield* run(b)
        const idC = yield* run(c)
        // A different terminal runs; the same terminal waits for A to finish.
        yield* awaitStatus(idC, "suspended")
        for (let i = 0; i < 10; i++) yield* tick
        expect(
          yield* awaitInfo(idB, (info) => info.status === "pending" && info.claims === 0, "waiting")
        ).toBeDefined()
        const done = (executionId: string) =>
          DurableDeferred.succeed(Done, {
            token: DurableDeferred.tokenFromExecutionId(Done, { workflow: Op, executionId }),
            value: undefined
          }).pipe(provideNode(node.context))
        yield* done(idA)
        yield* awaitStatus(idA, "succeeded")
        yield* awaitStatus(idB, "suspended")
        yield* done(idB)
        yield* done(idC)
        yield* awaitStatus(idB, "succeeded")
        yield* awaitStatus(idC, "succeeded")
        yield* node.stop
      })
    )

    it.effect("an execution whose worker died is taken over once its lease expires", () =>
      Effect.gen(function* () {
        let runs = 0
        const Orphan = Workflow.make({
          name: "Orphan",
          payload: { id: Schema.String },
          success: Schema.Number,
          idempotencyKey: (payload) => payload.id
        })
        const OrphanLive = Orphan.toLayer(() =>
          Activity.make({ name: "Work", success: Schema.Number, execute: Effect.sync(() => ++runs) })
        )
        const payload = { id: unique() }
        // A process without a worker starts it; a worker that then dies claims it.
        const client = yield* Layer.build(DurableEngine.layer())
        const executionId = yield* Orphan.execute(payload, { discard: true }).pipe(Effect.provide(client))
        const queue = yield* ExecutionQueue.ExecutionQueue
        const now = yield* Clock.currentTimeMillis
        const claims = yield* queue.claim({
          workerId: "dead-worker",
          workflowNames: ["Orphan"],
          limit: 10,
          leaseMs: 30_000,
          now
        })
        expect(claims.map((claim) => claim.executionId)).toContain(executionId)
        const node = yield* startNode(OrphanLive)
        for (let i = 0; i < 20; i++) yield* tick
        expect((yield* awaitStatus(executionId, "running")).leaseOwner).toBe("dead-worker")
        yield* TestClock.adjust("31 seconds")
        const done = yield* awaitStatus(executionId, "succeeded")
        expect(done.claims).toBe(2)
        expect(runs).toBe(1)
        yield* node.stop
      }).pipe(Effect.scoped)
    )

    it.effect(
      "a history kept by an engine is brought up to date with what another process appended since",
      () =>
        Effect.gen(function* () {
          let runs = 0
          const Kept = Workflow.make({
            name: "Kept",
            payload: { id: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const KeptLive = Kept.toLayer(({ id }) =>
            Effect.gen(function* () {
              const first = yield* Activity.make({
                name: "First",
                success: Schema.Number,
                execute: Effect.sync(() => ++runs)
              })
              const second = yield* Activity.make({
                name: "Second",
                success: Schema.Number,
                execute: Effect.sync(() => ++runs)
              })
              return `${id}:${first}:${second}`
            })
          )
          const payload = { id: unique() }
          // A process without a worker starts it and keeps its history (WorkflowStarted only);
          // another process runs it to the end meanwhile.
          const client = yield* Layer.build(DurableEngine.layer())
          const executionId = yield* Kept.execute(payload, { discard: true }).pipe(Effect.provide(client))
          const node = yield* startNode(KeptLive)
          yield* awaitStatus(executionId, "succeeded")
          // What the first process sees is the whole history, not the one it kept.
          const polled = yield* Kept.poll(executionId).pipe(Effect.provide(client))
          expect(polled?._tag === "Complete" && Exit.isSuccess(polled.exit) && polled.exit.value).toBe(
            `${payload.id}:1:2`
          )
          const again = yield* Kept.execute(payload).pipe(Effect.provide(client))
          expect(again).toBe(`${payload.id}:1:2`)
          const history = yield* DurableEngine.DurableEngine.pipe(
            Effect.flatMap((engine) => engine.history(executionId)),
            Effect.provide(client)
          )
          expect(history.map((entry) => entry.recorded.type)).toEqual(yield* historyTypes(executionId))
          expect(runs).toBe(2)
          yield* node.stop
        }).pipe(Effect.scoped)
    )

    it.effect(
      "a stopping worker gives back the claim of a run in flight, and another worker finishes it",
      () =>
        Effect.gen(function* () {
          const counts = { started: 0, finished: 0 }
          const block = yield* Deferred.make<void>()
          const Long = Workflow.make({
            name: "Long",
            payload: { id: Schema.String },
            idempotencyKey: (payload) => payload.id
          })
          const LongLive = Long.toLayer(() =>
            Activity.make({
              name: "Slow",
              execute: Effect.gen(function* () {
                counts.started++
                yield* Deferred.await(block)
                counts.finished++
              })
            })
          )
          const payload = { id: unique() }
          const first = yield* startNode(LongLive)
          const executionId = yield* Long.execute(payload, { discard: true }).pipe(provideNode(first.context))
          yield* awaitInfo(executionId, () => counts.started === 1, "started")
          yield* first.stop
          const released = yield* awaitStatus(executionId, "pending")
          expect(released.leaseOwner).toBeNull()
          expect(yield* historyTypes(executionId)).toEqual(["WorkflowStarted"])
          yield* Deferred.succeed(block, undefined)
          const second = yield* startNode(LongLive)
          yield* awaitStatus(executionId, "succeeded")
          expect(counts).toEqual({ started: 2, finished: 1 })
          yield* second.stop
        })
    )

    it.effect(
      "domain events are appended with their activity's record, and once to other streams across replays",
      () =>
        Effect.gen(function* () {
          const Gate = DurableDeferred.make("AuditGate")
          const Pay = Workflow.make({
            name: "Pay",
            payload: { id: Schema.String },
            idempotencyKey: (payload) => payload.id
          })
          const terminalStream = `terminal-${unique()}`
          const PayLive = Pay.toLayer(() =>
            Effect.gen(function* () {
              yield* Activity.make({
                name: "Authorise",
                execute: Effect.gen(function* () {
                  yield* DurableEngine.emit({
                    type: "PaymentAuthorised",
                    data: { amount: "1000", currency: "EUR" }
                  })
                  yield* DurableEngine.emit({
                    type: "TerminalUsed",
                    data: { operation: "sale" },
                    stream: terminalStream
                  })
                })
              })
              yield* DurableDeferred.await(Gate)
            })
          )
          const payload = { id: unique() }
          const node = yield* startNode(PayLive)
          const executionId = yield* Pay.execute(payload, { discard: true }).pipe(provideNode(node.context))
          yield* awaitStatus(executionId, "suspended")
          yield* DurableDeferred.succeed(Gate, {
            token: DurableDeferred.tokenFromExecutionId(Gate, { workflow: Pay, executionId }),
            value: undefined
          }).pipe(provideNode(node.context))
          yield* awaitStatus(executionId, "succeeded")
          const store = yield* EventStore.EventStore
          const own = yield* store.readStream(EngineEvent.streamId(executionId))
          const completed = own.find((event) => event.type === "ActivityCompleted")
          const authorised = own.find((event) => event.type === "PaymentAuthorised")
          expect(authorised?.version).toBe((completed?.version ?? 0) + 1)
          expect(authorised?.transactionId).toBe(completed?.transactionId)
          expect(authorised?.data).toEqual({ amount: "1000", currency: "EUR" })
          // The run after the gate replayed the activity: the other stream still has it once.
          const other = yield* store.readStream(terminalStream)
          expect(other.map((event) => event.type)).toEqual(["TerminalUsed"])
          yield* node.stop
        })
    )

    it.effect(
      "lists executions by workflow, status and search attributes, and reads one execution's history",
      () =>
        Effect.gen(function* () {
          const Sale = DurableEngine.withSearchAttributes(
            Workflow.make({
              name: "SaleVisible",
              payload: {
                id: Schema.String,
                terminal: Schema.String,
                merchant: Schema.String,
                amount: Schema.String
              },
              idempotencyKey: (payload) => payload.id
            }),
            (payload) => ({ terminal: payload.terminal, merchant: payload.merchant, amount: payload.amount })
          )
          const SaleLive = Sale.toLayer((payload) =>
            DurableEngine.setSearchAttributes({ transactionReference: `ref-${payload.id}` })
          )
          const merchant = unique()
          const node = yield* startNode(SaleLive)
          const one = { id: unique(), terminal: "T-1", merchant, amount: "1000" }
          const two = { id: unique(), terminal: "T-2", merchant, amount: "250" }
          yield* Sale.execute(one).pipe(provideNode(node.context))
          yield* Sale.execute(two).pipe(provideNode(node.context))
          const engine = yield* DurableEngine.DurableEngine.pipe(provideNode(node.context))
          const byMerchant = yield* engine.list({ workflowName: "SaleVisible", attributes: { merchant } })
          expect(byMerchant.map((info) => info.attributes["amount"])).toEqual(["1000", "250"])
          const byTerminal = yield* engine.list({
            status: "succeeded",
            attributes: { merchant, terminal: "T-2" }
          })
          expect(byTerminal.map((info) => info.executionId)).toEqual([yield* Sale.executionId(two)])
          const byReference = yield* engine.list({ attributes: { transactionReference: `ref-${one.id}` } })
          expect(byReference.map((info) => info.attributes["terminal"])).toEqual(["T-1"])
          expect(yield* engine.list({ status: "running", attributes: { merchant } })).toEqual([])
          const history = yield* engine.history(yield* Sale.executionId(one))
          expect(history.map((entry) => Option.map(entry.engine, (event) => event._tag))).toEqual([
            Option.some("WorkflowStarted"),
            Option.some("WorkflowCompleted")
          ])
          yield* node.stop
        })
    )

    it.effect("refuses a Redacted value in a payload: nothing is stored", () =>
      Effect.gen(function* () {
        const Secretive = Workflow.make({
          name: "Secretive",
          payload: { id: Schema.String, apiKey: Schema.Redacted(Schema.String) },
          idempotencyKey: (payload) => payload.id
        })
        const SecretiveLive = Secretive.toLayer(() => Effect.void)
        const payload = { id: unique(), apiKey: Redacted.make("sk_live_secret") }
        const node = yield* startNode(SecretiveLive)
        const exit = yield* Secretive.execute(payload).pipe(provideNode(node.context), Effect.exit)
        expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toBeInstanceOf(
          DurableEngine.RedactedValueRefused
        )
        expect(yield* historyTypes(yield* Secretive.executionId(payload))).toEqual([])
        yield* node.stop
      })
    )

    it.effect(
      "executing again an execution that exists returns it, even with a payload that would be refused now",
      () =>
        Effect.gen(function* () {
          const Keyed = Workflow.make({
            name: "Keyed",
            payload: { id: Schema.String, apiKey: Schema.optional(Schema.Redacted(Schema.String)) },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const KeyedLive = Keyed.toLayer(({ id }) => Effect.succeed(`done ${id}`))
          const id = unique()
          const node = yield* startNode(KeyedLive)
          expect(yield* Keyed.execute({ id }).pipe(provideNode(node.context))).toBe(`done ${id}`)
          // Another process (nothing kept): the same execution, asked with a secret in the payload.
          const client = yield* Layer.build(DurableEngine.layer())
          const again = yield* Keyed.execute({ id, apiKey: Redacted.make("sk_live_secret") }).pipe(
            Effect.provide(client)
          )
          expect(again).toBe(`done ${id}`)
          expect(yield* historyTypes(yield* Keyed.executionId({ id }))).toEqual([
            "WorkflowStarted",
            "WorkflowCompleted"
          ])
          yield* node.stop
        }).pipe(Effect.scoped)
    )

    it.effect("DurableEngine.emit outside an activity is a defect, and appends nothing", () =>
      Effect.gen(function* () {
        const Emitting = Workflow.make({
          name: "EmittingOutside",
          payload: { id: Schema.String },
          success: Schema.String,
          idempotencyKey: (payload) => payload.id
        })
        const EmittingLive = Emitting.toLayer(() =>
          DurableEngine.emit({ type: "Outside", data: {} }).pipe(Effect.as("emitted"))
        )
        const payload = { id: unique() }
        const node = yield* startNode(EmittingLive)
        const exit = yield* Emitting.execute(payload).pipe(provideNode(node.context), Effect.exit)
        expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toContain(
          "DurableEngine.emit is only available inside an activity"
        )
        expect(yield* historyTypes(yield* Emitting.executionId(payload))).toEqual([
          "WorkflowStarted",
          "WorkflowCompleted"
        ])
        yield* node.stop
      }).pipe(Effect.scoped)
    )

    it.effect(
      "an activity result the store refuses as a secret is recorded as that refusal: the workflow sees a defect",
      () =>
        Effect.gen(function* () {
          const Leaky = Workflow.make({
            name: "Leaky",
            payload: { id: Schema.String },
            success: Schema.String,
            idempotencyKey: (payload) => payload.id
          })
          const LeakyLive = Leaky.toLayer(() =>
            Activity.make({
              name: "ReadCard",
              success: Schema.Struct({ cvv: Schema.String }),
              execute: Effect.succeed({ cvv: "123" })
            }).pipe(Effect.map(() => "leaked"))
          )
          const payload = { id: unique() }
          const node = yield* startNode(LeakyLive)
          const exit = yield* Leaky.execute(payload).pipe(provideNode(node.context), Effect.exit)
          expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toContain("card security code")
          const executionId = yield* Leaky.executionId(payload)
          const store = yield* EventStore.EventStore
          const events = yield* store.readStream(EngineEvent.streamId(executionId))
          expect(events.map((event) => event.type)).toEqual([
            "WorkflowStarted",
            "ActivityCompleted",
            "WorkflowCompleted"
          ])
          expect(JSON.stringify(events.map((event) => event.data))).not.toContain('"123"')
          expect((yield* awaitStatus(executionId, "failed")).workflowName).toBe("Leaky")
          yield* node.stop
        })
    )
  })
