/**
 * Branded identifiers: a serial number is not a terminal type, a gateway guid is not a
 * transaction reference. Each brand has a schema that checks the shape on the way in.
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A value that is not the identifier it was given as: what was wrong, what is allowed. */
export class InvalidIdentifier extends Schema.TaggedError<InvalidIdentifier>()("InvalidIdentifier", {
  identifier: Schema.String,
  message: Schema.String
}) {}

/**
 * The constructor of a branded identifier: checks a plain string (or a field that may be
 * absent, such as an outcome's `efttransactionID`) and answers the brand, or fails with
 * {@link InvalidIdentifier} saying what was wrong.
 */
const constructor =
  <A, I extends string>(schema: Schema.Schema<A, I>, identifier: string, description: string) =>
  (value: string | undefined): Effect.Effect<A, InvalidIdentifier> =>
    value === undefined
      ? Effect.fail(new InvalidIdentifier({ identifier, message: `${description} is missing` }))
      : Schema.decode(schema)(value as I).pipe(
          Effect.mapError(
            (error) =>
              new InvalidIdentifier({
                identifier,
                message: `not ${description} (${JSON.stringify(value)}): ${ParseResult.TreeFormatter.formatErrorSync(error)}`
              })
          )
        )

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
/** Checks a string as a transactionReference (a UUID v4): `Identifiers.transactionReference(value)`. */
export const transactionReference = constructor(
  TransactionReference,
  "TransactionReference",
  "a transactionReference (a UUID v4)"
)

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
/** Checks a string as a terminal serial number: `Identifiers.serialNumber(value)`. */
export const serialNumber = constructor(SerialNumber, "SerialNumber", "a terminal serial number")

/** Type of a terminal (`terminal_type`, `deviceType`). */
export const TerminalType = nonEmpty("TerminalType", "a terminal type")
/** @see TerminalType */
export type TerminalType = typeof TerminalType.Type
/** Checks a string as a terminal type: `Identifiers.terminalType(value)`. */
export const terminalType = constructor(TerminalType, "TerminalType", "a terminal type")

/** Id of a pending result returned by a 202, e.g. `0821032398-1628774190395`. */
export const TransactionResultId = nonEmpty("TransactionResultId", "a transactionResultId")
/** @see TransactionResultId */
export type TransactionResultId = typeof TransactionResultId.Type
/** Checks a string as a transactionResultId: `Identifiers.transactionResultId(value)`. */
export const transactionResultId = constructor(
  TransactionResultId,
  "TransactionResultId",
  "a transactionResultId"
)

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
/**
 * Checks a string as a gateway guid, such as the `efttransactionID` of an approved sale, for
 * the `originalTransactionId` of a linked operation.
 *
 * @example
 * const sale = yield* TerminalOperations.sale({ serialNumber, terminalType, amount }, { idempotencyKey })
 * const refund = yield* TerminalOperations.linkedRefund(
 *   { serialNumber, terminalType, amount, originalTransactionId: yield* Identifiers.guid(sale.facts.efttransactionID) },
 *   { idempotencyKey: `${idempotencyKey}-refund` }
 * )
 */
export const guid = constructor(Guid, "Guid", "a transaction guid")

/** Id of a durable workflow execution. */
export const ExecutionId = nonEmpty("ExecutionId", "a workflow execution id")
/** @see ExecutionId */
export type ExecutionId = typeof ExecutionId.Type
/** Checks a string as an execution id: `Identifiers.executionId(value)`. */
export const executionId = constructor(ExecutionId, "ExecutionId", "an execution id")

/** The caller's idempotency key, from which an execution id is derived. */
export const IdempotencyKey = nonEmpty("IdempotencyKey", "an idempotency key")
/** @see IdempotencyKey */
export type IdempotencyKey = typeof IdempotencyKey.Type
/** Checks a string as an idempotency key: `Identifiers.idempotencyKey(value)`. */
export const idempotencyKey = constructor(IdempotencyKey, "IdempotencyKey", "an idempotency key")

/** A merchant identifier (`merchant_id_alpha`). */
export const MerchantId = nonEmpty("MerchantId", "a merchant identifier")
/** @see MerchantId */
export type MerchantId = typeof MerchantId.Type
/** Checks a string as a merchant identifier: `Identifiers.merchantId(value)`. */
export const merchantId = constructor(MerchantId, "MerchantId", "a merchant identifier")

/** A card token (`cardToken`) usable for MOTO sales. */
export const CardToken = nonEmpty("CardToken", "a card token")
/** @see CardToken */
export type CardToken = typeof CardToken.Type
/** Checks a string as a card token: `Identifiers.cardToken(value)`. */
export const cardToken = constructor(CardToken, "CardToken", "a card token")

/** A batch number of a terminal. */
export const BatchNumber = nonEmpty("BatchNumber", "a batch number")
/** @see BatchNumber */
export type BatchNumber = typeof BatchNumber.Type
/** Checks a string as a batch number: `Identifiers.batchNumber(value)`. */
export const batchNumber = constructor(BatchNumber, "BatchNumber", "a batch number")
