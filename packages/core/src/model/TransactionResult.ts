/**
 * The result of a terminal operation (spec 2.3), as polled, delivered to a callback, or
 * read from the status endpoint. Decoded leniently — tolerant on what we receive: every
 * field optional, `null` and `""` read as absent, unknown enum values kept as strings,
 * unknown fields kept, either form of `efttimestamp`, receipts and signatures as URL or
 * inline. Amounts are integer minor units (bigint). `unMaskedPan` is `Redacted`.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Balance } from "./Balance.js"
import * as Currency from "./Currency.js"
import { DeviceStatus } from "./DeviceStatus.js"
import { EftTimestamp, EftTimestampWallClock } from "./EftTimestamp.js"
import * as Enumerations from "./Enumerations.js"
import * as Identifiers from "./Identifiers.js"
import * as Lenient from "./internal/Lenient.js"
import { MetadataReceived } from "./Metadata.js"
import { MoneyRemittanceOptionsReceived } from "./MoneyRemittanceOptions.js"
import * as Personal from "./Personal.js"
import { ReceiptRef } from "./ReceiptRef.js"

const str = Lenient.optional(Lenient.StringLenient)
const amount = Lenient.optional(Lenient.BigIntFromNumberOrString)
const messages = Lenient.optional(Schema.Record({ key: Schema.String, value: Lenient.StringLenient }))

const fields = {
  aid: str,
  arc: str,
  authorisationCode: str,
  balance: Lenient.optional(Balance),
  batchNumber: str,
  budgetNumber: str,
  cardEntryType: Lenient.optional(Enumerations.CardEntryTypeReceived),
  cardHolderName: str,
  cardLanguagePreference: str,
  cardSchemeName: Lenient.optional(Enumerations.CardSchemeNameReceived),
  cardToken: str,
  cardTypeId: str,
  chipTransactionReport: str,
  currency: Lenient.optional(Lenient.enumeration(Currency.Currency)),
  customData: str,
  customerReceipt: Lenient.optional(ReceiptRef),
  merchantReceipt: Lenient.optional(ReceiptRef),
  customerReference: str,
  deviceStatus: Lenient.optional(DeviceStatus),
  dueAmount: amount,
  efttransactionID: str,
  transactionID: str,
  errorMessage: str,
  statusMessage: str,
  _statusMessage: str,
  multiLanguageStatusMessages: messages,
  multiLanguageErrorMessages: messages,
  expiryDateMMYY: str,
  finStatus: Lenient.optional(Enumerations.FinancialStatusReceived),
  iad: str,
  issuerResponseCode: str,
  maskedCardNumber: str,
  unMaskedPan: Lenient.optional(Schema.Redacted(Schema.String)),
  merchantAddress: str,
  merchantName: str,
  metadata: Lenient.optional(MetadataReceived),
  mid: str,
  tid: str,
  moneyRemittanceOptions: Lenient.optional(MoneyRemittanceOptionsReceived),
  originalEFTTransactionID: str,
  paymentScenario: Lenient.optional(Enumerations.PaymentScenarioReceived),
  recoveredTransaction: Lenient.optional(Lenient.BooleanLenient),
  requestedAmount: amount,
  totalAmount: amount,
  tipAmount: amount,
  /** A rate, not money: a number is fine here. */
  tipPercentage: Lenient.optional(Schema.Union(Schema.Number, Schema.NumberFromString)),
  rrn: str,
  signatureUrl: Lenient.optional(ReceiptRef),
  tenderType: Lenient.optional(Enumerations.TenderTypeReceived),
  transactionOrigin: str,
  transactionReference: str,
  tsi: str,
  tvr: str,
  type: Lenient.optional(Enumerations.TransactionTypeReceived),
  verificationMethod: Lenient.optional(Enumerations.VerificationMethodReceived),
  accountType: str
}

/**
 * A result as polled (`GET /transaction-result/{id}`) or delivered to a callback.
 * Unknown fields are kept (index signature): `result["newField"]` survives a decode.
 */
