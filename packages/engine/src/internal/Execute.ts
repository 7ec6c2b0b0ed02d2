/**
 * Starting an execution (`WorkflowEngine.execute`): its `WorkflowStarted` appended as
 * the first event of its stream (the execution is its stream: starting it twice finds it
 * started), the execution enqueued with its concurrency key, search attributes and tenant, then
 * the caller waits for its result (`Results`) unless it asked not to. A child execution
 * suspends its parent until it finishes.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as EngineEvent from "../EngineEvent.js"
import type * as ExecutionQueue from "../ExecutionQueue.js"
import { asSchema } from "./Codecs.js"
import type { EngineState, LocalWorker } from "./EngineState.js"
import { now, orDieAfterRetries } from "./EngineState.js"
import type { Log } from "./ExecutionLog.js"
import { appendTo, engineEvent, fresh, keep, load, refresh } from "./ExecutionLog.js"
import { refuseRedacted } from "./RefuseRedacted.js"
import { awaitCompletion, decodeCompleted } from "./Results.js"
import * as Tenant from "../Tenant.js"
import * as TraceContext from "../TraceContext.js"

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

/**
 * Annotation: when an execution with a concurrency key must have started by (epoch ms),
 * from its payload. Still waiting for its key then, it leaves the key's line and runs at
 * once (`ExecutionQueue.expireStartDeadlines`), to end itself.
 */
export class StartBy extends Context.Reference<StartBy>()("tillflow/DurableEngine/StartBy", {
  defaultValue:
    () =>
    (_payload: unknown): number | undefined =>
      undefined
}) {}

/** Annotation: the search attributes of an execution, from its payload (for `list`). */
export class SearchAttributesOf extends Context.Reference<SearchAttributesOf>()(
  "tillflow/DurableEngine/SearchAttributes",
  {
    defaultValue:
      () =>
      (_payload: unknown): ExecutionQueue.SearchAttributes => ({})
  }
) {}

/** What `execute` is asked (`WorkflowEngine`'s `Encoded["execute"]`, its payload encoded by no one yet). */
export interface ExecuteOptions {
  readonly executionId: string
  readonly payload: object
  readonly discard: boolean
  readonly parent?: WorkflowInstance["Type"] | undefined
}

/**
 * Appends the execution's `WorkflowStarted` (its payload checked and encoded) unless its
 * history has one; true when this call's event is the one stored.
 */
const appendStarted = (state: EngineState, log: Log, workflow: Workflow.Any, opts: ExecuteOptions) =>
  Effect.gen(function* () {
    const { parent } = opts
    yield* refuseRedacted(opts.payload, `The payload of workflow "${workflow.name}"`)
    const payload = yield* Effect.orDie(Schema.encode(asSchema(workflow.payloadSchema))(opts.payload))
    // The caller's trace, continued by every run of the execution (`TraceContext`).
    const traceparent = yield* TraceContext.current
    // Whose execution it is (`Tenant`): every run of it acts for that tenant again.
    const tenant = yield* Tenant.current
    if (tenant !== undefined && !Tenant.isTenant(tenant)) {
      return yield* Effect.dieMessage(`Tenant "${tenant}" is not 1 to 64 letters, digits, '.', '_' or '-'`)
    }
    const metadata = {
      ...(traceparent === undefined ? {} : { traceparent }),
      ...(tenant === undefined ? {} : { tenant })
    }
    return yield* Effect.orDie(
      appendTo(state, log, (history) =>
        history.started !== undefined
          ? undefined
          : [
              engineEvent(
                {
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
                },
                Object.keys(metadata).length === 0 ? undefined : metadata
              )
            ]
      )
    )
  })

/** The payload the execution was started with, decoded (the caller's when it does not decode). */
const storedPayload = (
  workflow: Workflow.Any,
  started: { readonly payload: unknown },
  opts: ExecuteOptions
): Effect.Effect<object> =>
  Schema.decodeUnknown(asSchema(workflow.payloadSchema))(started.payload).pipe(
    Effect.map((decoded) => decoded as object),
    Effect.orElseSucceed(() => opts.payload)
  )

/** A worker of this process with a free slot, the slot taken (see `LocalWorker`). */
const reserveLocal = (state: EngineState): LocalWorker | undefined => {
  for (const worker of state.localWorkers) if (worker.reserve()) return worker
  return undefined
}

/**
 * The start leased to `worker`; its slot is given back unless a claim comes of it (the
 * row waits for its concurrency key, or the start failed).
 */
