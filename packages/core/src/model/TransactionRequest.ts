/**
 * The body of `POST /transactions` (spec 2.2) as a union discriminated by `operation`, so
 * that each operation's required fields are required by the type and the fields it may
 * not carry are absent from it. The typed side reads naturally (`amount: Money`,
 * `delivery: { callbackUrl, token }`, camelCase keys); the wire side is the flat JSON of
 * the spec (`amount` in minor units + `currency`, `callbackUrl` + `token`,
 * `serial_number`, `duplicate_check`). Decoding the wire rejects any field the operation
 * does not allow, naming it: strict on what we send.
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import { Billing } from "./Billing.js"
import { BypassOptions } from "./BypassOptions.js"
import { MerchantAuth } from "./Credential.js"
import * as Currency from "./Currency.js"
import * as Identifiers from "./Identifiers.js"
import { Metadata } from "./Metadata.js"
import * as Money from "./Money.js"
import { MoneyRemittanceOptions } from "./MoneyRemittanceOptions.js"
import * as Personal from "./Personal.js"
import { TipConfiguration } from "./TipConfiguration.js"

/** An http(s) address to which the terminal posts the result. */
export const CallbackUrl = Schema.String.pipe(
  Schema.pattern(/^https?:\/\/[^\s/?#]+[^\s]*$/, {
    message: () => "callbackUrl must be an absolute http(s) URL"
  })
).annotations({ identifier: "CallbackUrl" })

/**
 * Result delivery by callback: the address and the secret sent back in `AUTH-TOKEN`.
 * The token is `Redacted` on our side and written in clear only into the wire body.
 */
export const Delivery = Schema.Struct({
  callbackUrl: CallbackUrl,
  token: Schema.RedactedFromSelf(Schema.NonEmptyString)
}).annotations({ identifier: "Delivery" })
/** @see Delivery */
export type Delivery = typeof Delivery.Type

const common = {
  serialNumber: Schema.propertySignature(Identifiers.SerialNumber).pipe(Schema.fromKey("serial_number")),
  terminalType: Schema.propertySignature(Identifiers.TerminalType).pipe(Schema.fromKey("terminal_type")),
  customerReference: Strict.optional(Schema.String),
  metadata: Strict.optional(Metadata)
}

/** The three ways an operation carries an amount. */
const money = {
  none: { typed: {}, wire: {} },
  required: {
    typed: { amount: Money.Positive },
    wire: { amount: Schema.String, currency: Currency.Currency }
  },
  optional: {
    typed: { amount: Strict.optional(Money.Positive) },
    wire: { amount: Strict.optional(Schema.String), currency: Strict.optional(Currency.Currency) }
  },
  /** preAuthorizationIncrease: a negative delta releases part of the hold. */
  signed: {
    typed: {
      amount: Money.WithinLimit.pipe(
        Schema.filter((m) => m.minorUnits !== 0n || "the increase amount must not be zero")
      )
    },
    wire: { amount: Schema.String, currency: Currency.Currency }
  }
} as const

const deliveryWire = {
  callbackUrl: Strict.optional(CallbackUrl),
  token: Strict.optional(Schema.NonEmptyString)
}

const variant = <
  const Op extends string,
  F extends Schema.Struct.Fields,
  MT extends Schema.Struct.Fields,
  MW extends Schema.Struct.Fields
