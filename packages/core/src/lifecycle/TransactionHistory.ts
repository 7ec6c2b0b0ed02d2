/**
 * The history of one gateway transaction (`txn-<guid>`) folded into the state its rules
 * are checked against: what it is, what is held, captured, refunded, reversed, tipped and
 * tokenized, and which request (if any) is in flight. The stream is opened from a recorded
 * authorisation result (`openPreAuthorization`, `record`), by tillflow's terminal flows or
 * by any caller that holds the result; every terminal-less workflow reads it, decides, and
 * appends at the version it read.
 */
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Either from "effect/Either"
import * as Currency from "../model/Currency.js"
import * as EftTimestamp from "../model/EftTimestamp.js"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Tenant from "@tillflow/engine/Tenant"
import { defined } from "./internal/defined.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as Money from "../model/Money.js"
import type * as OperationOutcome from "../terminal/OperationOutcome.js"
import type { TransactionResult } from "../model/TransactionResult.js"

/** A request that was sent (or is about to be) and whose outcome is not recorded yet. */
export interface Pending {
  readonly requestId: string
  readonly operation: LifecycleEvent.Operation
  readonly at: DateTime.Utc
  /** The `…Requested` event that holds the request. */
  readonly requested: LifecycleEvent.Decoded
  /** An `OperationInDoubt` was recorded: a 5xx that reconciliation could not settle. */
  readonly inDoubt: boolean
}

/** The pre-authorization part of a transaction's state. */
export interface PreAuthorization {
  readonly via: "preAuthorization" | "moToPreAuthorization"
  readonly scheme: string
  readonly mcc: string
  readonly tenderType: string | undefined
  readonly stayEndsAt: DateTime.Utc | undefined
  /** The amount first authorised. */
  readonly authorised: Money.Money
  /** The amount held now, after increases, decreases and releases. */
  readonly hold: Money.Money
  /** AUTHORISED (open), CAPTURED, or RELEASED (the hold was reversed). */
  readonly status: "AUTHORISED" | "CAPTURED" | "RELEASED"
  /** The capture, once made (kept after it is reversed: a pre-authorization is captured once). */
  readonly capture:
    { readonly requestId: string; readonly total: Money.Money; readonly at: DateTime.Utc } | undefined
  /** When the capture was reversed (status back to AUTHORISED, withheld funds released). */
  readonly captureReversedAt: DateTime.Utc | undefined
}

/** One tip adjustment; the last one stands. */
export interface TipAdjustment {
  readonly requestId: string
  readonly tip: Money.Money
  readonly at: DateTime.Utc
}

/** The state of a transaction, as its history tells it. */
export interface State {
  readonly guid: string
  readonly kind: LifecycleEvent.TransactionKind
  /** The amount of the transaction (the authorised amount of a pre-authorization). */
  readonly amount: Money.Money
  readonly at: DateTime.Utc
  readonly transactionReference: string | undefined
  readonly serialNumber: string | undefined
  readonly terminalType: string | undefined
  readonly batchNumber: string | undefined
  readonly originalGuid: string | undefined
  /** The merchant the original's result named (`mid`), when it was made on a terminal. */
  readonly merchant: string | undefined
  readonly preAuthorization: PreAuthorization | undefined
  readonly pending: Pending | undefined
  readonly refunds: ReadonlyArray<{
    readonly requestId: string
    readonly amount: Money.Money
    readonly at: DateTime.Utc
  }>
  /** What reversals undid, in total (a full reversal undoes the whole amount). */
  readonly reversed: Money.Money
  /** Set once a reversal left nothing to reverse. */
  readonly fullyReversedAt: DateTime.Utc | undefined
  readonly tips: ReadonlyArray<TipAdjustment>
  readonly cardToken: string | undefined
  /** The outcome event of each completed request, by `operation/requestId`. */
  readonly completed: ReadonlyMap<string, LifecycleEvent.Decoded>
}

/**
 * The prefix of the `requestId` under which a linked operation sent to a terminal is recorded
 * in its original's history (`LinkedTerminalRules.requestIdOf`).
 */
export const terminalRequestPrefix = "terminal-"

/** The `requestId` a linked terminal operation (its execution) is recorded under in its original's history. */
export const terminalRequestIdOf = (executionId: string): string => `${terminalRequestPrefix}${executionId}`

