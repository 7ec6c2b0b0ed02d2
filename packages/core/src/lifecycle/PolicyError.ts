/**
 * Errors of local policy: tillflow refuses an operation before any request leaves,
 * because the event history shows it would break a rule of the service (DESIGN.md,
 * "Terminal-less operations"), or concludes an operation was not charged.
 */
import * as Schema from "effect/Schema"

/** A pre-authorization can be captured once only. */
export class CaptureAlreadyDone extends Schema.TaggedError<CaptureAlreadyDone>()("CaptureAlreadyDone", {
  message: Schema.String,
  originalGuid: Schema.String
}) {}

/** The captured amount exceeds the authorised amount plus the scheme's tolerance. */
export class CaptureOverTolerance extends Schema.TaggedError<CaptureOverTolerance>()("CaptureOverTolerance", {
  message: Schema.String,
  originalGuid: Schema.String,
  /** Major-unit decimal strings with their currency, for the message and the audit. */
  authorised: Schema.String,
  requested: Schema.String,
  limit: Schema.String
}) {}

/** The capture window of the scheme and category has passed. */
export class CaptureWindowClosed extends Schema.TaggedError<CaptureWindowClosed>()("CaptureWindowClosed", {
  message: Schema.String,
  originalGuid: Schema.String
}) {}

/** A MOTO reversal is possible within 24 hours only. */
export class ReversalWindowClosed extends Schema.TaggedError<ReversalWindowClosed>()("ReversalWindowClosed", {
  message: Schema.String,
  originalGuid: Schema.String
}) {}

/** Deferred tokenization is possible within 12 months only. */
export class TokenizationWindowClosed extends Schema.TaggedError<TokenizationWindowClosed>()(
  "TokenizationWindowClosed",
  { message: Schema.String, originalGuid: Schema.String }
) {}

/** A tip adjustment applies to a sale only. */
export class TipAdjustmentNotAllowed extends Schema.TaggedError<TipAdjustmentNotAllowed>()(
  "TipAdjustmentNotAllowed",
  { message: Schema.String, originalGuid: Schema.String }
) {}

/** Reconciliation concluded that the operation never reached the gateway: not charged. */
export class NotCharged extends Schema.TaggedError<NotCharged>()("NotCharged", {
  message: Schema.String,
  transactionReference: Schema.String
}) {}

/** Every local policy error. */
export const PolicyError = Schema.Union(
  CaptureAlreadyDone,
  CaptureOverTolerance,
  CaptureWindowClosed,
  ReversalWindowClosed,
  TokenizationWindowClosed,
  TipAdjustmentNotAllowed,
  NotCharged
)
/** @see PolicyError */
export type PolicyError = typeof PolicyError.Type
