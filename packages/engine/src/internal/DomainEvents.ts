/**
 * The domain events an activity emits (`DurableEngine.emit`): buffered on the activity's
 * own `WorkflowInstance` while it runs, then split in two. Those for the execution's own
 * stream are appended with the step's `ActivityCompleted`, in one batch; those for other
 * streams go in the step's outbox (its metadata) with an id derived from the step, and
 * are delivered after it and again on every replay until stored: at least once, never
 * duplicated.
 */
import type { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import { uuidFromSync } from "../DeterministicId.js"
import * as EventStore from "../EventStore.js"
import * as StoreRetry from "../StoreRetry.js"
import type { EngineState } from "./EngineState.js"
import type * as History from "./executionHistory.js"

/** A domain event emitted by an activity: to the execution's stream unless `stream` says otherwise. */
export interface DomainEvent extends EventStore.NewEvent {
  readonly stream?: string | undefined
}

/**
 * Where `emit` puts a running activity's domain events: a buffer on the activity's own
 * `WorkflowInstance` (the engine builds one per activity run), so that an activity needs
 * no service of its own in its context (one context update per durable step less).
 */
export const emitted: unique symbol = Symbol.for("tillflow/DurableEngine/emitted")

/** The `WorkflowInstance` of a running activity, with the buffer of what it emits. */
export type ActivityInstance = WorkflowInstance["Type"] & { readonly [emitted]: Array<DomainEvent> }

/** The buffer of a running activity's domain events, if `instance` is one. */
export const emittedOf = (instance: WorkflowInstance["Type"]): Array<DomainEvent> | undefined =>
  emitted in instance ? (instance as ActivityInstance)[emitted] : undefined

/**
 * An activity's domain events sorted into those appended with its step to `stream` (the
 * execution's) and its outbox, each outbox event with an id from the step and its place.
 */
export const sortEmitted = (
  events: ReadonlyArray<DomainEvent>,
  stream: string,
  seq: number
): { readonly own: Array<EventStore.NewEvent>; readonly outbox: Array<History.OutboxEvent> } => {
  const outbox: Array<History.OutboxEvent> = []
  const own: Array<EventStore.NewEvent> = []
  for (let index = 0; index < events.length; index++) {
    const { stream: target, ...event } = events[index] as DomainEvent
    if (target === undefined || target === stream) {
      own.push(event)
      continue
    }
    outbox.push({
      stream: target,
      event: {
        type: event.type,
        data: event.data,
        schemaVersion: event.schemaVersion ?? 1,
        metadata: event.metadata ?? {},
        eventId: event.eventId ?? uuidFromSync(`${stream}/${seq}/${index}`)
      }
    })
  }
  return { own, outbox }
}

/** An outbox event as kept in its step's metadata (read back by `executionHistory`). */
export const outboxJson = (entry: History.OutboxEvent): EventStore.JsonObject => ({
  stream: entry.stream,
  type: entry.event.type,
  eventId: entry.event.eventId ?? null,
  schemaVersion: entry.event.schemaVersion ?? 1,
  data: entry.event.data,
  metadata: entry.event.metadata ?? {}
})

const groupByStream = (
  outbox: ReadonlyArray<History.OutboxEvent>
): ReadonlyArray<readonly [string, ReadonlyArray<EventStore.NewEvent>]> => {
  const groups = new Map<string, Array<EventStore.NewEvent>>()
  for (const entry of outbox) {
    const group = groups.get(entry.stream)
    if (group === undefined) groups.set(entry.stream, [entry.event])
    else group.push(entry.event)
  }
  return Array.from(groups.entries())
}

/** Appends domain events for other streams; a stored id means an earlier try succeeded. */
export const deliver = (state: EngineState, outbox: ReadonlyArray<History.OutboxEvent>) =>
  outbox.length === 0
    ? Effect.void
    : Effect.forEach(
        groupByStream(outbox),
        ([stream, events]) =>
          state.store.append(stream, EventStore.AnyVersion, events).pipe(
            Effect.catchTag("DuplicateEventId", () => Effect.void),
            (effect) => StoreRetry.retry(effect, StoreRetry.quick),
            Effect.orDie
          ),
        { discard: true }
      )
