/**
 * MOTO without a terminal (spec 4.10): sale on a stored card token, refund and reversal
 * of an earlier MOTO operation. No serial number, no raw card data.
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import { Billing } from "./Billing.js"
import * as Identifiers from "./Identifiers.js"
import * as Lenient from "./internal/Lenient.js"
import * as MoneyFields from "./internal/MoneyFields.js"

/**
 * The wire form of MOTO amounts — the one place it is chosen. The spec contradicts
 * itself (description: major units with decimals; validation text: a positive integer
 * string of minor units). We send major units ("10.50"), like every other terminal-less
 * endpoint, because that choice fails safe: if the service reads minor units, "10.50" is
 * not an integer and is refused (422) instead of charging; the opposite choice ("1050"
 * read as major units) would charge a hundred times the amount. For exponent-0
 * currencies (JPY) both forms are the same string.
 */
export const AMOUNT_FORM: MoneyFields.Form = "major"

/** `POST /moto/sale`: an original operation; transactionReference optional (UUID v4). */
export const MotoSaleRequest = MoneyFields.required(
  "MotoSaleRequest",
  {
    cardToken: Identifiers.CardToken,
    customerReference: Strict.optional(Schema.String),
    transactionReference: Strict.optional(Identifiers.TransactionReference),
    billing: Strict.optional(Billing)
  },
  AMOUNT_FORM
)
/** @see MotoSaleRequest */
export type MotoSaleRequest = typeof MotoSaleRequest.Type

/** `POST /moto/refund`: full or partial refund of a MOTO sale. */
export const MotoRefundRequest = MoneyFields.required(
  "MotoRefundRequest",
  {
    originalGuid: Identifiers.Guid,
    customerReference: Strict.optional(Schema.String),
    transactionReference: Strict.optional(Identifiers.TransactionReference)
  },
  AMOUNT_FORM
)
/** @see MotoRefundRequest */
export type MotoRefundRequest = typeof MotoRefundRequest.Type

/** `POST /moto/reversal`: identified only by originalGuid. */
export class MotoReversalRequest extends Schema.Class<MotoReversalRequest>("MotoReversalRequest")(
  Schema.Struct({ originalGuid: Identifiers.Guid }).annotations({
    parseOptions: { onExcessProperty: "error" }
  })
) {}

const str = Lenient.optional(Lenient.StringLenient)

/** A MOTO transaction response (fields beyond these are not shown; all kept). */
export const MotoResponse = Schema.Struct(
  {
    guid: str,
    originalGuid: str,
    amount: str,
    currency: str,
    maskedCardNumber: str,
    approvalCode: str,
    authorisationCode: str,
    issuerResponseCode: str,
    issuerResponseText: str,
    acquirerTid: str,
    finStatus: str,
    transactionReference: str,
    serverDateTime: str,
    terminalDateTime: str,
    httpStatus: str
  },
  Lenient.Extra
).annotations({ identifier: "MotoResponse" })
/** @see MotoResponse */
export type MotoResponse = typeof MotoResponse.Type
