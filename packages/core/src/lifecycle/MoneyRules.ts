/**
 * The money rules of one original transaction, written once and read by every path that
 * credits money back — refunds and reversals sent to a terminal (`LinkedTerminalRules`),
 * the terminal-less reversal, MOTO refund and reversal, and the tip adjustment: what was
 * charged, what was credited back (every refund, every reversal by its amount), and what is
 * left. Whatever the path, refunded + reversed never exceeds what was charged, a refund of
 * a refund is refused, and nothing is refunded after a full reversal. Each rule is a small
 * pure function of the transaction's folded history (`TransactionHistory.State`) that
 * returns the refusal naming it, or nothing.
 *
 * @example
 * const refusal = MoneyRules.decideRefund(state, Money.make(500n, "EUR"), "refund")
 * if (Option.isSome(refusal)) return yield* Effect.fail(refusal.value)
 */
import * as Option from "effect/Option"
import * as Money from "../model/Money.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import type * as LifecycleEvent from "./LifecycleEvent.js"
import * as TransactionHistory from "./TransactionHistory.js"

/** The rule every credit is checked against. */
export const CREDITED_NOT_ABOVE_CHARGED = "credited-not-above-charged"

/** What a refund can be refused for. */
export type RefundRefusal =
  | LifecycleError.OperationNotApplicable
  | LifecycleError.OperationInProgress
  | LifecycleError.CurrencyNotOfTransaction
  | LifecycleError.RefundExceedsSale
  | Money.InvalidAmount

/** The kinds of transaction money can be refunded from: sales. */
const refundable: ReadonlySet<string> = new Set(["sale", "saleAndTokenizeCard", "moToSale"])
/** The kinds that are themselves a credit. */
const credits: ReadonlySet<string> = new Set(["refund", "moToRefund"])

/**
 * What the transaction charged (what a credit back is bounded by): its amount, but for a
 * pre-authorization what its capture totalled — a hold charges nothing until it is captured.
 */
export const charged = (state: TransactionHistory.State): Money.Money => {
  const preAuthorization = state.preAuthorization
  if (preAuthorization === undefined) return state.amount
  return preAuthorization.capture?.total ?? Money.zero(state.amount.currency)
}

/**
 * What was credited back so far: every refund and every reversal, each by its amount, and a
 * pre-authorization's reversed capture by its total.
 */
export const credited = (state: TransactionHistory.State): Money.Money => {
  const sum = Ops.plus(TransactionHistory.refunded(state), state.reversed)
  const capture = state.preAuthorization?.capture
  return capture !== undefined && state.preAuthorization?.captureReversedAt !== undefined
    ? Ops.plus(sum, capture.total)
    : sum
}

/** What is left to credit back. */
export const left = (state: TransactionHistory.State): Money.Money =>
  Ops.minus(charged(state), credited(state))

/**
 * Whether a refund of `amount` may be made on the transaction, by any path (`operation` is
 * the one that asks: a MOTO refund, a refund sent to a terminal): the original is a sale, no
 * other request is in flight on it, it is not reversed in full, the amount is above zero and
 * in its currency, and the refunds and reversals with it stay within what it charged.
 */
export const decideRefund = (
  state: TransactionHistory.State,
  amount: Money.Money,
  operation: LifecycleEvent.Operation
): Option.Option<RefundRefusal> => {
  if (!refundable.has(state.kind))
    return Option.some(
      new LifecycleError.OperationNotApplicable({
        message: credits.has(state.kind)
          ? `${state.guid} is a ${state.kind}: a refund is never refunded (reverse the refund instead)`
          : `a refund applies to a sale; ${state.guid} is a ${state.kind}`,
        guid: state.guid,
        operation,
        kind: state.kind,
        rule: credits.has(state.kind) ? "no-refund-of-a-refund" : "refund-of-a-sale"
      })
    )
  const refunded = TransactionHistory.refunded(state)
  const ceiling = Ops.minus(charged(state), state.reversed)
  const exceeds = (message: string) =>
    Option.some(
      new LifecycleError.RefundExceedsSale({
        message,
        guid: state.guid,
        sale: ceiling.toString(),
        alreadyRefunded: refunded.toString(),
        requested: amount.toString(),
        rule: "refund-not-above-sale"
      })
    )
  return Ops.firstRefusal<RefundRefusal>(
    () => Ops.inProgress(state, operation),
    () =>
      state.fullyReversedAt !== undefined
        ? exceeds(`sale ${state.guid} was reversed: nothing is left to refund`)
        : Option.none(),
    () => Ops.currencyOf(state, amount, "the refund"),
    () => Ops.positive(amount, "the refund"),
    () =>
      refunded.minorUnits + amount.minorUnits > ceiling.minorUnits
        ? exceeds(
            `a refund of ${amount} would bring the refunds of sale ${state.guid} to ` +
              `${Ops.plus(refunded, amount)}, above the sale's ${ceiling}` +
              (state.reversed.minorUnits > 0n ? ` (${charged(state)} less ${state.reversed} reversed)` : "")
          )
        : Option.none()
  )
}

/**
 * Whether a reversal that undoes `amount` of the transaction (its whole amount for a
 * reversal without one) would credit back more than it charged, after its refunds.
 */
export const reversalRefusal = (
  state: TransactionHistory.State,
  amount: Money.Money | undefined
): Option.Option<LifecycleError.ReversalNotAllowed> => {
  const refunded = TransactionHistory.refunded(state)
  if (refunded.minorUnits === 0n) return Option.none()
  const remaining = left(state)
  if (remaining.minorUnits <= 0n)
    return Option.some(
      new LifecycleError.ReversalNotAllowed({
        message: `${state.guid} was refunded ${refunded} of the ${charged(state)} it charged: nothing is left to reverse`,
        guid: state.guid,
        rule: CREDITED_NOT_ABOVE_CHARGED
      })
    )
  return amount === undefined || amount.minorUnits > remaining.minorUnits
    ? Option.some(
        new LifecycleError.ReversalNotAllowed({
          message:
            `${state.guid} was refunded ${refunded} of the ${charged(state)} it charged: ` +
            `a reversal of ${amount ?? charged(state)} would credit back more than it charged; at most ${remaining} is left`,
          guid: state.guid,
          rule: CREDITED_NOT_ABOVE_CHARGED
        })
      )
    : Option.none()
}

/** Whether a tip may still be set: nothing was credited back from the sale. */
export const tipRefusal = (state: TransactionHistory.State): Option.Option<string> => {
  const refunded = TransactionHistory.refunded(state)
  if (state.fullyReversedAt !== undefined) return Option.some(`sale ${state.guid} was reversed`)
  if (refunded.minorUnits > 0n) return Option.some(`sale ${state.guid} was refunded ${refunded}`)
  if (state.reversed.minorUnits > 0n)
    return Option.some(`sale ${state.guid} was partly reversed (${state.reversed})`)
  return Option.none()
}