>(
  operation: Op,
  fields: F,
  amount: { readonly typed: MT; readonly wire: MW }
) => {
  const wire = Schema.Struct({
    operation: Schema.Literal(operation),
    ...common,
    ...fields,
    ...amount.wire,
    ...deliveryWire
  })
    .annotations({ parseOptions: { onExcessProperty: "error" } })
    .pipe(
      Schema.filter((w) => {
        const r = w as { readonly callbackUrl?: string; readonly token?: string }
        if (r.callbackUrl !== undefined && r.token === undefined) {
          return { path: ["token"], message: "token is required when callbackUrl is present" }
        }
        if (r.callbackUrl === undefined && r.token !== undefined) {
          return { path: ["callbackUrl"], message: "token is only meaningful with a callbackUrl" }
        }
        const m = w as { readonly amount?: string; readonly currency?: string }
        if ((m.amount === undefined) !== (m.currency === undefined)) {
          return {
            path: [m.amount === undefined ? "amount" : "currency"],
            message: "amount and currency go together"
          }
        }
        return true
      })
    )
  const typed = Schema.extend(
    Schema.typeSchema(Schema.Struct({ ...common, ...fields })),
    Schema.Struct({
      operation: Schema.Literal(operation),
      ...amount.typed,
      delivery: Strict.optional(Delivery)
    })
  )
  return Schema.transformOrFail(wire, typed, {
    strict: false,
    decode: (input, _, ast) => {
      const { amount: rawAmount, currency, callbackUrl, token, ...rest } = input as Record<string, unknown>
      const out: Record<string, unknown> = { ...rest }
      if (typeof rawAmount === "string" && Currency.isCurrency(currency)) {
        const parsed = Money.fromMinorUnitsString(rawAmount, currency)
        if (Either.isLeft(parsed)) {
          return ParseResult.fail(
            new ParseResult.Pointer(
              "amount",
              input,
              new ParseResult.Type(ast, rawAmount, parsed.left.message)
            )
          )
        }
        out.amount = parsed.right
      }
      if (typeof callbackUrl === "string" && typeof token === "string") {
        out.delivery = { callbackUrl, token: Redacted.make(token) }
      }
      return ParseResult.succeed(out)
    },
    encode: (value) => {
      const { amount: typedAmount, delivery, ...rest } = value as Record<string, unknown>
      const out: Record<string, unknown> = { ...rest }
      if (typedAmount instanceof Money.Money) {
        out.amount = Money.toMinorUnitsString(typedAmount)
        out.currency = typedAmount.currency
      }
      if (Schema.is(Delivery)(delivery)) {
        out.callbackUrl = delivery.callbackUrl
        out.token = Redacted.value(delivery.token)
      }
      return ParseResult.succeed(out)
    }
  }).annotations({ identifier: `TransactionRequest(${operation})` })
}

const reference = { transactionReference: Identifiers.TransactionReference }
const original = { originalTransactionId: Identifiers.Guid }
const duplicateCheck = {
  duplicateCheck: Strict.optional(Schema.Boolean).pipe(Schema.fromKey("duplicate_check"))
}
const remittance = { moneyRemittanceOptions: Strict.optional(MoneyRemittanceOptions) }
/**
 * `tokenize` (spec 2.2, from 2.20.0) carries no "only with" rule, unlike tipConfiguration
 * or bypassOptions: every operation that moves money may carry it. The utilities
 * (printReceipt, pingDevice, stopCurrentTransaction, cardPan, tokenizeCard) do not.
 */
const tokenize = { tokenize: Strict.optional(Schema.Boolean) }
const funding = {
  bypassOptions: Strict.optional(BypassOptions),
  merchantAuth: Strict.optional(MerchantAuth)
}

/** sale: amount, currency and a fresh transactionReference are required. */
export const Sale = variant(
  "sale",
  {
    ...reference,
    ...funding,
    ...duplicateCheck,
    ...remittance,
    ...tokenize,
    tipConfiguration: Strict.optional(TipConfiguration),
    billing: Strict.optional(Billing)
  },
  money.required
)
/** @see Sale */
export type Sale = typeof Sale.Type

/** saleAndTokenizeCard: a sale that also returns a card token. */
export const SaleAndTokenizeCard = variant(
  "saleAndTokenizeCard",
  {
    ...reference,
    ...funding,
    ...duplicateCheck,
    ...remittance,
    ...tokenize,
    tipConfiguration: Strict.optional(TipConfiguration),
    billing: Strict.optional(Billing)
  },
  money.required
)
/** @see SaleAndTokenizeCard */
export type SaleAndTokenizeCard = typeof SaleAndTokenizeCard.Type

/** An unlinked refund: an original operation with its own reference. */
export const Refund = variant(
  "refund",
  { ...reference, ...funding, ...duplicateCheck, ...remittance, ...tokenize },
  money.required
)
/** @see Refund */
export type Refund = typeof Refund.Type

