/**
 * tillflow's implementation of @effect/workflow's `WorkflowEngine`, whose whole state lives
 * in the event store: one stream per execution (`execution-<id>`, see `EngineEvent`) holds
 * its start, every activity result, deferred resolution, timer, suspension, interruption
 * and its completion; the `ExecutionQueue` only schedules and indexes executions, so any
 * number of workers on any number of machines share one PostgreSQL.
 *
 * A run replays the history: activities already recorded return their result without
 * running again, and asking for a different activity than the one recorded at that point
 * stops the execution with a `DeterminismError`. Workflows are written with
 * `Workflow.make`, `Activity.make`, `DurableDeferred` and `DurableClock` as usual; an
 * `EngineWorker` claims and runs them.
 *
 * @example
 * const Engine = DurableEngine.layer().pipe(Layer.provide(stores))
 * const Worker = EngineWorker.layer({ concurrency: 8 })
 * const App = Layer.mergeAll(ShippingWorkflowLive, Worker).pipe(Layer.provideMerge(Engine))
 */
import * as Workflow from "@effect/workflow/Workflow"
import { makeUnsafe, WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as EngineEvent from "./EngineEvent.js"
import * as EventStore from "./EventStore.js"
import * as ExecutionQueue from "./ExecutionQueue.js"
import { uuidFromSync } from "./DeterministicId.js"
import { asSchema, withCompiledCodecs, workflowExitSchema } from "./internal/Codecs.js"
import * as History from "./internal/executionHistory.js"
import { encodeRefusingRedacted, refuseRedacted } from "./internal/RefuseRedacted.js"
import * as Redaction from "./Redaction.js"
import * as StoreRetry from "./StoreRetry.js"

// ---------------------------------------------------------------------------------------
// Errors

/**
 * The workflow code asked for a different activity than its history recorded at that
 * point: the code changed in a way that cannot replay the executions already running.
 * The execution is stopped (`stuck`) with a `DeterminismViolated` event; deploy code that
 * replays the history, then `resume` it.
 */
export class DeterminismError extends Schema.TaggedError<DeterminismError>()("DeterminismError", {
  workflowName: Schema.String,
  executionId: Schema.String,
  seq: Schema.Int,
  recorded: Schema.String,
  requested: Schema.String
}) {
  override get message(): string {
    return (
      `Workflow "${this.workflowName}" (execution ${this.executionId}) is not deterministic: ` +
      `at step ${this.seq} its history recorded ${this.recorded} but the code now asks for ${this.requested}`
    )
  }
}

export {
  /** A value about to be stored in an event holds a `Redacted` secret. */
  RedactedValueRefused
} from "./internal/RefuseRedacted.js"

/** An execution's stream holds an engine event that does not decode. */
export class CorruptHistory extends Schema.TaggedError<CorruptHistory>()("CorruptHistory", {
  executionId: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `The history of execution ${this.executionId} cannot be replayed: ${this.detail}`
  }
}

// ---------------------------------------------------------------------------------------
// Workflow annotations

/**
 * Annotation: the concurrency key of an execution, from its payload. Executions with the
 * same key run one at a time across all workers, from their first claim until they
 * finish (a suspended execution keeps its key): "one job per device", say.
 */
export class ConcurrencyKey extends Context.Reference<ConcurrencyKey>()(
  "tillflow/DurableEngine/ConcurrencyKey",
  {
    defaultValue:
      () =>
      (_payload: unknown): string | undefined =>
        undefined
  }
) {}

/** Annotation: the search attributes of an execution, from its payload (for `list`). */
export class SearchAttributesOf extends Context.Reference<SearchAttributesOf>()(
  "tillflow/DurableEngine/SearchAttributes",
  {
    defaultValue:
      () =>
      (_payload: unknown): ExecutionQueue.SearchAttributes => ({})
  }
) {}

/**
 * Gives a workflow a concurrency key computed from its payload.
 *
 * @example
 * const PrintLabel = DurableEngine.withConcurrencyKey(
 *   Workflow.make({ name: "PrintLabel", payload: { printer: Schema.String }, idempotencyKey: (p) => p.printer }),
 *   (payload) => `printer:${payload.printer}`
 * )
 */
export const withConcurrencyKey = <
  Name extends string,
  Payload extends Workflow.AnyStructSchema,
  Success extends Schema.Schema.Any,
  Error extends Schema.Schema.All
>(
  workflow: Workflow.Workflow<Name, Payload, Success, Error>,
  key: (payload: Payload["Type"]) => string | undefined
): Workflow.Workflow<Name, Payload, Success, Error> =>
  workflow.annotate(ConcurrencyKey, (payload: unknown) => key(payload as Payload["Type"]))

/** Gives a workflow search attributes computed from its payload. */
export const withSearchAttributes = <
  Name extends string,
  Payload extends Workflow.AnyStructSchema,
  Success extends Schema.Schema.Any,
  Error extends Schema.Schema.All
>(
  workflow: Workflow.Workflow<Name, Payload, Success, Error>,
  attributes: (payload: Payload["Type"]) => ExecutionQueue.SearchAttributes
): Workflow.Workflow<Name, Payload, Success, Error> =>
  workflow.annotate(SearchAttributesOf, (payload: unknown) => attributes(payload as Payload["Type"]))

// ---------------------------------------------------------------------------------------
// Inside workflows and activities

/** A domain event emitted by an activity: to the execution's stream unless `stream` says otherwise. */
export interface DomainEvent extends EventStore.NewEvent {
  readonly stream?: string | undefined
}

/**
 * Where `emit` puts a running activity's domain events: a buffer on the activity's own
 * `WorkflowInstance` (the engine builds one per activity run), so that an activity needs
 * no service of its own in its context (one context update per durable step less).
 */
const emitted: unique symbol = Symbol.for("tillflow/DurableEngine/emitted")

type ActivityInstance = WorkflowInstance["Type"] & { readonly [emitted]: Array<DomainEvent> }

const emittedOf = (instance: WorkflowInstance["Type"]): Array<DomainEvent> | undefined =>
  emitted in instance ? (instance as ActivityInstance)[emitted] : undefined

class RunContext extends Context.Tag("tillflow/DurableEngine/RunContext")<
  RunContext,
  { readonly setAttributes: (attributes: ExecutionQueue.SearchAttributes) => Effect.Effect<void> }
>() {}

/**
 * Appends a domain event (a business fact) beside the engine's own, from inside an
 * activity. Events for the execution's own stream are appended in the same atomic batch
 * as the activity's `ActivityCompleted`: both or neither. Events for another stream are
 * appended right after, with an id derived from the execution and step, and delivered
 * again on every replay until stored (the id makes the retry a no-op): at least once, never
 * duplicated. Nothing is appended if the activity fails to complete.
 *
 * @example
 * Activity.make({
 *   name: "Ship",
 *   execute: Effect.gen(function* () {
 *     const result = yield* carrier.book(parcel)
 *     yield* DurableEngine.emit({ type: "ParcelShipped", data: { reference, carrier: "post" } })
 *     return result
 *   })
 * })
 */
export const emit = (event: DomainEvent): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(WorkflowInstance), (instance) => {
    const buffer = Option.isSome(instance) ? emittedOf(instance.value) : undefined
    return buffer !== undefined
      ? Effect.sync(() => void buffer.push(event))
      : Effect.dieMessage(
          "DurableEngine.emit is only available inside an activity run by the tillflow engine"
        )
  })

