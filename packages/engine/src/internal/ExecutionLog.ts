/**
 * The log of one execution: its stream (`execution-<id>`) and its history, the fold of
 * that stream (`executionHistory`). A log is read whole, or brought up to date from the
 * copy this process kept (`EngineState.histories`: only what was appended since is read),
 * and appended to at the version it holds: a lost race reads what was appended meanwhile
 * and asks again, so that two workers never record two different things at one place.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as EngineEvent from "../EngineEvent.js"
import * as EventStore from "../EventStore.js"
import type * as Redaction from "../Redaction.js"
import * as StoreRetry from "../StoreRetry.js"
import type { EngineState, Log } from "./EngineState.js"
import { now, orDieAfterRetries } from "./EngineState.js"
import * as History from "./executionHistory.js"

export type { Log }

/** An execution's stream holds an engine event that does not decode. */
export class CorruptHistory extends Schema.TaggedError<CorruptHistory>()("CorruptHistory", {
  executionId: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `The history of execution ${this.executionId} cannot be replayed: ${this.detail}`
  }
}

/** The log of an execution whose stream was not read: an empty history. */
export const fresh = (executionId: string): Log => ({
  executionId,
  stream: EngineEvent.streamId(executionId),
  history: History.empty()
})

/** The engine event each event built by `engineEvent` was encoded from. */
const builtFrom = new WeakMap<EventStore.NewEvent, EngineEvent.EngineEvent>()

/** An engine event as it is appended (remembered, so that a step's result is not decoded back). */
export const engineEvent = (
  event: EngineEvent.EngineEvent,
  metadata?: EventStore.JsonObject
): EventStore.NewEvent => {
  const stored = EngineEvent.toStored(event)
  const built: EventStore.NewEvent = {
    type: stored.type,
    data: stored.data as EventStore.JsonObject,
    schemaVersion: EngineEvent.schemaVersion,
    ...(metadata === undefined ? {} : { metadata })
  }
  builtFrom.set(built, event)
  return built
}

const applyAll = (log: Log, events: ReadonlyArray<History.Stored>) =>
  Effect.suspend(() => {
    for (const event of events) {
      const applied = History.apply(log.history, event)
      if (Either.isLeft(applied)) {
        return Effect.die(new CorruptHistory({ executionId: log.executionId, detail: applied.left }))
      }
    }
    return Effect.void
  })

const checked = (state: EngineState, log: Log, time: number) => void state.checkedAt.set(log, time)

/** Marks an execution this process appended to outside its run (see `EngineState.touched`). */
export const touch = (state: EngineState, executionId: string) => {
  const touched = state.touched
  touched.delete(executionId)
  touched.add(executionId)
  if (touched.size > 4_096) {
    const oldest = touched.values().next()
    if (oldest.done !== true) touched.delete(oldest.value)
  }
}

/** Gives a log back to the histories kept here, least recently kept out first. */
export const keep = (state: EngineState, log: Log) =>
  Effect.sync(() => {
    if (state.historyCacheSize === 0) return
    const histories = state.histories
    histories.delete(log.executionId)
    histories.set(log.executionId, log)
    if (histories.size > state.historyCacheSize) {
      const oldest = histories.keys().next()
      if (oldest.done !== true) histories.delete(oldest.value)
    }
  })

/**
 * The execution's log: the cached one brought up to date, or the stream read whole.
 * `streamVersion` is the stream's version as the claim saw it (`Claim.streamVersion`,
 * when the queue knows it): a cached history at exactly that version is current, so
 * nothing is read; any other answer, or none, reads what was appended since. This read
 * is what keeps a run from repeating an activity another process recorded meanwhile.
 */
export const load = (state: EngineState, executionId: string, streamVersion?: number): Effect.Effect<Log> =>
  Effect.suspend(() => {
    const cached = state.histories.get(executionId)
    if (cached !== undefined) {
      state.histories.delete(executionId)
      // A completion is final: the first `WorkflowCompleted` is the result, and nothing
      // appended after it changes what the engine reads (no need to read again).
      if (cached.history.completed !== undefined) return Effect.succeed(cached)
      if (cached.history.version === streamVersion) {
        return Effect.map(now, (time) => {
          checked(state, cached, time)
          return cached
        })
      }
      return Effect.as(refresh(state, cached), cached)
    }
    const log = fresh(executionId)
    return Effect.gen(function* () {
      const events = yield* orDieAfterRetries(state.store.readStream(log.stream))
      yield* applyAll(log, events)
      checked(state, log, yield* now)
      return log
    })
  })

/** Reads what was appended to the log's stream since its version. */
export const refresh = (state: EngineState, log: Log): Effect.Effect<void> =>
  Effect.gen(function* () {
    const events = yield* orDieAfterRetries(
      state.store.readStream(log.stream, { fromVersion: log.history.version + 1 })
    )
    yield* applyAll(log, events)
    checked(state, log, yield* now)
  })

/**
 * A refresh for a run's own look-ups: skipped within `recheckAfter` of the last check,
 * unless this process appended to the execution outside the run meanwhile.
 */
export const recheck = (state: EngineState, log: Log): Effect.Effect<void> =>
  Effect.flatMap(now, (time) => {
    const last = state.checkedAt.get(log)
    if (state.touched.delete(log.executionId)) return refresh(state, log)
    return last !== undefined && time - last < state.recheckMs ? Effect.void : refresh(state, log)
  })

/**
 * Appends what `build` returns for the current history, at the history's version; on a
 * lost race, reads what was appended meanwhile and asks `build` again (which returns
 * `undefined` when the history already has what it would append). True if appended.
 */
export const appendTo = (
  state: EngineState,
  log: Log,
  build: (history: History.History) => ReadonlyArray<EventStore.NewEvent> | undefined
): Effect.Effect<
  boolean,
  EventStore.DuplicateEventId | EventStore.InvalidEvent | Redaction.SensitiveDataRefused
> =>
  Effect.gen(function* () {
    while (true) {
      const events = build(log.history)
      if (events === undefined || events.length === 0) return false
      const from = log.history.version
      const append = state.store.append(log.stream, EventStore.exactVersion(from), events)
      const appended = yield* Effect.either(StoreRetry.retry(append, StoreRetry.quick))
      if (Either.isRight(appended)) {
        // Appended at its exact version: the log was the whole stream (and is again).
        checked(state, log, yield* now)
        // A step's successful result is folded as built: decoding the event back from
        // what it was encoded to gives an equal one (its value is JSON already).
        const head = events.length === 1 ? builtFrom.get(events[0] as EventStore.NewEvent) : undefined
        if (head !== undefined && head._tag === "ActivityCompleted" && Exit.isSuccess(head.exit)) {
          const event = events[0] as EventStore.NewEvent
          History.applyDecoded(
            log.history,
            { version: from + 1, type: event.type, data: event.data, metadata: event.metadata },
            head
          )
        } else {
          yield* applyAll(
            log,
            events.map((event, index) => ({
              version: from + index + 1,
              type: event.type,
              data: event.data,
              metadata: event.metadata
            }))
          )
        }
        return true
      }
      if (appended.left._tag === "EventStoreError") return yield* Effect.die(appended.left)
      if (appended.left._tag !== "ConcurrencyConflict") return yield* Effect.fail(appended.left)
      yield* refresh(state, log)
    }
  })

/** Like `appendTo`, for engine events that carry no user data: any refusal is a defect. */
export const appendEngine = (
  state: EngineState,
  log: Log,
  build: (history: History.History) => ReadonlyArray<EventStore.NewEvent> | undefined
): Effect.Effect<boolean> => Effect.orDie(appendTo(state, log, build))
