/**
 * Durable deferreds resolved from outside the run: the execution suspends until then and
 * resumes without re-running what it recorded, and a resolution is recorded once however
 * many engines send it, also one whose cached history is stale.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import { DurableEngine } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode, manualEngine, claimAndRun } from "./Nodes.js"
import { unique, awaitStatus, historyTypes } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
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
        const executionId = yield* Approve.execute(payload, { discard: true }).pipe(provideNode(node.context))
        yield* awaitStatus(executionId, "suspended")
        expect(yield* Approve.poll(executionId).pipe(provideNode(node.context))).toEqual(
          new Workflow.Suspended({})
        )
        const token = DurableDeferred.tokenFromExecutionId(Approval, { workflow: Approve, executionId })
        yield* DurableDeferred.succeed(Approval, { token, value: "approved" }).pipe(provideNode(node.context))
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
        const executionId = yield* Approve.execute(payload, { discard: true }).pipe(provideNode(node.context))
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
}