/** The operation a refund's events belong to: a refund sent to a terminal, or a MOTO refund. */
const refundOperation = (requestId: string): LifecycleEvent.Operation =>
  requestId.startsWith(terminalRequestPrefix) ? "refund" : "motoRefund"

const nonBlank = (value: string | undefined): string | undefined =>
  value === undefined || value.trim().length === 0 ? undefined : value

/** The key of a request in `completed`. */
export const requestKey = (operation: LifecycleEvent.Operation, requestId: string): string =>
  `${operation}/${requestId}`

/** Sum of the refunds applied so far. */
export const refunded = (state: State): Money.Money =>
  state.refunds.reduce(
    (sum, r) => Money.make(sum.minorUnits + r.amount.minorUnits, sum.currency),
    Money.zero(state.amount.currency)
  )

/** The tip that stands (the last adjustment), if any. */
export const standingTip = (state: State): TipAdjustment | undefined => state.tips[state.tips.length - 1]

const plus = (a: Money.Money, b: Money.Money): Money.Money =>
  Money.make(a.minorUnits + b.minorUnits, a.currency)

/**
 * What the transaction charged: its amount and the tip that stands on it (in its currency).
 * `MoneyRules.charged` is the name the rules read it by.
 */
export const chargedOf = (state: State): Money.Money => {
  const tip = standingTip(state)
  return tip === undefined || tip.tip.currency !== state.amount.currency
    ? state.amount
    : plus(state.amount, tip.tip)
}

const withPreAuth = (state: State, f: (p: PreAuthorization) => PreAuthorization): State =>
  state.preAuthorization === undefined ? state : { ...state, preAuthorization: f(state.preAuthorization) }

const complete = (
  state: State,
  operation: LifecycleEvent.Operation,
  event: LifecycleEvent.Decoded
): State => {
  const requestId = (event.data as { readonly requestId: string }).requestId
  const completed = new Map(state.completed)
  completed.set(requestKey(operation, requestId), event)
  const pending =
    state.pending?.requestId === requestId && state.pending.operation === operation
      ? undefined
      : state.pending
  return { ...state, completed, pending }
}

const request = (state: State, operation: LifecycleEvent.Operation, event: LifecycleEvent.Decoded): State => {
  const data = event.data as { readonly requestId: string; readonly at: DateTime.Utc }
  return {
    ...state,
    pending: { requestId: data.requestId, operation, at: data.at, requested: event, inDoubt: false }
  }
}

const open = (event: LifecycleEvent.Decoded): State | undefined => {
  const base = {
    pending: undefined,
    refunds: [],
    fullyReversedAt: undefined,
    tips: [],
    cardToken: undefined,
    completed: new Map<string, LifecycleEvent.Decoded>()
  }
  switch (event.type) {
    case "TransactionRecorded": {
      const d = event.data
      return {
        ...base,
        guid: d.guid,
        kind: d.kind,
        amount: d.amount,
        at: d.at,
        transactionReference: d.transactionReference,
        serialNumber: d.serialNumber,
        terminalType: d.terminalType,
        batchNumber: d.batchNumber,
        originalGuid: d.originalGuid,
        merchant: d.merchant,
        preAuthorization: undefined,
        reversed: Money.zero(d.amount.currency)
      }
    }
    case "PreAuthorizationOpened": {
      const d = event.data
      return {
        ...base,
        guid: d.guid,
        kind: d.via,
        amount: d.amount,
        at: d.at,
        transactionReference: d.transactionReference,
        serialNumber: d.serialNumber,
        terminalType: d.terminalType,
        batchNumber: d.batchNumber,
        originalGuid: undefined,
        merchant: d.merchant,
        reversed: Money.zero(d.amount.currency),
        preAuthorization: {
          via: d.via,
          scheme: d.scheme,
          mcc: d.mcc,
          tenderType: d.tenderType,
          stayEndsAt: d.stayEndsAt,
          authorised: d.amount,
          hold: d.amount,
          status: "AUTHORISED",
          capture: undefined,
          captureReversedAt: undefined
        }
      }
    }
    default:
      return undefined
  }
}

type Resolved = Extract<LifecycleEvent.Decoded, { readonly type: "InDoubtResolved" }>

/**
 * The approval an operator's `applied` resolution stands for: the outcome event the
 * pending request would have led to, by what the resolution says it moved.
 */
