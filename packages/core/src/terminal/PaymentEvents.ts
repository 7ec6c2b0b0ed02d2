/**
 * The business facts of terminal operations, as an auditor reads them: one stream per
 * operation (`payment-<executionId>`) telling what was asked, each attempt and what
 * became of it (accepted, not processed, outcome unknown, reconciled), and how it ended
 * (`PaymentAuthorised`, `PaymentDeclined`, `ReceiptPrinted` …), plus results that came
 * late (`LateResultRecorded`) or disagree (`ResultMismatch`). Amounts are Money in JSON (`{amount: "1050",
 * currency: "EUR"}`), cards masked; no token, key or full card number is ever here.
 */
import * as Schema from "effect/Schema"
import * as CallbackRegistration from "./CallbackRegistration.js"
import * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as Money from "../model/Money.js"
import * as OperationOutcome from "./OperationOutcome.js"
import * as Reconciliation from "./Reconciliation.js"

/** The stream of one terminal operation. */
export const paymentStream = (executionId: string): string => `payment-${executionId}`

const attemptFields = {
  attempt: Schema.Int,
  attemptId: Schema.String,
  at: Schema.Number
}

/** The operation was asked for: what, of which terminal, delivered how, until when. */
export const OperationRequested = EventRegistry.define(
  "OperationRequested",
  Schema.Struct({
    executionId: Schema.String,
    operation: Schema.String,
    serialNumber: Schema.String,
    terminalType: Schema.String,
    amount: Schema.optional(Money.FromMinorUnitsFields),
    originalTransactionId: Schema.optional(Schema.String),
    originalTransactionReference: Schema.optional(Schema.String),
    customerReference: Schema.optional(Schema.String),
    delivery: CallbackRegistration.Delivery,
    requestedAt: Schema.Number,
    deadlineAt: Schema.Number,
    at: Schema.Number
  })
)

/** An attempt is recorded before its request leaves, with its fresh reference. */
export const AttemptRecorded = EventRegistry.define(
  "AttemptRecorded",
  Schema.Struct({ ...attemptFields, transactionReference: Schema.optional(Schema.String) })
)

/** 202: the terminal took the operation. */
export const AttemptAccepted = EventRegistry.define(
  "AttemptAccepted",
  Schema.Struct({ ...attemptFields, transactionResultId: Schema.optional(Schema.String) })
)

/** 1001 busy or 1002 offline: definitely not processed; a new attempt may follow. */
export const AttemptNotProcessed = EventRegistry.define(
  "AttemptNotProcessed",
  Schema.Struct({ ...attemptFields, reason: Schema.String, message: Schema.String })
)

/** A network error, a timeout or a 5xx: the request may or may not have been processed. */
export const AttemptOutcomeUnknown = EventRegistry.define(
  "AttemptOutcomeUnknown",
  Schema.Struct({ ...attemptFields, reason: Schema.String, message: Schema.String })
)

/** One answer of the status endpoint during reconciliation. */
export const ReconciliationChecked = EventRegistry.define(
  "ReconciliationChecked",
  Schema.Struct({
    ...attemptFields,
    verdict: Reconciliation.Verdict,
    finStatus: Schema.optional(Schema.String),
    detail: Schema.optional(Schema.String)
  })
)

/** Reconciliation proved this attempt never reached the gateway (NOT FOUND after 90 s). */
export const AttemptNotCharged = EventRegistry.define(
  "AttemptNotCharged",
  Schema.Struct({ ...attemptFields, transactionReference: Schema.optional(Schema.String) })
)

/** The service refused the request (403, 422, a business 400): not processed, not retried. */
export const OperationRejected = EventRegistry.define(
  "OperationRejected",
  Schema.Struct({
    ...attemptFields,
    error: Schema.String,
    status: Schema.optional(Schema.Number),
    message: Schema.String
  })
)

/** The terminal stayed busy or offline, or others kept it, past the caller's deadline. */
export const TerminalUnavailable = EventRegistry.define(
  "TerminalUnavailable",
  Schema.Struct({
    attempts: Schema.Int,
    lastReason: Schema.String,
    deadlineAt: Schema.Number,
    at: Schema.Number
  })
)

/** The outcome cannot be learnt (no reference to reconcile with and no result, or out of time). */
export const OutcomeUnresolved = EventRegistry.define(
  "OutcomeUnresolved",
  Schema.Struct({
    ...attemptFields,
    message: Schema.String,
    reason: Schema.optional(OperationOutcome.UnresolvedReason)
  })
)

const outcome = <const T extends string>(type: T) =>
  EventRegistry.define(type, Schema.Struct({ facts: OperationOutcome.Facts, at: Schema.Number }))

