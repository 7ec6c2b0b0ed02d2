/**
 * Activities: run in order and recorded in the execution's stream, retried with
 * `Activity.retry`, each attempt's exit recorded; a step run live hands the workflow the
 * value its activity returned (the lean step path: encoded once, never decoded back).
 */
import { expect } from "@effect/vitest"
import { Activity, Workflow } from "@effect/workflow"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique, awaitStatus, historyTypes, engineEvents } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
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
    "a step run live hands the workflow the very value its activity returned, and records its encoding",
    () =>
      Effect.gen(function* () {
        class Receipt extends Schema.Class<Receipt>("Receipt")({ total: Schema.Number }) {}
        const made: Array<Receipt> = []
        const seen: Array<Receipt> = []
        const Sell = Workflow.make({
          name: "SellLive",
          payload: { id: Schema.String },
          success: Schema.Number,
          idempotencyKey: (payload) => payload.id
        })
        const SellLive = Sell.toLayer(() =>
          Effect.gen(function* () {
            const receipt = yield* Activity.make({
              name: "Receipt",
              success: Receipt,
              execute: Effect.sync(() => {
                const receipt = new Receipt({ total: 1250 })
                made.push(receipt)
                return receipt
              })
            })
            seen.push(receipt)
            return receipt.total
          })
        )
        const payload = { id: unique() }
        const node = yield* startNode(SellLive)
        expect(yield* Sell.execute(payload).pipe(provideNode(node.context))).toBe(1250)
        expect(made).toHaveLength(1)
        expect(seen).toHaveLength(1)
        // Not a copy decoded back from the event just written: the value itself.
        expect(seen[0]).toBe(made[0])
        const events = yield* engineEvents(yield* Sell.executionId(payload))
        const step = events.find((event) => event._tag === "ActivityCompleted")
        // Recorded encoded by its schema (a plain object, not the class instance).
        expect(step !== undefined && Exit.isSuccess(step.exit) ? step.exit.value : undefined).toStrictEqual({
          total: 1250
        })
        yield* node.stop
      })
  )
}
