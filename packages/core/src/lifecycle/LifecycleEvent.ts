/**
 * The event catalogue of the terminal-less lifecycles: what is appended to the stream of a
 * gateway transaction (`txn-<guid>`: pre-authorizations, sales, MOTO sales, refunds), of a
 * MOTO sale attempt (`moto-sale-<transactionReference>`), of a terminal's batches
 * (`batch-<serial>`) and of a device's commands (`device-<serial>`). Every event carries
 * its business time `at` (read from the `Clock` by the activity that decided it), so a
 * replayed history reads the same on any store. Money is written as integer minor units
 * with its currency; nothing secret is ever written (a `cardToken` is not a secret).
 */
import * as Schema from "effect/Schema"
import * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as Money from "../model/Money.js"
import { optional } from "../model/internal/Strict.js"

// ---------------------------------------------------------------------------------------
// Building blocks

/** Money as stored: `{ amount: "1050", currency: "EUR" }` (integer minor units). */
export const MoneyJson = Money.FromMinorUnitsFields
/** An amount a workflow's payload asks for: `MoneyJson` within `Money.MAX_MINOR_UNITS`. */
export const RequestedMoneyJson = Money.RequestedFromMinorUnitsFields
/** An amount a payload charges, refunds, captures, reverses or moves a hold by: above zero. */
export const RequestedPositiveMoneyJson = Money.RequestedPositiveFromMinorUnitsFields
/** A tip a payload sets or adds: zero or more. */
export const RequestedTipMoneyJson = Money.RequestedNotNegativeFromMinorUnitsFields
/** An instant as stored: ISO 8601 UTC. */
export const Instant = Schema.DateTimeUtc

/** The financial transactions a `txn-<guid>` stream can hold. */
export const TransactionKind = Schema.Literal(
  "sale",
  "saleAndTokenizeCard",
  "refund",
  "preAuthorization",
  "moToPreAuthorization",
  "preAuthorizationCapture",
  "moToSale",
  "moToRefund"
)
/** @see TransactionKind */
export type TransactionKind = typeof TransactionKind.Type

/** The operations the lifecycles send, each guarded by its rules. */
export const Operation = Schema.Literal(
  "increase",
  "decrease",
  "capture",
  "reversal",
  "motoReversal",
  "motoRefund",
  "refund",
  "motoSale",
  "tipAdjustment",
  "tokenization",
  "batchClose",
  "deviceCommand"
)
/** @see Operation */
export type Operation = typeof Operation.Type

/** What a reversal undoes: a pre-authorization's hold, its capture, or a whole transaction. */
export const ReversalTarget = Schema.Literal("hold", "capture", "transaction")
/** @see ReversalTarget */
export type ReversalTarget = typeof ReversalTarget.Type

const request = { requestId: Schema.String, at: Instant }

/**
 * The terminal of the transaction a terminal-less fact acted on, when it was made on one,
 * and the merchant its result named (`mid`): the ledger books the fact on that terminal's
 * and merchant's row (each absent in facts recorded before it was).
 */
const onTerminal = { serialNumber: optional(Schema.String), merchant: optional(Schema.String) }

// ---------------------------------------------------------------------------------------
// Opening a transaction's stream

/** A completed transaction recorded from its result (a sale, refund, capture, MOTO sale …). */
export const TransactionRecorded = EventRegistry.define(
  "TransactionRecorded",
  Schema.Struct({
    guid: Schema.String,
    kind: TransactionKind,
    amount: MoneyJson,
    at: Instant,
    transactionReference: optional(Schema.String),
    serialNumber: optional(Schema.String),
    terminalType: optional(Schema.String),
    batchNumber: optional(Schema.String),
    originalGuid: optional(Schema.String),
    /** The merchant the result named (`mid`), when it was made on a terminal. */
    merchant: optional(Schema.String)
  })
)

