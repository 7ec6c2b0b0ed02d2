/**
 * Workflow versions: how to change a running workflow's code without breaking the
 * executions started under the old code, in the spirit of Temporal's `patched` /
 * `deprecatePatch`. New code asks whether a named change applies:
 *
 * - an execution that reaches that point live for the first time takes the new branch, and
 *   a `VersionMarked` event in its history says so on every replay;
 * - an execution whose history was recorded past that point without the marker (started
 *   under the old code) replays the old branch.
 *
 * Once no unfinished execution needs the old branch (`unfinishedWithoutMarker`), the
 * change is retired with `deprecated` and the old branch deleted; an execution that still
 * needed it then stops with a `DeterminismError` naming the change. docs/engine.md, "How to
 * change a workflow, step by step".
 *
 * @example
 * const Sale = Sale.toLayer((payload) =>
 *   Effect.gen(function* () {
 *     yield* reserve
 *     if (yield* WorkflowVersion.patched("fraud-check-before-charge")) yield* fraudCheck
 *     yield* charge
 *   })
 * )
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { DurableEngine } from "./DurableEngine.js"
import * as EngineEvent from "./EngineEvent.js"
import type * as EventStore from "./EventStore.js"
import * as ExecutionQueue from "./ExecutionQueue.js"
import { decide } from "./internal/Versions.js"

/**
 * Whether the named change applies to the running execution: true when it reaches this
 * point live for the first time (the marker is recorded) or its history has the marker;
 * false when its history was recorded past this point without it. Only inside a workflow
 * run by the tillflow engine, outside activities.
 */
export const patched = (change: string): Effect.Effect<boolean> => decide(change, false)

/**
 * Retires a change once no execution needs its old branch: the code keeps only the new
 * branch and says so here. A live execution records the marker as `patched` does (so an
 * older deploy still running beside this one replays it); one whose history ran this point
 * without the marker stops with a `DeterminismError` naming the change (`stuck`, until code
 * that has the old branch again resumes it).
 */
export const deprecated = (change: string): Effect.Effect<void> => Effect.asVoid(decide(change, true))

/** What `unfinishedWithoutMarker` counts. */
export interface PendingOldBranch {
  /** Executions of the workflow not finished (pending, running, suspended, stuck). */
  readonly unfinished: number
  /** Of those, the ones whose history holds the change's marker (they take the new branch). */
  readonly marked: number
  /** The others: they may still need the old branch (see `unfinishedWithoutMarker`). */
  readonly withoutMarker: ReadonlyArray<string>
}

/** True when a history holds the change's marker. */
export const hasMarker = (events: ReadonlyArray<EventStore.RecordedEvent>, change: string): boolean =>
  events.some((event) => {
    if (event.type !== "VersionMarked") return false
    const decoded = EngineEvent.fromStored(event)
    return (
      Option.isSome(decoded) &&
      Either.isRight(decoded.value) &&
      decoded.value.right._tag === "VersionMarked" &&
      decoded.value.right.change === change
    )
  })

/**
 * How many unfinished executions of `workflowName` may still need the old branch of
 * `change`: a query over the store, the executions not finished (the queue's index) whose
 * history has no marker of the change. An upper bound: an execution that has not reached
 * the change's point yet is counted too, though it will take the new branch when it gets
 * there (telling which it is needs the code: the replay kit). Retire the change when
 * `withoutMarker` is empty. Reads each unfinished execution's stream once.
 */
export const unfinishedWithoutMarker = (
  workflowName: string,
  change: string
): Effect.Effect<
  PendingOldBranch,
  ExecutionQueue.ExecutionQueueError | EventStore.EventStoreError,
  DurableEngine
> =>
  Effect.gen(function* () {
    const engine = yield* DurableEngine
    const unfinished = yield* engine.list({
      workflowName,
      status: ExecutionQueue.ExecutionStatus.literals.filter(
        (status) => !ExecutionQueue.finishedStatuses.includes(status)
      )
    })
    const withoutMarker: Array<string> = []
    for (const info of unfinished) {
      const history = yield* engine.history(info.executionId)
      if (
        !hasMarker(
          history.map((entry) => entry.recorded),
          change
        )
      )
        withoutMarker.push(info.executionId)
    }
    return { unfinished: unfinished.length, marked: unfinished.length - withoutMarker.length, withoutMarker }
  })
