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
import type * as DurableDeferred from "@effect/workflow/DurableDeferred"
import type * as Workflow from "@effect/workflow/Workflow"
import { makeUnsafe, WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as EngineEvent from "./EngineEvent.js"
import * as EventStore from "./EventStore.js"
import * as ExecutionQueue from "./ExecutionQueue.js"
import { scheduleClock } from "./internal/Clocks.js"
import { encodeDeferredExit, withCompiledCodecs } from "./internal/Codecs.js"
import { deferredDone, deferredResult, resolutionOf } from "./internal/Deferreds.js"
import { emittedOf } from "./internal/DomainEvents.js"
import type { EngineState, LocalWorker, ReplayProbe } from "./internal/EngineState.js"
import { ConcurrencyKey, execute, SearchAttributesOf, StartBy } from "./internal/Execute.js"
import { activityExecute } from "./internal/Replay.js"
import { awaitChange, changed, poll } from "./internal/Results.js"
import { interrupt, resume, run, RunContext } from "./internal/RunLoop.js"
import * as Versions from "./internal/Versions.js"
import * as Tenant from "./Tenant.js"
import type { DomainEvent } from "./internal/DomainEvents.js"
import type { RunOutcome } from "./internal/RunLoop.js"

// ---------------------------------------------------------------------------------------
// Errors

export {
  /** See `Determinism`: the code asked for another activity than its history recorded. */
  DeterminismError
} from "./internal/Determinism.js"
export {
  /** An execution's stream holds an engine event that does not decode. */
  CorruptHistory
} from "./internal/ExecutionLog.js"
export {
  /** A value about to be stored in an event holds a `Redacted` secret. */
  RedactedValueRefused
} from "./internal/RefuseRedacted.js"

// ---------------------------------------------------------------------------------------
// Workflow annotations

export {
  /** Annotation: the concurrency key of an execution, from its payload. */
  ConcurrencyKey,
  /** Annotation: the search attributes of an execution, from its payload (for `list`). */
  SearchAttributesOf,
  /** Annotation: when an execution waiting for its concurrency key must have started by. */
  StartBy
} from "./internal/Execute.js"

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

/**
 * Gives a workflow with a concurrency key a start deadline computed from its payload: an
 * execution still waiting for its key then leaves the key's line and runs at once, beside
 * the key's holder, so that it can end itself. Its first step must therefore check the
 * deadline and, once it has passed, touch nothing the key guards.
 *
 * @example
 * const PrintLabel = DurableEngine.withStartDeadline(
 *   DurableEngine.withConcurrencyKey(Workflow.make({ ... }), (p) => `printer:${p.printer}`),
 *   (payload) => payload.printBy
 * )
 */
export const withStartDeadline = <
  Name extends string,
  Payload extends Workflow.AnyStructSchema,
  Success extends Schema.Schema.Any,
  Error extends Schema.Schema.All
>(
  workflow: Workflow.Workflow<Name, Payload, Success, Error>,
  startBy: (payload: Payload["Type"]) => number | undefined
): Workflow.Workflow<Name, Payload, Success, Error> =>
  workflow.annotate(StartBy, (payload: unknown) => startBy(payload as Payload["Type"]))

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

export type { DomainEvent }

/**
 * Appends a domain event (a business fact) beside the engine's own, from inside an
 * activity. Events for the execution's own stream are appended in the same atomic batch
 * as the activity's `ActivityCompleted`: both or neither. Events for another stream are
 * appended right after, with an id derived from the execution and step, and delivered
 * again on every replay until stored (the id makes the retry a no-op): at least once, never
 * duplicated. Nothing is appended if the activity fails to complete. An event of an
 * execution started for a tenant carries it in its metadata (`tenant`).
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
      ? // An event of a tenant's execution says whose it is (`Tenant`), in its metadata.
        Effect.map(Tenant.current, (tenant) => {
          buffer.push(tenant === undefined ? event : { ...event, metadata: { ...event.metadata, tenant } })
        })
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

export type { RunOutcome }

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
  /** How many executions match a filter (its `after`, `order` and `limit` aside). */
  readonly count: (
    filter: ExecutionQueue.ListFilter
  ) => Effect.Effect<number, ExecutionQueue.ExecutionQueueError>
  /** How many executions of each workflow are in each status. */
  readonly tally: Effect.Effect<ReadonlyArray<ExecutionQueue.Tally>, ExecutionQueue.ExecutionQueueError>
  /** How many executions of each tenant run and wait now (`Tenant`: fair shares, their metrics). */
  readonly tallyByTenant: Effect.Effect<
    ReadonlyArray<ExecutionQueue.TenantTally>,
    ExecutionQueue.ExecutionQueueError
  >
  /** The names of the workflows registered in this process (what its workers claim). */
  readonly workflowNames: Effect.Effect<ReadonlyArray<string>>
  /**
   * Runs a claimed execution once (replay, then live until it suspends or completes) and
   * releases the claim. Never fails; interrupting it releases the claim for another run.
   */
  readonly run: (claim: ExecutionQueue.Claim, workerId: string) => Effect.Effect<RunOutcome>
  /**
   * Registers, now, a wait for the next change of an execution's state seen by this
   * process (it finished or stopped here, or another process announced a change), and
   * returns the effect that waits for it: register before reading the state, then wait,
   * and no change between the two is missed. Best effort, like the announcements: a caller
   * waits with a timeout and reads the state again.
   *
   * @example
   * const changed = yield* engine.awaitChange(executionId)
   * const info = yield* engine.get(executionId)
   * if (!done(info)) yield* Effect.raceFirst(changed, Effect.sleep("1 second"))
   */
  readonly awaitChange: (executionId: string) => Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  /** Wakes this process's workers (something became due). */
  readonly signal: Effect.Effect<void>
  /** Waits until `signal` is called. */
  readonly awaitSignal: Effect.Effect<void>
  /**
   * Attaches a worker of this process for the scope's life: while it has a free slot, an
   * execution started in this process runs in it at once, its queue row inserted already
   * leased to it (when the queue has `enqueueLeased`), instead of waiting for a claim.
   * `EngineWorker` attaches itself.
   */
  readonly attachWorker: (worker: LocalWorker) => Effect.Effect<void, never, Scope.Scope>
  /**
   * A durable deferred's resolution from outside its workflow as the events to append,
   * for a caller that writes them in one atomic write with events of its own
   * (`EventStore.appendStreams`; the callback receiver records a delivered result and
   * resolves the workflow's deferred so). `append` is the execution's part of that write:
   * its `DeferredResolved`, at any version, with the id the store takes once per deferred
   * (a deferred resolved already fails the whole write with `DuplicateEventId`). Run
   * `landed` once the write landed: it wakes the execution (what `deferredDone` does after
   * its own append). What the resolution means is `deferredDone`'s: the first one wins.
   *
   * @example
   * const resolution = yield* engine.resolution(Approval, { executionId, exit: Exit.succeed(true) })
   * yield* store.appendStreams([mine, resolution.append])
   * yield* resolution.landed
   */
  readonly resolution: <Success extends Schema.Schema.Any, Error extends Schema.Schema.All>(
    deferred: DurableDeferred.DurableDeferred<Success, Error>,
    options: {
      readonly executionId: string
      readonly exit: Exit.Exit<Success["Type"], Error["Type"]>
    }
  ) => Effect.Effect<DeferredResolution, ParseResult.ParseError>
}

