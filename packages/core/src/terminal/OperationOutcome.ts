/**
 * How a terminal operation ends. Every workflow of the payment protocol ends in one of
 * these: a known outcome (`Approved`, `PartiallyApproved`, `Declined`, `Cancelled`,
 * `Failed`), each with the business facts an auditor needs, or a typed error saying why
 * no outcome could be had (the terminal stayed busy or offline past the deadline, the
 * service rejected the request, reconciliation proved it was not charged, or the result
 * can no longer be learnt). This module also reads a `finStatus` into an outcome.
 */
import * as Schema from "effect/Schema"
import * as Currency from "../model/Currency.js"
import * as Money from "../model/Money.js"
import { construct } from "@tillflow/engine/SchemaCache"
import * as RemoteError from "../model/RemoteError.js"
import type { TransactionResult, TransactionStatusResult } from "../model/TransactionResult.js"

/** Where the result that settled the operation came from. */
export const ResultSource = Schema.Literal("callback", "polling", "status")
/** @see ResultSource */
export type ResultSource = typeof ResultSource.Type

const text = Schema.optional(Schema.String)
const amount = Schema.optional(Money.FromMinorUnitsFields)

/**
 * The business facts of an outcome: what was asked, of which terminal, under which
 * reference, and what the result said. Amounts are Money (`{amount: "1050", currency:
 * "EUR"}` in JSON); the card appears masked only; no secret is ever here.
 */
export const Facts = Schema.Struct({
  operation: Schema.String,
  serialNumber: Schema.String,
  terminalType: Schema.String,
  attempt: Schema.Int,
  attemptId: Schema.String,
  transactionReference: text,
  originalTransactionId: text,
  finStatus: Schema.String,
  source: ResultSource,
  requestedAmount: amount,
  totalAmount: amount,
  tipAmount: amount,
  dueAmount: amount,
  maskedCardNumber: text,
  cardSchemeName: text,
  cardToken: text,
  authorisationCode: text,
  issuerResponseCode: text,
  efttransactionID: text,
  transactionType: text,
  rrn: text,
  mid: text,
  tid: text,
  merchantName: text,
  customerReference: text,
  errorMessage: text,
  statusMessage: text,
  recovered: Schema.optional(Schema.Boolean),
  /** CREDIT or DEBIT, as the result said: a pre-authorization's capture window depends on it. */
  tenderType: text,
  /** The terminal's batch the transaction went into. */
  batchNumber: text
}).annotations({ identifier: "OutcomeFacts" })
/** @see Facts */
export type Facts = typeof Facts.Type

/** AUTHORISED, CAPTURED, PROCESSED (a receipt printed), or a utility operation done. */
export class Approved extends Schema.TaggedClass<Approved>()("Approved", { facts: Facts }) {}

/** PARTIAL_APPROVAL (United States): part of the amount authorised, `dueAmount` remains. */
export class PartiallyApproved extends Schema.TaggedClass<PartiallyApproved>()("PartiallyApproved", {
  facts: Facts
}) {}

/** DECLINED by the acquirer or the issuer (`issuerResponseCode` says why). */
export class Declined extends Schema.TaggedClass<Declined>()("Declined", { facts: Facts }) {}

/** CANCELLED: stopped by stopCurrentTransaction or the terminal's cancel button. */
export class Cancelled extends Schema.TaggedClass<Cancelled>()("Cancelled", { facts: Facts }) {}

/** FAILED: an unreadable card, a network error at the terminal … Not charged. */
export class Failed extends Schema.TaggedClass<Failed>()("Failed", { facts: Facts }) {}

/** The known outcome a terminal operation ends with. */
export const Outcome = Schema.Union(Approved, PartiallyApproved, Declined, Cancelled, Failed)
/** @see Outcome */
export type Outcome = typeof Outcome.Type

// ---------------------------------------------------------------------------------------
// Errors

/** The terminal stayed busy (1001) or offline (1002), or others kept it, until the deadline. */
export class TerminalUnavailable extends Schema.TaggedError<TerminalUnavailable>()("TerminalUnavailable", {
  message: Schema.String,
  serialNumber: Schema.String,
  attempts: Schema.Int,
  lastReason: Schema.String
}) {}

