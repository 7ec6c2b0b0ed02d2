/**
 * The determinism check of replay: when the workflow code asks, at some step, for another
 * activity than the one its history recorded there, the code changed in a way that
 * cannot replay the executions already running. The run dies with a `DeterminismError`
 * naming both activities; the run loop then logs it and records a `DeterminismViolated`
 * event, which stops the execution (`stuck`) until `resume` after a deploy that replays.
 */
import * as Workflow from "@effect/workflow/Workflow"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as EngineEvent from "../EngineEvent.js"
import type { EngineState, RunState } from "./EngineState.js"
import type { Log } from "./ExecutionLog.js"
import { appendEngine, engineEvent } from "./ExecutionLog.js"
import { DeterminismError } from "./DeterminismError.js"
import * as Versions from "./Versions.js"

export { DeterminismError }

/** How the error names an activity. */
export const describeActivity = (name: string, attempt: number) => `activity "${name}" (attempt ${attempt})`

/**
 * The run's violation at step `seq`, where the history recorded `recorded` and the code
 * asks for activity `name` (`attempt`): kept on the run (the first one, for the run
 * loop), and a defect that stops the workflow's code.
 */
export const violation = (
  run: RunState,
  seq: number,
  recorded: typeof EngineEvent.ActivityCompleted.Type,
  name: string,
  attempt: number
): Effect.Effect<never> => {
  const change = Versions.unaskedChange(run, seq)
  return stopWith(
    run,
    new DeterminismError({
      workflowName: run.workflow.name,
      executionId: run.log.executionId,
      seq,
      recorded: describeActivity(recorded.name, recorded.attempt),
      requested: describeActivity(name, attempt),
      ...(change === undefined ? {} : { change })
    })
  )
}

/** Keeps the run's first violation (for the run loop) and stops the workflow's code with it. */
export const stopWith = (run: RunState, error: DeterminismError): Effect.Effect<never> => {
  run.violation ??= error
  return Effect.die(error)
}

/** The check of a step the history holds: nothing when it is the activity the code asks for. */
export const check = (
  run: RunState,
  seq: number,
  recorded: typeof EngineEvent.ActivityCompleted.Type,
  name: string,
  attempt: number
): Effect.Effect<never> | undefined =>
  recorded.name === name && recorded.attempt === attempt
    ? undefined
    : violation(run, seq, recorded, name, attempt)

/** Stops the execution: the violation logged, and recorded as `DeterminismViolated`. */
export const stop = (state: EngineState, log: Log, error: DeterminismError) =>
  Effect.zipRight(
    Effect.logError(error.message),
    appendEngine(state, log, (history) =>
      history.stuck !== undefined
        ? undefined
        : [
            engineEvent({
              _tag: "DeterminismViolated",
              seq: error.seq,
              recorded: error.recorded,
              requested: error.requested,
              ...(error.change === undefined ? {} : { change: error.change })
            })
          ]
    )
  )

/** What a caller of a stopped execution gets: its `DeterminismError` as a defect. */
export const stuckResult = (workflow: Workflow.Any, log: Log) => {
  const stuck = log.history.stuck
  return stuck === undefined
    ? undefined
    : new Workflow.Complete<unknown, unknown>({
        exit: Exit.die(
          new DeterminismError({
            workflowName: workflow.name,
            executionId: log.executionId,
            seq: stuck.seq,
            recorded: stuck.recorded,
            requested: stuck.requested,
            ...(stuck.change === undefined ? {} : { change: stuck.change })
          })
        )
      })
}