export const TransactionResult = Schema.Struct(
  { ...fields, efttimestamp: Lenient.optional(EftTimestamp) },
  Lenient.Extra
).annotations({ identifier: "TransactionResult" })
/** @see TransactionResult */
export type TransactionResult = typeof TransactionResult.Type
/** The JSON form of a TransactionResult. */
export type TransactionResultEncoded = typeof TransactionResult.Encoded

/**
 * A result as the status endpoint returns it: the same fields plus `holdAmount`,
 * `increaseAmount`, `capturedAmount`; `efttimestamp` written as `YYYYMMDDHHmmssSSS`.
 */
export const TransactionStatusResult = Schema.Struct(
  {
    ...fields,
    efttimestamp: Lenient.optional(EftTimestampWallClock),
    holdAmount: amount,
    increaseAmount: amount,
    capturedAmount: amount
  },
  Lenient.Extra
).annotations({ identifier: "TransactionStatusResult" })
/** @see TransactionStatusResult */
export type TransactionStatusResult = typeof TransactionStatusResult.Type

/**
 * The members of a result that are personal data (issue 31): the `cardHolderName` a
 * terminal reports, and the `moneyRemittanceOptions` the service echoes (the remitter's
 * `fullName` and `countryCode`, removed whole as in `TransactionRequest.personalMembers`).
 */
export const personalMembers = ["cardHolderName", "moneyRemittanceOptions"] as const

/**
 * A result as a recorded step, deferred or event stores it: the wire JSON with its
 * {@link personalMembers} wrapped (`Personal.members`), removable after their retention
 * without breaking the chain. It reads the wrapper (its value), the plain value (logs
 * written before) and the digest a removal leaves (the member absent). A result without
 * them is stored exactly as {@link TransactionResult} stores it. Its type is the result's.
 */
export const Stored = Personal.members(TransactionResult, personalMembers).annotations({
  identifier: "StoredTransactionResult"
})

/** A status-endpoint result as a recorded step stores it (see {@link Stored}). */
export const StoredStatus = Personal.members(TransactionStatusResult, personalMembers).annotations({
  identifier: "StoredTransactionStatusResult"
})

/**
 * A result kept as the JSON it was received in (the callback receiver's `ResultReceived`
 * and the deferred it resolves) in its stored form: its {@link personalMembers} wrapped
 * (`Personal.wrapMembers`); what {@link Stored} decodes.
 */
export const storedJson = <J>(json: J): J => Personal.wrapMembers(json, personalMembers)

/**
 * The answer of the status endpoint: one result, or a list for selector `all` (its shape
 * is not shown in the spec, so both are read).
 */
export const TransactionStatusAnswer = Schema.Union(
  Schema.Array(TransactionStatusResult),
  TransactionStatusResult
)
/** @see TransactionStatusAnswer */
export type TransactionStatusAnswer = typeof TransactionStatusAnswer.Type

/** The answer of the status endpoint as a list. */
export const statusResults = (answer: TransactionStatusAnswer): ReadonlyArray<TransactionStatusResult> =>
  Array.isArray(answer) ? answer : [answer as TransactionStatusResult]

/**
 * The result's `transactionReference` as a branded UUID v4, when it carries one (not
 * absent, not the nil UUID, not some other string).
 */
export const reference = (
  result: TransactionResult | TransactionStatusResult
): Option.Option<Identifiers.TransactionReference> =>
  result.transactionReference === undefined || result.transactionReference === Identifiers.NIL_UUID
    ? Option.none()
    : Option.getRight(Schema.decodeEither(Identifiers.TransactionReference)(result.transactionReference))

/** Whether a result's finStatus is a final outcome (not UNDEFINED, not IN_PROGRESS, not unknown). */
export const isFinal = (result: TransactionResult | TransactionStatusResult): boolean =>
  result.finStatus !== undefined &&
  result.finStatus !== "UNDEFINED" &&
  result.finStatus !== "IN_PROGRESS" &&
  Schema.is(Enumerations.FinancialStatus)(result.finStatus)
