/**
 * The replay kit: replays recorded execution histories against the workflows registered
 * now, without side effects, and reports every execution that would not replay, with the
 * step where it diverges. Each execution is replayed on a scratch engine of its own (a
 * memory event store holding its history, and its children's, a memory queue): recorded
 * activities return their recorded results, and an activity the history has not recorded
 * is not run (`ReplayProbe`): for an unfinished execution that is where it would go on
 * live, for a completed one a divergence.
 *
 * What counts as a divergence:
 * - the determinism check fails (the code asks for another activity than the one recorded
 *   at a step; a `WorkflowVersion.deprecated` change whose old branch the history took):
 *   the step, both activities, and the change when one is the cause;
 * - a completed history: the code asks for an activity it never ran, waits where it
 *   completed, or completes with another result;
 * - the workflow is not registered, or the history does not decode.
 *
 * Histories come from a store (`fromStore`) or from an export file: JSON lines, one
 * execution per line (`ExportLine`: its id, workflow and events as stored, without the
 * store's positions and hashes), written by `exportLine`.
 *
 * @example
 * const report = yield* ReplayKit.replay(histories, Workflows.layer)
 * if (report.divergences.length > 0) console.log(ReplayKit.describe(report))
 */
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DurableEngine, make as makeEngine } from "./DurableEngine.js"
import * as EngineEvent from "./EngineEvent.js"
import * as EventStore from "./EventStore.js"
import * as ExecutionQueue from "./ExecutionQueue.js"
import * as HashChain from "./HashChain.js"
import type { ReplayProbe } from "./internal/EngineState.js"
import * as MemoryEventStore from "./MemoryEventStore.js"

/** One event of an exported history: as stored, without the store's positions and hash. */
export const ExportedEvent = Schema.Struct({
  version: Schema.Int,
  eventId: Schema.String,
  type: Schema.String,
  schemaVersion: Schema.Int,
  data: EventStore.Json,
  metadata: EventStore.JsonObject
})
/** @see ExportedEvent */
export type ExportedEvent = typeof ExportedEvent.Type

/** One line of an export file: one execution's history, oldest event first. */
export const ExportLine = Schema.Struct({
  executionId: Schema.String,
  workflowName: Schema.String,
  events: Schema.Array(ExportedEvent)
})
/** @see ExportLine */
export type ExportLine = typeof ExportLine.Type

/** An execution's history to replay (an `ExportLine`). */
export type RecordedHistory = ExportLine

/** An execution that would not replay, and where. */
export interface Divergence {
  readonly executionId: string
  readonly workflowName: string
  /** The step (activity number) where it diverges, when it is at one. */
  readonly step: number | undefined
  readonly reason: string
  /** The workflow change (`WorkflowVersion`) that is the cause, when one is. */
  readonly change: string | undefined
}

/** What a replay found. */
export interface Report {
  /** Executions replayed. */
  readonly replayed: number
  /** Of those, the ones that would not replay. */
  readonly divergences: ReadonlyArray<Divergence>
}

/** The history of a stream as an export line, from the events a store read. */
export const fromRecorded = (
  executionId: string,
  events: ReadonlyArray<EventStore.RecordedEvent>
): RecordedHistory => ({
  executionId,
  workflowName: workflowNameOf(events) ?? "",
  events: events.map((event) => ({
    version: event.version,
    eventId: event.eventId,
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: event.data,
    metadata: event.metadata
  }))
})

const workflowNameOf = (events: ReadonlyArray<{ readonly type: string; readonly data: unknown }>) => {
  const started = events.find((event) => event.type === "WorkflowStarted")
  const data = started?.data
  return typeof data === "object" && data !== null && "workflowName" in data
    ? String((data as { workflowName: unknown }).workflowName)
    : undefined
}

const parentStreamOf = (history: RecordedHistory): string | undefined => {
  const started = history.events.find((event) => event.type === "WorkflowStarted")
  const data = started?.data
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined
  const parent = (data as EventStore.JsonObject)["parent"]
  if (typeof parent !== "object" || parent === null || Array.isArray(parent)) return undefined
  const stream = (parent as EventStore.JsonObject)["stream"]
  return typeof stream === "string" ? stream : undefined
}

const encodeLine = Schema.encodeSync(Schema.parseJson(ExportLine))
const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(ExportLine))