/** A pre-authorization authorised (by a terminal or MOTO): its stream is open. */
export const PreAuthorizationOpened = EventRegistry.define(
  "PreAuthorizationOpened",
  Schema.Struct({
    guid: Schema.String,
    via: Schema.Literal("preAuthorization", "moToPreAuthorization"),
    amount: MoneyJson,
    at: Instant,
    scheme: Schema.String,
    mcc: Schema.String,
    tenderType: optional(Schema.String),
    transactionReference: optional(Schema.String),
    serialNumber: optional(Schema.String),
    terminalType: optional(Schema.String),
    batchNumber: optional(Schema.String),
    /** End of the stay (JCB hotel and car rental: the capture window). */
    stayEndsAt: optional(Instant),
    /** The merchant the result named (`mid`), when it was made on a terminal. */
    merchant: optional(Schema.String)
  })
)

// ---------------------------------------------------------------------------------------
// Pre-authorization

/** An increase of the hold was decided and is about to be sent. */
export const HoldIncreaseRequested = EventRegistry.define(
  "HoldIncreaseRequested",
  Schema.Struct({ ...request, delta: MoneyJson, tip: optional(MoneyJson) })
)
/** The hold was increased; `hold` is the amount held after it. */
export const HoldIncreased = EventRegistry.define(
  "HoldIncreased",
  Schema.Struct({
    ...request,
    ...onTerminal,
    delta: MoneyJson,
    tip: optional(MoneyJson),
    hold: MoneyJson,
    gatewayGuid: optional(Schema.String),
    reconciled: Schema.Boolean
  })
)
/** A decrease (`subtract: "1"`) was decided and is about to be sent. */
export const HoldDecreaseRequested = EventRegistry.define(
  "HoldDecreaseRequested",
  Schema.Struct({ ...request, delta: MoneyJson })
)
/** The hold was decreased; `hold` is the amount held after it. */
export const HoldDecreased = EventRegistry.define(
  "HoldDecreased",
  Schema.Struct({
    ...request,
    ...onTerminal,
    delta: MoneyJson,
    hold: MoneyJson,
    gatewayGuid: optional(Schema.String),
    reconciled: Schema.Boolean
  })
)
/**
 * The capture was decided: appended at the version the decision read, so of two
 * concurrent captures only one can record it. `warnings` are the rules the caller chose
 * to be warned about instead of refused.
 */
export const CaptureRequested = EventRegistry.define(
  "CaptureRequested",
  Schema.Struct({
    ...request,
    amount: MoneyJson,
    tip: optional(MoneyJson),
    total: MoneyJson,
    limit: MoneyJson,
    rule: Schema.String,
    warnings: Schema.Array(Schema.String)
  })
)
/** The pre-authorization was captured (status CAPTURED). */
export const PreAuthorizationCaptured = EventRegistry.define(
  "PreAuthorizationCaptured",
  Schema.Struct({
    ...request,
    ...onTerminal,
    total: MoneyJson,
    captureGuid: optional(Schema.String),
    reconciled: Schema.Boolean
  })
)

// ---------------------------------------------------------------------------------------
// Reversal, refund, tip, tokenization

/** A reversal was decided and is about to be sent (`/reversal` or `/moto/reversal`). */
export const ReversalRequested = EventRegistry.define(
  "ReversalRequested",
  Schema.Struct({
    ...request,
    endpoint: Schema.Literal("reversal", "motoReversal"),
    target: ReversalTarget,
    /** Set for a partial reversal only. */
    amount: optional(MoneyJson),
    messageReasonCode: optional(Schema.String)
  })
)
/** The reversal was applied: `amount` is what it undid. */
export const Reversed = EventRegistry.define(
  "Reversed",
  Schema.Struct({
    ...request,
    ...onTerminal,
    target: ReversalTarget,
    amount: MoneyJson,
    gatewayGuid: optional(Schema.String),
    reconciled: Schema.Boolean
  })
)
/** A MOTO refund of this sale was decided and is about to be sent. */
export const RefundRequested = EventRegistry.define(
  "RefundRequested",
  Schema.Struct({ ...request, amount: MoneyJson })
)
/** The refund was applied. */
export const Refunded = EventRegistry.define(
  "Refunded",
  Schema.Struct({
    ...request,
    ...onTerminal,
    amount: MoneyJson,
    refundGuid: optional(Schema.String),
    reconciled: Schema.Boolean
  })
)
/** A tip adjustment was decided and is about to be sent. */
export const TipAdjustmentRequested = EventRegistry.define(
  "TipAdjustmentRequested",
  Schema.Struct({ ...request, tip: MoneyJson })
)
/** The tip now stands at `tip`, replacing the earlier one (`replaces`) if any. */
export const TipAdjusted = EventRegistry.define(
  "TipAdjusted",
  Schema.Struct({ ...request, ...onTerminal, tip: MoneyJson, replaces: optional(MoneyJson) })
)
/** A deferred tokenization was decided and is about to be sent. */
export const TokenizationRequested = EventRegistry.define("TokenizationRequested", Schema.Struct(request))
/** The card of the transaction was tokenized. */
export const CardTokenized = EventRegistry.define(
  "CardTokenized",
  Schema.Struct({
    ...request,
    cardToken: Schema.String,
    cardTokenizationGuid: optional(Schema.String),
    maskedCardNumber: optional(Schema.String)
  })
)

