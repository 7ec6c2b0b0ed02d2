/**
 * Terminal-less reversal (`POST /reversal`, spec 4.8) of a transaction not requiring the
 * card; partial when an amount is given and the acquirer supports it.
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import { DeferredTokenizationResponse } from "./DeferredTokenization.js"
import * as Identifiers from "./Identifiers.js"
import * as MoneyFields from "./internal/MoneyFields.js"

/**
 * The request: `originalGuid`, optional `amount: Money` for a partial reversal (written as
 * a major-unit decimal + currency), optional `messageReasonCode` (default
 * CUSTOMER_CANCELLATION; other values not shown in the spec).
 */
export const ReversalRequest = MoneyFields.optional(
  "ReversalRequest",
  {
    originalGuid: Identifiers.Guid,
    messageReasonCode: Strict.optional(Schema.NonEmptyString)
  },
  "major"
)
/** @see ReversalRequest */
export type ReversalRequest = typeof ReversalRequest.Type

/** The 200 body: the tokenization-shaped gateway object. */
export const ReversalResponse = DeferredTokenizationResponse
/** @see ReversalResponse */
export type ReversalResponse = typeof ReversalResponse.Type
