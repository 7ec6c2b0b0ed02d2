/**
 * The money of one original transaction (`txn-<guid>`) as one decider, Emmett-style:
 * `initialState`, `evolve(state, event)` (the history's fold, every path's events), and
 * `decide(command, state)` → the refusal of the rule it breaks, or none. Every operation
 * that credits a charge back — a refund (MOTO or linked through a terminal), a reversal
 * (terminal-less, MOTO or `saleReversal`, partial or full) — and every tip is admitted
 * against it, so the invariants are written once, here:
 *
 * | rule | what it keeps |
 * |---|---|
 * | `credit-not-above-charge` | refunded + reversed ≤ charged, in the currency of the original |
 * | `no-reversal-after-full-refund` | what was refunded in full is not reversed as well |
 * | `no-credit-after-full-reversal` | nothing is refunded once the whole charge was reversed |
 * | `no-refund-of-refund` | a refund is not refunded |
 * | `tip-on-unrefunded-unreversed-sale` | a tip adjusts a sale nothing was refunded or reversed of |
 *
 * Where the spec does not say what the service does, these protect the money locally.
 * The rules of a kind of operation (the pre-authorization's capture window and tolerance,
 * MOTO's 24 hours and batch) stay in their modules, which call these.
 */
import * as Option from "effect/Option"
import * as Money from "../model/Money.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import type * as LifecycleEvent from "./LifecycleEvent.js"
import * as PolicyError from "./PolicyError.js"
import * as TransactionHistory from "./TransactionHistory.js"

/** The state of the model: the history's fold (none before the transaction is recorded). */
export type State = Option.Option<TransactionHistory.State>

/** Nothing recorded yet. */
export const initialState: State = Option.none()

/** Folds one event of any path into the state. */
export const evolve = (state: State, event: LifecycleEvent.Decoded): State =>
  Option.match(state, {
    onNone: () => TransactionHistory.fold([event]),
    onSome: (s) => Option.some(TransactionHistory.apply(s, event))
  })

/** What was charged, and how much of it was credited back, in the original's currency. */
export interface Balance {
  /** The charge: a transaction's amount, a pre-authorization's capture (nothing before it). */
  readonly charged: Money.Money
  readonly refunded: Money.Money
  readonly reversed: Money.Money
  /** What can still be credited back: charged − refunded − reversed. */
  readonly left: Money.Money
}

/** The balance of a transaction. */
export const balanceOf = (state: TransactionHistory.State): Balance => {
  const preAuth = state.preAuthorization
  const charged =
    preAuth === undefined
      ? state.amount
      : preAuth.status === "CAPTURED" && preAuth.capture !== undefined
        ? preAuth.capture.total
        : Money.zero(state.amount.currency)
  const refunded = TransactionHistory.refunded(state)
  const reversed = state.reversed
  return { charged, refunded, reversed, left: Ops.minus(Ops.minus(charged, refunded), reversed) }
}

const isRefund = (state: TransactionHistory.State): boolean =>
  state.kind === "refund" || state.kind === "moToRefund"

/** Every refusal of the model's rules. */
export type Refusal =
  | LifecycleError.RefundExceedsSale
  | LifecycleError.ReversalNotAllowed
  | LifecycleError.OperationNotApplicable
  | LifecycleError.OperationInProgress
  | LifecycleError.CurrencyNotOfTransaction
  | PolicyError.TipAdjustmentNotAllowed
  | Money.InvalidAmount

/** Rule `no-refund-of-refund`. */
export const noRefundOfRefund = (
  state: TransactionHistory.State,
  operation: string
): Option.Option<LifecycleError.OperationNotApplicable> =>
  isRefund(state)
    ? Option.some(
        new LifecycleError.OperationNotApplicable({
          message: `rule no-refund-of-refund: ${state.guid} is a ${state.kind}; a ${operation} credits a charge, not a refund`,
          guid: state.guid,
          operation,
          kind: state.kind,
          rule: "no-refund-of-refund"
        })
      )
    : Option.none()

const exceeds = (state: TransactionHistory.State, amount: Money.Money, rule: string, message: string) => {
  const balance = balanceOf(state)
  return new LifecycleError.RefundExceedsSale({
    message,
    guid: state.guid,
    sale: balance.charged.toString(),
    alreadyRefunded: balance.refunded.toString(),
    requested: amount.toString(),
    rule
  })
}