const approvalOf = (
  state: State,
  pending: Pending,
  resolved: Resolved
): LifecycleEvent.Decoded | undefined => {
  const { requestId, at, amount, replaces } = resolved.data
  const base = {
    requestId,
    at,
    reconciled: false,
    serialNumber: state.serialNumber,
    merchant: state.merchant
  }
  const as = (type: LifecycleEvent.Decoded["type"], data: object) =>
    ({ type, data: defined({ ...base, ...data }), recorded: resolved.recorded }) as LifecycleEvent.Decoded
  const requested = pending.requested
  const hold = state.preAuthorization?.hold
  switch (requested.type) {
    case "CaptureRequested":
      return as("PreAuthorizationCaptured", { total: amount ?? requested.data.total })
    case "HoldIncreaseRequested":
    case "HoldDecreaseRequested": {
      const delta = amount ?? requested.data.delta
      const before = hold ?? Money.zero(delta.currency)
      const sign = requested.type === "HoldIncreaseRequested" ? 1n : -1n
      return as(requested.type === "HoldIncreaseRequested" ? "HoldIncreased" : "HoldDecreased", {
        delta,
        hold: Money.make(before.minorUnits + sign * delta.minorUnits, before.currency)
      })
    }
    case "ReversalRequested":
      return as("Reversed", {
        target: requested.data.target,
        amount:
          amount ??
          requested.data.amount ??
          (requested.data.target === "hold" ? hold : undefined) ??
          state.amount
      })
    case "RefundRequested":
      return as("Refunded", { amount: amount ?? requested.data.amount })
    case "TipAdjustmentRequested":
      return as("TipAdjusted", { tip: amount ?? requested.data.tip, replaces })
    default:
      return undefined
  }
}

/** Applies one event to the state. */
export const apply = (state: State, event: LifecycleEvent.Decoded): State => {
  switch (event.type) {
    case "HoldIncreaseRequested":
      return request(state, "increase", event)
    case "HoldIncreased":
      return complete(
        withPreAuth(state, (p) => ({ ...p, hold: event.data.hold })),
        "increase",
        event
      )
    case "HoldDecreaseRequested":
      return request(state, "decrease", event)
    case "HoldDecreased":
      return complete(
        withPreAuth(state, (p) => ({ ...p, hold: event.data.hold })),
        "decrease",
        event
      )
    case "CaptureRequested":
      return request(state, "capture", event)
    case "PreAuthorizationCaptured": {
      const d = event.data
      return complete(
        withPreAuth(state, (p) => ({
          ...p,
          status: "CAPTURED",
          capture: { requestId: d.requestId, total: d.total, at: d.at }
        })),
        "capture",
        event
      )
    }
    case "ReversalRequested":
      return request(state, event.data.endpoint, event)
    case "Reversed": {
      const d = event.data
      const operation = state.pending?.requestId === d.requestId ? state.pending.operation : "reversal"
      let next: State
      switch (d.target) {
        case "hold":
          next = withPreAuth(state, (p) => ({ ...p, status: "RELEASED", hold: Money.zero(p.hold.currency) }))
          next = { ...next, fullyReversedAt: d.at }
          break
        case "capture":
          next = withPreAuth(state, (p) => ({
            ...p,
            status: "AUTHORISED",
            hold: Money.zero(p.hold.currency),
            captureReversedAt: d.at
          }))
          break
        case "transaction": {
          const reversed = plus(state.reversed, d.amount)
          next = {
            ...state,
            reversed,
            fullyReversedAt: reversed.minorUnits >= chargedOf(state).minorUnits ? d.at : state.fullyReversedAt
          }
          break
        }
      }
      return complete(next, operation, event)
    }
    case "RefundRequested":
      return request(state, refundOperation(event.data.requestId), event)
    case "Refunded":
      return complete(
        {
          ...state,
          refunds: [
            ...state.refunds,
            { requestId: event.data.requestId, amount: event.data.amount, at: event.data.at }
          ]
        },
        refundOperation(event.data.requestId),
        event
      )
    case "TipAdjustmentRequested":
      return request(state, "tipAdjustment", event)
    case "TipAdjusted":
      return complete(
        {
          ...state,
          tips: [...state.tips, { requestId: event.data.requestId, tip: event.data.tip, at: event.data.at }]
        },
        "tipAdjustment",
        event
      )
    case "TokenizationRequested":
      // Reading a token moves no money: it does not hold the one-operation-at-a-time slot.
      return state
    case "CardTokenized":
      return complete({ ...state, cardToken: event.data.cardToken }, "tokenization", event)
    case "OperationFailed":
      return complete(state, event.data.operation, event)
    case "OperationInDoubt":
      return state.pending?.requestId === event.data.requestId
        ? { ...state, pending: { ...state.pending, inDoubt: true } }
        : state
    case "InDoubtResolved": {
      const pending = state.pending
      if (pending === undefined || pending.requestId !== event.data.requestId) return state
      if (event.data.resolution === "notApplied") return complete(state, pending.operation, event)
      const approval = approvalOf(state, pending, event)
      return complete(approval === undefined ? state : apply(state, approval), pending.operation, event)
    }
    default:
      return state
  }
}

