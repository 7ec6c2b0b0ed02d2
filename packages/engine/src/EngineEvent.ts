/**
 * The workflow engine's event catalogue: what the engine appends to an execution's stream
 * (`execution-<id>`) as the execution starts, runs activities, waits on deferreds and
 * timers, suspends, is interrupted and completes. Replaying these events rebuilds an
 * execution's state on any worker; the domain events a workflow emits (business facts)
 * sit beside them in the same stream under their own types.
 *
 * Exits are stored with `Schema.Exit` over the already-encoded values of the activity's,
 * deferred's or workflow's own schemas, defects as `{ name, message }` (never a stack).
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** An exit whose success and failure are JSON values already encoded by their schemas. */
export const ExitJson = Schema.Exit({
  success: Schema.Unknown,
  failure: Schema.Unknown,
  defect: Schema.Defect
})
/** @see ExitJson */
export type ExitJson = typeof ExitJson.Type

/** The execution was started (once per execution id: starting again is a no-op). */
export const WorkflowStarted = Schema.TaggedStruct("WorkflowStarted", {
  workflowName: Schema.String,
  /** The payload encoded with the workflow's payload schema. */
  payload: Schema.Unknown,
  /** The parent execution's workflow and stream, for a child workflow. */
  parent: Schema.NullOr(Schema.Struct({ workflowName: Schema.String, stream: Schema.String }))
})

/**
 * An activity finished (success or failure) and its result is final: a replay returns it
 * without running the activity again. `seq` is the order in which the workflow asked for
 * its activities, the basis of the determinism check.
 */
export const ActivityCompleted = Schema.TaggedStruct("ActivityCompleted", {
  seq: Schema.Int,
  name: Schema.String,
  attempt: Schema.Int,
  exit: ExitJson
})

/**
 * A durable deferred was resolved, from outside (a callback) or by the workflow itself
 * (`DurableDeferred.into`, `raceAll`). When the workflow resolved it, `seqStart`–`seqEnd`
 * are the activity numbers used while computing it, which a replay that returns the
 * stored result skips.
 */
export const DeferredResolved = Schema.TaggedStruct("DeferredResolved", {
  name: Schema.String,
  exit: ExitJson,
  seqStart: Schema.optional(Schema.Int),
  seqEnd: Schema.optional(Schema.Int)
})

/** A durable timer was set; it fires at `fireAt` (epoch milliseconds). */
export const ClockScheduled = Schema.TaggedStruct("ClockScheduled", {
  name: Schema.String,
  fireAt: Schema.Number,
  durationMillis: Schema.Number
})

/** A durable timer fired (this also resolves its deferred, `DurableClock/<name>`). */
export const ClockFired = Schema.TaggedStruct("ClockFired", {
  name: Schema.String
})

/** A run ended waiting for a signal, and for a timer when `wakeAt` is set. */
export const WorkflowSuspended = Schema.TaggedStruct("WorkflowSuspended", {
  wakeAt: Schema.NullOr(Schema.Number)
})

/** Interruption was requested; the next run unwinds the workflow (compensations run). */
export const WorkflowInterrupted = Schema.TaggedStruct("WorkflowInterrupted", {})

/** The execution finished; `exit` is encoded with the workflow's success and error schemas. */
export const WorkflowCompleted = Schema.TaggedStruct("WorkflowCompleted", {
  exit: ExitJson
})

/**
 * The code asked for a different activity than the history recorded at that point: the
 * execution is stopped (`stuck`) until an operator deploys a fix and resumes it.
 */
export const DeterminismViolated = Schema.TaggedStruct("DeterminismViolated", {
  seq: Schema.Int,
  recorded: Schema.String,
  requested: Schema.String,
  /** The workflow change (`WorkflowVersion`) that is the cause, when one is (optional, issue 31). */
  change: Schema.optional(Schema.String)
})

/**
 * A version marker (`WorkflowVersion.patched`): the execution reached the point where the
 * code asks whether the named change applies live, for the first time, so it takes the
 * change's new branch, on this run and on every replay. `seq` is the step it was asked at
 * (the number the next activity gets); a marker takes no step number itself.
 */
export const VersionMarked = Schema.TaggedStruct("VersionMarked", {
  change: Schema.String,
  seq: Schema.Int
})

/** An operator resumed a stuck execution. */
export const WorkflowResumed = Schema.TaggedStruct("WorkflowResumed", {})

/** Every event the engine writes. */
export const EngineEvent = Schema.Union(
  WorkflowStarted,
  ActivityCompleted,
  DeferredResolved,
  ClockScheduled,
  ClockFired,
  WorkflowSuspended,
  WorkflowInterrupted,
  WorkflowCompleted,
  DeterminismViolated,
  WorkflowResumed,
  VersionMarked
)
/** @see EngineEvent */
export type EngineEvent = typeof EngineEvent.Type