/** A deferred's resolution as a caller's part of one atomic write (`Service.resolution`). */
export interface DeferredResolution {
  /** The execution's stream's part of the write. */
  readonly append: EventStore.StreamAppend
  /** To run once the write landed: wakes the execution. */
  readonly landed: Effect.Effect<void>
}

export type { LocalWorker }

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
  /**
   * Search attributes an execution gains when it finishes, from its workflow's name and its
   * stored exit (what its `WorkflowCompleted` holds): how it ended, in the words of whoever
   * composes the engine (an outcome, the ids its result named), so that `list` can filter
   * on it. Merged into the execution's attributes before the claim is released as
   * finished: one more queue statement per finished execution, none when it answers `{}`.
   */
  readonly exitAttributes?:
    ((workflowName: string, exit: EngineEvent.ExitJson) => ExecutionQueue.SearchAttributes) | undefined
}

// ---------------------------------------------------------------------------------------
// Implementation

const defaultRetryDelay = (claims: number): Duration.Duration =>
  Duration.millis(Math.min(60_000, 1_000 * 2 ** Math.max(0, claims - 1)))

/**
 * Builds the engine over an `EventStore` and an `ExecutionQueue`. Use `layer` unless you
 * need the service without providing `WorkflowEngine`. It holds the engine's state in
 * this process and wires the parts that work on it (in `internal/`): `ExecutionLog`
 * (histories, appends), `Execute` and `Results` (starting executions, awaiting them),
 * `Replay` and `Determinism` (durable steps), `Deferreds` and `Clocks`, `RunLoop`.
 */
