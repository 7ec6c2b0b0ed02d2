/**
 * The state of one execution folded from its stream: what the engine needs to replay it
 * (recorded activities by order, resolved deferreds, timers, interruption, completion).
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as EngineEvent from "../EngineEvent.js"
import type * as EventStore from "../EventStore.js"

type ActivityCompleted = typeof EngineEvent.ActivityCompleted.Type
type DeferredResolved = typeof EngineEvent.DeferredResolved.Type
type WorkflowStarted = typeof EngineEvent.WorkflowStarted.Type
type DeterminismViolated = typeof EngineEvent.DeterminismViolated.Type
type VersionMarked = typeof EngineEvent.VersionMarked.Type

/** A recorded activity, with its outbox: domain events for other streams to (re)deliver. */
export interface RecordedActivity {
  readonly event: ActivityCompleted
  readonly outbox: ReadonlyArray<OutboxEvent>
}

/** A domain event for a stream other than the execution's, with a deterministic id. */
export interface OutboxEvent {
  readonly stream: string
  readonly event: EventStore.NewEvent
}

export interface History {
  version: number
  started: WorkflowStarted | undefined
  /**
   * The W3C `traceparent` of the span that started the execution (its `WorkflowStarted`
   * metadata), so that every run of the execution continues that trace.
   */
  traceparent: string | undefined
  /** The tenant the execution was started for (its `WorkflowStarted` metadata, `Tenant`). */
  tenant: string | undefined
  readonly activities: Map<number, RecordedActivity>
  readonly activityKeys: Map<string, RecordedActivity>
  readonly deferreds: Map<string, DeferredResolved>
  readonly clocks: Map<string, { readonly fireAt: number; fired: boolean }>
  interrupted: boolean
  /** The raw JSON of the `WorkflowCompleted` exit (decoded with the workflow's schemas). */
  completed: { readonly exit: unknown } | undefined
  stuck: DeterminismViolated | undefined
  /** The version markers recorded (`WorkflowVersion.patched`), by change name, the first of each. */
  readonly markers: Map<string, VersionMarked>
}

export const empty = (): History => ({
  version: 0,
  started: undefined,
  traceparent: undefined,
  tenant: undefined,
  activities: new Map(),
  activityKeys: new Map(),
  deferreds: new Map(),
  clocks: new Map(),
  interrupted: false,
  completed: undefined,
  stuck: undefined,
  markers: new Map()
})

export const activityKey = (name: string, attempt: number): string => `${attempt}/${name}`

/** The deferred a durable clock resolves. */
export const clockDeferredPrefix = "DurableClock/"

/** An event as stored or as just appended: enough to fold it. */
export interface Stored {
  readonly version: number
  readonly type: string
  readonly data: EventStore.Json
  readonly metadata?: EventStore.JsonObject | undefined
  /** As stored; absent for an event just built here (the engine's current version). */
  readonly schemaVersion?: number | undefined
}

/** Folds one stored event into the history; fails on an engine event that does not decode. */
export const apply = (history: History, stored: Stored): Either.Either<void, string> => {
  const decoded = EngineEvent.fromStored(stored)
  if (Option.isNone(decoded)) {
    applyDecoded(history, stored, undefined)
    return Either.right(undefined)
  }
  if (Either.isLeft(decoded.value)) {
    history.version = stored.version
    return Either.left(
      `event ${stored.version} (${stored.type}) does not decode: ${decoded.value.left.message}`
    )
  }
  applyDecoded(history, stored, decoded.value.right)
  return Either.right(undefined)
}

/**
 * Folds one event whose engine event is known (`undefined` for a domain event): what
 * `apply` does once it decoded it. For an event just appended, whose engine event is the
 * one it was encoded from, when decoding it back would give an equal one.
 */
