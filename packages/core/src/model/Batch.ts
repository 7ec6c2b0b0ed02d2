/**
 * Batch operations (beta, spec 4.11): close, summary and detail of a terminal's batch.
 * The request fields of close and summary are not shown in the spec; they take the
 * terminal and batch number like BatchDetailRequest (serialNumber, deviceType,
 * batchNumber), which is our assumption.
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import * as Identifiers from "./Identifiers.js"
import * as Lenient from "./internal/Lenient.js"

const strict = { parseOptions: { onExcessProperty: "error" as const } }

/** `POST /batch/close` and `POST /batch/summary` (fields assumed, see module doc). */
export class BatchRequest extends Schema.Class<BatchRequest>("BatchRequest")(
  Schema.Struct({
    serialNumber: Identifiers.SerialNumber,
    deviceType: Identifiers.TerminalType,
    batchNumber: Identifiers.BatchNumber
  }).annotations(strict)
) {}

/** A batch detail's `customerReference`: the spec allows a string or an object; echoed. */
export const CustomerReference = Schema.Union(
  Schema.String,
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "BatchCustomerReference" })
/** @see CustomerReference */
export type CustomerReference = typeof CustomerReference.Type

/** `POST /batch/detail`. `customerReference` may be a string or an object; echoed. */
export class BatchDetailRequest extends Schema.Class<BatchDetailRequest>("BatchDetailRequest")(
  Schema.Struct({
    serialNumber: Identifiers.SerialNumber,
    deviceType: Identifiers.TerminalType,
    batchNumber: Identifiers.BatchNumber,
    customerReference: Strict.optional(CustomerReference),
    rrn: Strict.optional(Schema.String)
  }).annotations(strict)
) {}

const str = Lenient.optional(Lenient.StringLenient)

/** One line of a batch detail; `amount` is a major-unit decimal string. */
export const BatchDetailElement = Schema.Struct(
  {
    transactionType: str,
    retrievalReferenceNumber: str,
    amount: str,
    batchDetailElementGuid: str
  },
  Lenient.Extra
)

/** The body of `POST /batch/detail`. */
export const BatchDetailResponse = Schema.Struct(
  {
    httpStatus: str,
    batchNumber: str,
    batchStatus: str,
    closedAt: str,
    issuerResponseCode: str,
    issuerResponseText: str,
    batchDetailGuid: str,
    details: Lenient.optional(Schema.Array(BatchDetailElement))
  },
  Lenient.Extra
).annotations({ identifier: "BatchDetailResponse" })
/** @see BatchDetailResponse */
export type BatchDetailResponse = typeof BatchDetailResponse.Type

/** `customFields.entry` of a summary: counts of sales, refunds … */
export const CustomFields = Schema.Struct(
  {
    entry: Lenient.optional(
      Schema.Array(Schema.Struct({ key: Lenient.StringLenient, value: Lenient.StringLenient }, Lenient.Extra))
    )
  },
  Lenient.Extra
)

/** The body of `POST /batch/summary`; `netAmount` is a major-unit decimal string. */
export const BatchSummaryResponse = Schema.Struct(
  {
    batchNumber: str,
    batchStatus: str,
    batchSummaryGuid: str,
    transactionCount: str,
    netAmount: str,
    customFields: Lenient.optional(CustomFields),
    customerReference: Lenient.optional(Schema.Unknown),
    httpStatus: str,
    issuerResponseCode: str,
    issuerResponseText: str
  },
  Lenient.Extra
).annotations({ identifier: "BatchSummaryResponse" })
/** @see BatchSummaryResponse */
export type BatchSummaryResponse = typeof BatchSummaryResponse.Type

/** The body of `POST /batch/close` (not shown in the spec): anything, kept. */
export const BatchCloseResponse = Schema.Unknown.annotations({ identifier: "BatchCloseResponse" })