/** A refund linked to the sale it refunds: no transactionReference of its own. */
export const LinkedRefund = variant(
  "refund",
  { ...original, ...funding, ...duplicateCheck, ...remittance, ...tokenize },
  money.required
)
/** @see LinkedRefund */
export type LinkedRefund = typeof LinkedRefund.Type

/** refundReversal: reverses a refund, linked by originalTransactionId. */
export const RefundReversal = variant(
  "refundReversal",
  {
    ...original,
    ...duplicateCheck,
    ...remittance,
    ...tokenize,
    cardPresent: Strict.optional(Schema.Boolean)
  },
  money.required
)
/** @see RefundReversal */
export type RefundReversal = typeof RefundReversal.Type

/** saleReversal: reverses a sale, linked by originalTransactionId. */
export const SaleReversal = variant(
  "saleReversal",
  {
    ...original,
    ...duplicateCheck,
    ...remittance,
    ...tokenize,
    cardPresent: Strict.optional(Schema.Boolean)
  },
  money.required
)
/** @see SaleReversal */
export type SaleReversal = typeof SaleReversal.Type

/** tokenizeCard: reads a card and returns its token, no charge. */
export const TokenizeCard = variant("tokenizeCard", {}, money.none)
/** @see TokenizeCard */
export type TokenizeCard = typeof TokenizeCard.Type

/** printReceipt: prints receipt HTML (or the URL of it). */
export const PrintReceipt = variant(
  "printReceipt",
  { receipt: Schema.String.pipe(Schema.minLength(1, { message: () => "receipt must not be empty" })) },
  money.none
)
/** @see PrintReceipt */
export type PrintReceipt = typeof PrintReceipt.Type

/** cardPan: reads the full number of a whitelisted (non-payment) card. */
export const CardPan = variant("cardPan", {}, money.none)
/** @see CardPan */
export type CardPan = typeof CardPan.Type

/** pingDevice: checks the terminal; `returnDeviceInfo` asks for versions and battery. */
export const PingDevice = variant(
  "pingDevice",
  { returnDeviceInfo: Strict.optional(Schema.Boolean) },
  money.none
)
/** @see PingDevice */
export type PingDevice = typeof PingDevice.Type

/** stopCurrentTransaction: stops the operation in progress at a stoppable step (else 1003). */
export const StopCurrentTransaction = variant("stopCurrentTransaction", {}, money.none)
/** @see StopCurrentTransaction */
export type StopCurrentTransaction = typeof StopCurrentTransaction.Type

/** moToSale on a terminal: an original operation. */
export const MotoSale = variant(
  "moToSale",
  { ...reference, ...duplicateCheck, ...remittance, ...tokenize, billing: Strict.optional(Billing) },
  money.required
)
/** @see MotoSale */
export type MotoSale = typeof MotoSale.Type

/** An unlinked moToRefund: an original operation with its own reference. */
export const MotoRefund = variant(
  "moToRefund",
  { ...reference, ...duplicateCheck, ...remittance, ...tokenize },
  money.required
)
/** @see MotoRefund */
export type MotoRefund = typeof MotoRefund.Type

/** A moToRefund linked to its sale. */
export const LinkedMotoRefund = variant(
  "moToRefund",
  { ...original, ...duplicateCheck, ...remittance, ...tokenize },
  money.required
)
/** @see LinkedMotoRefund */
export type LinkedMotoRefund = typeof LinkedMotoRefund.Type

/**
 * moToReversal: within 24 h or until the daily batch; amount only for a partial one.
 * moneyRemittanceOptions is allowed: the spec supports it on "reversals".
 */
export const MotoReversal = variant(
  "moToReversal",
  { ...original, ...duplicateCheck, ...remittance, ...tokenize },
  money.optional
)
/** @see MotoReversal */
export type MotoReversal = typeof MotoReversal.Type

/** moToPreAuthorization: an original operation. */
export const MotoPreAuthorization = variant(
  "moToPreAuthorization",
  { ...reference, ...tokenize },
  money.required
)
/** @see MotoPreAuthorization */
export type MotoPreAuthorization = typeof MotoPreAuthorization.Type

/** preAuthorization: an original operation that holds funds. */
export const PreAuthorization = variant("preAuthorization", { ...reference, ...tokenize }, money.required)
/** @see PreAuthorization */
export type PreAuthorization = typeof PreAuthorization.Type

