/**
 * Durable clocks: a timer suspends the execution until its time, survives a restart of the
 * worker, and never wakes it early.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableClock, Workflow } from "@effect/workflow"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { type EngineTests, startNode, provideNode, tick } from "./Nodes.js"
import { unique, awaitStatus, historyTypes, engineEvents } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
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
        const executionId = yield* Sleepy.execute(payload, { discard: true }).pipe(provideNode(first.context))
        const suspended = yield* awaitStatus(executionId, "suspended")
        const scheduled = (yield* engineEvents(executionId)).find((event) => event._tag === "ClockScheduled")
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
}