/** Folds a stream's events into the transaction's state; none when it was never opened. */
export const fold = (events: ReadonlyArray<LifecycleEvent.Decoded>): Option.Option<State> => {
  const [first, ...rest] = events
  if (first === undefined) return Option.none()
  const opened = open(first)
  return opened === undefined ? Option.none() : Option.some(rest.reduce(apply, opened))
}

/** A stream read and folded, with the version the next append must expect. */
export interface Loaded {
  readonly state: Option.Option<State>
  readonly version: number
  readonly events: ReadonlyArray<LifecycleEvent.Decoded>
}

/** Reads and folds the stream of a transaction. */
export const load = Effect.fn("TransactionHistory.load")(function* (store: EventStore.Service, guid: string) {
  const recorded = yield* store.readStream(LifecycleEvent.transactionStream(guid))
  const events = yield* LifecycleEvent.registry.decodeAll(recorded)
  const last = recorded[recorded.length - 1]
  return { state: fold(events), version: last === undefined ? 0 : last.version, events } satisfies Loaded
})

/** What the authorisation of a pre-authorization said, to open its lifecycle. */
export interface PreAuthorizationAuthorised {
  /** The gateway guid of the pre-authorization (`efttransactionID`). */
  readonly guid: string
  readonly via?: "preAuthorization" | "moToPreAuthorization" | undefined
  /** The amount authorised (the approved amount after a partial approval). */
  readonly amount: Money.Money
  readonly authorisedAt: DateTime.Utc
  /** `cardSchemeName` of the result. */
  readonly scheme: string
  /** The merchant category code of the credential used. */
  readonly mcc: string
  readonly tenderType?: string | undefined
  readonly transactionReference?: string | undefined
  readonly serialNumber?: string | undefined
  readonly terminalType?: string | undefined
  readonly batchNumber?: string | undefined
  readonly stayEndsAt?: DateTime.Utc | undefined
  /** The merchant the result named (`mid`). */
  readonly merchant?: string | undefined
}

/** What a completed transaction's result said, to record it. */
export interface Completed {
  readonly guid: string
  readonly kind: LifecycleEvent.TransactionKind
  readonly amount: Money.Money
  readonly at: DateTime.Utc
  readonly transactionReference?: string | undefined
  readonly serialNumber?: string | undefined
  readonly terminalType?: string | undefined
  readonly batchNumber?: string | undefined
  readonly originalGuid?: string | undefined
  /** The merchant the result named (`mid`). */
  readonly merchant?: string | undefined
}

/**
 * Appends the opening event unless the stream is already open (a second open of the same
 * transaction is a no-op, so the terminal flow may deliver its result twice). The opening
 * names the current tenant (whose transaction it is: the audit of a merchant reads by it).
 */
const openStream = (store: EventStore.Service, guid: string, event: LifecycleEvent.Event) =>
  Effect.gen(function* () {
    const encoded = yield* Effect.flatMap(LifecycleEvent.registry.encode(event), (e) => Tenant.stamp([e]))
    return yield* store.append(LifecycleEvent.transactionStream(guid), EventStore.NoStream, encoded).pipe(
      Effect.as(true),
      Effect.catchTag("ConcurrencyConflict", () => Effect.succeed(false))
    )
  })