/** One execution's history as a line of an export file (JSON, no newline). */
export const exportLine = (history: RecordedHistory): string => encodeLine(history)

/** The histories of an export file (JSON lines; blank lines skipped); fails on the first bad line. */
export const parseExport = (text: string): Either.Either<ReadonlyArray<RecordedHistory>, string> => {
  const histories: Array<RecordedHistory> = []
  const lines = text.split("\n")
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] ?? "").trim()
    if (line === "") continue
    const decoded = decodeLine(line)
    if (Either.isLeft(decoded)) return Either.left(`line ${index + 1}: ${decoded.left.message}`)
    histories.push(decoded.right)
  }
  return Either.right(histories)
}

/**
 * The histories of the executions a store and its queue know (every execution the queue
 * indexes, or those of one workflow), oldest first as the queue lists them.
 */
export const fromStore = (
  filter: { readonly workflowName?: string | undefined; readonly limit?: number | undefined } = {}
): Effect.Effect<
  ReadonlyArray<RecordedHistory>,
  EventStore.EventStoreError | ExecutionQueue.ExecutionQueueError,
  EventStore.EventStore | ExecutionQueue.ExecutionQueue
> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const queue = yield* ExecutionQueue.ExecutionQueue
    const executions = yield* queue.list({ workflowName: filter.workflowName, limit: filter.limit })
    const histories: Array<RecordedHistory> = []
    for (const info of executions) {
      const events = yield* store.readStream(EngineEvent.streamId(info.executionId))
      histories.push({ ...fromRecorded(info.executionId, events), workflowName: info.workflowName })
    }
    return histories
  })

/** Events the scratch copy of the replayed execution leaves out, so that its code runs. */
const heldBack = new Set(["WorkflowCompleted", "DeterminismViolated", "WorkflowResumed"])

const toNew = (event: ExportedEvent): EventStore.NewEvent => ({
  type: event.type,
  eventId: event.eventId,
  schemaVersion: event.schemaVersion,
  data: event.data,
  metadata: event.metadata
})

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === "object" && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner
  )

/**
 * A completion's exit, personal data read by value: two encodings of the same value differ
 * by their salts (`HashChain.personal`).
 */
const exitOf = (data: unknown): unknown =>
  typeof data === "object" && data !== null && "exit" in data
    ? HashChain.personalValues((data as { exit: unknown }).exit)
    : undefined

/** What a scratch engine provides the workflows it replays. */
type Provided = WorkflowEngine | DurableEngine | EventStore.EventStore | ExecutionQueue.ExecutionQueue