export const applyDecoded = (
  history: History,
  stored: Stored,
  event: EngineEvent.EngineEvent | undefined
): void => {
  history.version = stored.version
  if (event === undefined) return
  if (event._tag === "WorkflowCompleted") {
    const data = stored.data as EventStore.JsonObject
    history.completed ??= { exit: data["exit"] }
    return
  }
  if (event._tag === "WorkflowStarted" && history.started === undefined) {
    const traceparent = stored.metadata?.["traceparent"]
    if (typeof traceparent === "string") history.traceparent = traceparent
    const tenant = stored.metadata?.["tenant"]
    if (typeof tenant === "string") history.tenant = tenant
  }
  applyEvent(history, event, outboxOf(stored.metadata ?? {}))
}

const outboxOf = (metadata: EventStore.JsonObject): ReadonlyArray<OutboxEvent> => {
  const raw = metadata["outbox"]
  if (!Array.isArray(raw)) return []
  const outbox: Array<OutboxEvent> = []
  for (const entry of raw as ReadonlyArray<EventStore.Json>) {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) continue
    const item = entry as EventStore.JsonObject
    const stream = item["stream"]
    const type = item["type"]
    const eventId = item["eventId"]
    const schemaVersion = item["schemaVersion"]
    if (typeof stream !== "string" || typeof type !== "string" || typeof eventId !== "string") continue
    const metadata = item["metadata"]
    outbox.push({
      stream,
      event: {
        type,
        eventId,
        data: item["data"] ?? null,
        schemaVersion: typeof schemaVersion === "number" ? schemaVersion : 1,
        metadata:
          typeof metadata === "object" && metadata !== null && !Array.isArray(metadata)
            ? (metadata as EventStore.JsonObject)
            : {}
      }
    })
  }
  return outbox
}

/** Folds an engine event (already decoded) into the history. */
export const applyEvent = (
  history: History,
  event: EngineEvent.EngineEvent,
  outbox: ReadonlyArray<OutboxEvent> = []
): void => {
  switch (event._tag) {
    case "WorkflowStarted":
      history.started ??= event
      return
    case "ActivityCompleted": {
      // The first record of a step wins: a late duplicate from a worker whose lease
      // expired must not change what a replay returns.
      if (history.activities.has(event.seq)) return
      const recorded: RecordedActivity = { event, outbox }
      history.activities.set(event.seq, recorded)
      const key = activityKey(event.name, event.attempt)
      if (!history.activityKeys.has(key)) history.activityKeys.set(key, recorded)
      return
    }
    case "DeferredResolved":
      if (!history.deferreds.has(event.name)) history.deferreds.set(event.name, event)
      return
    case "ClockScheduled":
      if (!history.clocks.has(event.name))
        history.clocks.set(event.name, { fireAt: event.fireAt, fired: false })
      return
    case "ClockFired": {
      const clock = history.clocks.get(event.name)
      if (clock !== undefined) clock.fired = true
      return
    }
    case "WorkflowInterrupted":
      history.interrupted = true
      return
    case "WorkflowCompleted":
      // `apply` keeps the raw JSON of the exit instead (decoded with the workflow's schemas).
      return
    case "DeterminismViolated":
      history.stuck = event
      return
    case "WorkflowResumed":
      history.stuck = undefined
      return
    case "WorkflowSuspended":
      return
    case "VersionMarked":
      if (!history.markers.has(event.change)) history.markers.set(event.change, event)
      return
  }
}

/** True when the deferred is resolved, by a `DeferredResolved` or by its clock firing. */
export const isClockFired = (history: History, deferredName: string): boolean => {
  if (!deferredName.startsWith(clockDeferredPrefix)) return false
  const clock = history.clocks.get(deferredName.slice(clockDeferredPrefix.length))
  return clock !== undefined && clock.fired
}

/** The earliest timer still to fire, if any. */
export const nextTimer = (history: History): number | undefined => {
  let next: number | undefined
  for (const clock of history.clocks.values()) {
    if (clock.fired) continue
    if (next === undefined || clock.fireAt < next) next = clock.fireAt
  }
  return next
}
