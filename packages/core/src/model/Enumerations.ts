/**
 * The enumerations of spec 2.5, each in two forms: the strict literal schema (`X`) used
 * on what we send, and the tolerant schema (`XReceived`) used on what we receive, which
 * keeps a value this version does not know as an `UnknownEnumValue` string instead of
 * failing — a payment outcome is never dropped because the service added a status.
 */
import * as Schema from "effect/Schema"
import * as Lenient from "./internal/Lenient.js"

/** A value of an enumeration that this version does not know, kept verbatim. */
export const UnknownValue = Lenient.Unknown
/** @see UnknownValue */
export type UnknownValue = Lenient.Unknown

/** Whether a received enumeration value is one this version knows. */
export const isKnown = <L extends string>(strict: Schema.Schema<L>, value: string): value is L =>
  Schema.is(strict)(value)

/**
 * The `operation` of a terminal request: the one list of the operations, read by whoever
 * needs them (in this order, the one an operator is shown). `update` exists only in
 * earlier versions.
 */
export const OperationType = Schema.Literal(
  "sale",
  "saleAndTokenizeCard",
  "refund",
  "refundReversal",
  "saleReversal",
  "tokenizeCard",
  "printReceipt",
  "cardPan",
  "pingDevice",
  "stopCurrentTransaction",
  "moToSale",
  "moToRefund",
  "moToReversal",
  "moToPreAuthorization",
  "preAuthorization",
  "preAuthorizationIncrease",
  "preAuthorizationCapture",
  "preAuthorizationReversal"
).annotations({ identifier: "OperationType" })
/** @see OperationType */
export type OperationType = typeof OperationType.Type
/** Tolerant OperationType (`update` and future values kept). */
export const OperationTypeReceived = Lenient.enumeration(OperationType)
/** @see OperationTypeReceived */
export type OperationTypeReceived = typeof OperationTypeReceived.Type

/**
 * Outcome of a transaction (`finStatus`). UNDEFINED (NOT FOUND), IN_PROGRESS and
 * REFUNDED come only from the status endpoint.
 */
export const FinancialStatus = Schema.Literal(
  "UNDEFINED",
  "AUTHORISED",
  "DECLINED",
  "REFUNDED",
  "PROCESSED",
  "FAILED",
  "CANCELLED",
  "PARTIAL_APPROVAL",
  "IN_PROGRESS",
  "CAPTURED"
).annotations({ identifier: "FinancialStatus" })
/** @see FinancialStatus */
export type FinancialStatus = typeof FinancialStatus.Type
/** Tolerant FinancialStatus. */
export const FinancialStatusReceived = Lenient.enumeration(FinancialStatus)
/** @see FinancialStatusReceived */
export type FinancialStatusReceived = typeof FinancialStatusReceived.Type

/** Kind of transaction in a result (`type`). */
export const TransactionType = Schema.Literal(
  "UNDEFINED",
  "SALE",
  "VOID_SALE",
  "REFUND",
  "VOID_REFUND",
  "CANCEL_SALE",
  "CANCEL_REFUND",
  "TOKENIZE_CARD",
  "CARD_PAN",
  "CANCEL_TRX",
  "MOTO_SALE",
  "MOTO_REFUND",
  "MOTO_REVERSAL"
).annotations({ identifier: "TransactionType" })
/** @see TransactionType */
export type TransactionType = typeof TransactionType.Type
/** Tolerant TransactionType. */
export const TransactionTypeReceived = Lenient.enumeration(TransactionType)
/** @see TransactionTypeReceived */
export type TransactionTypeReceived = typeof TransactionTypeReceived.Type

/** How the card was read. */
export const CardEntryType = Schema.Literal("UNDEFINED", "MSR", "ICC", "CNP").annotations({
  identifier: "CardEntryType"
})
/** @see CardEntryType */
export type CardEntryType = typeof CardEntryType.Type
/** Tolerant CardEntryType. */
export const CardEntryTypeReceived = Lenient.enumeration(CardEntryType)
/** @see CardEntryTypeReceived */
export type CardEntryTypeReceived = typeof CardEntryTypeReceived.Type

/** Card entry mode. */
export const PaymentScenario = Schema.Literal(
  "UNKNOWN",
  "MAGSTRIPE",
  "MAGSTRIPECONTACTLESS",
  "CHIP",
  "CHIPCONTACTLESS",
  "CHIPFAILMAGSTRIPE",
  "MOTO"
).annotations({ identifier: "PaymentScenario" })
/** @see PaymentScenario */
export type PaymentScenario = typeof PaymentScenario.Type
/** Tolerant PaymentScenario. */
export const PaymentScenarioReceived = Lenient.enumeration(PaymentScenario)
/** @see PaymentScenarioReceived */
export type PaymentScenarioReceived = typeof PaymentScenarioReceived.Type

/** Cardholder verification method. */
export const VerificationMethod = Schema.Literal(
  "UNDEFINED",
  "SIGNATURE",
  "PIN",
  "PIN_SIGNATURE",
  "FAILED",
  "NOT_REQUIRED",
  "MOBILE_PASS_CODE"
).annotations({ identifier: "VerificationMethod" })
/** @see VerificationMethod */
export type VerificationMethod = typeof VerificationMethod.Type
/** Tolerant VerificationMethod. */
export const VerificationMethodReceived = Lenient.enumeration(VerificationMethod)
/** @see VerificationMethodReceived */
export type VerificationMethodReceived = typeof VerificationMethodReceived.Type

