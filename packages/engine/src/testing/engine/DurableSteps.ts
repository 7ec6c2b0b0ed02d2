/**
 * `DurableStep`: a step defined once is recorded as `Activity.make` records an activity of
 * the same name and schemas, replays its recorded result, and is named by the determinism check.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { DurableEngine, DurableStep } from "../../index.js"
import { awaitStatus, engineEvents, unique } from "./Executions.js"
import { type EngineTests, provideNode, startNode } from "./Nodes.js"

class Refused extends Schema.TaggedError<Refused>()("Refused", { reason: Schema.String }) {}
const Amount = Schema.Struct({ minor: Schema.BigInt })

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect("a DurableStep is recorded as Activity.make records the same step, and replays its result", () =>
    Effect.gen(function* () {
      const Gate = DurableDeferred.make("Gate")
      const Steps = Workflow.make({
        name: "DurableStepsRecorded",
        payload: { id: Schema.String },
        success: Schema.String,
        error: Refused,
        idempotencyKey: (payload) => payload.id
      })
      const ran = { charge: 0, refuse: 0 }
      const charge = DurableStep.make({ name: "Charge", success: Amount })
      const refuse = DurableStep.make({ name: "Refuse", success: Schema.String, error: Refused })
      // Before the gate: written with Activity.make; after it, as DurableSteps. The same history.
      const body = (withSteps: boolean) =>
        Effect.gen(function* () {
          const run = Effect.sync(() => {
            ran.charge++
            return { minor: 12_345_678_901_234_567_890n }
          })
          const charged = withSteps
            ? yield* charge(run)
            : yield* Activity.make({ name: "Charge", success: Amount, execute: run })
          yield* DurableDeferred.await(Gate)
          const refusal = Effect.suspend(() => {
            ran.refuse++
            return Effect.fail(new Refused({ reason: `over ${charged.minor}` }))
          })
          return yield* withSteps
            ? refuse(refusal)
            : Activity.make({ name: "Refuse", success: Schema.String, error: Refused, execute: refusal })
        })
      const payload = { id: unique() }
      const first = yield* startNode(Steps.toLayer(() => body(false)))
      const executionId = yield* Steps.execute(payload, { discard: true }).pipe(provideNode(first.context))
      yield* awaitStatus(executionId, "suspended")
      yield* first.stop
      const recordedByActivity = (yield* engineEvents(executionId)).filter(
        (e) => e._tag === "ActivityCompleted"
      )

      const second = yield* startNode(Steps.toLayer(() => body(true)))
      yield* DurableDeferred.succeed(Gate, {
        token: DurableDeferred.tokenFromExecutionId(Gate, { workflow: Steps, executionId }),
        value: undefined
      }).pipe(provideNode(second.context))
      const exit = yield* Steps.execute(payload).pipe(provideNode(second.context), Effect.exit)
      yield* second.stop
      // Replayed: Charge ran once, under Activity.make; Refuse ran once, as a DurableStep.
      expect(ran).toEqual({ charge: 1, refuse: 1 })
      expect(exit).toStrictEqual(Exit.fail(new Refused({ reason: "over 12345678901234567890" })))
      const completed = (yield* engineEvents(executionId)).filter((e) => e._tag === "ActivityCompleted")
      expect(completed.slice(0, 1)).toStrictEqual(recordedByActivity)
      expect(completed).toHaveLength(2)
      expect(completed[0]).toMatchObject({ name: "Charge", attempt: 1 })
      expect(completed[1]).toMatchObject({ name: "Refuse", attempt: 1 })
      // The refusal as Activity.make encodes it: the error schema's encoding.
      expect(JSON.stringify(completed[1])).toContain('"_tag":"Refused"')
      expect(JSON.stringify(completed[0])).toContain('"minor":"12345678901234567890"')
    })
  )

  it.effect(
    "a DurableStep asked for where the history recorded another activity is named by the determinism check",
    () =>
      Effect.gen(function* () {
        const Gate = DurableDeferred.make("Gate")
        const Evolving = Workflow.make({
          name: "DurableStepsEvolving",
          payload: { id: Schema.String },
          idempotencyKey: (payload) => payload.id
        })
        const V1 = Evolving.toLayer(() =>
          Effect.gen(function* () {
            yield* Activity.make({ name: "Reserve", execute: Effect.void })
            yield* DurableDeferred.await(Gate)
          })
        )
        const cancel = DurableStep.make({ name: "Cancel" })
        const V2 = Evolving.toLayer(() =>
          Effect.gen(function* () {
            yield* cancel(Effect.void)
            yield* DurableDeferred.await(Gate)
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
        yield* v2.stop
        const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        expect(defect).toBeInstanceOf(DurableEngine.DeterminismError)
        expect(String((defect as Error).message)).toContain('"Reserve"')
        expect(String((defect as Error).message)).toContain('"Cancel"')
      })
  )

  it.effect(
    "a DurableStep whose effect is interrupted from within runs again, as Activity.make's does, and is recorded once",
    () =>
      Effect.gen(function* () {
        const Flaky = Workflow.make({
          name: "DurableStepsInterruptedWithin",
          payload: { id: Schema.String },
          success: Schema.Number,
          idempotencyKey: (payload) => payload.id
        })
        // Interrupted twice from within (not the workflow's fiber: e.g. a child fiber the
        // step awaits was interrupted), then done. Activity.make retries such a step.
        const runs = { step: 0, activity: 0 }
        // How often the workflow's code was entered: a step interrupted from within is retried
        // in place (paced, bounded), not by giving the run back to the queue for a replay.
        const entered = { step: 0, activity: 0 }
        const flaky = (counter: "step" | "activity") =>
          Effect.suspend(() => (++runs[counter] <= 2 ? Effect.interrupt : Effect.succeed(runs[counter])))
        const count = DurableStep.make({ name: "Count", success: Schema.Number })
        const node = yield* startNode(
          Flaky.toLayer(({ id }) =>
            Effect.suspend(() => {
              const kind = id.startsWith("step") ? "step" : "activity"
              entered[kind]++
              return kind === "step"
                ? count(flaky("step"))
                : Activity.make({ name: "Count", success: Schema.Number, execute: flaky("activity") })
            })
          )
        )
        const run = (id: string) =>
          Effect.gen(function* () {
            const fiber = yield* Effect.fork(
              Flaky.execute({ id }).pipe(provideNode(node.context), Effect.exit)
            )
            // The retries' pauses (100 ms, then 150 ms) on the TestClock.
            for (let i = 0; i < 20; i++) yield* TestClock.adjust("100 millis")
            return yield* Fiber.join(fiber)
          })
        const viaActivity = yield* run(`activity-${unique()}`)
        const viaStep = yield* run(`step-${unique()}`)
        yield* node.stop
        expect(viaActivity).toStrictEqual(Exit.succeed(3))
        expect(viaStep).toStrictEqual(Exit.succeed(3))
        expect(runs).toEqual({ step: 3, activity: 3 })
        expect(entered).toEqual({ step: 1, activity: 1 })
      })
  )
}