/**
 * Merges search attributes into the running execution's (a transaction reference known
 * only after a step, say). Visibility only: not part of the history.
 */
export const setSearchAttributes = (attributes: ExecutionQueue.SearchAttributes): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(RunContext), (run) =>
    Option.isSome(run)
      ? run.value.setAttributes(attributes)
      : Effect.dieMessage(
          "DurableEngine.setSearchAttributes is only available inside a workflow run by tillflow"
        )
  )

// ---------------------------------------------------------------------------------------
// The service

/** One event of an execution's history, with the engine event it is, if it is one. */
export interface HistoryEntry {
  readonly recorded: EventStore.RecordedEvent
  /** `None` for a domain event. */
  readonly engine: Option.Option<EngineEvent.EngineEvent>
}

/** How a run handed back its claim (reported to the worker for logs and metrics). */
export type RunOutcome =
  | { readonly _tag: "Finished"; readonly status: "succeeded" | "failed" | "interrupted" }
  | { readonly _tag: "Suspended"; readonly wakeAt: number | undefined }
  | { readonly _tag: "Stuck" }
  | { readonly _tag: "Retry"; readonly runAt: number }

/** The engine's own operations, beside the `WorkflowEngine` it provides. */
export interface Service {
  /** The `WorkflowEngine` (also provided as a service by `layer`). */
  readonly engine: WorkflowEngine["Type"]
  /** The history of one execution, oldest first. */
  readonly history: (
    executionId: string
  ) => Effect.Effect<ReadonlyArray<HistoryEntry>, EventStore.EventStoreError>
  /** One execution's status and search attributes. */
  readonly get: (
    executionId: string
  ) => Effect.Effect<Option.Option<ExecutionQueue.ExecutionInfo>, ExecutionQueue.ExecutionQueueError>
  /** Executions by workflow, status and search attributes. */
  readonly list: (
    filter: ExecutionQueue.ListFilter
  ) => Effect.Effect<ReadonlyArray<ExecutionQueue.ExecutionInfo>, ExecutionQueue.ExecutionQueueError>
  /** The names of the workflows registered in this process (what its workers claim). */
  readonly workflowNames: Effect.Effect<ReadonlyArray<string>>
  /**
   * Runs a claimed execution once (replay, then live until it suspends or completes) and
   * releases the claim. Never fails; interrupting it releases the claim for another run.
   */
  readonly run: (claim: ExecutionQueue.Claim, workerId: string) => Effect.Effect<RunOutcome>
  /** Wakes this process's workers (something became due). */
  readonly signal: Effect.Effect<void>
  /** Waits until `signal` is called. */
  readonly awaitSignal: Effect.Effect<void>
}

/** The engine service: its `WorkflowEngine`, visibility and what workers need. */
export class DurableEngine extends Context.Tag("tillflow/DurableEngine")<DurableEngine, Service>() {}

/** Options of the engine. */
export interface Options {
  /**
   * How often a caller waiting in `execute` re-reads the status at first (default 200 ms);
   * the completion itself wakes it (in this process, or notified by the queue), so while
   * nothing happens the interval doubles, up to 16 times this.
   */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** Delay before an execution whose run crashed runs again, by claim count (default 1 s × 2ⁿ, at most 1 min). */
  readonly retryDelay?: ((claims: number) => Duration.Duration) | undefined
  /**
   * How many histories of executions not running here this process keeps (default 512,
   * least recently used first out; 0 keeps none). The next claim, poll or resolution of
   * one of them reads only the events appended since (`readStream` from its version)
   * instead of reading and decoding its whole stream again.
   */
  readonly historyCacheSize?: number | undefined
  /**
   * How long a history this process read from the stream, or appended to at its exact
   * version, counts as current for a run's own look-ups (a deferred not resolved yet, an
   * interruption when the run suspends; default 50 ms): within it those look-ups read
   * nothing. What such a look-up could miss is a resolution or an interruption from
   * outside, and both wake the execution: a run that suspends without seeing it is due
   * again at once. Never applies to what a claim reads before a run (see `load`).
   */
  readonly recheckAfter?: Duration.DurationInput | undefined
}

// ---------------------------------------------------------------------------------------
// Implementation

interface Registered {
  readonly workflow: Workflow.Any
  readonly execute: (
    payload: object,
    executionId: string
  ) => Effect.Effect<unknown, unknown, WorkflowInstance | WorkflowEngine>
}

interface Log {
  readonly executionId: string
  readonly stream: string
  readonly history: History.History
}

