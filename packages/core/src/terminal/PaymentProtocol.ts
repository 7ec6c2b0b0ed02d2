/**
 * The payment protocol (DESIGN.md, "The payment protocol") as one durable workflow,
 * `TerminalOperation`, parameterised by the request: every operation sent to a terminal
 * ends with a known outcome or a typed error, whatever crashes, timeouts or lost results
 * happen on the way. This module is its overview: the workflow's body (`run`) reads as the
 * steps in order, each an activity whose result the engine records, written in a module
 * of its own:
 *
 * 1. `plan` (`ProtocolWorkflows`, with the workflows and their payload): the settings in
 *    force, the deadline, the `OperationRequested` event.
 *    A linked operation is then admitted by the money rules of its original's history
 *    (`LinkedOperationRules`, step `linked/admit`), which also give the original's
 *    reference when the caller did not, so that a lost answer can be reconciled.
 * 2. `attempt-N/record` (`SendAttempt`): a fresh attempt id and, for original operations,
 *    a fresh UUID v4 `transactionReference` (attempt 1 uses the request's), recorded before
 *    anything leaves; for a linked operation, the entries already under the original's
 *    reference.
 * 3. `attempt-N/send` (`SendAttempt`): registers the attempt (callback token hash) in its
 *    own stream, which can be done once only — a send run again after a crash does not
 *    POST again, it reconciles — then POSTs. 1001/1002: a new attempt after a pause of the
 *    recovery rhythm, until the deadline. 403/422/other 400: `OperationRejected`. 5xx,
 *    network, timeout: outcome unknown, reconcile.
 * 4. The result (`AwaitResult`): by callback (a `DurableDeferred` the receiver resolves,
 *    raced against a durable fallback timer) or by polling `transaction-result`.
 * 5. Reconciliation on the status endpoint (`ReconcileLoop`, by the rules of
 *    `Reconciliation`) when the result does not come or says UNDEFINED: IN_PROGRESS → ask
 *    again; NOT FOUND within 90 s → wait; NOT FOUND after 90 s → not charged (a new attempt
 *    if allowed, else `NotCharged`).
 * 6. `attempt-N/settle` (`Settle`): the outcome events (`PaymentEvents`), and
 *    `ResultMismatch` for any delivered result that disagrees; then a second look at the
 *    attempt's stream, which notes a result the callback receiver recorded meanwhile
 *    (`LateResults`): the ordering point of a race with the receiver, argued at `settle`.
 *    A not-charged conclusion takes the same second look.
 *
 * An execution that ends without an outcome records why first (`Endings`): terminal
 * unavailable, not charged, unresolved.
 *
 * The workflow carries a concurrency key per terminal (`terminal:<serial>`): on tillflow's
 * engine one operation runs per terminal at a time across all workers, and a second caller
 * waits for the first instead of provoking 1001. `StopCurrentTransaction` is a separate
 * workflow without that key, so a stop is never queued behind the operation it stops
 * (`StopTransaction`).
 */
import * as Activity from "@effect/workflow/Activity"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EventStore from "@tillflow/engine/EventStore"
import * as TerminalCloud from "../model/TerminalCloud.js"
import * as AwaitResult from "./AwaitResult.js"
import * as Endings from "./Endings.js"
import * as LinkedOperationRules from "./LinkedOperationRules.js"
import * as OperationOutcome from "./OperationOutcome.js"
import * as ProtocolWorkflows from "./ProtocolWorkflows.js"
import * as ReconcileLoop from "./ReconcileLoop.js"
import * as SendAttempt from "./SendAttempt.js"
import * as Settle from "./Settle.js"
import { stop } from "./StopTransaction.js"
import { appendPaymentEvents } from "./internal/step.js"

export {
  Payload,
  StopAccepted,
  StopCurrentTransaction,
  TerminalOperation,
  terminalKey
} from "./ProtocolWorkflows.js"