const enqueueLeased = (
  state: EngineState,
  enqueue: NonNullable<ExecutionQueue.ExecutionQueue["Type"]["enqueueLeased"]>,
  worker: LocalWorker,
  input: ExecutionQueue.EnqueueInput
) =>
  orDieAfterRetries(
    enqueue({ ...input, workerId: worker.workerId, leaseMs: worker.leaseMs, tenantLimit: worker.tenantLimit })
  ).pipe(
    Effect.map((answer) => ({ claim: answer.claim, created: answer.inserted })),
    Effect.onExit((exit) =>
      Exit.isSuccess(exit) && exit.value.claim !== undefined
        ? Effect.void
        : Effect.zipRight(Effect.sync(worker.unreserve), state.signal)
    )
  )

/** Starts an execution (once), enqueues it, and returns its result unless `discard`. */
export const execute =
  (state: EngineState) =>
  (workflow: Workflow.Any, opts: ExecuteOptions): Effect.Effect<Workflow.Result<unknown, unknown> | void> =>
    Effect.gen(function* () {
      const { executionId, parent } = opts
      // A new execution's stream is not read first: `WorkflowStarted` is appended at version
      // 0, and an existing stream turns that into a conflict, which reads it (`appendTo`).
      const log: Log = state.histories.has(executionId) ? yield* load(state, executionId) : fresh(executionId)
      let ours = false
      if (log.history.started === undefined) {
        const attempt = yield* Effect.exit(appendStarted(state, log, workflow, opts))
        if (Exit.isSuccess(attempt)) ours = attempt.value
        else {
          // Refused (a secret, a payload that does not encode): an execution that already
          // exists is still returned, as when its stream was read first.
          if (Cause.isInterruptedOnly(attempt.cause)) return yield* Effect.failCause(attempt.cause)
          yield* refresh(state, log)
          if (log.history.started === undefined) return yield* Effect.failCause(attempt.cause)
        }
      }
      const started = log.history.started
      if (started !== undefined && started.workflowName !== workflow.name) {
        return yield* Effect.dieMessage(
          `Execution ${executionId} belongs to workflow "${started.workflowName}", not "${workflow.name}"`
        )
      }
      // An execution that finished (this start found its `WorkflowCompleted`) is answered
      // from its history and not enqueued: there is nothing left to run, and its queue row
      // may be archived (`tillflow_executions_archive`, issue 31), so that an enqueue would
      // insert it anew and a worker claim it again. A row still hot is left as it is.
      if (!ours && log.history.completed !== undefined) {
        const result = yield* decodeCompleted(workflow, log)
        yield* keep(state, log)
        return opts.discard ? undefined : result
      }
      // Another start owns the execution (the same id for another payload, say): it is
      // queued under the owner's key and attributes, never under this caller's.
      const owner =
        ours || started === undefined ? opts.payload : yield* storedPayload(workflow, started, opts)
      const time = yield* now
      const input: ExecutionQueue.EnqueueInput = {
        executionId,
        workflowName: workflow.name,
        concurrencyKey: Context.get(workflow.annotations, ConcurrencyKey)(owner),
        startBy: Context.get(workflow.annotations, StartBy)(owner),
        parentId: parent?.executionId,
        attributes: Context.get(workflow.annotations, SearchAttributesOf)(owner),
        stream: log.stream,
        // The owner's tenant, as its `WorkflowStarted` says (this call's when it started it).
        tenant: log.history.tenant,
        now: time
      }
      // Started by this call in a process whose worker has a free slot: it runs there at
      // once, its row inserted already leased to that worker (start leased).
      // Uninterruptible from the slot's reservation to the run's start: a slot is never lost.
      const { childResult, created } = yield* Effect.uninterruptible(
        Effect.gen(function* () {
          const leased = state.queue.enqueueLeased
          const worker =
            ours && leased !== undefined && state.registry.has(workflow.name)
              ? reserveLocal(state)
              : undefined
          const { claim, created } =
            worker === undefined || leased === undefined
              ? { claim: undefined, created: yield* orDieAfterRetries(state.queue.enqueue(input)) }
              : yield* enqueueLeased(state, leased, worker, input)
          if (created && claim === undefined) yield* state.signal
          // A child that has not finished suspends its parent; its completion wakes it.
          const childResult = parent === undefined ? undefined : yield* decodeCompleted(workflow, log)
          // The run takes the log just kept: the stream is at its version (the run's appends
          // at their exact version catch anything appended since, as after a claim).
          const version = log.history.version
          yield* keep(state, log)
          if (worker !== undefined && claim !== undefined) {
            worker.runReserved({ ...claim, streamVersion: version })
          }
          return { childResult, created }
        })
      )
      if (opts.discard) return
      if (parent !== undefined) return childResult ?? new Workflow.Suspended({})
      return yield* awaitCompletion(state, workflow, executionId, created)
    })