/**
 * Opens the lifecycle of a pre-authorization from its recorded authorisation. Returns
 * false when it was already open.
 *
 * @example
 * yield* TransactionHistory.openPreAuthorization(store, {
 *   guid, amount: Money.make(10000n, "EUR"), authorisedAt, scheme: "Visa", mcc: "7011"
 * })
 */
export const openPreAuthorization = Effect.fn("TransactionHistory.openPreAuthorization")(function* (
  store: EventStore.Service,
  authorised: PreAuthorizationAuthorised
) {
  return yield* openStream(
    store,
    authorised.guid,
    LifecycleEvent.PreAuthorizationOpened.make(
      defined({
        guid: authorised.guid,
        via: authorised.via ?? "preAuthorization",
        amount: authorised.amount,
        at: authorised.authorisedAt,
        scheme: authorised.scheme,
        mcc: authorised.mcc,
        tenderType: authorised.tenderType,
        transactionReference: authorised.transactionReference,
        serialNumber: authorised.serialNumber,
        terminalType: authorised.terminalType,
        batchNumber: authorised.batchNumber,
        stayEndsAt: authorised.stayEndsAt,
        merchant: authorised.merchant
      })
    )
  )
})

/** Records a completed transaction (sale, refund, capture, MOTO sale …). False when already recorded. */
export const record = Effect.fn("TransactionHistory.record")(function* (
  store: EventStore.Service,
  completed: Completed
) {
  return yield* openStream(
    store,
    completed.guid,
    LifecycleEvent.TransactionRecorded.make(defined({ ...completed }))
  )
})

/** Why a result cannot open a history: what it lacks. */
export class ResultIncomplete extends Schema.TaggedError<ResultIncomplete>()("ResultIncomplete", {
  message: Schema.String
}) {}

/** What every opening needs from a result: its guid, its amount in a known currency, its time. */
const essentials = (result: TransactionResult, what: string) => {
  const guid = result.efttransactionID ?? result.transactionID
  const minor = result.totalAmount ?? result.requestedAmount
  const currency = result.currency
  const at = result.efttimestamp
  if (guid === undefined)
    return Either.left(new ResultIncomplete({ message: `the ${what} result carries no efttransactionID` }))
  if (minor === undefined || currency === undefined || !Currency.isCurrency(currency))
    return Either.left(
      new ResultIncomplete({ message: `the ${what} result ${guid} carries no amount in a known currency` })
    )
  if (at === undefined)
    return Either.left(
      new ResultIncomplete({ message: `the ${what} result ${guid} carries no efttimestamp` })
    )
  // A status-endpoint result gives the terminal's local time, zone unknown: the windows
  // are measured from the earliest instant it can be, so they close early, never late.
  return Either.right({ guid, amount: Money.make(minor, currency), at: EftTimestamp.earliestInstant(at) })
}

/**
 * What an authorised pre-authorization's result says, to open its lifecycle: the guid,
 * the authorised amount (`totalAmount`: after a partial approval, what was approved), the
 * scheme, the terminal's time. The MCC is the merchant's, not in the result.
 */
export const preAuthorizationFromResult = (
  result: TransactionResult,
  context: {
    readonly mcc: string
    readonly serialNumber?: string | undefined
    readonly terminalType?: string | undefined
    readonly stayEndsAt?: DateTime.Utc | undefined
  }
): Either.Either<PreAuthorizationAuthorised, ResultIncomplete> =>
  Either.map(essentials(result, "pre-authorization"), ({ amount, at, guid }) =>
    defined({
      guid,
      via: result.type === "MOTO_SALE" ? ("moToPreAuthorization" as const) : ("preAuthorization" as const),
      amount,
      authorisedAt: at,
      scheme: result.cardSchemeName ?? "",
      mcc: context.mcc,
      tenderType: result.tenderType,
      transactionReference: result.transactionReference,
      serialNumber: context.serialNumber,
      terminalType: context.terminalType,
      batchNumber: result.batchNumber,
      stayEndsAt: context.stayEndsAt,
      merchant: nonBlank(result.mid) ?? nonBlank(result.merchantName)
    })
  )