export const make = (
  options: Options = {},
  /** Internal: an engine that only replays (`ReplayKit`). */
  replayOnly?: ReplayProbe
): Effect.Effect<Service, never, EventStore.EventStore | ExecutionQueue.ExecutionQueue | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const queue = yield* ExecutionQueue.ExecutionQueue
    const wakeups = yield* Effect.acquireRelease(Queue.sliding<void>(1), Queue.shutdown)
    const state: EngineState = {
      store,
      queue,
      pollInterval: Duration.decode(options.pollInterval ?? "200 millis"),
      retryDelay: options.retryDelay ?? defaultRetryDelay,
      historyCacheSize: Math.max(0, options.historyCacheSize ?? 512),
      recheckMs: Duration.toMillis(options.recheckAfter ?? "50 millis"),
      registry: new Map(),
      running: new Map(),
      histories: new Map(),
      checkedAt: new WeakMap(),
      touched: new Set(),
      waiters: new Map(),
      signal: Effect.asVoid(Queue.offer(wakeups, undefined)),
      localWorkers: new Set(),
      exitAttributes: options.exitAttributes,
      replayOnly
    }

    // What other processes change (started, woke, finished) wakes this process's workers
    // and the callers waiting here for a result; polling stays the floor.
    yield* queue.changes.pipe(
      Stream.runForEach((executionId) => Effect.zipRight(changed(state, executionId), state.signal)),
      Effect.tapErrorCause((cause) =>
        Effect.logWarning("Execution queue notifications failed; polling until they are back", cause)
      ),
      Effect.retry(Schedule.spaced("5 seconds")),
      Effect.forkScoped
    )

    const encoded = {
      activityExecute: activityExecute(state),
      deferredResult: deferredResult(state),
      deferredDone: deferredDone(state)
    }
    const engine = withCompiledCodecs(
      makeUnsafe({
        register: (workflow, executeWorkflow) =>
          Effect.gen(function* () {
            state.registry.set(workflow.name, { workflow, execute: executeWorkflow })
            yield* Effect.addFinalizer(() => Effect.sync(() => state.registry.delete(workflow.name)))
            yield* state.signal
          }),
        execute: execute(state) as WorkflowEngineModule.Encoded["execute"],
        poll: poll(state),
        interrupt: interrupt(state),
        resume: resume(state),
        scheduleClock: scheduleClock(state),
        ...encoded
      }),
      encoded
    )
    // What `WorkflowVersion` finds from a workflow's context.
    Versions.register(engine, state)

    return {
      engine,
      history: (executionId) =>
        Effect.map(store.readStream(EngineEvent.streamId(executionId)), (events) =>
          events.map((recorded): HistoryEntry => ({
            recorded,
            engine: Option.flatMap(EngineEvent.fromStored(recorded), Either.getRight)
          }))
        ),
      get: queue.get,
      list: queue.list,
      count: (filter) =>
        queue.count !== undefined ? queue.count(filter) : Effect.map(queue.list(filter), (all) => all.length),
      tally: queue.tally ?? Effect.map(queue.list({}), ExecutionQueue.tallyOf),
      tallyByTenant: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        queue.tallyByTenant !== undefined
          ? queue.tallyByTenant({ now })
          : Effect.map(queue.list({}), (all) => ExecutionQueue.tenantTallyOf(all, now))
      ),
      workflowNames: Effect.sync(() => Array.from(state.registry.keys())),
      run: run(state, engine),
      awaitChange: (executionId) => awaitChange(state, executionId),
      signal: state.signal,
      awaitSignal: Effect.asVoid(Queue.take(wakeups)),
      resolution: (deferred, { executionId, exit }) =>
        Effect.map(encodeDeferredExit(deferred, exit as Exit.Exit<unknown, unknown>), (encodedExit) =>
          resolutionOf(state, executionId, deferred.name, encodedExit)
        ),
      attachWorker: (worker) =>
        Effect.acquireRelease(
          Effect.sync(() => state.localWorkers.add(worker)),
          () => Effect.sync(() => state.localWorkers.delete(worker))
        )
    }
  })

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