/** The event types the engine owns; any other type in an execution stream is a domain event. */
export const engineEventTypes: ReadonlySet<string> = new Set([
  "WorkflowStarted",
  "ActivityCompleted",
  "DeferredResolved",
  "ClockScheduled",
  "ClockFired",
  "WorkflowSuspended",
  "WorkflowInterrupted",
  "WorkflowCompleted",
  "DeterminismViolated",
  "WorkflowResumed",
  "VersionMarked"
])

/**
 * The schema version the engine writes its events with. An engine event whose stored form
 * must change gets the next version here and an entry in {@link upcasters} for the old one
 * (docs/event-store.md, "Changing an event's schema"): a log is never rewritten.
 */
export const schemaVersion = 1

/**
 * Lifts the data of an engine event stored at schema version `n` (its key) to `n + 1`, by
 * event type. None yet: every engine event ever written is at version 1.
 */
export const upcasters: Readonly<Record<string, Readonly<Record<number, (data: unknown) => unknown>>>> = {}

/** An engine event stored at a schema version this code cannot read. */
export class UnreadableVersion extends Schema.TaggedError<UnreadableVersion>()("UnreadableVersion", {
  eventType: Schema.String,
  schemaVersion: Schema.Number,
  reason: Schema.String
}) {
  override get message(): string {
    return `engine event "${this.eventType}" at schema version ${this.schemaVersion}: ${this.reason}`
  }
}

const encodeEvent = Schema.encodeSync(EngineEvent)
const decodeEvent = Schema.decodeUnknownEither(EngineEvent)

/** An engine event as the store keeps it: a type and a JSON object without `_tag`. */
export const toStored = (
  event: EngineEvent
): { readonly type: string; readonly data: Record<string, unknown> } => {
  // The event of every successful durable step, built as the schema encodes it (its exit's
  // value is the activity's encoded result already; `ExitJson` keeps it as it is).
  if (
    event._tag === "ActivityCompleted" &&
    event.exit._tag === "Success" &&
    Number.isSafeInteger(event.seq)
  ) {
    if (Number.isSafeInteger(event.attempt)) {
      return {
        type: event._tag,
        data: {
          seq: event.seq,
          name: event.name,
          attempt: event.attempt,
          exit: { _tag: "Success", value: event.exit.value }
        }
      }
    }
  }
  const { _tag, ...data } = encodeEvent(event)
  return { type: _tag, data }
}

/** A stored event, as far as reading an engine event needs it. */
export interface Stored {
  readonly type: string
  readonly data: unknown
  /** The version it was written at; absent for an event this process just built (the current one). */
  readonly schemaVersion?: number | undefined
}

/**
 * A reader of stored engine events for code that writes `current` and lifts older versions
 * with `lift` ({@link fromStored} is this engine's; a test builds one for a version to come).
 */
export const reader =
  (current: number, lift: Readonly<Record<string, Readonly<Record<number, (data: unknown) => unknown>>>>) =>
  (stored: Stored): Option.Option<Either.Either<EngineEvent, ParseResult.ParseError | UnreadableVersion>> => {
    if (!engineEventTypes.has(stored.type)) return Option.none()
    const version = stored.schemaVersion ?? current
    let data: unknown = stored.data
    if (version !== current) {
      const refuse = (reason: string) =>
        Option.some(
          Either.left(new UnreadableVersion({ eventType: stored.type, schemaVersion: version, reason }))
        )
      // A newer engine wrote it: read as this version's shape it could mean something else.
      if (version > current)
        return refuse(`written by a newer engine; this one reads up to version ${current}`)
      for (let from = version; from < current; from++) {
        const upcast = lift[stored.type]?.[from]
        if (upcast === undefined) return refuse(`no upcaster from schema version ${from}`)
        try {
          data = upcast(data)
        } catch (cause) {
          return refuse(`the upcaster from schema version ${from} threw: ${String(cause)}`)
        }
      }
    }
    const fields = typeof data === "object" && data !== null ? data : {}
    return Option.some(decodeEvent({ ...fields, _tag: stored.type }))
  }

/**
 * Reads a stored event back: `None` for a domain event; for an engine event, the event
 * (upcast from an older schema version), or why it cannot be read: data that does not
 * decode (a corrupt history), or a version newer than this code or without an upcaster.
 */
export const fromStored: (
  stored: Stored
) => Option.Option<Either.Either<EngineEvent, ParseResult.ParseError | UnreadableVersion>> = reader(
  schemaVersion,
  upcasters
)

/**
 * The stream of an execution. Long digit runs in the id are broken with `_` so that a
 * hexadecimal execution id can never look like a card number to the store's redaction
 * check (a 32-digit hex id holds a Luhn-valid 13–19 digit run about once in 700).
 */
export const streamId = (executionId: string): string =>
  `execution-${executionId.replace(/\d{12}(?=\d)/g, (run) => `${run}_`)}`
