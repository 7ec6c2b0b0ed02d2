/**
 * A durable step defined once: `DurableStep.make({ name, success, error })` builds what
 * `Activity.make` builds on every call (the exit schema, the encoders) a single time, and
 * `step(execute)` runs one step through the engine's own activity path (replay, the
 * determinism check, the append before the workflow sees the result) with none of
 * `Activity.make`'s per-call machinery: no exit schema built, no retry schedule wrapped
 * around the effect, no span unless tracing is on. `DurableStep.family({ success, error })`
 * is the same for steps whose name is only known at the call (`attempt-${n}/send`): the
 * schemas are built once for the family, the step per name.
 *
 * A step is recorded exactly as an `Activity.make` activity of the same name and schemas
 * is (`ActivityCompleted`, same encoding), so the two may replace each other in a
 * workflow without changing its history.
 *
 * Interruption means what it means for `Activity.make`. A run stopped from outside (the
 * worker's shutdown, a lost lease) interrupts the step's fiber: the step is not recorded
 * and runs again when the execution is next claimed (neither path's own handlers run
 * under that interruption). A step whose effect ends interrupted from within (a fiber it
 * awaited was interrupted) is run again in place, paced and bounded by `Activity.make`'s
 * own policy (100 ms × 1.5ⁿ, at most 10 s apart, 10 times), then dies with its message;
 * this costs nothing until such an interruption happens (one failure handler per step),
 * and keeps such a step from being given back to the queue and replayed at once, again and
 * again.
 */
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Effectable from "effect/Effectable"
import * as FiberRef from "effect/FiberRef"
import type * as ParseResult from "effect/ParseResult"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"

/** A durable step's definition, built once; call it with the effect to run. */
export interface DurableStep<A, I, E, EI> {
  readonly stepName: string
  /** Runs `execute` as this step: live once, its recorded result on every replay. */
  <R>(
    execute: Effect.Effect<A, E, R>
  ): Effect.Effect<
    A,
    E,
    Exclude<R, WorkflowInstance | WorkflowEngine | Scope.Scope> | WorkflowInstance | WorkflowEngine
  >
  /** @internal the encoded types, for inference */
  readonly "~encoded"?: [I, EI]
}

/** Steps of one pair of schemas, named at the call: `family(name)` is the step `name`. */
export type Family<A, I, E, EI> = (name: string) => DurableStep<A, I, E, EI>

// `Activity.make`'s default `interruptRetryPolicy`, the same schedule.
const interruptRetryPolicy = Schedule.exponential(100, 1.5).pipe(
  Schedule.union(Schedule.spaced("10 seconds")),
  Schedule.intersect(Schedule.recurs(10)),
  Schedule.whileInput((cause: Cause.Cause<unknown>) => Cause.isInterrupted(cause))
)

/**
 * `execute`, run again while it ends interrupted from within, as `Activity.make` runs it:
 * the retry driver is set up only once such an interruption has happened (its first
 * input is that interruption, so the pauses and the bound are `Activity.make`'s).
 */
const retryOnInterrupt = <A, E, R>(name: string, execute: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchAllCause(execute, (cause) => {
    if (!Cause.isInterrupted(cause)) return Effect.failCause(cause)
    let first = true
    return Effect.suspend(() => {
      if (!first) return execute
      first = false
      return Effect.failCause(cause)
    }).pipe(
      Effect.sandbox,
      Effect.retry(interruptRetryPolicy),
      Effect.catchAll((last) =>
        Cause.isInterrupted(last)
          ? Effect.die(`Activity "${name}" interrupted and retry attempts exhausted`)
          : Effect.failCause(last)
      )
    )
  })

const stepOf = (
  name: string,
  successSchema: Schema.Schema.Any,
  errorSchema: Schema.Schema.All,
  exitSchema: Schema.Schema.Any,
  encodeSuccess: (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>,
  encodeError: (error: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
) => {
  const run = <R>(execute: Effect.Effect<unknown, unknown, R>) =>
    Effect.gen(function* () {
      const engine = yield* WorkflowEngine
      const instance = yield* WorkflowInstance
      const attempt = yield* Activity.CurrentAttempt
      const retried = retryOnInterrupt(name, execute)
      const activity = {
        ...Effectable.CommitPrototype,
        [Activity.TypeId]: Activity.TypeId,
        name,
        successSchema,
        errorSchema,
        exitSchema,
        execute: retried,
        // What engines coding exits themselves (@effect/workflow's in-memory one) run: the
        // values encoded by the step's schemas, with encoders built once per definition.
        executeEncoded: Effect.matchEffect(retried, {
          onFailure: (error) => Effect.flatMap(Effect.orDie(encodeError(error)), Effect.fail),
          onSuccess: (value) => Effect.orDie(encodeSuccess(value))
        }),
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
  return Object.assign(traced, { stepName: name })
}

/**
 * Steps whose results are encoded by `success` (default `Schema.Void`) and failures by
 * `error` (default `Schema.Never`), named at the call: the schemas are built once here.
 */
export const family = <
  Success extends Schema.Schema.Any = typeof Schema.Void,
  Error extends Schema.Schema.All = typeof Schema.Never
>(
  options: {
    readonly success?: Success | undefined
    readonly error?: Error | undefined
  } = {}
): Family<Success["Type"], Success["Encoded"], Error["Type"], Error["Encoded"]> => {
  // A schema given as undefined (an import cycle evaluated it too late) would silently
  // become the default and change what the step records: refuse it where it is defined.
  if (
    ("success" in options && options.success === undefined) ||
    ("error" in options && options.error === undefined)
  ) {
    throw new Error("DurableStep: a success or error schema was given as undefined (an import cycle?)")
  }
  const successSchema = (options.success ?? Schema.Void) as Schema.Schema.Any
  const errorSchema = (options.error ?? Schema.Never) as Schema.Schema.All
  const exitSchema = Schema.ExitFromSelf({
    success: successSchema,
    failure: errorSchema,
    defect: Schema.Defect
  })
  const encodeSuccess = Schema.encodeUnknown(successSchema as Schema.Schema<unknown, unknown, never>)
  const encodeError = Schema.encodeUnknown(errorSchema as Schema.Schema<unknown, unknown, never>)
  return (name) =>
    stepOf(
      name,
      successSchema,
      errorSchema,
      exitSchema,
      encodeSuccess,
      encodeError
    ) as unknown as DurableStep<Success["Type"], Success["Encoded"], Error["Type"], Error["Encoded"]>
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
}): DurableStep<Success["Type"], Success["Encoded"], Error["Type"], Error["Encoded"]> =>
  family<Success, Error>(options)(options.name)
