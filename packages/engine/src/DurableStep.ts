/**
 * A durable step defined once: `DurableStep.make({ name, success, error })` builds what
 * `Activity.make` builds on every call (the exit schema, the encoders) a single time, and
 * `step(execute)` runs one step through the engine's own activity path (replay, the
 * determinism check, the append before the workflow sees the result) with none of
 * `Activity.make`'s per-call machinery: no exit schema built, no retry-on-interrupt
 * schedule wrapped around the effect, no span unless tracing is on. A step is recorded
 * exactly as an `Activity.make` activity of the same name and schemas is
 * (`ActivityCompleted`, same encoding), so the two may replace each other in a workflow
 * without changing its history.
 */
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Effectable from "effect/Effectable"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"

/** A durable step's definition, built once; call it with the effect to run. */
export interface DurableStep<A, I, E, EI> {
  readonly stepName: string
  /** Runs `execute` as this step: live once, its recorded result on every replay. */
  <R>(
    execute: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, Exclude<R, WorkflowInstance | WorkflowEngine> | WorkflowInstance | WorkflowEngine>
  /** @internal the encoded types, for inference */
  readonly "~encoded"?: [I, EI]
}

/**
 * Defines a durable step named `name` whose result is encoded by `success` (default
 * `Schema.Void`) and whose failure by `error` (default `Schema.Never`).
 */
export const make = <
  Success extends Schema.Schema.Any = typeof Schema.Void,
  Error extends Schema.Schema.All = typeof Schema.Never
>(options: {
  readonly name: string
  readonly success?: Success | undefined
  readonly error?: Error | undefined
}): DurableStep<Success["Type"], Success["Encoded"], Error["Type"], Error["Encoded"]> => {
  const successSchema = (options.success ?? Schema.Void) as Schema.Schema.Any
  const errorSchema = (options.error ?? Schema.Never) as Schema.Schema.All
  const exitSchema = Schema.ExitFromSelf({
    success: successSchema,
    failure: errorSchema,
    defect: Schema.Defect
  })
  const name = options.name
  const run = <R>(execute: Effect.Effect<unknown, unknown, R>) =>
    Effect.gen(function* () {
      const engine = yield* WorkflowEngine
      const instance = yield* WorkflowInstance
      const attempt = yield* Activity.CurrentAttempt
      const activity = {
        ...Effectable.CommitPrototype,
        [Activity.TypeId]: Activity.TypeId,
        name,
        successSchema,
        errorSchema,
        exitSchema,
        execute,
        executeEncoded: execute,
        commit: () => Effect.dieMessage(`DurableStep "${name}" is run by calling it, not by yielding it`)
      } as unknown as Parameters<WorkflowEngine["Type"]["activityExecute"]>[0]
      const result = yield* Workflow.wrapActivityResult(
        engine.activityExecute(activity, attempt),
        (r) => r._tag === "Suspended"
      )
      if (result._tag === "Suspended") return yield* Workflow.suspend(instance)
      return yield* result.exit
    })
  // The step's span (named as Activity.make names it) only when tracing is on: the engine
  // turns it off for a run when no tracer is installed (`LeanStep.withoutSpansUnlessTraced`).
  const traced = <R>(execute: Effect.Effect<unknown, unknown, R>) =>
    Effect.flatMap(FiberRef.get(FiberRef.currentTracerEnabled), (enabled) =>
      enabled ? Effect.withSpan(run(execute), name, { captureStackTrace: false }) : run(execute)
    )
  return Object.assign(traced, { stepName: name }) as unknown as DurableStep<
    Success["Type"],
    Success["Encoded"],
    Error["Type"],
    Error["Encoded"]
  >
}