/** Rule `no-credit-after-full-reversal`: a reversed charge is not refunded. */
export const noCreditAfterFullReversal = (
  state: TransactionHistory.State,
  amount: Money.Money
): Option.Option<LifecycleError.RefundExceedsSale> =>
  state.fullyReversedAt === undefined
    ? Option.none()
    : Option.some(
        exceeds(
          state,
          amount,
          "no-credit-after-full-reversal",
          `sale ${state.guid} was reversed: nothing is left to refund`
        )
      )

/** Rule `credit-not-above-charge` for a refund of `amount`. */
export const creditNotAboveCharge = (
  state: TransactionHistory.State,
  amount: Money.Money
): Option.Option<LifecycleError.RefundExceedsSale> => {
  const { charged, left, refunded, reversed } = balanceOf(state)
  return amount.minorUnits > left.minorUnits
    ? Option.some(
        exceeds(
          state,
          amount,
          "credit-not-above-charge",
          `a refund of ${amount} would bring the refunds of sale ${state.guid} to ` +
            `${Ops.plus(refunded, amount)}, above the sale's ${Ops.minus(charged, reversed)}` +
            (reversed.minorUnits > 0n ? ` left after ${reversed} reversed` : "")
        )
      )
    : Option.none()
}

/** Rule `no-reversal-after-full-refund`. */
export const noReversalAfterFullRefund = (
  state: TransactionHistory.State
): Option.Option<LifecycleError.ReversalNotAllowed> => {
  const { charged, refunded } = balanceOf(state)
  return refunded.minorUnits > 0n && refunded.minorUnits >= charged.minorUnits
    ? Option.some(
        new LifecycleError.ReversalNotAllowed({
          message: `${state.guid} was refunded in full (${refunded}): there is nothing left to reverse`,
          guid: state.guid,
          rule: "no-reversal-after-full-refund"
        })
      )
    : Option.none()
}

/** Rule `tip-on-unrefunded-unreversed-sale`. */
export const tipOnUnrefundedUnreversedSale = (
  state: TransactionHistory.State
): Option.Option<PolicyError.TipAdjustmentNotAllowed> => {
  const { refunded, reversed } = balanceOf(state)
  if (refunded.minorUnits === 0n && reversed.minorUnits === 0n && state.fullyReversedAt === undefined)
    return Option.none()
  const what = refunded.minorUnits > 0n ? `${refunded} of it was refunded` : `${reversed} of it was reversed`
  return Option.some(
    new PolicyError.TipAdjustmentNotAllowed({
      message: `rule tip-on-unrefunded-unreversed-sale: sale ${state.guid} cannot be tipped, ${what}`,
      originalGuid: state.guid
    })
  )
}

/** The refusals of a refund. */
export type RefundRefusal =
  | LifecycleError.RefundExceedsSale
  | LifecycleError.OperationNotApplicable
  | LifecycleError.OperationInProgress
  | LifecycleError.CurrencyNotOfTransaction
  | Money.InvalidAmount

/** A refund of `amount` by `operation` (`motoRefund`, or `refund` / `moToRefund` linked through a terminal). */
export const decideRefund = (
  state: TransactionHistory.State,
  operation: string,
  amount: Money.Money
): Option.Option<RefundRefusal> =>
  Ops.firstRefusal<RefundRefusal>(
    () => noRefundOfRefund(state, operation),
    () => Ops.inProgress(state, "motoRefund"),
    () => noCreditAfterFullReversal(state, amount),
    () => Ops.currencyOf(state, amount, "the refund"),
    () => Ops.positive(amount, "the refund"),
    () => creditNotAboveCharge(state, amount)
  )

/** What the model decides. */
export type Command =
  | { readonly _tag: "Refund"; readonly operation: string; readonly amount: Money.Money }
  | { readonly _tag: "Reverse" }
  | { readonly _tag: "Tip" }

/**
 * Decides a command against the state: the refusal of the first rule it breaks, or none.
 * A reversal's own rules (what it targets, partial or whole, the acquirer's support) are
 * `ReversalWorkflow.decideTarget`'s, which checks this first.
 */
export const decide = (command: Command, state: TransactionHistory.State): Option.Option<Refusal> => {
  switch (command._tag) {
    case "Refund":
      return decideRefund(state, command.operation, command.amount)
    case "Reverse":
      return noReversalAfterFullRefund(state)
    case "Tip":
      return tipOnUnrefundedUnreversedSale(state)
  }
}
