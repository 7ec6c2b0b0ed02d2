/**
 * Starting an execution: one execution per id, however often and from wherever it is asked
 * for, and an existing execution answered even when its payload would now be refused.
 */
import { expect } from "@effect/vitest"
import { Activity, Workflow } from "@effect/workflow"
import { DurableEngine } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique, historyTypes } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
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
}
