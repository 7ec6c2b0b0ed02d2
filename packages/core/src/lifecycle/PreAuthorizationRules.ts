/**
 * What a pre-authorization may do next, decided from its history (`TransactionHistory`)
 * alone, as pure functions: its hold changes only while it is open, a decrease leaves a
 * hold, and it is captured once, within its scheme's window and tolerance (the table is
 * `CaptureRules`). Each decision is a refusal or the `…Requested` event to record before
 * the request leaves; `PreAuthorizationWorkflow` records it and talks to the gateway.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CaptureRules from "./CaptureRules.js"
import { defined } from "./internal/defined.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import type * as Money from "../model/Money.js"
import * as PolicyError from "./PolicyError.js"
import type * as TransactionHistory from "./TransactionHistory.js"

/**
 * How a capture that breaks its scheme's window or tolerance is handled: `refuse` (the
 * default) fails with `CaptureWindowClosed` / `CaptureOverTolerance`; `warn` sends it
 * anyway (the gateway decides; a late capture may fail or carry fees) and records and
 * returns the warnings. Capture-once, MCC exclusion and currency are never warnings.
 */
export const Enforcement = Schema.Literal("refuse", "warn")
/** @see Enforcement */
export type Enforcement = typeof Enforcement.Type

/** Every refusal these rules can give. */
export type Refusal =
  | LifecycleError.OperationNotApplicable
  | LifecycleError.OperationInProgress
  | LifecycleError.PreAuthorizationNotOpen
  | LifecycleError.MccExcluded
  | LifecycleError.DecreaseExceedsHold
  | LifecycleError.CurrencyNotOfTransaction
  | PolicyError.CaptureAlreadyDone
  | PolicyError.CaptureOverTolerance
  | PolicyError.CaptureWindowClosed
  | Money.InvalidAmount

/** The rule of a pre-authorization's scheme and MCC. */
export const ruleOf = (preAuth: TransactionHistory.PreAuthorization): CaptureRules.CaptureRule =>
  CaptureRules.ruleFor({ scheme: preAuth.scheme, mcc: preAuth.mcc, tenderType: preAuth.tenderType })

const notAPreAuthorization = (state: TransactionHistory.State, operation: LifecycleEvent.Operation) =>
  new LifecycleError.OperationNotApplicable({
    message: `${operation} applies to a pre-authorization; ${state.guid} is a ${state.kind}`,
    guid: state.guid,
    operation,
    kind: state.kind,
    rule: "pre-authorization-only"
  })

/** Refuses a pre-authorization whose scheme excludes its MCC (5542). */
const excluded = (
  state: TransactionHistory.State,
  preAuth: TransactionHistory.PreAuthorization,
  rule: CaptureRules.CaptureRule
): Option.Option<LifecycleError.MccExcluded> =>
  rule.excluded
    ? Option.some(
        new LifecycleError.MccExcluded({
          message:
            `${preAuth.scheme} excludes MCC ${preAuth.mcc} from pre-authorization (FACTS.md: MCC 5542 is excluded ` +
            `for Mastercard, Visa and Amex): ${state.guid} cannot be increased or captured`,
          guid: state.guid,
          scheme: preAuth.scheme,
          mcc: preAuth.mcc,
          rule: "mcc-5542-excluded"
        })
      )
    : Option.none()

const describeStatus = (preAuth: TransactionHistory.PreAuthorization): string =>
  preAuth.captureReversedAt !== undefined
    ? "AUTHORISED after its capture was reversed (withheld funds released)"
    : preAuth.status

/** An amount and the tip added to it. */
const totalOf = (amount: Money.Money, tip: Money.Money | undefined): Money.Money =>
  tip === undefined ? amount : Ops.plus(amount, tip)

const tipCurrency = (state: TransactionHistory.State, tip: Money.Money | undefined) =>
  tip === undefined ? Option.none() : Ops.currencyOf(state, tip, "the tip")

