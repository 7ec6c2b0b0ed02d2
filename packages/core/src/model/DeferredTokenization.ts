/**
 * Deferred tokenization (`GET /transactions/{guid}/token`, spec 4.7): a token for the card
 * of a completed card-present transaction, within 12 months. The same shape answers a
 * terminal-less reversal (spec 4.8).
 */
import * as Schema from "effect/Schema"
import * as Lenient from "./internal/Lenient.js"

const str = Lenient.optional(Lenient.StringLenient)

/** The 200 body, every field an optional string; unknown fields kept. */
export const DeferredTokenizationResponse = Schema.Struct(
  {
    agreementNumber: str,
    cardToken: str,
    cardTokenizationGuid: str,
    expiryDateMMYY: str,
    httpStatus: str,
    maskedCardNumber: str,
    /** `YYYYMMDDHHmmssSSS`, kept as given. */
    serverDateTime: str,
    /** The guid of the original transaction. */
    transactionReference: str
  },
  Lenient.Extra
).annotations({ identifier: "DeferredTokenizationResponse" })
/** @see DeferredTokenizationResponse */
export type DeferredTokenizationResponse = typeof DeferredTokenizationResponse.Type