interface RunState {
  readonly log: Log
  readonly workflow: Workflow.Any
  /** The number the next activity the code asks for gets. */
  seq: number
  /** The activity number when a deferred was found unresolved (for `DeferredResolved.seqStart`). */
  readonly deferredStarts: Map<string, number>
  /** Set once the workflow is interrupted and its finalizers (compensations) run. */
  unwinding: boolean
  violation: DeterminismError | undefined
  /**
   * Set when the run resolved one of its own deferreds (a `raceAll`, say): should it then
   * suspend, it is released due at once instead of waiting for a wake-up.
   */
  resolvedOwn: boolean
}

/** Spans of the engine skip the stack trace capture (an `Error` per span otherwise). */
const spanOptions = (attributes: Record<string, unknown>) => ({ attributes, captureStackTrace: false })

/** The engine event each event built by `engineEvent` was encoded from. */
const builtFrom = new WeakMap<EventStore.NewEvent, EngineEvent.EngineEvent>()

/** The id of an execution's `DeferredResolved` for a deferred: one per deferred. */
const deferredResolvedId = (executionId: string, deferredName: string) =>
  uuidFromSync(`tillflow/deferred-resolved/${executionId}/${deferredName}`)

const engineEvent = (
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

/** Retries infrastructure failures a few times, then dies: the engine's ops cannot fail. */
const orDieAfterRetries = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.orDie(
    StoreRetry.retry(
      effect,
      StoreRetry.quick,
      (error) => error._tag === "EventStoreError" || error._tag === "ExecutionQueueError"
    )
  )

const describeActivity = (name: string, attempt: number) => `activity "${name}" (attempt ${attempt})`

const defaultRetryDelay = (claims: number): Duration.Duration =>
  Duration.millis(Math.min(60_000, 1_000 * 2 ** Math.max(0, claims - 1)))

const finishedStatus = (exit: Exit.Exit<unknown, unknown>): "succeeded" | "failed" | "interrupted" =>
  Exit.isSuccess(exit) ? "succeeded" : Cause.isInterruptedOnly(exit.cause) ? "interrupted" : "failed"

/**
 * Builds the engine over an `EventStore` and an `ExecutionQueue`. Use `layer` unless you
 * need the service without providing `WorkflowEngine`.
 */
export const make = (
  options: Options = {}
): Effect.Effect<Service, never, EventStore.EventStore | ExecutionQueue.ExecutionQueue | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const queue = yield* ExecutionQueue.ExecutionQueue
    const pollInterval = Duration.decode(options.pollInterval ?? "200 millis")
    const retryDelay = options.retryDelay ?? defaultRetryDelay
    const historyCacheSize = Math.max(0, options.historyCacheSize ?? 512)
    const recheckMs = Duration.toMillis(options.recheckAfter ?? "50 millis")

    const registry = new Map<string, Registered>()
    const running = new Map<string, RunState>()
    const wakeups = yield* Effect.acquireRelease(Queue.sliding<void>(1), Queue.shutdown)
    // The callers waiting here for an execution's result, by execution id: a change of one
    // execution wakes its own waiters only (with 1,000 callers waiting, a broadcast woke
    // 1,000 fibers per change).
    const waiters = new Map<string, Set<Deferred.Deferred<void>>>()
    const changed = (executionId: string) =>
      Effect.sync(() => {
        const waiting = waiters.get(executionId)
        if (waiting !== undefined) for (const waiter of waiting) Deferred.unsafeDone(waiter, Exit.void)
      })
    const signal = Effect.asVoid(Queue.offer(wakeups, undefined))
    const now = Clock.currentTimeMillis

    // What other processes change (started, woke, finished) wakes this process's workers
    // and the callers waiting here for a result; polling stays the floor.
    yield* queue.changes.pipe(
      Stream.runForEach((executionId) => Effect.zipRight(changed(executionId), signal)),
      Effect.tapErrorCause((cause) =>
        Effect.logWarning("Execution queue notifications failed; polling until they are back", cause)
      ),
      Effect.retry(Schedule.spaced("5 seconds")),
      Effect.forkScoped
    )

    // -- the log of one execution ------------------------------------------------------

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

    // Histories of executions not running here, by execution id, least recently kept
    // first. An entry belongs to whoever takes it (`load` removes it): a log is only ever
    // folded by one fiber, and given back (`keep`) when that fiber is done with it. A kept
    // log is the fold of a prefix of its stream (events are never changed once stored), so
    // reading from its version on gives the same history as reading the whole stream.
    const histories = new Map<string, Log>()
    // When each log was last known to be the whole stream (a read, or an append at its
    // exact version, came back), by the engine's clock: what `recheck` goes by.
    const checkedAt = new WeakMap<Log, number>()
    const checked = (log: Log, time: number) => void checkedAt.set(log, time)
    // Executions this process appended to outside their run (a deferred resolved, an
    // interruption) since their run last looked: `recheck` reads for them whatever the
    // time. Bounded: a mark lost costs a wake-up cycle, not a result.
    const touched = new Set<string>()
    const touch = (executionId: string) => {
      touched.delete(executionId)
      touched.add(executionId)
      if (touched.size > 4_096) {
        const oldest = touched.values().next()
        if (oldest.done !== true) touched.delete(oldest.value)
      }
    }
    const keep = (log: Log) =>
      Effect.sync(() => {
        if (historyCacheSize === 0) return
        histories.delete(log.executionId)
        histories.set(log.executionId, log)
        if (histories.size > historyCacheSize) {
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
    const load = (executionId: string, streamVersion?: number): Effect.Effect<Log> =>
      Effect.suspend(() => {
        const cached = histories.get(executionId)
        if (cached !== undefined) {
          histories.delete(executionId)
          // A completion is final: the first `WorkflowCompleted` is the result, and nothing
          // appended after it changes what the engine reads (no need to read again).
          if (cached.history.completed !== undefined) return Effect.succeed(cached)
          if (cached.history.version === streamVersion) {
            return Effect.map(now, (time) => {
              checked(cached, time)
              return cached
            })
          }
          return Effect.as(refresh(cached), cached)
        }
        const log: Log = { executionId, stream: EngineEvent.streamId(executionId), history: History.empty() }
        return Effect.gen(function* () {
          const events = yield* orDieAfterRetries(store.readStream(log.stream))
          yield* applyAll(log, events)
          checked(log, yield* now)
          return log
        })
      })

    const refresh = (log: Log): Effect.Effect<void> =>
      Effect.gen(function* () {
        const events = yield* orDieAfterRetries(
          store.readStream(log.stream, { fromVersion: log.history.version + 1 })
        )
        yield* applyAll(log, events)
        checked(log, yield* now)
      })

    /**
     * A refresh for a run's own look-ups: skipped within `recheckAfter` of the last check,
     * unless this process appended to the execution outside the run meanwhile.
     */
    const recheck = (log: Log): Effect.Effect<void> =>
      Effect.flatMap(now, (time) => {
        const last = checkedAt.get(log)
        if (touched.delete(log.executionId)) return refresh(log)
        return last !== undefined && time - last < recheckMs ? Effect.void : refresh(log)
      })

    /**
     * Appends what `build` returns for the current history, at the history's version; on a
     * lost race, reads what was appended meanwhile and asks `build` again (which returns
     * `undefined` when the history already has what it would append). True if appended.
     */
    const appendTo = (
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
          const append = store.append(log.stream, EventStore.exactVersion(from), events)
          const appended = yield* Effect.either(StoreRetry.retry(append, StoreRetry.quick))
          if (Either.isRight(appended)) {
            // Appended at its exact version: the log was the whole stream (and is again).
            checked(log, yield* now)
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
          yield* refresh(log)
        }
      })

    /** Like `appendTo`, for engine events that carry no user data: any refusal is a defect. */
    const appendEngine = (
      log: Log,
      build: (history: History.History) => ReadonlyArray<EventStore.NewEvent> | undefined
    ): Effect.Effect<boolean> => Effect.orDie(appendTo(log, build))

    const wake = (executionId: string, resumeStuck = false) =>
      Effect.gen(function* () {
        yield* orDieAfterRetries(
          Effect.flatMap(now, (time) => queue.wake({ executionId, now: time, resumeStuck }))
        )
        yield* signal
      })

    /** Appends domain events for other streams; a stored id means an earlier try succeeded. */
    const deliver = (outbox: ReadonlyArray<History.OutboxEvent>) =>
      outbox.length === 0
        ? Effect.void
        : Effect.forEach(
            groupByStream(outbox),
            ([stream, events]) =>
              store.append(stream, EventStore.AnyVersion, events).pipe(
                Effect.catchTag("DuplicateEventId", () => Effect.void),
                (effect) => StoreRetry.retry(effect, StoreRetry.quick),
                Effect.orDie
              ),
            { discard: true }
          )

    const decodeCompleted = (workflow: Workflow.Any, log: Log) =>
      Effect.gen(function* () {
        const completed = log.history.completed
        if (completed === undefined) return undefined
        const exit = yield* Effect.orDie(Schema.decodeUnknown(workflowExitSchema(workflow))(completed.exit))
        return new Workflow.Complete({ exit })
      })

    const stuckResult = (workflow: Workflow.Any, log: Log) => {
      const stuck = log.history.stuck
      return stuck === undefined
        ? undefined
        : new Workflow.Complete<unknown, unknown>({
            exit: Exit.die(
              new DeterminismError({
                workflowName: workflow.name,
                executionId: log.executionId,
                seq: stuck.seq,
                recorded: stuck.recorded,
                requested: stuck.requested
              })
            )
          })
    }

    const poll = (workflow: Workflow.Any, executionId: string) =>
      Effect.gen(function* () {
        // A kept history that holds the completion has the result: the first
        // `WorkflowCompleted` is final, whatever the queue's row says yet (a run releases
        // its claim after appending it). What a caller waiting here polls once the run of
        // its execution in this process ended: no statement for it.
        if (histories.get(executionId)?.history.completed !== undefined) {
          return yield* decodeCompleted(workflow, yield* load(executionId))
        }
        const info = yield* orDieAfterRetries(queue.get(executionId))
        if (Option.isNone(info)) return undefined
        switch (info.value.status) {
          case "succeeded":
          case "failed":
          case "interrupted":
            return yield* decodeCompleted(workflow, yield* load(executionId))
          case "stuck":
            return stuckResult(workflow, yield* load(executionId))
          case "suspended":
            return new Workflow.Suspended({})
          default:
            return undefined
        }
      })

    /**
     * Waits for an execution's result: woken by its completion here or, through the
     * queue's `changes`, in another process; polling is the floor for a lost notification,
     * from `pollInterval`, doubling while nothing happens, up to 16 times it. While the
     * execution runs in this process the floor is not needed: its run's end wakes the
     * waiters here (`release` calls `changed` after `running` forgot it), so the status is
     * read on a wakeup or once it runs elsewhere, not on every interval.
     */
    const awaitCompletion = (workflow: Workflow.Any, executionId: string, justCreated: boolean) =>
      Effect.gen(function* () {
        let interval = pollInterval
        const longest = Duration.times(pollInterval, 16)
        // An execution this call has just enqueued is pending: its first status is not read.
        let skipFirst = justCreated
        let woken = true
        while (true) {
          // Registered before the poll, so a change between the poll and the wait is kept.
          const wakeup = yield* Deferred.make<void>()
          const waiting = waiters.get(executionId) ?? new Set()
          waiting.add(wakeup)
          waiters.set(executionId, waiting)
          const outcome = yield* Effect.gen(function* () {
            if (!skipFirst && (woken || !running.has(executionId))) {
              const result = yield* poll(workflow, executionId)
              if (result !== undefined && result._tag === "Complete") return result
            }
            skipFirst = false
            woken = yield* Effect.raceFirst(
              Effect.as(Deferred.await(wakeup), true),
              Effect.as(Effect.sleep(interval), false)
            )
            interval = woken ? pollInterval : Duration.min(Duration.times(interval, 2), longest)
            return undefined
          }).pipe(
            Effect.ensuring(
              Effect.sync(() => {
                waiting.delete(wakeup)
                if (waiting.size === 0 && waiters.get(executionId) === waiting) waiters.delete(executionId)
              })
            )
          )
          if (outcome !== undefined) return outcome
        }
      })

    // -- the engine --------------------------------------------------------------------

    const runOf = (executionId: string) =>
      Effect.map(Effect.serviceOption(WorkflowInstance), (instance) =>
        Option.isSome(instance) && instance.value.executionId === executionId
          ? running.get(executionId)
          : undefined
      )

    const violation = (run: RunState, seq: number, recorded: string, requested: string) => {
      const error = new DeterminismError({
        workflowName: run.workflow.name,
        executionId: run.log.executionId,
        seq,
        recorded,
        requested
      })
      run.violation ??= error
      return Effect.die(error)
    }

    const executeEncoded = (
      workflow: Workflow.Any,
      opts: {
        readonly executionId: string
        readonly payload: object
        readonly discard: boolean
        readonly parent?: WorkflowInstance["Type"] | undefined
      }
    ): Effect.Effect<Workflow.Result<unknown, unknown> | void> =>
      Effect.gen(function* () {
        const { executionId, parent } = opts
        // A new execution's stream is not read first: `WorkflowStarted` is appended at version
        // 0, and an existing stream turns that into a conflict, which reads it (`appendTo`).
        const log: Log = histories.has(executionId)
          ? yield* load(executionId)
          : { executionId, stream: EngineEvent.streamId(executionId), history: History.empty() }
        const start = Effect.gen(function* () {
          yield* refuseRedacted(opts.payload, `The payload of workflow "${workflow.name}"`)
          const payload = yield* Effect.orDie(Schema.encode(asSchema(workflow.payloadSchema))(opts.payload))
          yield* Effect.orDie(
            appendTo(log, (history) =>
              history.started !== undefined
                ? undefined
                : [
                    engineEvent({
                      _tag: "WorkflowStarted",
                      workflowName: workflow.name,
                      payload,
                      parent:
                        parent === undefined
                          ? null
                          : {
                              workflowName: parent.workflow.name,
                              stream: EngineEvent.streamId(parent.executionId)
                            }
                    })
                  ]
            )
          )
        })
        if (log.history.started === undefined) {
          const attempt = yield* Effect.exit(start)
          if (Exit.isFailure(attempt)) {
            // Refused (a secret, a payload that does not encode): an execution that already
            // exists is still returned, as when its stream was read first.
            if (Cause.isInterruptedOnly(attempt.cause)) return yield* Effect.failCause(attempt.cause)
            yield* refresh(log)
            if (log.history.started === undefined) return yield* Effect.failCause(attempt.cause)
          }
        }
        const started = log.history.started
        if (started !== undefined && started.workflowName !== workflow.name) {
          return yield* Effect.dieMessage(
            `Execution ${executionId} belongs to workflow "${started.workflowName}", not "${workflow.name}"`
          )
        }
        const created = yield* orDieAfterRetries(
          Effect.flatMap(now, (time) =>
            queue.enqueue({
              executionId,
              workflowName: workflow.name,
              concurrencyKey: Context.get(workflow.annotations, ConcurrencyKey)(opts.payload),
              parentId: parent?.executionId,
              attributes: Context.get(workflow.annotations, SearchAttributesOf)(opts.payload),
              stream: log.stream,
              now: time
            })
          )
        )
        if (created) yield* signal
        // A child that has not finished suspends its parent; its completion wakes it.
        const childResult = parent === undefined ? undefined : yield* decodeCompleted(workflow, log)
        yield* keep(log)
        if (opts.discard) return
        if (parent !== undefined) return childResult ?? new Workflow.Suspended({})
        return yield* awaitCompletion(workflow, executionId, created)
      })

    // -- activities --------------------------------------------------------------------

    /**
     * Runs an activity, or returns its recorded result, with the exit's values encoded by
     * the activity's schemas: the engine's part of every durable step (`engine` below
     * decodes the exit). No span of its own: @effect/workflow's activity span (its name,
     * executionId) wraps it.
     */
    const activityExecute: WorkflowEngineModule.Encoded["activityExecute"] = (activity, attempt) =>
      Effect.gen(function* () {
        const instance = yield* WorkflowInstance
        const run = running.get(instance.executionId)
        if (run === undefined) {
          return yield* Effect.dieMessage(
            `Activity "${activity.name}" ran outside a tillflow engine run of execution ${instance.executionId}`
          )
        }
        const seq = run.seq++
        const history = run.log.history
        // Replay: the recorded result, looked up by name and attempt so that activities
        // started concurrently may ask in another order.
        const recorded = history.activityKeys.get(History.activityKey(activity.name, attempt))
        if (recorded !== undefined) {
          if (recorded.outbox.length > 0) yield* deliver(recorded.outbox)
          return new Workflow.Complete({ exit: recorded.event.exit })
        }
        const atThisPoint = history.activities.get(seq)
        if (atThisPoint !== undefined) {
          return yield* violation(
            run,
            seq,
            describeActivity(atThisPoint.event.name, atThisPoint.event.attempt),
            describeActivity(activity.name, attempt)
          )
        }
        // An interrupted workflow starts no new side effect; it suspends, and unwinds.
        if (instance.interrupted && !run.unwinding) return new Workflow.Suspended({})

        // What `WorkflowInstance.initial` builds, with the scope made in this fiber (its
        // `Effect.runSync(Scope.make())` starts a fiber runtime for it on every step), and
        // the buffer of the domain events the activity emits.
        const activityInstance: ActivityInstance = {
          executionId: instance.executionId,
          workflow: instance.workflow,
          scope: yield* Scope.make(),
          suspended: false,
          interrupted: instance.interrupted,
          cause: undefined,
          activityState: { count: 0, latch: Effect.unsafeMakeLatch() },
          [emitted]: []
        }
        const result = yield* Effect.matchEffect(activity.execute, {
          onFailure: (error: unknown) =>
            Effect.flatMap(
              encodeRefusingRedacted(activity.errorSchema, error, activity.name, "error"),
              Effect.fail
            ),
          onSuccess: (value: unknown) =>
            encodeRefusingRedacted(activity.successSchema, value, activity.name, "result")
        }).pipe(Workflow.intoResult, Effect.provideService(WorkflowInstance, activityInstance))
        if (result._tag === "Suspended") return result

        const events = activityInstance[emitted]
        const outbox: Array<History.OutboxEvent> = []
        const own: Array<EventStore.NewEvent> = []
        for (let index = 0; index < events.length; index++) {
          const { stream, ...event } = events[index] as DomainEvent
          if (stream === undefined || stream === run.log.stream) {
            own.push(event)
            continue
          }
          outbox.push({
            stream,
            event: {
              type: event.type,
              data: event.data,
              schemaVersion: event.schemaVersion ?? 1,
              metadata: event.metadata ?? {},
              eventId: event.eventId ?? uuidFromSync(`${run.log.stream}/${seq}/${index}`)
            }
          })
        }
        const appended = yield* Effect.either(
          recordStep(run.log, seq, activity.name, attempt, result.exit, own, outbox)
        )
        if (Either.isLeft(appended)) {
          // A result the store refuses (a secret, not JSON) is recorded as the refusal:
          // the workflow sees a defect instead of a value that must not be stored.
          yield* Effect.orDie(
            recordStep(run.log, seq, activity.name, attempt, Exit.die(appended.left), [], [])
          )
        }
        const final = history.activities.get(seq)
        if (final === undefined) {
          return yield* Effect.dieMessage(
            `Activity ${describeActivity(activity.name, attempt)} was not recorded`
          )
        }
        if (final.event.name !== activity.name || final.event.attempt !== attempt) {
          // Another worker (whose lease had expired) recorded a different step here.
          return yield* violation(
            run,
            seq,
            describeActivity(final.event.name, final.event.attempt),
            describeActivity(activity.name, attempt)
          )
        }
        if (final.outbox.length > 0) yield* deliver(final.outbox)
        return new Workflow.Complete({ exit: final.event.exit })
      })

    /** Appends a step's `ActivityCompleted` (with its domain events) unless `seq` is recorded. */
    const recordStep = (
      log: Log,
      seq: number,
      name: string,
      attempt: number,
      exit: Exit.Exit<unknown, unknown>,
      own: ReadonlyArray<EventStore.NewEvent>,
      outbox: ReadonlyArray<History.OutboxEvent>
    ) =>
      appendTo(log, (current) => {
        if (current.activities.has(seq)) return undefined
        const completed = engineEvent(
          { _tag: "ActivityCompleted", seq, name, attempt, exit: exit as EngineEvent.ExitJson },
          outbox.length > 0 ? { outbox: outbox.map(outboxJson) } : undefined
        )
        return own.length === 0 ? [completed] : [completed, ...own]
      })

    const deferredResult: WorkflowEngineModule.Encoded["deferredResult"] = (deferred) =>
      Effect.gen(function* () {
        const instance = yield* WorkflowInstance
        const run = running.get(instance.executionId)
        const log = run?.log ?? (yield* load(instance.executionId))
        const lookup = (): Exit.Exit<unknown, unknown> | undefined => {
          const resolved = log.history.deferreds.get(deferred.name)
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
          return History.isClockFired(log.history, deferred.name) ? Exit.void : undefined
        }
        const found = lookup()
        if (found !== undefined) return found
        // It may have been resolved (from outside) since this run read the history.
        yield* recheck(log)
        const fresh = lookup()
        if (fresh !== undefined) return fresh
        if (deferred.name.startsWith(History.clockDeferredPrefix)) {
          const name = deferred.name.slice(History.clockDeferredPrefix.length)
          const clock = log.history.clocks.get(name)
          if (clock !== undefined && clock.fireAt <= (yield* now)) {
            yield* appendEngine(log, (history) =>
              History.isClockFired(history, deferred.name)
                ? undefined
                : [engineEvent({ _tag: "ClockFired", name })]
            )
            return Exit.void
          }
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
    const deferredDone: WorkflowEngineModule.Encoded["deferredDone"] = ({
      deferredName,
      executionId,
      exit
    }) =>
      Effect.gen(function* () {
        const run = yield* runOf(executionId)
        const seqStart = run?.deferredStarts.get(deferredName)
        const range =
          run !== undefined && seqStart !== undefined ? { seqStart, seqEnd: run.seq } : ({} as const)
        const event: EventStore.NewEvent = {
          ...engineEvent({ _tag: "DeferredResolved", name: deferredName, exit, ...range }),
          eventId: deferredResolvedId(executionId, deferredName)
        }
        const cached = run === undefined ? histories.get(executionId) : undefined
        const log = run?.log ?? cached
        let appended: boolean
        if (log === undefined) {
          appended = yield* StoreRetry.retry(
            store.append(EngineEvent.streamId(executionId), EventStore.AnyVersion, [event]),
            StoreRetry.quick
          ).pipe(
            Effect.as(true),
            Effect.catchTag("DuplicateEventId", () => Effect.succeed(false)),
            Effect.orDie
          )
        } else {
          if (cached !== undefined) histories.delete(executionId)
          appended = yield* Effect.orDie(
            appendTo(log, (history) => (history.deferreds.has(deferredName) ? undefined : [event])).pipe(
              Effect.catchTag("DuplicateEventId", () => Effect.succeed(false))
            )
          )
          if (cached !== undefined) yield* keep(cached)
        }
        // Resolved while its run is under way here (by that run, a `raceAll`, or by this
        // process's receiver): the run reads it from the log it holds, so no queue update;
        // should the run still suspend, it is released due at once (what the wake's
        // `wake_requested` did).
        if (appended && run !== undefined) run.resolvedOwn = true
        else if (appended) {
          touch(executionId)
          yield* wake(executionId)
        }
      }).pipe(Effect.withSpan("DurableEngine.deferredDone", spanOptions({ executionId, deferredName })))

    const engineUnsafe: WorkflowEngine["Type"] = makeUnsafe({
      register: (workflow, execute) =>
        Effect.gen(function* () {
          registry.set(workflow.name, { workflow, execute })
          yield* Effect.addFinalizer(() => Effect.sync(() => registry.delete(workflow.name)))
          yield* signal
        }),

      execute: executeEncoded as WorkflowEngineModule.Encoded["execute"],

      poll,

      interrupt: (workflow, executionId) =>
        Effect.gen(function* () {
          const info = yield* orDieAfterRetries(queue.get(executionId))
          if (Option.isNone(info) || ExecutionQueue.finishedStatuses.includes(info.value.status)) return
          const log = yield* load(executionId)
          yield* appendEngine(log, (history) =>
            history.interrupted || history.completed !== undefined
              ? undefined
              : [engineEvent({ _tag: "WorkflowInterrupted" })]
          )
          touch(executionId)
          yield* keep(log)
          yield* wake(executionId)
        }).pipe(
          Effect.withSpan("DurableEngine.interrupt", spanOptions({ workflow: workflow.name, executionId }))
        ),

      activityExecute,

      resume: (workflow, executionId) =>
        Effect.gen(function* () {
          const info = yield* orDieAfterRetries(queue.get(executionId))
          if (Option.isNone(info)) return
          if (info.value.status === "stuck") {
            const log = yield* load(executionId)
            yield* appendEngine(log, (history) =>
              history.stuck === undefined ? undefined : [engineEvent({ _tag: "WorkflowResumed" })]
            )
            yield* keep(log)
          }
          yield* wake(executionId, true)
        }).pipe(
          Effect.withSpan("DurableEngine.resume", spanOptions({ workflow: workflow.name, executionId }))
        ),

      deferredResult,

      deferredDone,

      scheduleClock: (_workflow, { clock, executionId }) =>
        Effect.gen(function* () {
          const run = yield* runOf(executionId)
          const log = run?.log ?? (yield* load(executionId))
          if (log.history.clocks.has(clock.name)) return
          const durationMillis = Duration.toMillis(clock.duration)
          const fireAt = (yield* now) + durationMillis
          yield* appendEngine(log, (history) =>
            history.clocks.has(clock.name)
              ? undefined
              : [engineEvent({ _tag: "ClockScheduled", name: clock.name, fireAt, durationMillis })]
          )
          // Outside a run nothing would look at the timer before the next suspension.
          if (run === undefined) {
            yield* keep(log)
            yield* wake(executionId)
          }
        })
    })

    const engine = withCompiledCodecs(engineUnsafe, { activityExecute, deferredResult, deferredDone })

    // -- runs --------------------------------------------------------------------------

    const release = (claim: ExecutionQueue.Claim, workerId: string, outcome: RunOutcome) =>
      Effect.gen(function* () {
        const time = yield* now
        yield* orDieAfterRetries(
          queue.release({ executionId: claim.executionId, workerId, release: outcome, now: time })
        )
        if (outcome._tag === "Finished" || outcome._tag === "Stuck") {
          if (outcome._tag === "Finished" && claim.parentId !== null) yield* wake(claim.parentId)
          yield* changed(claim.executionId)
          yield* signal
        }
        return outcome
      })

    const runWorkflow = (entry: Registered, log: Log, claim: ExecutionQueue.Claim) =>
      Effect.gen(function* () {
        const started = log.history.started
        if (started === undefined) {
          return yield* Effect.dieMessage(`Execution ${claim.executionId} has no WorkflowStarted event`)
        }
        const payload = yield* Effect.orDie(
          Schema.decodeUnknown(asSchema(entry.workflow.payloadSchema))(started.payload)
        )
        const instance = WorkflowInstance.initial(entry.workflow, claim.executionId)
        instance.interrupted = log.history.interrupted
        const run: RunState = {
          log,
          workflow: entry.workflow,
          seq: 0,
          deferredStarts: new Map(),
          unwinding: false,
          violation: undefined,
          resolvedOwn: false
        }
        running.set(claim.executionId, run)
        const runContext = RunContext.of({
          setAttributes: (attributes) => orDieAfterRetries(queue.setAttributes(claim.executionId, attributes))
        })
        const result = yield* entry.execute(payload as object, claim.executionId).pipe(
          Effect.onExit(() =>
            Effect.gen(function* () {
              // An interruption requested while this run was going takes effect when it suspends.
              if (instance.suspended && !instance.interrupted) {
                yield* recheck(log)
                if (log.history.interrupted) instance.interrupted = true
              }
              if (!instance.interrupted) return
              instance.suspended = false
              run.unwinding = true
              yield* Effect.withFiberRuntime<void>((fiber) => Effect.interruptible(Fiber.interrupt(fiber)))
            })
          ),
          Workflow.intoResult,
          Effect.provideService(WorkflowInstance, instance),
          Effect.provideService(WorkflowEngine, engine),
          Effect.provideService(RunContext, runContext),
          Effect.exit,
          Effect.ensuring(Effect.sync(() => running.delete(claim.executionId)))
        )
        return { result, run }
      })

    const complete = (
      entry: Registered,
      log: Log,
      exit: Exit.Exit<unknown, unknown>
    ): Effect.Effect<"succeeded" | "failed" | "interrupted"> =>
      Effect.gen(function* () {
        const name = entry.workflow.name
        // The exit with its values encoded by the workflow's schemas (what `poll` decodes).
        const encoded: EngineEvent.ExitJson = yield* refuseRedacted(
          exit,
          `The result of workflow "${name}"`
        ).pipe(
          Effect.zipRight(Schema.encode(workflowExitSchema(entry.workflow))(exit)),
          Effect.flatMap(Schema.decodeUnknown(EngineEvent.ExitJson)),
          Effect.catchAllCause((cause) => Effect.succeed(Exit.die(Cause.squash(cause))))
        )
        const record = (stored: EngineEvent.ExitJson) =>
          appendTo(log, (history) =>
            history.completed !== undefined
              ? undefined
              : [engineEvent({ _tag: "WorkflowCompleted", exit: stored })]
          )
        yield* record(encoded).pipe(Effect.catchAll((refusal) => Effect.orDie(record(Exit.die(refusal)))))
        const stored = yield* Effect.orDie(
          Schema.decodeUnknown(EngineEvent.ExitJson)(log.history.completed?.exit)
        )
        return finishedStatus(stored)
      })

    const run = (claim: ExecutionQueue.Claim, workerId: string): Effect.Effect<RunOutcome> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const entry = registry.get(claim.workflowName)
          if (entry === undefined || running.has(claim.executionId)) {
            return yield* release(claim, workerId, { _tag: "Retry", runAt: (yield* now) + 1_000 })
          }
          const log = yield* load(claim.executionId, claim.streamVersion)
          // What this process appended before the claim is in the history now (a mark set
          // after the claim's statement began is dropped too: at worst a wake-up cycle).
          touched.delete(claim.executionId)
          if (log.history.completed !== undefined) {
            const exit = yield* Effect.orDie(
              Schema.decodeUnknown(EngineEvent.ExitJson)(log.history.completed.exit)
            )
            yield* keep(log)
            return yield* release(claim, workerId, { _tag: "Finished", status: finishedStatus(exit) })
          }
          if (log.history.stuck !== undefined) {
            yield* keep(log)
            return yield* release(claim, workerId, { _tag: "Stuck" })
          }

          const outcome = yield* restore(runWorkflow(entry, log, claim)).pipe(Effect.exit)
          if (Exit.isSuccess(outcome) && outcome.value.run.violation !== undefined) {
            const error = outcome.value.run.violation
            yield* Effect.logError(error.message)
            yield* appendEngine(log, (history) =>
              history.stuck !== undefined
                ? undefined
                : [
                    engineEvent({
                      _tag: "DeterminismViolated",
                      seq: error.seq,
                      recorded: error.recorded,
                      requested: error.requested
                    })
                  ]
            )
            return yield* release(claim, workerId, { _tag: "Stuck" })
          }
          const result = Exit.isSuccess(outcome) ? outcome.value.result : Exit.failCause(outcome.cause)
          if (Exit.isFailure(result)) {
            // The run did not end in a result: interrupted (shutdown, lost lease) or crashed.
            const time = yield* now
            if (Cause.isInterruptedOnly(result.cause)) {
              return yield* release(claim, workerId, { _tag: "Retry", runAt: time })
            }
            yield* Effect.logError(`Run of execution ${claim.executionId} crashed`, result.cause)
            return yield* release(claim, workerId, {
              _tag: "Retry",
              runAt: time + Duration.toMillis(retryDelay(claim.claims))
            })
          }
          // The run ended in a result: its fibers are done with the log, which is kept for
          // whoever looks at this execution next (its waiting caller, its next claim).
          if (result.value._tag === "Complete") {
            const status = yield* complete(entry, log, result.value.exit)
            yield* keep(log)
            return yield* release(claim, workerId, { _tag: "Finished", status })
          }
          const wakeAt = History.nextTimer(log.history)
          yield* appendEngine(log, () => [engineEvent({ _tag: "WorkflowSuspended", wakeAt: wakeAt ?? null })])
          yield* keep(log)
          // A run that resolved one of its own deferreds is due again at once.
          const resolvedOwn = Exit.isSuccess(outcome) && outcome.value.run.resolvedOwn
          const suspended = yield* release(claim, workerId, {
            _tag: "Suspended",
            wakeAt: resolvedOwn ? yield* now : wakeAt
          })
          if (resolvedOwn) yield* signal
          return suspended
        }).pipe(
          Effect.catchAllCause((cause) =>
            Effect.gen(function* () {
              // The engine itself failed (store down past its retries): give the claim back.
              yield* Effect.logError(`Engine failure while running execution ${claim.executionId}`, cause)
              const runAt = (yield* now) + Duration.toMillis(retryDelay(claim.claims))
              return yield* release(claim, workerId, { _tag: "Retry", runAt }).pipe(
                Effect.catchAllCause(() => Effect.succeed<RunOutcome>({ _tag: "Retry", runAt }))
              )
            })
          ),
          Effect.withSpan(
            "DurableEngine.run",
            spanOptions({ workflow: claim.workflowName, executionId: claim.executionId })
          )
        )
      )

    const history = (executionId: string) =>
      Effect.map(store.readStream(EngineEvent.streamId(executionId)), (events) =>
        events.map((recorded): HistoryEntry => ({
          recorded,
          engine: Option.flatMap(EngineEvent.fromStored(recorded), Either.getRight)
        }))
      )

    return {
      engine,
      history,
      get: queue.get,
      list: queue.list,
      workflowNames: Effect.sync(() => Array.from(registry.keys())),
      run,
      signal,
      awaitSignal: Effect.asVoid(Queue.take(wakeups))
    }
  })

const outboxJson = (entry: History.OutboxEvent): EventStore.JsonObject => ({
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

/**
 * The engine as layers: `WorkflowEngine` (what `Workflow.execute`, `toLayer` and friends
 * use) and `DurableEngine` (visibility, and what `EngineWorker` needs). Without a worker a
 * process can still start executions and await their results: workers elsewhere run them.
 */
export const layer = (
  options: Options = {}
): Layer.Layer<
  WorkflowEngine | DurableEngine,
  never,
  EventStore.EventStore | ExecutionQueue.ExecutionQueue
> =>
  Layer.scopedContext(
    Effect.map(make(options), (service) =>
      Context.make(DurableEngine, service).pipe(Context.add(WorkflowEngine, service.engine))
    )
  )
