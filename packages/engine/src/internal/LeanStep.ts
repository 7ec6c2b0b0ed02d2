/**
 * The lean step path: what @effect/workflow does around one activity, without the parts
 * a durable step on this engine does not need (measured in docs/engine.md, "The lean
 * step path"):
 *
 * - `runActivity` is `Workflow.intoResult` for an activity's effect without the fiber it
 *   forks and the second scope it opens: the effect runs in the step's own fiber,
 *   interruptible as in the forked fiber, with the activity instance's scope (made for
 *   this step alone) as its `Scope`, closed when the step ends. Suspension, captured defects and interrupts
 *   mean what they mean there.
 * - `liveResult` marks a step result the engine just recorded with the value the activity
 *   returned, so that `Codecs.withCompiledCodecs` does not decode it back from the
 *   encoding just written (one encode per result, no decode on the live path; a replay
 *   decodes the recorded value as before).
 * - `withoutSpansUnlessTraced` runs a workflow with tracing off when no tracer is
 *   installed (the default tracer records spans nobody reads): the span of every activity
 *   and of every store call in the run then costs nothing. With a tracer installed, the
 *   spans are as before.
 */
import * as Workflow from "@effect/workflow/Workflow"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Scope from "effect/Scope"
import type { ActivityInstance } from "./DomainEvents.js"

const withoutInterrupts = <E>(cause: Cause.Cause<E>): Cause.Cause<E> =>
  Cause.isInterrupted(cause) ? Cause.filter(cause, (c) => !Cause.isInterruptType(c)) : cause

/**
 * `Workflow.intoResult(effect)` for an activity run under `instance`, in the caller's
 * fiber (see the module's comment).
 */
export const runActivity = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  instance: ActivityInstance
): Effect.Effect<Workflow.Result<A, E>, never, Exclude<R, Scope.Scope>> => {
  const captureDefects = Context.get(instance.workflow.annotations, Workflow.CaptureDefects)
  const suspendOnFailure = Context.get(instance.workflow.annotations, Workflow.SuspendOnFailure)
  const run = Effect.interruptible(effect)
  return (
    suspendOnFailure
      ? Effect.catchAllCause(run, (cause) => {
          instance.suspended = true
          if (!Cause.isInterruptedOnly(cause)) instance.cause = Cause.die(Cause.squash(cause))
          return Effect.interrupt
        })
      : run
  ).pipe(
    Effect.provideService(Scope.Scope, instance.scope),
    Effect.matchCauseEffect({
      onSuccess: (value): Effect.Effect<Workflow.Result<A, E>> =>
        Effect.succeed(new Workflow.Complete({ exit: Exit.succeed(value) })),
      onFailure: (cause): Effect.Effect<Workflow.Result<A, E>> => {
        const interruptedOnly = Cause.isInterruptedOnly(cause)
        const filtered = interruptedOnly ? cause : withoutInterrupts(cause)
        return instance.suspended && interruptedOnly
          ? Effect.succeed(new Workflow.Suspended({ cause: instance.cause }))
          : (!instance.interrupted && interruptedOnly) || (!captureDefects && Cause.isDie(cause))
            ? Effect.failCause(filtered as Cause.Cause<never>)
            : Effect.succeed(new Workflow.Complete({ exit: Exit.failCause(filtered) }))
      }
    }),
    Effect.onExit((exit) =>
      Exit.isFailure(exit)
        ? Scope.close(instance.scope, exit)
        : Scope.close(
            instance.scope,
            // A suspended step was interrupted: its scope closes as `Effect.scoped`'s did.
            exit.value._tag === "Complete" ? exit.value.exit : Exit.interrupt(FiberId.none)
          )
    ),
    Effect.uninterruptible
  ) as Effect.Effect<Workflow.Result<A, E>, never, Exclude<R, Scope.Scope>>
}

const live = new WeakSet<object>()

/** A step's result holding the value the activity returned (already decoded). */
export const liveResult = <A>(value: A): Workflow.Result<A, never> => {
  const result = new Workflow.Complete({ exit: Exit.succeed(value) })
  live.add(result)
  return result
}

/** Whether `result` came from `liveResult` (its exit needs no decoding). */
export const isLiveResult = (result: object): boolean => live.has(result)

// The tracer every runtime has unless one is installed (it keeps spans in memory only).
const defaultTracer = Effect.runSync(Effect.tracer)

/** Runs `effect` with tracing off when the tracer is the default one (see the module's comment). */
export const withoutSpansUnlessTraced = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.tracer, (tracer) =>
    tracer === defaultTracer ? Effect.withTracerEnabled(effect, false) : effect
  )