/** Credit or debit. */
export const TenderType = Schema.Literal("NOT_SET", "CREDIT", "DEBIT").annotations({
  identifier: "TenderType"
})
/** @see TenderType */
export type TenderType = typeof TenderType.Type
/** Tolerant TenderType. */
export const TenderTypeReceived = Lenient.enumeration(TenderType)
/** @see TenderTypeReceived */
export type TenderTypeReceived = typeof TenderTypeReceived.Type

/**
 * Card brand. The spec names nine networks without listing them; these are the names
 * of the service's public documentation, the last being the domestic Canadian debit
 * network. Only the received form matters: we never send a scheme name.
 */
export const CardSchemeName = Schema.Literal(
  "MasterCard",
  "Visa",
  "Maestro",
  "American Express",
  "Discover",
  "JCB",
  "Diners",
  "UnionPay",
  "Interac"
).annotations({ identifier: "CardSchemeName" })
/** @see CardSchemeName */
export type CardSchemeName = typeof CardSchemeName.Type
/** Tolerant CardSchemeName. */
export const CardSchemeNameReceived = Lenient.enumeration(CardSchemeName)
/** @see CardSchemeNameReceived */
export type CardSchemeNameReceived = typeof CardSchemeNameReceived.Type

/**
 * Acquirer of a credential. The spec lists only SANDBOX by name ("seven to nine values
 * depending on the version"), so the strict form accepts SANDBOX or any upper-case
 * identifier; the received form accepts anything (samples carry `ACQ_DUMMY`).
 */
export const Acquirer = Schema.Union(
  Schema.Literal("SANDBOX"),
  Schema.String.pipe(
    Schema.pattern(/^[A-Z][A-Z0-9_]*$/, {
      message: () => "an acquirer is an upper-case identifier such as SANDBOX"
    }),
    Schema.brand("AcquirerName")
  )
).annotations({ identifier: "Acquirer" })
/** @see Acquirer */
export type Acquirer = typeof Acquirer.Type
/** Tolerant Acquirer. */
export const AcquirerReceived = Lenient.enumeration(Schema.Literal("SANDBOX"))
/** @see AcquirerReceived */
export type AcquirerReceived = typeof AcquirerReceived.Type

/** Progress value of an operation on the terminal. */
export const Status = Schema.Literal(
  "Undefined",
  "Success",
  "InvalidData",
  "ProcessingError",
  "CommandNotAllowed",
  "NotInitialised",
  "ConnectTimeout",
  "ConnectError",
  "SendingError",
  "ReceivingError",
  "NoDataAvailable",
  "TransactionNotAllowed",
  "UnsupportedCurrency",
  "NoHostAvailable",
  "CardReaderError",
  "CardReadingFailed",
  "InvalidCard",
  "InputTimeout",
  "UserCancelled",
  "InvalidSignature",
  "WaitingForCard",
  "CardInserted",
  "ApplicationSelection",
  "ApplicationConfirmation",
  "AmountValidation",
  "PinInput",
  "ManualCardInput",
  "WaitingForCardRemoval",
  "TipInput",
  "SharedSecretInvalid",
  "SharedSecretAuth",
  "WaitingSignature",
  "WaitingHostConnect",
  "WaitingHostSend",
  "WaitingHostReceive",
  "WaitingHostDisconnect",
  "PinInputCompleted",
  "PosCancelled",
  "RequestInvalid",
  "CardCancelled",
  "CardBlocked",
  "RequestAuthTimeout",
  "RequestPaymentTimeout",
  "ResponseAuthTimeout",
  "ResponsePaymentTimeout",
  "IccCardSwiped",
  "RemoveCard",
  "ScannerIsNotSupported",
  "ScannerEvent",
  "BatteryTooLow",
  "AccountTypeSelection",
  "BtIsNotSupported",
  "PaymentCodeSelection",
  "PartialApproval",
  "AmountDueValidation",
  "InvalidUrl",
  "WaitingCustomerReceipt",
  "PrintingMerchantReceipt",
  "PrintingCustomerReceipt",
  "UpdateStarted",
  "UpdateFinished",
  "UpdateFailed",
  "UpdateProgress",
  "WaitingHostPostSend",
  "WaitingHostPostReceive",
  "Rebooting",
  "PrinterOutOfPaper",
  "ErrorConnectingToPrinter",
  "CardTapped",
  "ReceiptPrintSuccess",
  "InvalidPinLength",
  "OfflinePinAttempt",
  "OfflinePinLastAttempt",
  "ProcessingSignature",
  "CardRemoved",
  "TipEntered",
  "CardLanguagePreference",
  "AutomaticPrintingStarted",
  "CancelOperationNotAllowed",
  "UpdateSoftwareStarted",
  "UpdateSoftwareFinished",
  "UpdateSoftwareFailed",
  "UpdateSoftwareProgress",
  "InstallSoftwareStarted",
  "InstallSoftwareFinished",
  "InstallSoftwareFailed",
  "InstallSoftwareProgress",
  "UpdateConfigStarted",
  "UpdateConfigFinished",
  "UpdateConfigFailed",
  "UpdateConfigProgress",
  "InitialisationComplete"
).annotations({ identifier: "Status" })
/** @see Status */
export type Status = typeof Status.Type
/** Tolerant Status. */
export const StatusReceived = Lenient.enumeration(Status)
/** @see StatusReceived */
export type StatusReceived = typeof StatusReceived.Type
