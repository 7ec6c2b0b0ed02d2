/**
 * Errors of the terminal-less lifecycles (pre-authorization, MOTO, tips, tokenization,
 * reversal, batches, device commands) that `PolicyError` does not already name. Each is a
 * refusal decided from the event history before any request leaves, and carries the
 * `rule` it enforces, so a caller (and an auditor reading the log) sees which rule said no.
 */
import * as Schema from "effect/Schema"

/** The event log holds no transaction with this guid: record or open it first. */
export class TransactionNotRecorded extends Schema.TaggedError<TransactionNotRecorded>()(
  "TransactionNotRecorded",
  {
    message: Schema.String,
    guid: Schema.String,
    rule: Schema.String
  }
) {}

/** The operation does not apply to this kind of transaction (a capture of a sale …). */
export class OperationNotApplicable extends Schema.TaggedError<OperationNotApplicable>()(
  "OperationNotApplicable",
  {
    message: Schema.String,
    guid: Schema.String,
    operation: Schema.String,
    kind: Schema.String,
    rule: Schema.String
  }
) {}

/**
 * Another operation on the same transaction has been sent and its outcome is not recorded
 * yet (or is being reconciled). One operation at a time keeps the history unambiguous.
 */
export class OperationInProgress extends Schema.TaggedError<OperationInProgress>()("OperationInProgress", {
  message: Schema.String,
  guid: Schema.String,
  operation: Schema.String,
  pendingOperation: Schema.String,
  pendingRequestId: Schema.String,
  rule: Schema.String
}) {}

/** The pre-authorization's hold was released (reversed): nothing is left to act on. */
export class PreAuthorizationNotOpen extends Schema.TaggedError<PreAuthorizationNotOpen>()(
  "PreAuthorizationNotOpen",
  { message: Schema.String, guid: Schema.String, status: Schema.String, rule: Schema.String }
) {}

/** The scheme excludes the merchant's category from pre-authorization (MCC 5542). */
export class MccExcluded extends Schema.TaggedError<MccExcluded>()("MccExcluded", {
  message: Schema.String,
  guid: Schema.String,
  scheme: Schema.String,
  mcc: Schema.String,
  rule: Schema.String
}) {}

/** A decrease would release the whole hold or more: reverse the pre-authorization instead. */
export class DecreaseExceedsHold extends Schema.TaggedError<DecreaseExceedsHold>()("DecreaseExceedsHold", {
  message: Schema.String,
  guid: Schema.String,
  hold: Schema.String,
  requested: Schema.String,
  rule: Schema.String
}) {}

/** An amount is not in the currency of the transaction it refers to. */
export class CurrencyNotOfTransaction extends Schema.TaggedError<CurrencyNotOfTransaction>()(
  "CurrencyNotOfTransaction",
  {
    message: Schema.String,
    guid: Schema.String,
    expected: Schema.String,
    given: Schema.String,
    rule: Schema.String
  }
) {}

/** Refunds would add up to more than the sale. */
export class RefundExceedsSale extends Schema.TaggedError<RefundExceedsSale>()("RefundExceedsSale", {
  message: Schema.String,
  guid: Schema.String,
  sale: Schema.String,
  alreadyRefunded: Schema.String,
  requested: Schema.String,
  rule: Schema.String
}) {}

/** A reversal the history shows cannot be made (already reversed, partial not supported, …). */
export class ReversalNotAllowed extends Schema.TaggedError<ReversalNotAllowed>()("ReversalNotAllowed", {
  message: Schema.String,
  guid: Schema.String,
  rule: Schema.String
}) {}

/** Deferred tokenization of a transaction type the service does not tokenize. */
export class TokenizationNotEligible extends Schema.TaggedError<TokenizationNotEligible>()(
  "TokenizationNotEligible",
  { message: Schema.String, guid: Schema.String, kind: Schema.String, rule: Schema.String }
) {}

/** A device command whose values are out of range or malformed; nothing was sent. */
export class InvalidDeviceCommand extends Schema.TaggedError<InvalidDeviceCommand>()("InvalidDeviceCommand", {
  message: Schema.String,
  command: Schema.String,
  rule: Schema.String
}) {}

/**
 * The same request (same `requestId` and operation) already failed and its failure is in
 * the history: a request is answered once; send a new one with a new id.
 */
export class RequestAlreadyFailed extends Schema.TaggedError<RequestAlreadyFailed>()("RequestAlreadyFailed", {
  message: Schema.String,
  requestId: Schema.String,
  operation: Schema.String,
  error: Schema.String
}) {}

/** Every lifecycle error of this module. */
export const LifecycleError = Schema.Union(
  TransactionNotRecorded,
  OperationNotApplicable,
  OperationInProgress,
  PreAuthorizationNotOpen,
  MccExcluded,
  DecreaseExceedsHold,
  CurrencyNotOfTransaction,
  RefundExceedsSale,
  ReversalNotAllowed,
  TokenizationNotEligible,
  InvalidDeviceCommand,
  RequestAlreadyFailed
)
/** @see LifecycleError */
export type LifecycleError = typeof LifecycleError.Type

/**
 * An operator's resolution was refused: nothing on the transaction is in doubt under that
 * request (rule `resolve-only-in-doubt`), or the operator or the reason is missing (rule
 * `operator-and-reason-required`).
 */
export class ResolutionRefused extends Schema.TaggedError<ResolutionRefused>()("ResolutionRefused", {
  message: Schema.String,
  guid: Schema.String,
  requestId: Schema.String,
  rule: Schema.String
}) {}
