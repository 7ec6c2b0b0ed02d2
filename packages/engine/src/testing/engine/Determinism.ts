/**
 * The determinism check of replay: code asking for a different step than the history
 * recorded stops the execution, and a replayed deferred race raises no false alarm.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { DurableEngine } from "../../index.js"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique, awaitStatus, historyTypes, engineEvents } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
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
            yield* step("Reserve")
            yield* step("Pack")
            yield* DurableDeferred.await(Gate)
            yield* step("Receipt")
          })
        )
        const V2 = Evolving.toLayer(() =>
          Effect.gen(function* () {
            yield* step("Reserve")
            yield* step("Cancel")
            yield* DurableDeferred.await(Gate)
            yield* step("Receipt")
          })
        )
        const payload = { id: unique() }
        const v1 = yield* startNode(V1)
        const executionId = yield* Evolving.execute(payload, { discard: true }).pipe(provideNode(v1.context))
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
        expect(String((defect as Error).message)).toContain('"Pack"')
        expect(String((defect as Error).message)).toContain('"Cancel"')
        const violation = (yield* engineEvents(executionId)).find(
          (event) => event._tag === "DeterminismViolated"
        )
        expect(violation).toMatchObject({
          seq: 1,
          recorded: 'activity "Pack" (attempt 1)',
          requested: 'activity "Cancel" (attempt 1)'
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
}
