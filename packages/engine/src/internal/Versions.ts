/**
 * Workflow versions (`WorkflowVersion.patched` / `deprecated`), the engine's side: whether
 * a named change applies at the point a run asks, decided from the execution's history.
 *
 * - The history holds the change's marker (`VersionMarked`): true.
 * - The history was recorded past this point without it (a step numbered at or after the
 *   point, a later marker, or the execution's end): the execution ran this point under
 *   the old code, so false, on every replay.
 * - Otherwise the run reaches the point live for the first time: the marker is appended
 *   (at the history's version: a lost race reads and decides again) and the answer is true.
 *
 * A marker takes no step number, so the steps of the old branch keep their numbers.
 */
import { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DeterminismError } from "./DeterminismError.js"
import type { EngineState, RunState } from "./EngineState.js"
import { appendEngine, engineEvent } from "./ExecutionLog.js"
import type * as History from "./executionHistory.js"

/** The engine state behind each engine's `WorkflowEngine` service (what a workflow has in context). */
const states = new WeakMap<object, EngineState>()

/** Registers the state of an engine under its `WorkflowEngine` service. */
export const register = (engine: object, state: EngineState): void => void states.set(engine, state)

/** The changes a run asked about, so that the determinism check can name one it did not. */
const asked = new WeakMap<RunState, Set<string>>()

/**
 * The change whose marker the history holds at or before step `seq` but which this run
 * did not ask about (the latest such): code without the change replaying a history
 * recorded with it (a rollback, or the `patched` call removed too early).
 */
export const unaskedChange = (run: RunState, seq: number): string | undefined => {
  const mine = asked.get(run)
  let found: { readonly change: string; readonly seq: number } | undefined
  for (const marker of run.log.history.markers.values()) {
    if (marker.seq > seq || mine?.has(marker.change) === true) continue
    if (found === undefined || marker.seq >= found.seq) found = marker
  }
  return found?.change
}

/**
 * True when the history was recorded past step `seq`: a step numbered at or after it, the
 * steps of a race resolved from it on, a marker asked at a later step, or the end.
 */
const recordedPast = (
  state: EngineState,
  executionId: string,
  history: History.History,
  seq: number
): boolean => {
  if (history.completed !== undefined || state.replayOnly?.completed.has(executionId) === true) return true
  for (const step of history.activities.keys()) if (step >= seq) return true
  for (const marker of history.markers.values()) if (marker.seq > seq) return true
  for (const deferred of history.deferreds.values()) {
    if (deferred.seqStart !== undefined && deferred.seqStart >= seq) return true
  }
  return false
}

/** What a deprecated change's check says of an execution that ran its old branch. */
const oldBranchLeft = (run: RunState, change: string, seq: number) =>
  new DeterminismError({
    workflowName: run.workflow.name,
    executionId: run.log.executionId,
    seq,
    recorded: `the old branch of change "${change}" (no marker: the execution started before the change)`,
    requested: `change "${change}" as deprecated (only its new branch is left)`,
    change
  })

/** Whether `change` applies to the running execution (see the module's doc). */
export const decide = (change: string, deprecated: boolean): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const instance = yield* Effect.serviceOption(WorkflowInstance)
    const engine = yield* Effect.serviceOption(WorkflowEngine)
    const state = Option.isSome(engine) ? states.get(engine.value) : undefined
    const run =
      state !== undefined && Option.isSome(instance)
        ? state.running.get(instance.value.executionId)
        : undefined
    if (state === undefined || run === undefined || Option.isNone(instance)) {
      return yield* Effect.dieMessage(
        `WorkflowVersion: change "${change}" was asked about outside a workflow run by the tillflow engine`
      )
    }
    const mine = asked.get(run) ?? new Set<string>()
    asked.set(run, mine)
    mine.add(change)
    const log = run.log
    const seq = run.seq
    if (log.history.markers.has(change)) return true
    if (!recordedPast(state, log.executionId, log.history, seq)) {
      yield* appendEngine(state, log, (history) =>
        history.markers.has(change) || recordedPast(state, log.executionId, history, seq)
          ? undefined
          : [engineEvent({ _tag: "VersionMarked", change, seq })]
      )
      if (log.history.markers.has(change)) return true
    }
    if (!deprecated) return false
    const error = oldBranchLeft(run, change, seq)
    run.violation ??= error
    return yield* Effect.die(error)
  })
