/**
 * The errors a Promise of `@tillflow/node` rejects with: one class per error of the Effect
 * API that can reach a caller, each a `TillflowError` whose `code` is the Effect error's
 * `_tag` and whose fields are the Effect error's fields (amounts as `{ amount: "10.50",
 * currency: "EUR" }`). Test with `instanceof` (`err instanceof DeviceBusy`) or `err.code`.
 *
 * A terminal that stays busy or offline past the deadline ends the Effect operation with
 * `TerminalUnavailable`; here that error is a `DeviceBusy` or `DeviceOffline` (subclasses of
 * `TerminalUnavailable`) when its `lastReason` says which, with the same fields.
 */

/** The fields of an error, as the Effect error carries them. */
export type ErrorFields = Readonly<Record<string, unknown>>

/**
 * The base class of every error of `@tillflow/node`.
 *
 * @example
 * try {
 *   await tf.sale({ serialNumber, amount: { amount: "10.50", currency: "EUR" } })
 * } catch (err) {
 *   if (err instanceof TillflowError) console.error(err.code, err.message)
 * }
 */
export class TillflowError extends Error {
  /** The Effect error's `_tag` (`"TerminalUnavailable"`, `"InvalidRequest"` …). */
  readonly code: string
  /** Every field of the Effect error but its tag, `message` included. */
  readonly fields: ErrorFields

  constructor(code: string, message: string, fields: ErrorFields = {}) {
    super(message)
    this.code = code
    this.fields = { message, ...fields }
    // The fields are also properties of the error (`err.serialNumber`), as on the Effect error.
    for (const [key, value] of Object.entries(fields)) {
      if (key !== "message" && key !== "code" && key !== "fields" && key !== "name" && key !== "stack") {
        Object.defineProperty(this, key, { value, enumerable: true })
      }
    }
  }

  override get name(): string {
    return this.constructor.name
  }

  /** The error as JSON: its code and fields. */
  toJSON(): Record<string, unknown> {
    return { code: this.code, ...this.fields }
  }
}

// ---------------------------------------------------------------------------------------
// The edge: configuration, requests, the store

/** The configuration could not be used, or a layer (store, service) could not start. */
export class StartupError extends TillflowError {}

/** The request is not acceptable: the message says what was wrong and what is allowed. */
export class InvalidRequest extends TillflowError {}

/** An amount is malformed for its currency (too many decimals, not a number …). */
export class InvalidAmount extends InvalidRequest {
  declare readonly input: string
  declare readonly currency: string
}

/** No such execution, transaction or terminal (here or at the service). */
export class NotFound extends TillflowError {}

/** The idempotency key was used for a different request. */
export class IdempotencyConflict extends TillflowError {
  declare readonly executionId: string
}

/** The store or the remote service did not answer. */
export class Unavailable extends TillflowError {}

/** The event store failed. */
export class EventStoreError extends Unavailable {}

/** `tf.close()` was called: this instance takes no more calls. */
export class Closed extends TillflowError {}

/** The execution is stuck (it waits for an operator: `tillflow executions show <id>`). */
export class ExecutionStuck extends TillflowError {
  declare readonly executionId: string
}

/** A defect: a bug, not an expected failure. The message says what died. */
export class Defect extends TillflowError {}

// ---------------------------------------------------------------------------------------
// Terminal operations

/** The terminal stayed busy or offline, or others kept it, until the deadline. Not charged. */
export class TerminalUnavailable extends TillflowError {
  declare readonly serialNumber: string
  declare readonly attempts: number
  /** The last reason it could not be reached (`DeviceBusy`, `DeviceOffline`, `QueuedPastDeadline` …). */
  declare readonly lastReason: string
}

/** The terminal was busy with another transaction (1001) until the deadline. Not charged. */
export class DeviceBusy extends TerminalUnavailable {}

/** The terminal was offline (1002) until the deadline. Not charged. */
export class DeviceOffline extends TerminalUnavailable {}

/** The service refused the request (403, 422, a 400 business error …): not processed. */
export class OperationRejected extends TillflowError {
  /** The service's error, as `{ code, message, … }`. */
  declare readonly error: Readonly<Record<string, unknown>>
}

/** The outcome cannot be learnt (no reference to reconcile with): look at the terminal. */
export class OutcomeUnresolved extends TillflowError {
  declare readonly attemptId: string
  /** Why: `NoReference`, `NoResult`, `ReconcileTimeout`, `ChargeContradicted`, `Undecodable`. */
  declare readonly reason?: string
}

/**
 * A linked operation sent to a terminal (a capture, an increase, a reversal …) that its
 * original's history forbids: nothing was sent. `error` and `rule` name the rule.
 */
export class OperationRefused extends TillflowError {
  declare readonly operation: string
  declare readonly originalTransactionId: string
  /** The rule's error (`CaptureAlreadyDone`, `ReversalWindowClosed` …). */
  declare readonly error: string
  declare readonly rule: string
}

/** Reconciliation proved the operation never reached the gateway: nothing was charged. */
export class NotCharged extends TillflowError {
  declare readonly transactionReference: string
}

/** stopCurrentTransaction at a step that cannot be stopped (1003). */
export class StopRefused extends TillflowError {
  declare readonly serialNumber: string
}

