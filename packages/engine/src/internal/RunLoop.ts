/**
 * The run of a claimed execution: its log loaded (only what was appended since, when this
 * process kept it), its workflow code run from the start, replaying the history until it
 * suspends or completes, and the claim released with what came of it: finished, suspended
 * until a timer or a wake-up, stuck on a determinism violation, or retried after a crash.
 * An interruption requested meanwhile takes effect when the run suspends: the workflow is
 * interrupted and its finalizers (compensations) run. `interrupt` and `resume` are how
 * such requests are made.
 */
import * as Workflow from "@effect/workflow/Workflow"
import { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as EngineEvent from "../EngineEvent.js"
import * as Tenant from "../Tenant.js"
import * as TraceContext from "../TraceContext.js"
import * as ExecutionQueue from "../ExecutionQueue.js"
import { asSchema, workflowExitSchema } from "./Codecs.js"
import * as Determinism from "./Determinism.js"
import type { EngineState, Registered, RunState } from "./EngineState.js"
import { finishedStatus, now, orDieAfterRetries, spanOptions, wake } from "./EngineState.js"
import type { Log } from "./ExecutionLog.js"
import { appendEngine, appendTo, engineEvent, keep, load, recheck, touch } from "./ExecutionLog.js"
import * as History from "./executionHistory.js"
import { withoutSpansUnlessTraced } from "./LeanStep.js"
import { refuseRedacted } from "./RefuseRedacted.js"
import { changed } from "./Results.js"

/** How a run handed back its claim (reported to the worker for logs and metrics). */
export type RunOutcome =
  | { readonly _tag: "Finished"; readonly status: "succeeded" | "failed" | "interrupted" }
  | { readonly _tag: "Suspended"; readonly wakeAt: number | undefined }
  | { readonly _tag: "Stuck" }
  | { readonly _tag: "Retry"; readonly runAt: number }

/** What a running workflow may ask of its run beside the engine (`DurableEngine.setSearchAttributes`). */
export class RunContext extends Context.Tag("tillflow/DurableEngine/RunContext")<
  RunContext,
  { readonly setAttributes: (attributes: ExecutionQueue.SearchAttributes) => Effect.Effect<void> }
>() {}

/** Hands the claim back with `outcome`; an execution that finished or stopped wakes who waits on it. */
const release = (state: EngineState, claim: ExecutionQueue.Claim, workerId: string, outcome: RunOutcome) =>
  Effect.gen(function* () {
    const time = yield* now
    yield* orDieAfterRetries(
      state.queue.release({ executionId: claim.executionId, workerId, release: outcome, now: time })
    )
    if (outcome._tag === "Finished" || outcome._tag === "Stuck") {
      if (outcome._tag === "Finished" && claim.parentId !== null) yield* wake(state, claim.parentId)
      yield* changed(state, claim.executionId)
      yield* state.signal
    }
    return outcome
  })

/** Runs the workflow's code over the log, as the run of `claim` (see `RunState`). */
const runWorkflow = (
  state: EngineState,
  engine: WorkflowEngine["Type"],
  entry: Registered,
  log: Log,
  claim: ExecutionQueue.Claim
) =>
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
    state.running.set(claim.executionId, run)
    const runContext = RunContext.of({
      setAttributes: (attributes) =>
        orDieAfterRetries(state.queue.setAttributes(claim.executionId, attributes))
    })
    const result = yield* entry.execute(payload as object, claim.executionId).pipe(
      Effect.onExit(() =>
        Effect.gen(function* () {
          // An interruption requested while this run was going takes effect when it suspends.
          if (instance.suspended && !instance.interrupted) {
            yield* recheck(state, log)
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
      // Every run acts for the tenant the execution was started for (`Tenant`).
      Tenant.within(log.history.tenant),
      withoutSpansUnlessTraced,
      Effect.exit,
      Effect.ensuring(Effect.sync(() => state.running.delete(claim.executionId)))
    )
    return { result, run }
  })

/** Records the workflow's result (`WorkflowCompleted`, the first one wins) and returns its status. */
const complete = (
  state: EngineState,
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
      appendTo(state, log, (history) =>
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

/** Merges the search attributes the finished execution's exit gives (`Options.exitAttributes`). */
const exitAttributes = (state: EngineState, entry: Registered, log: Log, claim: ExecutionQueue.Claim) =>
  Effect.gen(function* () {
    if (state.exitAttributes === undefined) return
    const stored = Schema.decodeUnknownOption(EngineEvent.ExitJson)(log.history.completed?.exit)
    if (Option.isNone(stored)) return
    const attributes = state.exitAttributes(entry.workflow.name, stored.value)
    if (Object.keys(attributes).length === 0) return
    yield* orDieAfterRetries(state.queue.setAttributes(claim.executionId, attributes))
  })

/**
 * What came of a run, recorded and released: stopped on a determinism violation, given
 * back after a crash or an interruption, finished, or suspended until its next timer (at
 * once when it resolved one of its own deferreds).
 */
const settle = (
  state: EngineState,
  entry: Registered,
  log: Log,
  claim: ExecutionQueue.Claim,
  workerId: string,
  outcome: Exit.Exit<{
    readonly result: Exit.Exit<Workflow.Result<unknown, unknown>, unknown>
    readonly run: RunState
  }>
) =>
  Effect.gen(function* () {
    if (Exit.isSuccess(outcome) && outcome.value.run.violation !== undefined) {
      yield* Determinism.stop(state, log, outcome.value.run.violation)
      return yield* release(state, claim, workerId, { _tag: "Stuck" })
    }
    const result = Exit.isSuccess(outcome) ? outcome.value.result : Exit.failCause(outcome.cause)
    if (Exit.isFailure(result)) {
      // The run did not end in a result: interrupted (shutdown, lost lease) or crashed.
      const time = yield* now
      if (Cause.isInterruptedOnly(result.cause)) {
        return yield* release(state, claim, workerId, { _tag: "Retry", runAt: time })
      }
      yield* Effect.logError(`Run of execution ${claim.executionId} crashed`, result.cause)
      return yield* release(state, claim, workerId, {
        _tag: "Retry",
        runAt: time + Duration.toMillis(state.retryDelay(claim.claims))
      })
    }
    // The run ended in a result: its fibers are done with the log, which is kept for
    // whoever looks at this execution next (its waiting caller, its next claim).
    if (result.value._tag === "Complete") {
      const status = yield* complete(state, entry, log, result.value.exit)
      yield* exitAttributes(state, entry, log, claim)
      yield* keep(state, log)
      return yield* release(state, claim, workerId, { _tag: "Finished", status })
    }
    const wakeAt = History.nextTimer(log.history)
    yield* appendEngine(state, log, () => [
      engineEvent({ _tag: "WorkflowSuspended", wakeAt: wakeAt ?? null })
    ])
    yield* keep(state, log)
    // A run that resolved one of its own deferreds is due again at once.
    const resolvedOwn = Exit.isSuccess(outcome) && outcome.value.run.resolvedOwn
    const suspended = yield* release(state, claim, workerId, {
      _tag: "Suspended",
      wakeAt: resolvedOwn ? yield* now : wakeAt
    })
    if (resolvedOwn) yield* state.signal
    return suspended
  })

/**
 * Runs a claimed execution once (replay, then live until it suspends or completes) and
 * releases the claim. Never fails; interrupting it releases the claim for another run.
 */
export const run =
  (state: EngineState, engine: WorkflowEngine["Type"]) =>
  (claim: ExecutionQueue.Claim, workerId: string): Effect.Effect<RunOutcome> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const entry = state.registry.get(claim.workflowName)
        if (entry === undefined || state.running.has(claim.executionId)) {
          return yield* release(state, claim, workerId, { _tag: "Retry", runAt: (yield* now) + 1_000 })
        }
        const log = yield* load(state, claim.executionId, claim.streamVersion)
        // What this process appended before the claim is in the history now (a mark set
        // after the claim's statement began is dropped too: at worst a wake-up cycle).
        state.touched.delete(claim.executionId)
        return yield* Effect.gen(function* () {
          if (log.history.completed !== undefined) {
            const exit = yield* Effect.orDie(
              Schema.decodeUnknown(EngineEvent.ExitJson)(log.history.completed.exit)
            )
            yield* keep(state, log)
            return yield* release(state, claim, workerId, { _tag: "Finished", status: finishedStatus(exit) })
          }
          if (log.history.stuck !== undefined) {
            yield* keep(state, log)
            return yield* release(state, claim, workerId, { _tag: "Stuck" })
          }
          const outcome = yield* restore(runWorkflow(state, engine, entry, log, claim)).pipe(Effect.exit)
          return yield* settle(state, entry, log, claim, workerId, outcome)
        }).pipe(
          // A child of the span that started the execution: every run continues its trace.
          Effect.withSpan("DurableEngine.run", {
            ...spanOptions({ workflow: claim.workflowName, executionId: claim.executionId }),
            ...Option.match(TraceContext.parentOf(log.history.traceparent), {
              onNone: () => ({}),
              onSome: (parent) => ({ parent })
            })
          })
        )
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.gen(function* () {
            // The engine itself failed (store down past its retries): give the claim back.
            yield* Effect.logError(`Engine failure while running execution ${claim.executionId}`, cause)
            const runAt = (yield* now) + Duration.toMillis(state.retryDelay(claim.claims))
            return yield* release(state, claim, workerId, { _tag: "Retry", runAt }).pipe(
              Effect.catchAllCause(() => Effect.succeed<RunOutcome>({ _tag: "Retry", runAt }))
            )
          })
        )
      )
    )

/** Requests an interruption: recorded, then the execution woken to act on it. */
export const interrupt =
  (state: EngineState): WorkflowEngineModule.Encoded["interrupt"] =>
  (workflow, executionId) =>
    Effect.gen(function* () {
      const info = yield* orDieAfterRetries(state.queue.get(executionId))
      if (Option.isNone(info) || ExecutionQueue.finishedStatuses.includes(info.value.status)) return
      const log = yield* load(state, executionId)
      yield* appendEngine(state, log, (history) =>
        history.interrupted || history.completed !== undefined
          ? undefined
          : [engineEvent({ _tag: "WorkflowInterrupted" })]
      )
      touch(state, executionId)
      yield* keep(state, log)
      yield* wake(state, executionId)
    }).pipe(Effect.withSpan("DurableEngine.interrupt", spanOptions({ workflow: workflow.name, executionId })))

/** Wakes an execution; a stuck one is resumed (`WorkflowResumed`) to replay again. */
export const resume =
  (state: EngineState): WorkflowEngineModule.Encoded["resume"] =>
  (workflow, executionId) =>
    Effect.gen(function* () {
      const info = yield* orDieAfterRetries(state.queue.get(executionId))
      if (Option.isNone(info)) return
      if (info.value.status === "stuck") {
        const log = yield* load(state, executionId)
        yield* appendEngine(state, log, (history) =>
          history.stuck === undefined ? undefined : [engineEvent({ _tag: "WorkflowResumed" })]
        )
        yield* keep(state, log)
      }
      yield* wake(state, executionId, true)
    }).pipe(Effect.withSpan("DurableEngine.resume", spanOptions({ workflow: workflow.name, executionId })))
