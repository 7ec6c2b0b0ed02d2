/**
 * Terminal-less pre-authorization increase/decrease and capture (spec 4.9). Amounts are
 * decimal strings in major units without a currency (the original's); build them from a
 * `Money` with `Money.toDecimalString`. Merchant keys only (partner keys get 403).
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import * as Identifiers from "./Identifiers.js"
import * as Lenient from "./internal/Lenient.js"
import * as Money from "./Money.js"

/** `subtract`: `true` is written `"1"` (decrease instead of increase); absent otherwise. */
const Subtract = Schema.optionalToOptional(Schema.Literal("1"), Schema.Literal(true), {
  decode: (o) => Option.map(o, () => true as const),
  encode: (o) => Option.map(o, () => "1" as const)
})

/** `POST /preauthorization/increase`. */
export class PreAuthorizationIncreaseRequest extends Schema.Class<PreAuthorizationIncreaseRequest>(
  "PreAuthorizationIncreaseRequest"
)(
  Schema.Struct({
    originalGuid: Identifiers.Guid,
    increaseAmount: Money.DecimalString,
    tipAmount: Strict.optional(Money.DecimalString),
    subtract: Subtract,
    customerReference: Strict.optional(Schema.String)
  }).annotations({ parseOptions: { onExcessProperty: "error" } })
) {}

/** `POST /preauthorization/capture`: once only; tipAmount is included in the total. */
export class PreAuthorizationCaptureRequest extends Schema.Class<PreAuthorizationCaptureRequest>(
  "PreAuthorizationCaptureRequest"
)(
  Schema.Struct({
    originalGuid: Identifiers.Guid,
    capturedAmount: Money.DecimalString,
    tipAmount: Strict.optional(Money.DecimalString),
    customerReference: Strict.optional(Schema.String)
  }).annotations({ parseOptions: { onExcessProperty: "error" } })
) {}

const str = Lenient.optional(Lenient.StringLenient)

/** The parsed gateway object both endpoints answer; amounts are decimal strings. */
export const PreAuthorizationResponse = Schema.Struct(
  {
    httpStatus: Lenient.optional(Schema.Union(Schema.Number, Schema.NumberFromString)),
    customFields: Lenient.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    acquirerTid: str,
    actionCode: str,
    agreementNumber: str,
    approvalCode: str,
    batchNumber: str,
    cardTypeName: str,
    currency: str,
    expiryDateMMYY: str,
    holdAmount: str,
    issuerResponseCode: str,
    issuerResponseText: str,
    maskedCardNumber: str,
    nonce: str,
    originalAmount: str,
    preAuthorizationGuid: str,
    serverDateTime: str,
    terminalDateTime: str,
    transNumber: str,
    increaseAmount: str,
    preAuthorizationIncreaseGuid: str,
    capturedAmount: str,
    preAuthorizationCaptureGuid: str
  },
  Lenient.Extra
).annotations({ identifier: "PreAuthorizationResponse" })
/** @see PreAuthorizationResponse */
export type PreAuthorizationResponse = typeof PreAuthorizationResponse.Type
