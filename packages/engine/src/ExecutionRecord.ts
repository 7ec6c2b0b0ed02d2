/**
 * What an execution's log says about it, for a caller outside the engine (an API, a
 * report, an audit): the payload it was started with and the exit it completed with, both
 * as stored — encoded by the workflow's schemas — read from its history without replaying
 * it. The engine's events stay the engine's to decode; a caller asks this instead.
 *
 * @example
 * const record = yield* ExecutionRecord.read(executionId)
 * if (Option.isSome(record.exit) && record.exit.value._tag === "Success") …
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as DurableEngine from "./DurableEngine.js"
import type * as EngineEvent from "./EngineEvent.js"
import type * as EventStore from "./EventStore.js"

/** An execution's input and result, as its history holds them. */
export interface ExecutionRecord {
  /** The payload of its `WorkflowStarted`; `None` when its history does not open with one. */
  readonly payload: Option.Option<unknown>
  /** The exit of its `WorkflowCompleted` (the last one that decodes); `None` while it has none. */
  readonly exit: Option.Option<EngineEvent.ExitJson>
}

/** The record told by an execution's history (`DurableEngine`'s `history`), oldest first. */
export const ofHistory = (history: ReadonlyArray<DurableEngine.HistoryEntry>): ExecutionRecord => {
  const payload = Option.flatMap(history[0]?.engine ?? Option.none(), (event) =>
    event._tag === "WorkflowStarted" ? Option.some(event.payload) : Option.none()
  )
  for (let i = history.length - 1; i >= 0; i--) {
    const event = history[i]?.engine
    if (event !== undefined && Option.isSome(event) && event.value._tag === "WorkflowCompleted") {
      return { payload, exit: Option.some(event.value.exit) }
    }
  }
  return { payload, exit: Option.none() }
}

/** The record of one execution (empty when it has no history). */
export const read = (
  executionId: string
): Effect.Effect<ExecutionRecord, EventStore.EventStoreError, DurableEngine.DurableEngine> =>
  Effect.flatMap(DurableEngine.DurableEngine, (engine) => Effect.map(engine.history(executionId), ofHistory))