/** Replays one execution on a scratch engine: its divergence, if it has one. */
const replayOne = <E, R>(
  history: RecordedHistory,
  children: ReadonlyArray<RecordedHistory>,
  workflows: Layer.Layer<never, E, R>
): Effect.Effect<Divergence | undefined, E, Exclude<R, Provided>> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { executionId, workflowName } = history
      const diverges = (reason: string, step?: number, change?: string): Divergence => ({
        executionId,
        workflowName,
        step,
        reason,
        change
      })
      const stream = EngineEvent.streamId(executionId)
      for (const event of history.events) {
        const decoded = EngineEvent.fromStored(event)
        if (Option.isSome(decoded) && Either.isLeft(decoded.value)) {
          return diverges(
            `event ${event.version} (${event.type}) does not decode: ${decoded.value.left.message}`
          )
        }
      }
      const completedEvent = history.events.find((event) => event.type === "WorkflowCompleted")
      const unrecorded: Array<{ readonly seq: number; readonly name: string; readonly attempt: number }> = []
      const probe: ReplayProbe = {
        completed: new Set(completedEvent === undefined ? [] : [executionId]),
        unrecorded: (id, seq, name, attempt) => {
          if (id === executionId) unrecorded.push({ seq, name, attempt })
        }
      }
      const { store } = yield* MemoryEventStore.make()
      const copy = (target: string, events: ReadonlyArray<ExportedEvent>) =>
        events.length === 0
          ? Effect.void
          : Effect.orDie(store.append(target, EventStore.NoStream, events.map(toNew)))
      yield* copy(
        stream,
        history.events.filter((event) => !heldBack.has(event.type))
      )
      for (const child of children) yield* copy(EngineEvent.streamId(child.executionId), child.events)
      const stores = Layer.merge(Layer.succeed(EventStore.EventStore, store), ExecutionQueue.layerMemory)
      const engineLayer = Layer.scopedContext(
        Effect.map(makeEngine({}, probe), (service) =>
          Context.make(DurableEngine, service).pipe(Context.add(WorkflowEngine, service.engine))
        )
      )
      const context = yield* Layer.build(
        workflows.pipe(Layer.provideMerge(engineLayer), Layer.provideMerge(stores))
      )
      const engine = Context.get(context, DurableEngine)
      const queue = Context.get(context, ExecutionQueue.ExecutionQueue)
      if (!(yield* engine.workflowNames).includes(workflowName)) {
        return diverges(`workflow "${workflowName}" is not registered`)
      }
      const now = yield* Clock.currentTimeMillis
      yield* Effect.orDie(
        queue.enqueue({
          executionId,
          workflowName,
          concurrencyKey: undefined,
          parentId: undefined,
          attributes: {},
          now
        })
      )
      const claims = yield* Effect.orDie(
        queue.claim({ workerId: "replay", workflowNames: [workflowName], limit: 1, leaseMs: 3_600_000, now })
      )
      const claim = claims[0]
      if (claim === undefined) return diverges("the scratch queue did not hand the execution out")
      const outcome = yield* engine.run(claim, "replay")
      const after = yield* Effect.orDie(store.readStream(stream))
      const violated = after
        .map((event) => EngineEvent.fromStored(event))
        .flatMap((decoded) =>
          Option.isSome(decoded) &&
          Either.isRight(decoded.value) &&
          decoded.value.right._tag === "DeterminismViolated"
            ? [decoded.value.right]
            : []
        )[0]
      if (outcome._tag === "Stuck" && violated !== undefined) {
        return diverges(
          `at step ${violated.seq} its history recorded ${violated.recorded} but the code now asks for ${violated.requested}`,
          violated.seq,
          violated.change
        )
      }
      if (outcome._tag === "Retry") return diverges("the replay crashed (the cause is in the log)")
      if (completedEvent === undefined) return undefined
      if (outcome._tag === "Suspended") {
        const first = unrecorded[0]
        return first === undefined
          ? diverges("the code waits (a deferred or a timer) where its history completed")
          : diverges(
              `the code asks for activity "${first.name}" (attempt ${first.attempt}) at step ${first.seq}, which its history (completed) never ran`,
              first.seq
            )
      }
      const completedNow = after.find((event) => event.type === "WorkflowCompleted")
      if (canonical(exitOf(completedNow?.data)) !== canonical(exitOf(completedEvent.data))) {
        return diverges("the code completes with another result than its history recorded")
      }
      return undefined
    })
  ) as Effect.Effect<Divergence | undefined, E, Exclude<R, Provided>>

/**
 * Replays each history against `workflows` (the workflows registered now: their layers,
 * whose requirements other than the engine the caller provides) and reports those that
 * would not replay. Histories of child executions replay on their own and serve their
 * parents' replays.
 */
export const replay = <E, R>(
  histories: ReadonlyArray<RecordedHistory>,
  workflows: Layer.Layer<never, E, R>
): Effect.Effect<Report, E, Exclude<R, Provided>> =>
  Effect.gen(function* () {
    const childrenOf = new Map<string, Array<RecordedHistory>>()
    for (const history of histories) {
      const parent = parentStreamOf(history)
      if (parent === undefined) continue
      const list = childrenOf.get(parent) ?? []
      list.push(history)
      childrenOf.set(parent, list)
    }
    const divergences: Array<Divergence> = []
    for (const history of histories) {
      const children = childrenOf.get(EngineEvent.streamId(history.executionId)) ?? []
      const divergence = yield* replayOne(history, children, workflows)
      if (divergence !== undefined) divergences.push(divergence)
    }
    return { replayed: histories.length, divergences }
  })

/** A report as text: one line per divergence, and a summary. */
export const describe = (report: Report): string =>
  [
    ...report.divergences.map(
      (divergence) =>
        `${divergence.workflowName} ${divergence.executionId}` +
        (divergence.step === undefined ? "" : ` step ${divergence.step}`) +
        `: ${divergence.reason}` +
        (divergence.change === undefined ? "" : ` (change "${divergence.change}")`)
    ),
    `${report.replayed} executions replayed, ${report.divergences.length} would not replay`
  ].join("\n")