/** The hold can change only while the pre-authorization is open and not captured. */
const holdChangeRefusal = (
  state: TransactionHistory.State,
  operation: "increase" | "decrease",
  amount: Money.Money
): Option.Option<Refusal> => {
  const preAuth = state.preAuthorization
  if (preAuth === undefined) return Option.some(notAPreAuthorization(state, operation))
  return Ops.firstRefusal<Refusal>(
    () => excluded(state, preAuth, ruleOf(preAuth)),
    () =>
      preAuth.status !== "AUTHORISED" || preAuth.captureReversedAt !== undefined
        ? Option.some(
            new LifecycleError.PreAuthorizationNotOpen({
              message: `${operation} refused: pre-authorization ${state.guid} is ${describeStatus(preAuth)}; its hold can no longer change`,
              guid: state.guid,
              status: preAuth.status,
              rule: "hold-changes-while-open"
            })
          )
        : Option.none(),
    () => Ops.inProgress(state, operation),
    () => Ops.currencyOf(state, amount, `the ${operation}`),
    () => Ops.positive(amount, `the ${operation}`)
  )
}

/** A decrease must leave a positive hold: releasing it all is a reversal. */
const decreaseLeavesAHold = (
  state: TransactionHistory.State,
  total: Money.Money
): Option.Option<LifecycleError.DecreaseExceedsHold> => {
  const hold = state.preAuthorization?.hold
  return hold !== undefined && total.minorUnits >= hold.minorUnits
    ? Option.some(
        new LifecycleError.DecreaseExceedsHold({
          message:
            `a decrease of ${total} would leave nothing of the ${hold} held on ${state.guid}: ` +
            "a decrease must leave a positive hold; reverse the pre-authorization to release it all",
          guid: state.guid,
          hold: hold.toString(),
          requested: total.toString(),
          rule: "decrease-leaves-a-hold"
        })
      )
    : Option.none()
}

/**
 * Everything an increase or a decrease of the hold checks, in order, or the
 * `HoldIncreaseRequested` / `HoldDecreaseRequested` event to record.
 */
export const decideHoldChange = (
  state: TransactionHistory.State,
  direction: "increase" | "decrease",
  input: {
    readonly requestId: string
    readonly amount: Money.Money
    readonly tip?: Money.Money | undefined
  },
  at: DateTime.Utc
): Either.Either<LifecycleEvent.Event, Refusal> => {
  const refusal = Ops.firstRefusal<Refusal>(
    () => holdChangeRefusal(state, direction, input.amount),
    () => tipCurrency(state, input.tip),
    () =>
      direction === "decrease" ? decreaseLeavesAHold(state, totalOf(input.amount, input.tip)) : Option.none()
  )
  if (Option.isSome(refusal)) return Either.left(refusal.value)
  return Either.right(
    direction === "increase"
      ? LifecycleEvent.HoldIncreaseRequested.make(
          defined({ requestId: input.requestId, at, delta: input.amount, tip: input.tip })
        )
      : LifecycleEvent.HoldDecreaseRequested.make({ requestId: input.requestId, at, delta: input.amount })
  )
}

/**
 * A pre-authorization is captured once only: refused when a capture is recorded (even one
 * reversed since) or another capture request is in flight or in doubt.
 */
export const captureOnce = (
  state: TransactionHistory.State,
  preAuth: TransactionHistory.PreAuthorization
): Option.Option<PolicyError.CaptureAlreadyDone> =>
  Ops.firstRefusal<PolicyError.CaptureAlreadyDone>(
    () =>
      preAuth.capture !== undefined
        ? Option.some(
            new PolicyError.CaptureAlreadyDone({
              message:
                `pre-authorization ${state.guid} was already captured (${preAuth.capture.total}, request ${preAuth.capture.requestId})` +
                (preAuth.captureReversedAt === undefined ? "" : " and that capture was reversed") +
                ": a pre-authorization is captured once only",
              originalGuid: state.guid
            })
          )
        : Option.none(),
    () =>
      state.pending?.operation === "capture"
        ? Option.some(
            new PolicyError.CaptureAlreadyDone({
              message:
                `pre-authorization ${state.guid} is already being captured by request ${state.pending.requestId}` +
                (state.pending.inDoubt ? " (outcome unknown, to reconcile)" : "") +
                ": a pre-authorization is captured once only",
              originalGuid: state.guid
            })
          )
        : Option.none()
  )

/**
 * A capture against its scheme's window and tolerance: the limit and the warnings to record
 * with it, or — under `refuse` — the first violation as a refusal.
 */
export const captureWithinRule = (
  state: TransactionHistory.State,
  preAuth: TransactionHistory.PreAuthorization,
  input: {
    readonly rule: CaptureRules.CaptureRule
    readonly total: Money.Money
    readonly enforcement: Enforcement
  },
  now: DateTime.Utc
): Either.Either<
  { readonly limit: Money.Money; readonly warnings: ReadonlyArray<string> },
  PolicyError.CaptureOverTolerance | PolicyError.CaptureWindowClosed