// ---------------------------------------------------------------------------------------
// MOTO sale attempt, batches, device commands

/** A MOTO sale on a card token was decided and is about to be sent. */
export const MotoSaleRequested = EventRegistry.define(
  "MotoSaleRequested",
  Schema.Struct({
    ...request,
    transactionReference: Schema.String,
    amount: MoneyJson,
    cardToken: Schema.String,
    customerReference: optional(Schema.String),
    /**
     * The terminal it is booked on: the one the caller named, else the merchant's virtual
     * terminal (absent in logs written before it was recorded, and when neither is known).
     * An operator's resolution of the sale in doubt books it there.
     */
    serialNumber: optional(Schema.String)
  }),
  // Version 1 (before the serial was recorded) reads as a request with no serial.
  { schemaVersion: 2, upcasters: { 1: (v1) => v1 } }
)
/** The MOTO sale was authorised; its own stream `txn-<guid>` is open. */
export const MotoSaleApproved = EventRegistry.define(
  "MotoSaleApproved",
  Schema.Struct({
    ...request,
    guid: Schema.String,
    amount: MoneyJson,
    approvalCode: optional(Schema.String),
    /** The (virtual) terminal that booked it, when known: its batch decides the reversal. */
    serialNumber: optional(Schema.String),
    reconciled: Schema.Boolean
  })
)
/** The MOTO sale was declined by the issuer or acquirer: not charged. */
export const MotoSaleDeclined = EventRegistry.define(
  "MotoSaleDeclined",
  Schema.Struct({
    ...request,
    finStatus: Schema.String,
    reason: Schema.String,
    reconciled: Schema.Boolean,
    /** The terminal it was sent on, as its request names it (absent in older logs). */
    serialNumber: optional(Schema.String)
  }),
  // Version 1 (before the serial was recorded) reads as a decline with no serial.
  { schemaVersion: 2, upcasters: { 1: (v1) => v1 } }
)
/** Closing a batch of the terminal was decided and is about to be sent. */
export const BatchCloseRequested = EventRegistry.define(
  "BatchCloseRequested",
  Schema.Struct({ ...request, batchNumber: Schema.String })
)
/** The batch is closed: its sales can no longer be tip-adjusted or captures reversed. */
export const BatchClosed = EventRegistry.define(
  "BatchClosed",
  Schema.Struct({ ...request, batchNumber: Schema.String, reconciled: Schema.Boolean })
)
/** A device command passed its local checks and is about to be sent. */
export const DeviceCommandRequested = EventRegistry.define(
  "DeviceCommandRequested",
  Schema.Struct({
    ...request,
    command: Schema.String,
    body: Schema.Record({
      key: Schema.String,
      value: Schema.Union(Schema.Boolean, Schema.Number, Schema.String)
    })
  })
)
/** The device accepted the command (202). */
export const DeviceCommandAccepted = EventRegistry.define(
  "DeviceCommandAccepted",
  Schema.Struct({ ...request, command: Schema.String })
)

// ---------------------------------------------------------------------------------------
// Outcomes common to every operation

/** A local rule refused the operation: no request left. */
export const OperationRefused = EventRegistry.define(
  "OperationRefused",
  Schema.Struct({
    ...request,
    operation: Operation,
    error: Schema.String,
    rule: Schema.String,
    message: Schema.String
  })
)
/** The service refused the request, or reconciliation showed it was not applied: nothing changed. */
export const OperationFailed = EventRegistry.define(
  "OperationFailed",
  Schema.Struct({ ...request, operation: Operation, error: Schema.String, message: Schema.String })
)
/**
 * The outcome could not be established (5xx and reconciliation inconclusive): the request
 * stays pending, so nothing that could move money twice is sent until it is resolved.
 */
