/**
 * An operator's action on an execution (a retry, a stop), recorded once in that execution's
 * `execution-actions-<id>` stream as `ExecutionActionRequested`, with who, why and when:
 * asked again under the same key, nothing is added (a concurrent append of the same record
 * is one record too). The execution's timeline shows it.
 */
import { LifecycleEvent } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Intake from "../Intake.js"
import { unavailable } from "./Failures.js"

/** What is recorded: the action, the execution acted on, the one started for it, and why. */
export interface Action {
  readonly action: LifecycleEvent.ExecutionAction
  readonly of: string
  /** The key of the execution started for it. */
  readonly requestId: string
  readonly started: string
  readonly reason: string
  readonly workflow: string
}

/** Records `action` by `actor` in the acted-on execution's stream, once per key. */
export const record = (store: EventStore.Service, action: Action, actor: Intake.Actor) =>
  Effect.gen(function* () {
    const streamId = LifecycleEvent.executionActionsStream(action.of)
    const recorded = yield* store.readStream(streamId)
    const decoded = yield* LifecycleEvent.registry.decodeAll(recorded)
    if (decoded.some((e) => e.type === "ExecutionActionRequested" && e.data.requestId === action.requestId))
      return
    const encoded = yield* LifecycleEvent.registry.encodeAll([
      LifecycleEvent.ExecutionActionRequested.make({
        ...action,
        at: yield* DateTime.now,
        operator: actor.name,
        via: actor.via,
        reason: action.reason.trim()
      })
    ])
    yield* store
      .append(streamId, EventStore.exactVersion(recorded.at(-1)?.version ?? 0), encoded)
      .pipe(Effect.catchTag("ConcurrencyConflict", () => Effect.void))
  }).pipe(Effect.mapError(unavailable("event store")))
