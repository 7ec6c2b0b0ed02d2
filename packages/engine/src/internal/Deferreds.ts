/**
 * Durable deferreds (`DurableDeferred`): a deferred is resolved once, by a
 * `DeferredResolved` event in its execution's stream, from inside the workflow or from
 * outside (the callback receiver, in any process). A workflow looking one up gets its
 * recorded exit, or suspends until the resolution wakes it; a clock's deferred is
 * resolved by its clock firing (`Clocks`).
 */
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { uuidFromSync } from "../DeterministicId.js"
import * as EngineEvent from "../EngineEvent.js"
import * as EventStore from "../EventStore.js"
import * as StoreRetry from "../StoreRetry.js"
import { clockOf, fire } from "./Clocks.js"
import type { EngineState, RunState } from "./EngineState.js"
import { now, runOf, spanOptions, wake } from "./EngineState.js"
import type { Log } from "./ExecutionLog.js"
import { appendTo, engineEvent, keep, load, recheck, touch } from "./ExecutionLog.js"
import * as History from "./executionHistory.js"

/** The id of an execution's `DeferredResolved` for a deferred: one per deferred. */
const deferredResolvedId = (executionId: string, deferredName: string) =>
  uuidFromSync(`tillflow/deferred-resolved/${executionId}/${deferredName}`)

/**
 * The deferred's exit as the log holds it (resolved, or its clock fired), if it does. A
 * run asking at the step its resolution began skips the steps that computed it.
 */
const lookup = (
  log: Log,
  run: RunState | undefined,
  deferredName: string
): Exit.Exit<unknown, unknown> | undefined => {
  const resolved = log.history.deferreds.get(deferredName)
  if (resolved !== undefined) {
    if (
      run !== undefined &&
      resolved.seqStart !== undefined &&
      resolved.seqEnd !== undefined &&
      run.seq === resolved.seqStart
    ) {
      // The steps that computed this result are not asked again: skip their numbers.
      run.seq = resolved.seqEnd
    }
    return resolved.exit
  }
  return History.isClockFired(log.history, deferredName) ? Exit.void : undefined
}

/** A deferred's exit (its values encoded), or `undefined` while it is not resolved. */
export const deferredResult =
  (state: EngineState): WorkflowEngineModule.Encoded["deferredResult"] =>
  (deferred) =>
    Effect.gen(function* () {
      const instance = yield* WorkflowInstance
      const run = state.running.get(instance.executionId)
      const log = run?.log ?? (yield* load(state, instance.executionId))
      const found = lookup(log, run, deferred.name)
      if (found !== undefined) return found
      // It may have been resolved (from outside) since this run read the history.
      yield* recheck(state, log)
      const fresh = lookup(log, run, deferred.name)
      if (fresh !== undefined) return fresh
      const clock = clockOf(log.history, deferred.name)
      if (clock !== undefined && clock.fireAt <= (yield* now)) {
        yield* fire(state, log, clock.name)
        return Exit.void
      }
      if (run !== undefined && !run.deferredStarts.has(deferred.name))
        run.deferredStarts.set(deferred.name, run.seq)
      return undefined
    })

/**
 * Resolves a deferred from outside its workflow (the callback receiver) or from inside.
 * The `DeferredResolved` carries an id derived from the execution and the deferred's
 * name, so the store takes one per deferred whatever the path: the first resolution
 * wins, as the history's fold keeps the first one too.
 *
 * - Inside the workflow's run, or with the execution's history kept here: appended at
 *   the history's version without reading the stream first (a lost race reads what was
 *   appended meanwhile and looks again, as every append of the engine does).
 * - Otherwise: appended at any version, without reading the execution's stream (a
 *   statement saved per resolution); a resolution already stored is refused by its id.
 *
 * The execution is woken when this call appended the resolution.
 */
export const deferredDone =
  (state: EngineState): WorkflowEngineModule.Encoded["deferredDone"] =>
  ({ deferredName, executionId, exit }) =>
    Effect.gen(function* () {
      const run = yield* runOf(state, executionId)
      const seqStart = run?.deferredStarts.get(deferredName)
      const range =
        run !== undefined && seqStart !== undefined ? { seqStart, seqEnd: run.seq } : ({} as const)
      const event: EventStore.NewEvent = {
        ...engineEvent({ _tag: "DeferredResolved", name: deferredName, exit, ...range }),
        eventId: deferredResolvedId(executionId, deferredName)
      }
      const cached = run === undefined ? state.histories.get(executionId) : undefined
      const log = run?.log ?? cached
      let appended: boolean
      if (log === undefined) {
        appended = yield* StoreRetry.retry(
          state.store.append(EngineEvent.streamId(executionId), EventStore.AnyVersion, [event]),
          StoreRetry.quick
        ).pipe(
          Effect.as(true),
          Effect.catchTag("DuplicateEventId", () => Effect.succeed(false)),
          Effect.orDie
        )
      } else {
        if (cached !== undefined) state.histories.delete(executionId)
        appended = yield* Effect.orDie(
          appendTo(state, log, (history) => (history.deferreds.has(deferredName) ? undefined : [event])).pipe(
            Effect.catchTag("DuplicateEventId", () => Effect.succeed(false))
          )
        )
        if (cached !== undefined) yield* keep(state, cached)
      }
      // Resolved while its run is under way here (by that run, a `raceAll`, or by this
      // process's receiver): the run reads it from the log it holds, so no queue update;
      // should the run still suspend, it is released due at once (what the wake's
      // `wake_requested` did).
      if (appended && run !== undefined) run.resolvedOwn = true
      else if (appended) {
        touch(state, executionId)
        yield* wake(state, executionId)
      }
    }).pipe(Effect.withSpan("DurableEngine.deferredDone", spanOptions({ executionId, deferredName })))

/**
 * A deferred's resolution from outside its workflow, for a caller that writes it in one
 * atomic write with events of its own (`EventStore.appendStreams`): the execution's part
 * of that write (its `DeferredResolved`, at any version, with the id that lets the store
 * take one per deferred: a deferred resolved already fails the whole write with
 * `DuplicateEventId`), and what to run once the write landed: the history this process
 * keeps of the execution dropped (the stream moved past it) and the execution woken, as
 * `deferredDone` does after its own append.
 */
export const resolutionOf = (
  state: EngineState,
  executionId: string,
  deferredName: string,
  exit: Exit.Exit<unknown, unknown>
): { readonly append: EventStore.StreamAppend; readonly landed: Effect.Effect<void> } => ({
  append: {
    streamId: EngineEvent.streamId(executionId),
    expectedVersion: EventStore.AnyVersion,
    events: [
      {
        ...engineEvent({ _tag: "DeferredResolved", name: deferredName, exit }),
        eventId: deferredResolvedId(executionId, deferredName)
      }
    ]
  },
  landed: Effect.suspend(() => {
    state.histories.delete(executionId)
    touch(state, executionId)
    return wake(state, executionId)
  })
})
