/**
 * Branded identifiers: a serial number is not a terminal type, a gateway guid is not a
 * transaction reference. Each brand has a schema that checks the shape on the way in.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const nonEmpty = <B extends string>(brand: B, description: string) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => `${description} must not be empty` }),
    Schema.brand(brand)
  ).annotations({ identifier: brand, description })

const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/**
 * The caller-generated UUID v4 of an original operation (spec 2.2 rule 1), the key of
 * the status endpoint. Upper case is accepted on input and normalised to lower case.
 */
export const TransactionReference = Schema.compose(
  Schema.Lowercase,
  Schema.String.pipe(
    Schema.pattern(uuidV4, { message: () => "a transactionReference must be a UUID v4" }),
    Schema.brand("TransactionReference")
  )
).annotations({ identifier: "TransactionReference", description: "a UUID v4" })
/** @see TransactionReference */
export type TransactionReference = typeof TransactionReference.Type

/** A fresh random UUID v4 reference (crypto-grade randomness of the platform). */
export const makeTransactionReference: Effect.Effect<TransactionReference> = Effect.sync(() =>
  Schema.decodeSync(TransactionReference)(globalThis.crypto.randomUUID())
)

/** The nil UUID that the 202 body echoes when the request carried no reference. */
export const NIL_UUID = "00000000-0000-0000-0000-000000000000"

/** Serial number of a terminal (`serial_number`, `serialNumber`). */
export const SerialNumber = nonEmpty("SerialNumber", "a terminal serial number")
/** @see SerialNumber */
export type SerialNumber = typeof SerialNumber.Type

/** Type of a terminal (`terminal_type`, `deviceType`). */
export const TerminalType = nonEmpty("TerminalType", "a terminal type")
/** @see TerminalType */
export type TerminalType = typeof TerminalType.Type

/** Id of a pending result returned by a 202, e.g. `0821032398-1628774190395`. */
export const TransactionResultId = nonEmpty("TransactionResultId", "a transactionResultId")
/** @see TransactionResultId */
export type TransactionResultId = typeof TransactionResultId.Type

/**
 * A gateway guid identifying a completed transaction (`efttransactionID`,
 * `originalGuid`, the `{guid}` of tip adjustment and tokenization).
 */
export const Guid = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a transaction guid must not be empty" }),
  // It is a segment of the request's path (`/transactions/{guid}/tip-adjustment`): a slash,
  // `..` or a query would send the request elsewhere. The service's guids are UUID-like.
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, {
    message: () =>
      "a transaction guid is 1 to 128 letters, digits, '-', '_' or '.', starting with a letter or digit"
  }),
  Schema.brand("Guid")
).annotations({ identifier: "Guid", description: "a transaction guid" })
/** @see Guid */
export type Guid = typeof Guid.Type

/** Id of a durable workflow execution. */
export const ExecutionId = nonEmpty("ExecutionId", "a workflow execution id")
/** @see ExecutionId */
export type ExecutionId = typeof ExecutionId.Type

/** The caller's idempotency key, from which an execution id is derived. */
export const IdempotencyKey = nonEmpty("IdempotencyKey", "an idempotency key")
/** @see IdempotencyKey */
export type IdempotencyKey = typeof IdempotencyKey.Type

/** A merchant identifier (`merchant_id_alpha`). */
export const MerchantId = nonEmpty("MerchantId", "a merchant identifier")
/** @see MerchantId */
export type MerchantId = typeof MerchantId.Type

/** A card token (`cardToken`) usable for MOTO sales. */
export const CardToken = nonEmpty("CardToken", "a card token")
/** @see CardToken */
export type CardToken = typeof CardToken.Type

/** A batch number of a terminal. */
export const BatchNumber = nonEmpty("BatchNumber", "a batch number")
/** @see BatchNumber */
export type BatchNumber = typeof BatchNumber.Type
