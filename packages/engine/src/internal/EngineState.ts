/**
 * What the parts of the durable engine share: the state `DurableEngine.make` holds (the
 * workflows registered in this process, the runs under way here, the histories kept, the
 * callers waiting for a result) and the few operations every part uses. Each part
 * (`ExecutionLog`, `Replay`, `Deferreds`, `Clocks`, `RunLoop` …) is a set of functions of
 * this state, so that it can be read on its own.
 */
import type * as Workflow from "@effect/workflow/Workflow"
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as EngineEvent from "../EngineEvent.js"
import type * as EventStore from "../EventStore.js"
import type * as ExecutionQueue from "../ExecutionQueue.js"
import * as StoreRetry from "../StoreRetry.js"
import type { DeterminismError } from "./DeterminismError.js"
import type * as History from "./executionHistory.js"

/** An execution's stream and its history, folded up to `history.version`. */
export interface Log {
  readonly executionId: string
  readonly stream: string
  readonly history: History.History
}

/** A workflow registered in this process (what its workers claim). */
export interface Registered {
  readonly workflow: Workflow.Any
  readonly execute: (
    payload: object,
    executionId: string
  ) => Effect.Effect<unknown, unknown, WorkflowInstance | WorkflowEngine>
}

/** A run under way in this process: what its durable steps read and update. */
export interface RunState {
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

/**
 * A worker of this process, as a start sees it (decision "start leased"): a new execution
 * started here runs at once in a free slot of such a worker, its queue row inserted
 * already leased to it (`ExecutionQueue.enqueueLeased`), instead of waiting for a claim.
 */
export interface LocalWorker {
  readonly workerId: string
  readonly leaseMs: number
  /** The worker's `tenantConcurrency`: a start of a tenant at it is left to a claim. */
  readonly tenantLimit?: number | undefined
  /** Takes one of its free slots for a start; false when it has none or is stopping. */
  readonly reserve: () => boolean
  /** Gives a slot `reserve` took back unused. */
  readonly unreserve: () => void
  /** Runs `claim` in the slot `reserve` took (the run releases it as a claimed run does). */
  readonly runReserved: (claim: ExecutionQueue.Claim) => void
}

/**
 * An engine that only replays (the replay kit, `ReplayKit`): it runs no activity live and
 * reports, instead, each one its history has not recorded.
 */
export interface ReplayProbe {
  /** Executions whose recorded history completed (its `WorkflowCompleted` held back, so that the code runs to its end). */
  readonly completed: ReadonlySet<string>
  /** An activity the history has not recorded, asked for at step `seq`: the run suspends there. */
  readonly unrecorded: (executionId: string, seq: number, name: string, attempt: number) => void
}

/** The engine's state in one process. */
export interface EngineState {
  readonly store: EventStore.Service
  readonly queue: ExecutionQueue.ExecutionQueue["Type"]
  /** See `Options.pollInterval`. */
  readonly pollInterval: Duration.Duration
  /** See `Options.retryDelay`. */
  readonly retryDelay: (claims: number) => Duration.Duration
  /** See `Options.historyCacheSize`. */
  readonly historyCacheSize: number
  /** `Options.recheckAfter`, in milliseconds. */
  readonly recheckMs: number
  /** The workflows registered in this process, by name. */
  readonly registry: Map<string, Registered>
  /** The runs under way in this process, by execution id. */
  readonly running: Map<string, RunState>
  /**
   * Histories of executions not running here, by execution id, least recently kept
   * first. An entry belongs to whoever takes it (`ExecutionLog.load` removes it): a log is
   * only ever folded by one fiber, and given back (`ExecutionLog.keep`) when that fiber is
   * done with it. A kept log is the fold of a prefix of its stream (events are never
   * changed once stored), so reading from its version on gives the same history as
   * reading the whole stream.
   */
  readonly histories: Map<string, Log>
  /**
   * When each log was last known to be the whole stream (a read, or an append at its
   * exact version, came back), by the engine's clock: what `ExecutionLog.recheck` goes by.
   */
  readonly checkedAt: WeakMap<Log, number>
  /**
   * Executions this process appended to outside their run (a deferred resolved, an
   * interruption) since their run last looked: `ExecutionLog.recheck` reads for them
   * whatever the time. Bounded: a mark lost costs a wake-up cycle, not a result.
   */
  readonly touched: Set<string>
  /**
   * The callers waiting here for an execution's result, by execution id: a change of one
   * execution wakes its own waiters only (with 1,000 callers waiting, a broadcast woke
   * 1,000 fibers per change).
   */
  readonly waiters: Map<string, Set<Deferred.Deferred<void>>>
  /** Wakes this process's workers (something became due). */
  readonly signal: Effect.Effect<void>
  /** The workers attached in this process (`DurableEngine.attachWorker`), for starts leased. */
  readonly localWorkers: Set<LocalWorker>
  /** See `Options.exitAttributes`. */
  readonly exitAttributes:
    ((workflowName: string, exit: EngineEvent.ExitJson) => ExecutionQueue.SearchAttributes) | undefined
  /** Set on an engine that only replays (see `ReplayProbe`). */
  readonly replayOnly?: ReplayProbe | undefined
}

/** The engine's clock. */
export const now: Effect.Effect<number> = Clock.currentTimeMillis

/** Retries infrastructure failures a few times, then dies: the engine's ops cannot fail. */
export const orDieAfterRetries = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>
) =>
  Effect.orDie(
    StoreRetry.retry(
      effect,
      StoreRetry.quick,
      (error) => error._tag === "EventStoreError" || error._tag === "ExecutionQueueError"
    )
  )

/** Spans of the engine skip the stack trace capture (an `Error` per span otherwise). */
export const spanOptions = (attributes: Record<string, unknown>) => ({ attributes, captureStackTrace: false })

/** Makes an execution due now (or a stuck one runnable again) and wakes the workers here. */
export const wake = (state: EngineState, executionId: string, resumeStuck = false) =>
  Effect.gen(function* () {
    yield* orDieAfterRetries(
      Effect.flatMap(now, (time) => state.queue.wake({ executionId, now: time, resumeStuck }))
    )
    yield* state.signal
  })

/** The run of `executionId` under way here, when the caller is that run (not another execution). */
export const runOf = (state: EngineState, executionId: string) =>
  Effect.map(Effect.serviceOption(WorkflowInstance), (instance) =>
    Option.isSome(instance) && instance.value.executionId === executionId
      ? state.running.get(executionId)
      : undefined
  )

/** The status of a finished execution, from its exit. */
export const finishedStatus = (exit: Exit.Exit<unknown, unknown>): "succeeded" | "failed" | "interrupted" =>
  Exit.isSuccess(exit) ? "succeeded" : Cause.isInterruptedOnly(exit.cause) ? "interrupted" : "failed"