export const OperationInDoubt = EventRegistry.define(
  "OperationInDoubt",
  Schema.Struct({ ...request, operation: Operation, message: Schema.String })
)

/** How an operator resolved a request in doubt: it was applied, or it was not. */
export const Resolution = Schema.Literal("applied", "notApplied")
/** @see Resolution */
export type Resolution = typeof Resolution.Type

/**
 * An operator resolved a request whose outcome stayed unknown (`OperationInDoubt`): who,
 * when, why, and what the status endpoint said if it was asked. The fold reads it as the
 * request's ending: `applied` as its approval (by `amount`, what it moved), `notApplied`
 * as nothing changed; the ledger books an applied one as the fact it stands for. Nothing is
 * deleted: the request and its doubt stay in the history.
 */
export const InDoubtResolved = EventRegistry.define(
  "InDoubtResolved",
  Schema.Struct({
    ...request,
    operation: Operation,
    resolution: Resolution,
    operator: Schema.String,
    reason: Schema.String,
    /** What the status endpoint said when the operator asked it (absent when not asked). */
    statusEndpoint: optional(Schema.String),
    /** What the applied request moved (a reversal without an amount: what it undid). */
    amount: optional(MoneyJson),
    /** An applied reversal: what it undid (a hold, a capture, the transaction). */
    target: optional(ReversalTarget),
    /** An applied tip adjustment: the tip it replaced, if one stood. */
    replaces: optional(MoneyJson),
    /** The original's terminal and merchant, on whose ledger row an applied request is booked. */
    ...onTerminal
  })
)

/** What an operator can do to a transaction from the console, the CLI or the intake (`OperatorActionRequested`). */
export const OperatorAction = Schema.Literal("refund", "reverse", "capture", "increase", "release", "tip")
/** @see OperatorAction */
export type OperatorAction = typeof OperatorAction.Type

/**
 * An operator (or a machine's bearer token: `via` says which) asked for an action on this
 * transaction, with their reason, before the operation was started: `requestId` is the
 * action's idempotency key (derived from the action, so a repeated request finds it and acts
 * once), `workflow` the operation started under it. It moves nothing: the operation's own
 * events say what became of it; the fold and the ledger pass over it.
 */
export const OperatorActionRequested = EventRegistry.define(
  "OperatorActionRequested",
  Schema.Struct({
    ...request,
    action: OperatorAction,
    operator: Schema.String,
    via: Schema.Literal("operator", "token"),
    reason: Schema.String,
    /** The amount asked (a refund, a capture, an increase, a tip, a partial reversal). */
    amount: optional(MoneyJson),
    /** The workflow started under `requestId` (`TerminalOperation`, `Reversal.Reverse` …). */
    workflow: Schema.String
  })
)

/**
 * A terminal operation on this guid ended without moving money (DECLINED, CANCELLED,
 * FAILED), as the log shows it (`TerminalOutcomeRecorder`): kept in `declined-<guid>`, apart
 * from the transactions' streams, so that an operation on it is refused at once, saying why.
 */
export const TransactionDeclined = EventRegistry.define(
  "TransactionDeclined",
  Schema.Struct({
    guid: Schema.String,
    operation: Schema.String,
    finStatus: Schema.String,
    at: Instant,
    serialNumber: optional(Schema.String),
    transactionReference: optional(Schema.String)
  })
)

/** What an operator asks of an execution: try it again (it charged nothing), or stop it. */
export const ExecutionAction = Schema.Literal("retry", "stop")
/** @see ExecutionAction */
export type ExecutionAction = typeof ExecutionAction.Type

/**
 * An operator (or a machine's bearer token) asked something of an execution, with who, why
 * and when, recorded in that execution's `execution-actions-<id>` stream (its timeline shows
 * it): a `retry` of one that ended without charging anything (the terminal unavailable, or
 * proved not charged), a `stop` of a terminal operation in flight. `requestId` is the key of
 * the execution started for it (`retry-<id>`: asked again, the same retry; a stop's key),
 * `started` that execution.
 */
