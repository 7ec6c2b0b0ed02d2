/**
 * What a MOTO sale, refund and reversal may do (spec 4.10), decided from history: a sale
 * needs a new `transactionReference` per attempt; refunds add up to at most the sale, in
 * its currency; a reversal is possible within 24 hours of the recorded sale time (the
 * `Clock`'s, so simulated time works) and, on `/moto/reversal`, until the terminal's
 * daily batch is submitted. All pure but the batch rule, which reads the terminal's batch
 * history. `MotoWorkflow` records the decisions and talks to the gateway; the 24-hour
 * window also holds when `ReversalWorkflow` reverses a MOTO transaction.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as BatchWorkflow from "./BatchWorkflow.js"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as Guarded from "./internal/guarded.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as MoneyRules from "./MoneyRules.js"
import type * as LifecycleEvent from "./LifecycleEvent.js"
import * as Money from "../model/Money.js"
import * as PolicyError from "./PolicyError.js"
import * as TransactionHistory from "./TransactionHistory.js"

/** How long a MOTO transaction can be reversed (spec 2.5, §8). */
export const MOTO_REVERSAL_WINDOW = Duration.hours(24)

/** Every refusal these rules can give. */
export type Refusal =
  | LifecycleError.OperationNotApplicable
  | LifecycleError.OperationInProgress
  | LifecycleError.CurrencyNotOfTransaction
  | LifecycleError.RefundExceedsSale
  | LifecycleError.ReversalNotAllowed
  | PolicyError.ReversalWindowClosed
  | Money.InvalidAmount

const notMoto = (state: TransactionHistory.State, operation: LifecycleEvent.Operation, kinds: string) =>
  new LifecycleError.OperationNotApplicable({
    message: `${operation} applies to ${kinds}; ${state.guid} is a ${state.kind}`,
    guid: state.guid,
    operation,
    kind: state.kind,
    rule: "moto-only"
  })

/**
 * A sale is refused when its reference was already used (`usedBy`: the `MotoSaleRequested`
 * recorded under it) or its amount is not above zero.
 */
export const saleRefusal = (input: {
  readonly reference: string
  readonly usedBy: LifecycleEvent.Decoded | undefined
  readonly amount: Money.Money
}): Option.Option<Refusal> =>
  input.usedBy !== undefined
    ? Option.some(
        new LifecycleError.OperationNotApplicable({
          message: `transactionReference ${input.reference} was already used by request ${Guarded.requestIdOf(input.usedBy)}: every attempt needs a new reference`,
          guid: input.reference,
          operation: "motoSale",
          kind: "moToSale",
          rule: "new-reference-per-attempt"
        })
      )
    : Ops.positive(input.amount, "the MOTO sale amount")

/**
 * A MOTO refund (`/moto/refund`) refunds a MOTO sale, within the rules every refund is
 * decided by (`MoneyRules.decideRefund`).
 */
export const decideRefund = (state: TransactionHistory.State, amount: Money.Money): Option.Option<Refusal> =>
  state.kind !== "moToSale"
    ? Option.some(notMoto(state, "motoRefund", "a MOTO sale"))
    : MoneyRules.decideRefund(state, amount, "motoRefund")

/** The 24-hour rule, from the recorded time of the transaction; other kinds pass. */
export const reversalWindow = (
  state: TransactionHistory.State,
  now: DateTime.Utc
): Option.Option<PolicyError.ReversalWindowClosed> => {
  if (state.kind !== "moToSale" && state.kind !== "moToRefund") return Option.none()
  const closes = DateTime.addDuration(state.at, MOTO_REVERSAL_WINDOW)
  return DateTime.greaterThan(now, closes)
    ? Option.some(
        new PolicyError.ReversalWindowClosed({
          message:
            `a MOTO reversal is possible within 24 hours of the transaction: ${state.guid} was made at ` +
            `${DateTime.formatIso(state.at)}, the window closed at ${DateTime.formatIso(closes)}`,
          originalGuid: state.guid
        })
      )
    : Option.none()
}

/** The refusal of a reversal whose transaction's batch was already submitted. */
export const batchClosed = (
  state: TransactionHistory.State,
  closed: Option.Option<BatchWorkflow.ClosedBatch>
): Option.Option<LifecycleError.ReversalNotAllowed> =>
  Option.map(
    closed,
    (batch) =>
      new LifecycleError.ReversalNotAllowed({
        message: `a MOTO reversal is possible until the daily batch is submitted: batch ${batch.batchNumber} closed at ${DateTime.formatIso(batch.at)}`,
        guid: state.guid,
        rule: "moto-reversal-before-batch"
      })
  )

/** The batch rule of `/moto/reversal`, read from the terminal's batch history. */
export const reversalBeforeBatch = (
  state: TransactionHistory.State
): Effect.Effect<
  Option.Option<LifecycleError.ReversalNotAllowed>,
  EventStore.EventStoreError,
  EventStore.EventStore
> =>
  Effect.map(BatchWorkflow.batchedOut(state.serialNumber, state.batchNumber, state.at), (closed) =>
    batchClosed(state, closed)
  )

/**
 * Everything a MOTO reversal checks from the transaction's own history, in order: a MOTO
 * sale or refund, within 24 hours, nothing in flight, not reversed yet. The batch rule
 * (`reversalBeforeBatch`) is checked first, from the batch history.
 */
export const decideReversal = (
  state: TransactionHistory.State,
  now: DateTime.Utc
): Option.Option<Refusal> => {
  if (state.kind !== "moToSale" && state.kind !== "moToRefund")
    return Option.some(notMoto(state, "motoReversal", "a MOTO sale or refund"))
  return Ops.firstRefusal<Refusal>(
    () => reversalWindow(state, now),
    () => Ops.inProgress(state, "motoReversal"),
    () => MoneyRules.reversalRefusal(state, undefined),
    () =>
      state.fullyReversedAt !== undefined
        ? Option.some(
            new LifecycleError.ReversalNotAllowed({
              message: `${state.guid} is already reversed`,
              guid: state.guid,
              rule: "reverse-once"
            })
          )
        : Option.none()
  )
}
