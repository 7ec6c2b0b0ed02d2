/**
 * Child workflows: their own executions, with the parent suspended until the child completes.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique, awaitStatus, engineEvents } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect("a child workflow runs as its own execution; the parent suspends until the child completes", () =>
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
      const parentStarted = (yield* engineEvents(childId)).find((event) => event._tag === "WorkflowStarted")
      expect(parentStarted?._tag === "WorkflowStarted" && parentStarted.parent?.workflowName).toBe("Parent")
      yield* node.stop
    })
  )
}