export const ExecutionActionRequested = EventRegistry.define(
  "ExecutionActionRequested",
  Schema.Struct({
    ...request,
    action: ExecutionAction,
    /** The execution acted on. */
    of: Schema.String,
    /** The execution started for it (the retry, the stop). */
    started: Schema.String,
    operator: Schema.String,
    via: Schema.Literal("operator", "token"),
    reason: Schema.String,
    workflow: Schema.String
  })
)

/**
 * An operator resolved a terminal operation whose outcome stayed unknown (its payment
 * stream ended `OutcomeUnresolved`): who, when, why, what the status endpoint said if it
 * was asked, and — applied — what the gateway recorded (the guid from its report or the
 * status endpoint, the amount). Recorded in the execution's `execution-actions-<id>`
 * stream (`TerminalResolution`). The ledger books an applied one as the approval it stands
 * for (its operation's kind, as `PaymentAuthorised` would be), and the terminal outcome
 * recorder opens its transaction's history from it, so later operations can follow it;
 * `notApplied` moves nothing. Nothing in the payment stream is changed.
 */
export const TerminalOutcomeResolved = EventRegistry.define(
  "TerminalOutcomeResolved",
  Schema.Struct({
    ...request,
    /** The execution whose terminal operation ended unresolved. */
    executionId: Schema.String,
    /** The attempt that ended unresolved. */
    attemptId: Schema.String,
    /** The terminal operation (`sale`, `refund`, `preAuthorization` …). */
    operation: Schema.String,
    resolution: Resolution,
    operator: Schema.String,
    reason: Schema.String,
    /** What the status endpoint said when the operator asked it (absent when not asked). */
    statusEndpoint: optional(Schema.String),
    /** Applied: the gateway's guid of the transaction (its history opens under it). */
    guid: optional(Schema.String),
    /** Applied: what it moved (the amount asked, unless the operator said otherwise). */
    amount: optional(MoneyJson),
    terminalType: optional(Schema.String),
    transactionReference: optional(Schema.String),
    /** A linked operation's original (a refund's sale …). */
    originalTransactionId: optional(Schema.String),
    ...onTerminal
  })
)

/** Every lifecycle event. */
export const registry = EventRegistry.make(
  TransactionRecorded,
  PreAuthorizationOpened,
  HoldIncreaseRequested,
  HoldIncreased,
  HoldDecreaseRequested,
  HoldDecreased,
  CaptureRequested,
  PreAuthorizationCaptured,
  ReversalRequested,
  Reversed,
  RefundRequested,
  Refunded,
  TipAdjustmentRequested,
  TipAdjusted,
  TokenizationRequested,
  CardTokenized,
  MotoSaleRequested,
  MotoSaleApproved,
  MotoSaleDeclined,
  BatchCloseRequested,
  BatchClosed,
  DeviceCommandRequested,
  DeviceCommandAccepted,
  OperationRefused,
  OperationFailed,
  OperationInDoubt,
  InDoubtResolved,
  TransactionDeclined,
  OperatorActionRequested,
  ExecutionActionRequested,
  TerminalOutcomeResolved
)

/** A typed lifecycle event, before encoding. */
export type Event = EventRegistry.Event<(typeof registry.definitions)[number]>
/** A recorded lifecycle event, decoded. */
export type Decoded = EventRegistry.Decoded<(typeof registry.definitions)[number]>

/** The prefix of every transaction's stream (`transactionStream`). */
export const transactionStreamPrefix = "txn-"
/** The stream of a gateway transaction. */
export const transactionStream = (guid: string): string => `${transactionStreamPrefix}${guid}`
/** The stream of the operators' actions on an execution (`ExecutionActionRequested`). */
export const executionActionsStream = (executionId: string): string => `execution-actions-${executionId}`
/** The stream of what the log shows of a guid that moved no money (`TransactionDeclined`). */
export const declinedStream = (guid: string): string => `declined-${guid}`
/** The stream of a MOTO sale attempt, before the gateway gave it a guid. */
export const motoSaleStream = (transactionReference: string): string => `moto-sale-${transactionReference}`
/** The stream of a terminal's batches. */
export const batchStream = (serialNumber: string): string => `batch-${serialNumber}`
/** The stream of a device's commands. */
export const deviceStream = (serialNumber: string): string => `device-${serialNumber}`
