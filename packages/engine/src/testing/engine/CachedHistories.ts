/**
 * Histories an engine keeps in memory between runs: read again when another engine or
 * process moved the stream, trusted when a claim says they are current, and answering
 * a completed execution's result without asking the queue.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import { DurableEngine, EngineEvent, EventStore, ExecutionQueue } from "../../index.js"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { type EngineTests, startNode, manualEngine, claimAndRun } from "./Nodes.js"
import { unique, awaitStatus, historyTypes } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (
  it: EngineTests,
  options: {
    /** The queue answers each claim with the execution stream's version (`Claim.streamVersion`). */
    readonly claimsAnswerStreamVersions?: boolean
  }
): void => {
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
            // A side effect that must happen once: a second run of it is a second parcel sent.
            const first = yield* Activity.make({
              name: "Dispatch",
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
        // records the dispatch, then suspends on the gate, which B's side resolves.
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
        // The dispatch ran once: A replayed B's record instead of dispatching again.
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
}