/** AUTHORISED (or CAPTURED, REFUNDED) by a financial operation. */
export const PaymentAuthorised = outcome("PaymentAuthorised")
/** PARTIAL_APPROVAL: `facts.dueAmount` remains to be paid. */
export const PaymentPartiallyApproved = outcome("PaymentPartiallyApproved")
/** DECLINED by the acquirer or issuer (`facts.issuerResponseCode`). */
export const PaymentDeclined = outcome("PaymentDeclined")
/** CANCELLED at the terminal or by stopCurrentTransaction. */
export const PaymentCancelled = outcome("PaymentCancelled")
/** FAILED: not charged. */
export const PaymentFailed = outcome("PaymentFailed")
/** printReceipt done (PROCESSED). */
export const ReceiptPrinted = outcome("ReceiptPrinted")
/** A card token obtained (tokenizeCard, or saleAndTokenizeCard besides its payment event). */
export const CardTokenized = outcome("CardTokenized")
/** pingDevice answered. */
export const DevicePinged = outcome("DevicePinged")
/** cardPan answered (the number itself is never stored). */
export const CardPanRead = outcome("CardPanRead")

/** The operation ended not charged (NOT FOUND after 90 s, and no new attempt allowed). */
export const PaymentNotCharged = EventRegistry.define(
  "PaymentNotCharged",
  Schema.Struct({
    ...attemptFields,
    transactionReference: Schema.optional(Schema.String),
    attempts: Schema.Int
  })
)

/** stopCurrentTransaction accepted by the terminal. */
export const StopAccepted = EventRegistry.define(
  "StopAccepted",
  Schema.Struct({ serialNumber: Schema.String, at: Schema.Number })
)

/** stopCurrentTransaction refused (1003: not at a stoppable step). */
export const StopRefused = EventRegistry.define(
  "StopRefused",
  Schema.Struct({ serialNumber: Schema.String, message: Schema.String, at: Schema.Number })
)

/**
 * A result its attempt's conclusion did not weigh (recorded in the attempt's stream after
 * the version the conclusion read), noted once by the receiver or the settle step
 * (`LateResults`).
 */
export const LateResultRecorded = EventRegistry.define(
  "LateResultRecorded",
  Schema.Struct({
    attemptId: Schema.String,
    resultHash: Schema.String,
    finStatus: Schema.optional(Schema.String),
    recovered: Schema.Boolean,
    at: Schema.Number
  })
)

/**
 * A result disagrees with the recorded outcome of its attempt (`recorded` is `NOT_CHARGED`
 * for an attempt proved not charged): an alert for a human, one per result.
 */
export const ResultMismatch = EventRegistry.define(
  "ResultMismatch",
  Schema.Struct({
    attemptId: Schema.String,
    recorded: Schema.String,
    received: Schema.String,
    resultHash: Schema.String,
    source: Schema.String,
    at: Schema.Number
  })
)

/** Every event of payment streams. */
export const events = EventRegistry.make(
  OperationRequested,
  AttemptRecorded,
  AttemptAccepted,
  AttemptNotProcessed,
  AttemptOutcomeUnknown,
  ReconciliationChecked,
  AttemptNotCharged,
  OperationRejected,
  TerminalUnavailable,
  OutcomeUnresolved,
  PaymentAuthorised,
  PaymentPartiallyApproved,
  PaymentDeclined,
  PaymentCancelled,
  PaymentFailed,
  ReceiptPrinted,
  CardTokenized,
  DevicePinged,
  CardPanRead,
  PaymentNotCharged,
  StopAccepted,
  StopRefused,
  LateResultRecorded,
  ResultMismatch
)

/** The types of the events that settle an attempt's outcome. */
export const outcomeTypes: ReadonlyArray<string> = [
  PaymentAuthorised.type,
  PaymentPartiallyApproved.type,
  PaymentDeclined.type,
  PaymentCancelled.type,
  PaymentFailed.type,
  ReceiptPrinted.type,
  CardTokenized.type,
  DevicePinged.type,
  CardPanRead.type
]

/** The events that record a settled outcome (two for a tokenizing sale that returned a token). */
export const outcomeEventsOf = (settled: OperationOutcome.Outcome, at: number) => {
  const data = { facts: settled.facts, at }
  const operation = settled.facts.operation
  switch (settled._tag) {
    case "Approved":
      switch (operation) {
        case "printReceipt":
          return [ReceiptPrinted.make(data)]
        case "pingDevice":
          return [DevicePinged.make(data)]
        case "tokenizeCard":
          return [CardTokenized.make(data)]
        case "cardPan":
          return [CardPanRead.make(data)]
        default:
          return settled.facts.cardToken !== undefined && operation === "saleAndTokenizeCard"
            ? [PaymentAuthorised.make(data), CardTokenized.make(data)]
            : [PaymentAuthorised.make(data)]
      }
    case "PartiallyApproved":
      return [PaymentPartiallyApproved.make(data)]
    case "Declined":
      return [PaymentDeclined.make(data)]
    case "Cancelled":
      return [PaymentCancelled.make(data)]
    case "Failed":
      return [PaymentFailed.make(data)]
  }
}