/** The body of `TerminalOperation`: the plan, then attempts until one ends the execution. */
const run = (payload: ProtocolWorkflows.Payload, executionId: string) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const store = yield* EventStore.EventStore
    const rules = yield* LinkedOperationRules.LinkedOperationRules
    const execution: ProtocolWorkflows.Execution = {
      payload,
      executionId,
      cloud,
      store,
      emit: (step, events) => appendPaymentEvents(store, executionId, step, events)
    }

    // 1. The plan (`ProtocolWorkflows`)
    const plan = yield* ProtocolWorkflows.plan(execution)
    // Queued behind other operations of the terminal until the caller's deadline (or let
    // out of the line at it, beside the terminal's operation): send nothing.
    if (plan.startedAt >= plan.deadlineAt)
      return yield* Endings.terminalUnavailable(execution, plan, 0, "QueuedPastDeadline")
    if (!LinkedOperationRules.isLinked(payload.request)) return yield* attempts(execution, plan)

    // A linked operation: decided from its original's history and recorded there first,
    // its ending folded into that history after (`LinkedOperationRules`).
    const linked = { executionId, request: payload.request }
    const reference = yield* Activity.make({
      name: "linked/admit",
      success: LinkedOperationRules.Admitted,
      error: OperationOutcome.OperationRefused,
      execute: rules.admit(linked)
    })
    // Reconciled through the original's reference: the caller's, else its history's.
    const reconcilable: ProtocolWorkflows.Execution =
      payload.originalTransactionReference !== undefined || reference === undefined
        ? execution
        : { ...execution, payload: { ...payload, originalTransactionReference: reference } }
    const ended = yield* Effect.either(attempts(reconcilable, plan))
    yield* Activity.make({ name: "linked/conclude", execute: rules.conclude(linked, ended) })
    return yield* ended
  })

/** Steps 2 to 6: attempts until one ends the execution. */
const attempts = (execution: ProtocolWorkflows.Execution, plan: ProtocolWorkflows.Plan) =>
  Effect.gen(function* () {
    const payload = execution.payload
    for (let n = 1; ; n++) {
      // 2.–3. Record the attempt, send it (`SendAttempt`)
      const attempt = yield* SendAttempt.record(execution, n)
      const context = SendAttempt.contextOf(payload, attempt)
      const sent = yield* SendAttempt.send(execution, plan, attempt)
      if (sent._tag === "NotProcessed") {
        if (yield* SendAttempt.pauseBeforeRetry(plan, attempt, sent)) continue
        return yield* Endings.terminalUnavailable(execution, plan, n, sent.reason)
      }
      if (sent._tag === "Rejected") {
        return yield* new OperationOutcome.OperationRejected({
          message: `the service refused ${payload.request.operation}: ${sent.error.message}`,
          error: sent.error
        })
      }

      // 4. The result (`AwaitResult`): an unknown outcome of the POST goes straight to 5.
      const waited: AwaitResult.Waited =
        sent._tag === "Accepted"
          ? yield* AwaitResult.wait(execution, plan, attempt, context, sent)
          : { _tag: "Reconcile" }

      // 5. Reconciliation on the status endpoint (`ReconcileLoop`)
      const reconciled: ReconcileLoop.Reconciled =
        waited._tag === "Reconcile"
          ? yield* ReconcileLoop.reconcile(execution, plan, attempt, context, sent.at)
          : waited

      switch (reconciled._tag) {
        case "NotCharged":
          if (plan.retryNotCharged && reconciled.at < plan.deadlineAt) continue
          return yield* Endings.notCharged(execution, attempt)
        case "Unresolved":
          return yield* Endings.unresolved(execution, attempt, reconciled.message, reconciled.reason)
        case "Settled":
          // 6. Settle (`Settle`)
          yield* Settle.settle(execution, attempt, reconciled.outcome)
          return reconciled.outcome
      }
    }
  })

/**
 * Registers both workflows with the engine in context. Needs the `TerminalCloud` and the
 * `EventStore`; reads `ProtocolSettings` (defaults when none is provided).
 */
export const layer = Layer.mergeAll(
  ProtocolWorkflows.TerminalOperation.toLayer((payload, executionId) => run(payload, executionId)),
  ProtocolWorkflows.StopCurrentTransaction.toLayer((payload, executionId) => stop(payload, executionId))
)