/** preAuthorizationIncrease: a delta on the hold; negative releases part of it. */
export const PreAuthorizationIncrease = variant(
  "preAuthorizationIncrease",
  { ...original, ...tokenize },
  money.signed
)
/** @see PreAuthorizationIncrease */
export type PreAuthorizationIncrease = typeof PreAuthorizationIncrease.Type

/** preAuthorizationCapture: captures once; amount optional (the full hold when absent). */
export const PreAuthorizationCapture = variant(
  "preAuthorizationCapture",
  { ...original, ...tokenize },
  money.optional
)
/** @see PreAuthorizationCapture */
export type PreAuthorizationCapture = typeof PreAuthorizationCapture.Type

/** preAuthorizationReversal: releases the whole hold or reverses a capture before settlement. */
export const PreAuthorizationReversal = variant(
  "preAuthorizationReversal",
  { ...original, ...tokenize },
  money.none
)
/** @see PreAuthorizationReversal */
export type PreAuthorizationReversal = typeof PreAuthorizationReversal.Type

/** Every request schema, one per operation (refund and moToRefund in two forms). */
export const variants = [
  Sale,
  SaleAndTokenizeCard,
  Refund,
  LinkedRefund,
  RefundReversal,
  SaleReversal,
  TokenizeCard,
  PrintReceipt,
  CardPan,
  PingDevice,
  StopCurrentTransaction,
  MotoSale,
  MotoRefund,
  LinkedMotoRefund,
  MotoReversal,
  MotoPreAuthorization,
  PreAuthorization,
  PreAuthorizationIncrease,
  PreAuthorizationCapture,
  PreAuthorizationReversal
] as const

/** The body of `POST /transactions`. */
export const TransactionRequest = Schema.Union(...variants).annotations({ identifier: "TransactionRequest" })
/** @see TransactionRequest */
export type TransactionRequest = typeof TransactionRequest.Type
/** The wire (JSON) form of a TransactionRequest. */
export type Encoded = typeof TransactionRequest.Encoded

/**
 * The members of a request that name or locate a person (issue 31), whole: `billing` (the
 * cardholder's zip code and address, for address verification) and `moneyRemittanceOptions`
 * (the remitter's full name and country). Each is removed whole: `fullName` is required
 * inside the remittance options, so options without it would no longer decode.
 */
export const personalMembers = ["billing", "moneyRemittanceOptions"] as const

/**
 * A request as an execution stores it (the `TerminalOperation` payload's `request`): the
 * wire form with its {@link personalMembers} stored as personal data (`Personal.members`),
 * removable after their retention. Its type is the request's; what is sent is still built
 * with {@link TransactionRequest}, the plain values.
 */
export const Stored = Personal.members(TransactionRequest, personalMembers).annotations({
  identifier: "StoredTransactionRequest"
})

/** The caller-generated reference of an original operation, if the request carries one. */
export const transactionReference = (
  request: TransactionRequest
): Option.Option<Identifiers.TransactionReference> =>
  "transactionReference" in request ? Option.some(request.transactionReference) : Option.none()

/** The gateway id of the original transaction of a linked operation. */
export const originalTransactionId = (request: TransactionRequest): Option.Option<Identifiers.Guid> =>
  "originalTransactionId" in request ? Option.some(request.originalTransactionId) : Option.none()

/** Whether the request moves money (a terminal financial operation). */
export const isFinancial = (request: TransactionRequest): boolean =>
  !(
    request.operation === "printReceipt" ||
    request.operation === "pingDevice" ||
    request.operation === "stopCurrentTransaction" ||
    request.operation === "tokenizeCard" ||
    request.operation === "cardPan"
  )

/**
 * The wire body with the callback token replaced by `"<redacted>"`: what may be logged
 * or kept in an error (`OutcomeUnknown.request`) about a request that was sent.
 */
export const withoutSecrets = (request: TransactionRequest): Record<string, unknown> => {
  const wire: Record<string, unknown> = { ...Schema.encodeSync(TransactionRequest)(request) }
  if ("token" in wire) wire.token = "<redacted>"
  return wire
}