/** The service refused the request (403, 422, a 400 business error …): not processed, not retried. */
export class OperationRejected extends Schema.TaggedError<OperationRejected>()("OperationRejected", {
  message: Schema.String,
  error: RemoteError.RemoteError
}) {}

/**
 * Why an outcome stays unresolved: no reference to reconcile with, no result in time,
 * reconciliation ran out of time, a delivered charge contradicts "not found", or the
 * service's answers cannot be decoded (stored raw, for a person to read).
 */
export const UnresolvedReason = Schema.Literal(
  "NoReference",
  "NoResult",
  "ReconcileTimeout",
  "ChargeContradicted",
  "Undecodable"
)
/** @see UnresolvedReason */
export type UnresolvedReason = typeof UnresolvedReason.Type

/**
 * The outcome cannot be learnt: the operation has no reference to reconcile with (a
 * utility operation, or a linked one without its original's reference) and its result
 * never arrived, or reconciliation ran out of time. Look at the terminal.
 */
export class OutcomeUnresolved extends Schema.TaggedError<OutcomeUnresolved>()("OutcomeUnresolved", {
  message: Schema.String,
  attemptId: Schema.String,
  /** Why (absent on outcomes recorded before reasons were). */
  reason: Schema.optional(UnresolvedReason)
}) {}

/** Reconciliation proved the operation never reached the gateway: nothing was charged. */
export class NotCharged extends Schema.TaggedError<NotCharged>()("NotCharged", {
  message: Schema.String,
  transactionReference: Schema.String,
  attempts: Schema.Int
}) {}

/** stopCurrentTransaction at a step that cannot be stopped (1003). */
export class StopRefused extends Schema.TaggedError<StopRefused>()("StopRefused", {
  message: Schema.String,
  serialNumber: Schema.String
}) {}

/**
 * A request refused before anything started: it does not satisfy the contract (an amount
 * above `Money.MAX_MINOR_UNITS`, a malformed field). Nothing was recorded or sent.
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  operation: Schema.String
}) {}

/**
 * A linked operation (a capture, an increase, a reversal …) that its original's history
 * forbids: nothing was sent. `error` and `rule` name the rule (`CaptureAlreadyDone`,
 * `ReversalWindowClosed`, `moto-reversal-before-batch` …), `message` says why.
 */
export class OperationRefused extends Schema.TaggedError<OperationRefused>()("OperationRefused", {
  message: Schema.String,
  operation: Schema.String,
  originalTransactionId: Schema.String,
  error: Schema.String,
  rule: Schema.String
}) {}

/** Why a terminal operation ended without an outcome. */
export const OperationError = Schema.Union(
  TerminalUnavailable,
  OperationRejected,
  OutcomeUnresolved,
  NotCharged,
  StopRefused,
  OperationRefused
)
/** @see OperationError */
export type OperationError = typeof OperationError.Type

// ---------------------------------------------------------------------------------------
// Reading a result

/** What the protocol knows of an attempt when a result arrives. */
export interface AttemptContext {
  readonly operation: string
  readonly serialNumber: string
  readonly terminalType: string
  readonly attempt: number
  readonly attemptId: string
  readonly transactionReference?: string | undefined
  readonly originalTransactionId?: string | undefined
  readonly requestedAmount?: Money.Money | undefined
  /** Utility operations (ping, print, tokenize, card PAN) settle on any delivered result. */
  readonly financial: boolean
}

/** A result read: a known outcome, or a status that must be reconciled. */
export type Reading =
  | { readonly _tag: "Settled"; readonly outcome: Outcome }
  | { readonly _tag: "Unsettled"; readonly finStatus: string }

/** The finStatus values that are outcomes, and the outcome each one is. */
export const outcomeOf = (finStatus: string): Outcome["_tag"] | undefined => {
  switch (finStatus) {
    case "AUTHORISED":
    case "CAPTURED":
    case "PROCESSED":
    case "REFUNDED":
      return "Approved"
    case "PARTIAL_APPROVAL":
      return "PartiallyApproved"
    case "DECLINED":
      return "Declined"
    case "CANCELLED":
      return "Cancelled"
    case "FAILED":
      return "Failed"
    default:
      return undefined
  }
}

