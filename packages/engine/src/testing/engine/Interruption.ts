/**
 * Interrupting a suspended execution: it unwinds through its compensations and completes
 * as interrupted.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique, awaitStatus, historyTypes } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
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
}
