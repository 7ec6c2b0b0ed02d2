/**
 * The intake in this process: each operation is a call into the library — terminal
 * operations through `TerminalOperations`, the lifecycle workflows on the engine, the
 * engine's visibility and execution records, the event store, `Ledger`/`LedgerProjection`/
 * `OperationTimeline`/`OperationReport` for the audit. What it adds is the edge: turning
 * the JSON of a request into the typed request (with a fresh transaction reference and the
 * terminal's type when they are not given), refusing a reused idempotency key for a
 * different request, and shaping answers into views. Its commands, queries and audit are
 * modules of their own; `make` composes them.
 */
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import {
  type PaymentProtocol,
  type ReversalWorkflow,
  type TerminalCloud,
  TerminalOperations
} from "@tillflow/core"
import type { DurableEngine, EventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Intake from "./Intake.js"
import type * as MerchantRateLimit from "./MerchantRateLimit.js"
import * as Actions from "./internal/Actions.js"
import * as Audit from "./internal/Audit.js"
import * as Commands from "./internal/Commands.js"
import * as Devices from "./internal/Devices.js"
import * as ExecutionViews from "./internal/ExecutionViews.js"
import * as LifecycleWorkflows from "./internal/LifecycleWorkflows.js"
import * as MerchantGate from "./internal/MerchantGate.js"
import * as Queries from "./internal/Queries.js"
import * as Resolutions from "./internal/Resolutions.js"
import * as Retries from "./internal/Retries.js"

export { eventView, parseCheckpoint } from "./internal/StoredEvents.js"

/** `TerminalOperation` with the search attributes the intake lists by. */
export const TerminalOperation: typeof PaymentProtocol.TerminalOperation = TerminalOperations.ListedOperation

/** `StopCurrentTransaction` with its search attributes. */
export const StopCurrentTransaction: typeof PaymentProtocol.StopCurrentTransaction =
  TerminalOperations.ListedStop

/** The terminal-less workflows the intake starts by name, with the attributes it lists them by. */
export const lifecycleWorkflows: ReadonlyMap<string, LifecycleWorkflows.AnyWorkflow> =
  LifecycleWorkflows.byName

/** Options of the local intake. */
export interface Options {
  /** The merchant's MCC, to open the histories of pre-authorizations made on terminals. */
  readonly merchantMcc?: Option.Option<string> | undefined
  /**
   * What the merchant's acquirer supports (partial reversals, capture reversals), as the
   * reversal workflows are given it: an operator's reversal is checked against it before it
   * starts. Default: the workflows' default.
   */
  readonly acquirer?: ReversalWorkflow.AcquirerCapabilities["Type"] | undefined
  /**
   * Each merchant's rate limit of operations started (`TILLFLOW_MERCHANT_RATE_LIMIT`), in
   * this intake's memory; none: no limit.
   */
  readonly merchantRateLimit?: Option.Option<MerchantRateLimit.RateLimit> | undefined
}

/** What the local intake runs on: the engine, the store and the remote service. */
type Requirements =
  DurableEngine.DurableEngine | WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud

/** Builds the intake over the engine, store and remote service in context. */
export const make = (options: Options = {}): Effect.Effect<Intake.Service, never, Requirements> =>
  Effect.gen(function* () {
    const views = yield* ExecutionViews.make
    const devices = yield* Devices.make
    const commands = yield* Commands.make(options.merchantMcc ?? Option.none(), views, devices)
    const queries = yield* Queries.make(views, devices)
    const audit = yield* Audit.make(views)
    const resolutions = yield* Resolutions.make
    const actions = yield* Actions.make(commands, options.merchantMcc ?? Option.none(), options.acquirer)
    const retries = yield* Retries.make(views)
    // A merchant's new operations pass its gate first (registered and enabled); a request
    // acting for a merchant reaches only that merchant's executions and transactions; with a
    // rate limit, a merchant past it starts nothing.
    const gate = yield* MerchantGate.make(options.merchantRateLimit)
    return Intake.Intake.of({
      ...commands,
      ...queries,
      ...audit,
      ...resolutions,
      ...actions,
      ...retries,
      start: (input) => Effect.zipRight(gate.admit, commands.start(input)),
      lifecycle: (workflow, input) =>
        Effect.flatMap(gate.admit, (merchant) =>
          Effect.zipRight(
            typeof input.payload["originalGuid"] === "string"
              ? gate.ownTransaction(input.payload["originalGuid"])
              : Effect.void,
            commands.lifecycle(workflow, MerchantGate.withVirtualTerminal(workflow, input, merchant))
          )
        ),
      act: (guid, input, actor) =>
        gate
          .ownTransaction(guid)
          .pipe(Effect.zipRight(gate.admit), Effect.zipRight(actions.act(guid, input, actor))),
      retry: (executionId, input, actor) =>
        gate
          .ownExecution(executionId)
          .pipe(Effect.zipRight(gate.admit), Effect.zipRight(retries.retry(executionId, input, actor))),
      // A request acting for a merchant sees only that merchant's executions and transactions.
      execution: (executionId, waitSeconds) =>
        Effect.zipRight(gate.ownExecution(executionId), queries.execution(executionId, waitSeconds)),
      history: (executionId) => Effect.zipRight(gate.ownExecution(executionId), queries.history(executionId)),
      resolve: (guid, input) => Effect.zipRight(gate.ownTransaction(guid), resolutions.resolve(guid, input)),
      resolveAttempt: (kind, key, input) =>
        Effect.zipRight(
          kind === "terminal"
            ? gate.ownExecution(key)
            : gate.ownAttempt(Resolutions.attemptOf(kind, key), input.requestId),
          resolutions.resolveAttempt(kind, key, input)
        ),
      stop: (input, actor) =>
        Effect.zipRight(
          input.of === undefined ? Effect.void : gate.ownExecution(input.of),
          commands.stop(input, actor)
        )
    })
  })

/** The intake over the engine, store and remote service in context. */
export const layer = (options: Options = {}): Layer.Layer<Intake.Intake, never, Requirements> =>
  Layer.effect(Intake.Intake, make(options))
