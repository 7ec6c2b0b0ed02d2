/**
 * Pieces every operation on a transaction's stream shares: folding it (or saying it was
 * never recorded), refusing while another request is in flight, reading amounts, and
 * reconciling an unknown outcome through the status endpoint with the 90-second rule.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Identifiers from "../../model/Identifiers.js"
import * as LifecycleError from "../LifecycleError.js"
import type * as LifecycleEvent from "../LifecycleEvent.js"
import * as Money from "../../model/Money.js"
import * as Reconciliation from "../../terminal/Reconciliation.js"
import * as RecoverySchedule from "../../terminal/RecoverySchedule.js"
import * as ProtocolSettings from "../../terminal/ProtocolSettings.js"
import type * as TerminalCloud from "../../model/TerminalCloud.js"
import * as TransactionHistory from "../TransactionHistory.js"
import type { TransactionStatusResult } from "../../model/TransactionResult.js"
import * as Guarded from "./guarded.js"

/** Folds a `txn-<guid>` stream, or refuses: nothing was recorded under this guid. */
export const foldTransaction =
  (guid: string, operation: LifecycleEvent.Operation) =>
  (
    events: ReadonlyArray<LifecycleEvent.Decoded>
  ): Either.Either<TransactionHistory.State, LifecycleError.TransactionNotRecorded> =>
    Option.match(TransactionHistory.fold(events), {
      onNone: () =>
        Either.left(
          new LifecycleError.TransactionNotRecorded({
            message: `no transaction ${guid} in the event log: ${operation} needs its recorded history (open or record it from its result first)`,
            guid,
            rule: "history-required"
          })
        ),
      onSome: Either.right
    })

/** A refusal when another request on the transaction is in flight. */
export const inProgress = (
  state: TransactionHistory.State,
  operation: LifecycleEvent.Operation
): Option.Option<LifecycleError.OperationInProgress> =>
  state.pending === undefined
    ? Option.none()
    : Option.some(
        new LifecycleError.OperationInProgress({
          message:
            `${operation} refused: ${state.pending.operation} request ${state.pending.requestId} on ${state.guid} ` +
            `${state.pending.inDoubt ? "has an unknown outcome still to reconcile" : "is in flight"}; one operation at a time`,
          guid: state.guid,
          operation,
          pendingOperation: state.pending.operation,
          pendingRequestId: state.pending.requestId,
          rule: "one-operation-at-a-time"
        })
      )

/** A refusal when `money` is not in the transaction's currency. */
export const currencyOf = (
  state: TransactionHistory.State,
  money: Money.Money,
  what: string
): Option.Option<LifecycleError.CurrencyNotOfTransaction> =>
  money.currency === state.amount.currency
    ? Option.none()
    : Option.some(
        new LifecycleError.CurrencyNotOfTransaction({
          message: `${what} is in ${money.currency} but transaction ${state.guid} is in ${state.amount.currency}`,
          guid: state.guid,
          expected: state.amount.currency,
          given: money.currency,
          rule: "same-currency"
        })
      )

/** A refusal when an amount that must be above zero is not. */
export const positive = (money: Money.Money, what: string): Option.Option<Money.InvalidAmount> =>
  money.minorUnits > 0n
    ? Option.none()
    : Option.some(
        new Money.InvalidAmount({
          input: Money.toMajorUnitsString(money),
          currency: money.currency,
          message: `${what} must be above zero, got ${money}`
        })
      )

/** The first refusal of a list of checks, in order. */
export const firstRefusal = <E>(...checks: ReadonlyArray<() => Option.Option<E>>): Option.Option<E> => {
  for (const check of checks) {
    const found = check()
    if (Option.isSome(found)) return found
  }
  return Option.none()
}

/** `a + b`, same currency (checked before). */
export const plus = (a: Money.Money, b: Money.Money): Money.Money =>
  Money.make(a.minorUnits + b.minorUnits, a.currency)
/** `a - b`, same currency (checked before). */
export const minus = (a: Money.Money, b: Money.Money): Money.Money =>
  Money.make(a.minorUnits - b.minorUnits, a.currency)

/** The decimal major-unit string of an amount, as terminal-less endpoints take it. */
export const decimal = (money: Money.Money): Money.DecimalString => Money.toDecimalString(money)

/** Reads a decimal amount of a response in a currency, if present and well formed. */
export const readDecimal = (
  text: string | undefined,
  currency: Money.Money["currency"]
): Money.Money | undefined =>
  text === undefined ? undefined : Either.getOrUndefined(Money.fromMajorUnitsString(text, currency))

/** What a status judgement sees. */
export interface StatusView {
  /** The rows of selector `all` (empty on NOT FOUND). */
  readonly rows: ReadonlyArray<TransactionStatusResult>
  readonly notFound: boolean
  /** True once the NOT FOUND window (`Reconciliation.notFoundWindow`) has passed since the request was recorded. */
  readonly graceOver: boolean
}

/**
 * Reconciles through `GET {transactions_url}/transactions/{reference}/status/all`, asking
 * every `RecoverySchedule.terminalLessInterval` for at most `terminalLessBudget` after the
 * request: `judge`
 * returns the verdict, or none to ask again. A failing status call is asked again too.
 * Without a reference nothing can be asked.
 */
export const reconcileByStatus = <Res>(
  cloud: TerminalCloud.Service,
  reference: string | undefined,
  requestedAt: DateTime.Utc,
  judge: (view: StatusView) => Option.Option<Guarded.Reconciled<Res>>
): Effect.Effect<Guarded.Reconciled<Res>> => {
  const parsed =
    reference === undefined
      ? Option.none()
      : Option.getRight(Schema.decodeEither(Identifiers.TransactionReference)(reference))
  if (Option.isNone(parsed))
    return Effect.succeed({
      _tag: "Unknown",
      message:
        "no transactionReference is recorded for this transaction, so the status endpoint cannot be asked"
    })
  const graceEnd = DateTime.addDuration(requestedAt, Reconciliation.notFoundWindow)
  return Effect.gen(function* () {
    const started = yield* DateTime.now
    const { terminalLessBudget } = yield* ProtocolSettings.ProtocolSettings
    const deadline = DateTime.max(DateTime.addDuration(requestedAt, terminalLessBudget), started)
    return yield* Guarded.poll({
      interval: RecoverySchedule.terminalLessInterval,
      deadline,
      check: Effect.gen(function* () {
        const at = yield* DateTime.now
        const graceOver = DateTime.greaterThanOrEqualTo(at, graceEnd)
        const answer = yield* Effect.either(cloud.transactionStatus(parsed.value, "all"))
        if (Either.isLeft(answer)) {
          return answer.left._tag === "NotFound"
            ? judge({ rows: [], notFound: true, graceOver })
            : Option.none()
        }
        return judge({ rows: answer.right, notFound: false, graceOver })
      })
    })
  })
}

/** True when any row is still in progress (or undefined) at the gateway. */
export const anyInProgress = (rows: ReadonlyArray<TransactionStatusResult>): boolean =>
  rows.some((r) => r.finStatus === "IN_PROGRESS" || r.finStatus === "UNDEFINED")