// ---------------------------------------------------------------------------------------
// The remote service (terminal-less operations)

/** 5xx, a network failure or a timeout: the request may or may not have been processed. */
export class OutcomeUnknown extends TillflowError {
  declare readonly reason: string
}

/** 1003: a stop at a step that cannot be cancelled. */
export class CancelNotAllowed extends TillflowError {}

/** MOTO: the card security code is required (3107). */
export class SecurityCodeRequired extends TillflowError {}

/** 422: a required field is missing or invalid. */
export class ValidationFailed extends TillflowError {}

/** 403: authentication failed, or a partner key was refused. */
export class Forbidden extends TillflowError {}

/** A business error of the gateway. */
export class GatewayRejected extends TillflowError {}

// ---------------------------------------------------------------------------------------
// Rules of the terminal-less lifecycles, decided from the history before anything is sent

/** A pre-authorization can be captured once only. */
export class CaptureAlreadyDone extends TillflowError {
  declare readonly originalGuid: string
}

/** The capture exceeds the scheme's tolerance over the authorised amount. */
export class CaptureOverTolerance extends TillflowError {
  declare readonly originalGuid: string
}

/** The capture window of the scheme and category has passed. */
export class CaptureWindowClosed extends TillflowError {
  declare readonly originalGuid: string
}

/** A MOTO reversal is possible within 24 hours only. */
export class ReversalWindowClosed extends TillflowError {}

/** Deferred tokenization is possible within 12 months only. */
export class TokenizationWindowClosed extends TillflowError {}

/** A tip adjustment applies to a sale only. */
export class TipAdjustmentNotAllowed extends TillflowError {}

/** The event log holds no transaction with this guid. */
export class TransactionNotRecorded extends TillflowError {
  declare readonly guid: string
}

/** The operation does not apply to this kind of transaction. */
export class OperationNotApplicable extends TillflowError {}

/** Another operation on the same transaction is in flight. */
export class OperationInProgress extends TillflowError {}

/** The pre-authorization's hold was released. */
export class PreAuthorizationNotOpen extends TillflowError {}

/** The scheme excludes the merchant's category from pre-authorization. */
export class MccExcluded extends TillflowError {}

/** A decrease would release the whole hold or more. */
export class DecreaseExceedsHold extends TillflowError {}

/** An amount is not in the currency of its transaction. */
export class CurrencyNotOfTransaction extends TillflowError {}

/** Refunds would add up to more than the sale. */
export class RefundExceedsSale extends TillflowError {}

/** A reversal the history shows cannot be made. */
export class ReversalNotAllowed extends TillflowError {}

/** Deferred tokenization of a transaction type the service does not tokenize. */
export class TokenizationNotEligible extends TillflowError {}

/** A device command whose values are out of range or malformed. */
export class InvalidDeviceCommand extends TillflowError {}

/** The same request already failed: send a new one with a new idempotency key. */
export class RequestAlreadyFailed extends TillflowError {}

type ErrorClass = new (code: string, message: string, fields?: ErrorFields) => TillflowError

/** The class of each Effect error tag. */
const classes: Readonly<Record<string, ErrorClass>> = {
  StartupError,
  InvalidRequest,
  InvalidAmount,
  NotFound,
  IdempotencyConflict,
  Unavailable,
  EventStoreError,
  ConcurrencyConflict: EventStoreError,
  TerminalUnavailable,
  DeviceBusy,
  DeviceOffline,
  OperationRejected,
  OutcomeUnresolved,
  OperationRefused,
  NotCharged,
  StopRefused,
  OutcomeUnknown,
  CancelNotAllowed,
  SecurityCodeRequired,
  ValidationFailed,
  Forbidden,
  GatewayRejected,
  CaptureAlreadyDone,
  CaptureOverTolerance,
  CaptureWindowClosed,
  ReversalWindowClosed,
  TokenizationWindowClosed,
  TipAdjustmentNotAllowed,
  TransactionNotRecorded,
  OperationNotApplicable,
  OperationInProgress,
  PreAuthorizationNotOpen,
  MccExcluded,
  DecreaseExceedsHold,
  CurrencyNotOfTransaction,
  RefundExceedsSale,
  ReversalNotAllowed,
  TokenizationNotEligible,
  InvalidDeviceCommand,
  RequestAlreadyFailed
}

/**
 * The error of an Effect error's JSON form (`{ _tag, message, …fields }`, amounts already
 * plain). A terminal unavailable because busy or offline is a `DeviceBusy` or `DeviceOffline`.
 */
export const fromJson = (json: Readonly<Record<string, unknown>>): TillflowError => {
  const { _tag, message, ...fields } = json
  const code = typeof _tag === "string" ? _tag : "Unknown"
  const text = typeof message === "string" ? message : `${code}`
  const reason = fields["lastReason"]
  const Class =
    code === "TerminalUnavailable" && typeof reason === "string" && reason.startsWith("DeviceBusy")
      ? DeviceBusy
      : code === "TerminalUnavailable" && typeof reason === "string" && reason.startsWith("DeviceOffline")
        ? DeviceOffline
        : (classes[code] ?? TillflowError)
  return new Class(code, text, fields)
}