type AnyResult = TransactionResult | TransactionStatusResult

const moneyOf = (
  minor: bigint | undefined,
  currency: string | undefined,
  fallback: Money.Money | undefined
) => {
  if (minor === undefined) return undefined
  const code = currency !== undefined && Currency.isCurrency(currency) ? currency : fallback?.currency
  return code === undefined ? undefined : Money.make(minor, code)
}

/** The facts of a result, in the context of its attempt. */
export const factsOf = (result: AnyResult, context: AttemptContext, source: ResultSource): Facts => {
  const currency = result.currency
  const optional = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as { readonly [P in K]?: V }
  return {
    operation: context.operation,
    serialNumber: context.serialNumber,
    terminalType: context.terminalType,
    attempt: context.attempt,
    attemptId: context.attemptId,
    ...optional("transactionReference", context.transactionReference ?? result.transactionReference),
    ...optional("originalTransactionId", context.originalTransactionId),
    finStatus: result.finStatus ?? "UNDEFINED",
    source,
    ...optional(
      "requestedAmount",
      moneyOf(result.requestedAmount, currency, context.requestedAmount) ?? context.requestedAmount
    ),
    ...optional("totalAmount", moneyOf(result.totalAmount, currency, context.requestedAmount)),
    ...optional("tipAmount", moneyOf(result.tipAmount, currency, context.requestedAmount)),
    ...optional("dueAmount", moneyOf(result.dueAmount, currency, context.requestedAmount)),
    ...optional("maskedCardNumber", result.maskedCardNumber),
    ...optional("cardSchemeName", result.cardSchemeName),
    ...optional("cardToken", result.cardToken),
    ...optional("authorisationCode", result.authorisationCode),
    ...optional("issuerResponseCode", result.issuerResponseCode),
    ...optional("efttransactionID", result.efttransactionID),
    ...optional("transactionType", result.type),
    ...optional("rrn", result.rrn),
    ...optional("mid", result.mid),
    ...optional("tid", result.tid),
    ...optional("merchantName", result.merchantName),
    ...optional("customerReference", result.customerReference),
    ...optional("errorMessage", result.errorMessage),
    ...optional("statusMessage", result.statusMessage),
    ...optional("recovered", result.recoveredTransaction),
    ...optional("tenderType", result.tenderType),
    ...optional("batchNumber", result.batchNumber)
  }
}

// `new Approved({ facts })` compiles a validator at every call (the facts hold `Money`):
// the same constructors with their validation compiled once.
const makeOutcome = {
  Approved: construct(Approved),
  PartiallyApproved: construct(PartiallyApproved),
  Declined: construct(Declined),
  Cancelled: construct(Cancelled),
  Failed: construct(Failed)
}

/**
 * Reads a result into an outcome. A final `finStatus` settles; UNDEFINED, IN_PROGRESS, an
 * unknown value or none at all must be reconciled — except for utility operations, which
 * have no reference to reconcile with and are settled by the delivery itself (FAILED or
 * CANCELLED when the result says so, else approved).
 */
export const read = (result: AnyResult, context: AttemptContext, source: ResultSource): Reading => {
  const finStatus = result.finStatus ?? "UNDEFINED"
  const facts = factsOf(result, context, source)
  const tag = outcomeOf(finStatus) ?? (context.financial ? undefined : "Approved")
  switch (tag) {
    case undefined:
      return { _tag: "Unsettled", finStatus }
    case "Approved":
      return { _tag: "Settled", outcome: makeOutcome.Approved({ facts }) }
    case "PartiallyApproved":
      return { _tag: "Settled", outcome: makeOutcome.PartiallyApproved({ facts }) }
    case "Declined":
      return { _tag: "Settled", outcome: makeOutcome.Declined({ facts }) }
    case "Cancelled":
      return { _tag: "Settled", outcome: makeOutcome.Cancelled({ facts }) }
    case "Failed":
      return { _tag: "Settled", outcome: makeOutcome.Failed({ facts }) }
  }
}

/** Whether two finStatus values agree on the outcome (REFUNDED later still means it was approved). */
export const agrees = (a: string, b: string): boolean => {
  const x = outcomeOf(a)
  const y = outcomeOf(b)
  return x !== undefined && x === y
}
