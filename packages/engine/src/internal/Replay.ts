/**
 * Replay: the engine's part of every durable step. An activity the history recorded
 * returns its recorded result without running again (its outbox delivered again, in case
 * an earlier delivery was lost); an activity asked for where the history recorded another
 * one fails the determinism check (`Determinism`); otherwise the activity runs live, and
 * its result is appended, with the domain events it emitted, before the workflow sees it.
 */
import * as Workflow from "@effect/workflow/Workflow"
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as EngineEvent from "../EngineEvent.js"
import type * as EventStore from "../EventStore.js"
import * as Determinism from "./Determinism.js"
import type { ActivityInstance } from "./DomainEvents.js"
import { deliver, emitted, outboxJson, sortEmitted } from "./DomainEvents.js"
import type { EngineState } from "./EngineState.js"
import type { Log } from "./ExecutionLog.js"
import { appendTo, engineEvent } from "./ExecutionLog.js"
import * as History from "./executionHistory.js"
import { liveResult, runActivity } from "./LeanStep.js"
import { encodeRefusingRedacted } from "./RefuseRedacted.js"

/**
 * Runs an activity, or returns its recorded result, with the exit's values encoded by
 * the activity's schemas (`Codecs.withCompiledCodecs` decodes the exit), or, for a
 * success this run just recorded, the value the activity returned (`LeanStep`). No span
 * of its own: @effect/workflow's activity span (its name, executionId) wraps it.
 */
export const activityExecute =
  (state: EngineState): WorkflowEngineModule.Encoded["activityExecute"] =>
  (activity, attempt) =>
    Effect.gen(function* () {
      const instance = yield* WorkflowInstance
      const run = state.running.get(instance.executionId)
      if (run === undefined) {
        return yield* Effect.dieMessage(
          `Activity "${activity.name}" ran outside a tillflow engine run of execution ${instance.executionId}`
        )
      }
      const seq = run.seq++
      const history = run.log.history
      // Replay: the recorded result, looked up by name and attempt so that activities
      // started concurrently may ask in another order.
      const recorded = history.activityKeys.get(History.activityKey(activity.name, attempt))
      if (recorded !== undefined) {
        if (recorded.outbox.length > 0) yield* deliver(state, recorded.outbox)
        return new Workflow.Complete({ exit: recorded.event.exit })
      }
      // Not recorded under its name, yet something is recorded at this step: another activity.
      const atThisPoint = history.activities.get(seq)
      if (atThisPoint !== undefined) {
        return yield* Determinism.violation(run, seq, atThisPoint.event, activity.name, attempt)
      }
      // The replay kit runs nothing live: the history ends here for this step.
      if (state.replayOnly !== undefined) {
        state.replayOnly.unrecorded(instance.executionId, seq, activity.name, attempt)
        return new Workflow.Suspended({})
      }
      // An interrupted workflow starts no new side effect; it suspends, and unwinds.
      if (instance.interrupted && !run.unwinding) return new Workflow.Suspended({})

      const activityInstance = instanceOf(instance, yield* Scope.make())
      // The value the activity returned, kept beside its encoding: the workflow gets it
      // as it is once recorded (the lean step path), instead of decoding it back.
      let returned: { readonly value: unknown } | undefined
      const result = yield* runActivity(
        Effect.matchEffect(activity.execute, {
          onFailure: (error: unknown) =>
            Effect.flatMap(
              encodeRefusingRedacted(activity.errorSchema, error, activity.name, "error"),
              Effect.fail
            ),
          onSuccess: (value: unknown) => {
            returned = { value }
            return encodeRefusingRedacted(activity.successSchema, value, activity.name, "result")
          }
        }),
        activityInstance
      ).pipe(Effect.provideService(WorkflowInstance, activityInstance))
      if (result._tag === "Suspended") return result

      const { outbox, own } = sortEmitted(activityInstance[emitted], run.log.stream, seq)
      const appended = yield* Effect.either(
        recordStep(state, run.log, seq, activity.name, attempt, result.exit, own, outbox)
      )
      if (Either.isLeft(appended)) {
        // A result the store refuses (a secret, not JSON) is recorded as the refusal:
        // the workflow sees a defect instead of a value that must not be stored.
        yield* Effect.orDie(
          recordStep(state, run.log, seq, activity.name, attempt, Exit.die(appended.left), [], [])
        )
      }
      const final = history.activities.get(seq)
      if (final === undefined) {
        return yield* Effect.dieMessage(
          `Activity ${Determinism.describeActivity(activity.name, attempt)} was not recorded`
        )
      }
      // Another worker (whose lease had expired) may have recorded a different step here.
      const mismatch = Determinism.check(run, seq, final.event, activity.name, attempt)
      if (mismatch !== undefined) return yield* mismatch
      if (final.outbox.length > 0) yield* deliver(state, final.outbox)
      // Recorded as this run encoded it (not another worker's record, not a refusal).
      if (returned !== undefined && Exit.isSuccess(result.exit) && final.event.exit === result.exit) {
        return liveResult(returned.value)
      }
      return new Workflow.Complete({ exit: final.event.exit })
    })

/**
 * What `WorkflowInstance.initial` builds for an activity, with the scope made in the
 * step's fiber (its `Effect.runSync(Scope.make())` starts a fiber runtime for it on every
 * step), and the buffer of the domain events the activity emits.
 */
const instanceOf = (instance: WorkflowInstance["Type"], scope: Scope.CloseableScope): ActivityInstance => ({
  executionId: instance.executionId,
  workflow: instance.workflow,
  scope,
  suspended: false,
  interrupted: instance.interrupted,
  cause: undefined,
  activityState: { count: 0, latch: Effect.unsafeMakeLatch() },
  [emitted]: []
})

/** Appends a step's `ActivityCompleted` (with its domain events) unless `seq` is recorded. */
const recordStep = (
  state: EngineState,
  log: Log,
  seq: number,
  name: string,
  attempt: number,
  exit: Exit.Exit<unknown, unknown>,
  own: ReadonlyArray<EventStore.NewEvent>,
  outbox: ReadonlyArray<History.OutboxEvent>
) =>
  appendTo(state, log, (current) => {
    if (current.activities.has(seq)) return undefined
    const completed = engineEvent(
      { _tag: "ActivityCompleted", seq, name, attempt, exit: exit as EngineEvent.ExitJson },
      outbox.length > 0 ? { outbox: outbox.map(outboxJson) } : undefined
    )
    return own.length === 0 ? [completed] : [completed, ...own]
  })