/** What a completed transaction's result says, to record it (`kind` is the operation sent). */
export const completedFromResult = (
  result: TransactionResult,
  context: {
    readonly kind: LifecycleEvent.TransactionKind
    readonly serialNumber?: string | undefined
    readonly terminalType?: string | undefined
    readonly originalGuid?: string | undefined
  }
): Either.Either<Completed, ResultIncomplete> =>
  Either.map(essentials(result, context.kind), ({ amount, at, guid }) =>
    defined({
      guid,
      kind: context.kind,
      amount,
      at,
      transactionReference: result.transactionReference,
      serialNumber: context.serialNumber,
      terminalType: context.terminalType,
      batchNumber: result.batchNumber,
      originalGuid: context.originalGuid,
      merchant: nonBlank(result.mid) ?? nonBlank(result.merchantName)
    })
  )

/** The merchant an outcome's result named: its `mid`, else its merchant name (none when both are blank). */
const merchantOf = (facts: OperationOutcome.Facts): string | undefined =>
  nonBlank(facts.mid) ?? nonBlank(facts.merchantName)

const transactionKinds: ReadonlySet<string> = new Set(LifecycleEvent.TransactionKind.literals)

/** The facts of an approved outcome of the terminal flows (`TerminalOperations`), or why not. */
const approvedFacts = (outcome: OperationOutcome.Outcome, what: string) => {
  if (outcome._tag !== "Approved" && outcome._tag !== "PartiallyApproved")
    return Either.left(new ResultIncomplete({ message: `the ${what} was not approved (${outcome._tag})` }))
  const facts = outcome.facts
  const guid = facts.efttransactionID
  const amount = facts.totalAmount ?? facts.requestedAmount
  if (guid === undefined)
    return Either.left(new ResultIncomplete({ message: `the ${what} outcome carries no efttransactionID` }))
  if (amount === undefined)
    return Either.left(new ResultIncomplete({ message: `the ${what} outcome ${guid} carries no amount` }))
  return Either.right({ facts, guid, amount })
}

/**
 * What an approved `preAuthorization` / `moToPreAuthorization` outcome of the terminal
 * flows says, to open its lifecycle. The outcome carries no terminal time: the caller
 * gives `authorisedAt` (the moment the flow learned the outcome is a safe upper bound only
 * if the windows may start a little late; the result's `efttimestamp` is exact).
 */
export const preAuthorizationFromOutcome = (
  outcome: OperationOutcome.Outcome,
  context: {
    readonly mcc: string
    readonly authorisedAt: DateTime.Utc
    readonly stayEndsAt?: DateTime.Utc | undefined
  }
): Either.Either<PreAuthorizationAuthorised, ResultIncomplete> =>
  Either.flatMap(approvedFacts(outcome, "pre-authorization"), ({ amount, facts, guid }) =>
    facts.operation === "preAuthorization" || facts.operation === "moToPreAuthorization"
      ? Either.right(
          defined({
            guid,
            via:
              facts.operation === "moToPreAuthorization"
                ? ("moToPreAuthorization" as const)
                : ("preAuthorization" as const),
            amount,
            authorisedAt: context.authorisedAt,
            scheme: facts.cardSchemeName ?? "",
            mcc: context.mcc,
            tenderType: facts.tenderType,
            transactionReference: facts.transactionReference,
            serialNumber: facts.serialNumber,
            terminalType: facts.terminalType,
            batchNumber: facts.batchNumber,
            stayEndsAt: context.stayEndsAt,
            merchant: merchantOf(facts)
          })
        )
      : Either.left(
          new ResultIncomplete({ message: `a ${facts.operation} outcome does not open a pre-authorization` })
        )
  )

/** What an approved outcome of the terminal flows (a sale, a refund …) says, to record it. */
export const completedFromOutcome = (
  outcome: OperationOutcome.Outcome,
  context: { readonly at: DateTime.Utc }
): Either.Either<Completed, ResultIncomplete> =>
  Either.flatMap(approvedFacts(outcome, "transaction"), ({ amount, facts, guid }) =>
    transactionKinds.has(facts.operation)
      ? Either.right(
          defined({
            guid,
            kind: facts.operation as LifecycleEvent.TransactionKind,
            amount,
            at: context.at,
            transactionReference: facts.transactionReference,
            serialNumber: facts.serialNumber,
            terminalType: facts.terminalType,
            batchNumber: facts.batchNumber,
            originalGuid: facts.originalTransactionId,
            merchant: merchantOf(facts)
          })
        )
      : Either.left(
          new ResultIncomplete({ message: `a ${facts.operation} outcome is not a financial transaction` })
        )
  )