> => {
  const { enforcement, rule, total } = input
  const guid = state.guid
  const { limit, note } = CaptureRules.captureLimit(rule, preAuth.hold)
  const violations = CaptureRules.check({
    rule,
    hold: preAuth.hold,
    total,
    authorisedAt: state.at,
    now,
    stayEndsAt: preAuth.stayEndsAt
  })
  const named = `rule ${rule.id} (${rule.description}${rule.source === "default" ? "; FACTS.md is silent, this is tillflow's default" : ""})`
  const warnings: Array<string> = []
  for (const violation of violations) {
    switch (violation._tag) {
      case "OverTolerance": {
        const message =
          `capture of ${total} is above the limit of ${violation.limit} over the ${preAuth.hold} held on ${guid}: ` +
          named +
          (violation.note === undefined ? "" : `; ${violation.note}`)
        if (enforcement === "refuse")
          return Either.left(
            new PolicyError.CaptureOverTolerance({
              message,
              originalGuid: guid,
              authorised: preAuth.hold.toString(),
              requested: total.toString(),
              limit: violation.limit.toString()
            })
          )
        warnings.push(message)
        break
      }
      case "WindowClosed": {
        const message =
          `the capture window of ${guid} (${CaptureRules.describeWindow(rule.window)} from ${DateTime.formatIso(state.at)}) ` +
          `closed at ${DateTime.formatIso(violation.closedAt)}: ${named}`
        if (enforcement === "refuse")
          return Either.left(new PolicyError.CaptureWindowClosed({ message, originalGuid: guid }))
        warnings.push(message)
        break
      }
      case "WindowUnknown": {
        const message =
          `the capture window of ${guid} is the time of stay, which was not recorded when the pre-authorization ` +
          `was opened (stayEndsAt): ${named}`
        if (enforcement === "refuse")
          return Either.left(new PolicyError.CaptureWindowClosed({ message, originalGuid: guid }))
        warnings.push(message)
        break
      }
    }
  }
  if (note !== undefined && violations.every((v) => v._tag !== "OverTolerance")) warnings.push(note)
  return Either.right({ limit, warnings })
}

/**
 * Everything the capture decision checks, in order — a pre-authorization, not excluded,
 * captured once, not released, nothing in flight, same currency, above zero, then the
 * window and tolerance — or the `CaptureRequested` event, with the warnings `warn` let through.
 */
export const decideCapture = (
  state: TransactionHistory.State,
  input: {
    readonly requestId: string
    readonly amount: Money.Money
    readonly tip?: Money.Money | undefined
    readonly enforcement: Enforcement
  },
  now: DateTime.Utc
): Either.Either<LifecycleEvent.Event, Refusal> => {
  const preAuth = state.preAuthorization
  if (preAuth === undefined) return Either.left(notAPreAuthorization(state, "capture"))
  const rule = ruleOf(preAuth)
  const total = totalOf(input.amount, input.tip)
  const refusal = Ops.firstRefusal<Refusal>(
    () => excluded(state, preAuth, rule),
    () => captureOnce(state, preAuth),
    () =>
      preAuth.status === "RELEASED"
        ? Option.some(
            new LifecycleError.PreAuthorizationNotOpen({
              message: `capture refused: the hold of pre-authorization ${state.guid} was released (reversed)`,
              guid: state.guid,
              status: preAuth.status,
              rule: "capture-while-open"
            })
          )
        : Option.none(),
    () => Ops.inProgress(state, "capture"),
    () => Ops.currencyOf(state, input.amount, "the capture"),
    () => tipCurrency(state, input.tip),
    () => Ops.positive(input.amount, "the captured amount")
  )
  if (Option.isSome(refusal)) return Either.left(refusal.value)
  return Either.map(
    captureWithinRule(state, preAuth, { rule, total, enforcement: input.enforcement }, now),
    ({ limit, warnings }) =>
      LifecycleEvent.CaptureRequested.make(
        defined({
          requestId: input.requestId,
          at: now,
          amount: input.amount,
          tip: input.tip,
          total,
          limit,
          rule: rule.id,
          warnings
        })
      )
  )
}
