/**
 * One sample (or more, where a type stores in several forms) of every event type in
 * `EventCatalog`, written as typed values and encoded by the registry that stores them. The
 * golden files under `packages/core/test/goldens/<registry>` are these samples' stored
 * forms (`EventGoldens` of `@tillflow/engine/testing`): a change to a schema that changes
 * what is stored fails the golden test, and a type added to a registry without a sample
 * here fails it too. Values look like what the payment paths write (integer minor units,
 * masked cards, ISO instants), and hold nothing secret.
 */
import * as EventRegistry from "@tillflow/engine/EventRegistry"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
import * as TerminalOutcomeRecorder from "../lifecycle/TerminalOutcomeRecorder.js"
import * as Money from "../model/Money.js"
import * as EventCatalog from "../projections/EventCatalog.js"
import * as LedgerProjection from "../projections/LedgerProjection.js"
import * as MerchantKeys from "../merchants/MerchantKeys.js"
import * as CallbackRegistration from "../terminal/CallbackRegistration.js"
import type * as OperationOutcome from "../terminal/OperationOutcome.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"

/** A sample: the registry's name, a variant name when a type has several, the encoded event. */
export interface Sample {
  readonly registry: string
  readonly variant?: string | undefined
  readonly event: EventStore.NewEvent
}

const eur = (minor: bigint) => Money.make(minor, "EUR")
const ms = 1_732_442_400_000
const at = DateTime.unsafeMake("2024-11-24T10:00:00.000Z")
const later = DateTime.unsafeMake("2024-11-24T10:05:00.000Z")
const executionId = "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f"
const attemptId = "attempt-7d2e9b1c-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
const reference = "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"
const guid = "01236fc0-8192-11eb-9aca-ad4b0e95f241"
const serialNumber = "0821032398"
const requestId = "req-5b7c9d1e-2f3a-4b5c-8d6e-7f8091a2b3c4"

const facts: OperationOutcome.Facts = {
  operation: "sale",
  serialNumber,
  terminalType: "ANDROID",
  attempt: 1,
  attemptId,
  transactionReference: reference,
  originalTransactionId: guid,
  finStatus: "AUTHORISED",
  source: "callback",
  requestedAmount: eur(1050n),
  totalAmount: eur(1250n),
  tipAmount: eur(200n),
  dueAmount: eur(0n),
  maskedCardNumber: "476173******0119",
  cardSchemeName: "VISA",
  cardToken: "tok_9c1d2e3f4a5b",
  authorisationCode: "A1B2C3",
  issuerResponseCode: "00",
  efttransactionID: guid,
  transactionType: "SALE",
  rrn: "431012345678",
  mid: "merchant-1",
  tid: "T0821032",
  merchantName: "Hotel Example",
  customerReference: "order-1042",
  errorMessage: "",
  statusMessage: "Approved",
  recovered: false
}

/** The least an outcome's facts hold (every optional field absent). */
const bareFacts: OperationOutcome.Facts = {
  operation: "pingDevice",
  serialNumber,
  terminalType: "ANDROID",
  attempt: 1,
  attemptId,
  finStatus: "PROCESSED",
  source: "polling"
}

const of =
  <D extends EventRegistry.Any>(registry: string, events: EventRegistry.Registry<D>) =>
  (event: EventRegistry.Event<D>, variant?: string): Effect.Effect<Sample, EventRegistry.EventCodecError> =>
    Effect.map(events.encode(event), (encoded) => ({
      registry,
      ...(variant === undefined ? {} : { variant }),
      event: encoded
    }))

const payment = of("payment", PaymentEvents.events)
const attempt = of("attempt", CallbackRegistration.events)
const lifecycle = of("lifecycle", LifecycleEvent.registry)
const projection = of("projection", EventCatalog.projectionEvents)
const merchant = of("merchant", MerchantKeys.events)

const attemptFields = { attempt: 1, attemptId, at: ms }

const paymentSamples = [
  payment(
    PaymentEvents.OperationRequested.make({
      executionId,
      operation: "sale",
      serialNumber,
      terminalType: "ANDROID",
      amount: eur(1050n),
      originalTransactionId: guid,
      originalTransactionReference: reference,
      customerReference: "order-1042",
      delivery: "callback",
      requestedAt: ms,
      deadlineAt: ms + 120_000,
      at: ms
    })
  ),
  payment(
    PaymentEvents.OperationRequested.make({
      executionId,
      operation: "pingDevice",
      serialNumber,
      terminalType: "ANDROID",
      delivery: "polling",
      requestedAt: ms,
      deadlineAt: ms + 120_000,
      at: ms
    }),
    "minimal"
  ),
  payment(PaymentEvents.AttemptRecorded.make({ ...attemptFields, transactionReference: reference })),
  payment(
    PaymentEvents.AttemptAccepted.make({
      ...attemptFields,
      transactionResultId: `${serialNumber}-1628774190395`
    })
  ),
  payment(
    PaymentEvents.AttemptNotProcessed.make({
      ...attemptFields,
      reason: "DeviceBusy",
      message: "the terminal is busy with another transaction"
    })
  ),
  payment(
    PaymentEvents.AttemptOutcomeUnknown.make({
      ...attemptFields,
      reason: "Timeout",
      message: "no answer within 30 seconds"
    })
  ),
  payment(
    PaymentEvents.ReconciliationChecked.make({
      ...attemptFields,
      verdict: "Settled",
      finStatus: "AUTHORISED",
      detail: "one entry"
    })
  ),
  payment(PaymentEvents.AttemptNotCharged.make({ ...attemptFields, transactionReference: reference })),
  payment(
    PaymentEvents.OperationRejected.make({
      ...attemptFields,
      error: "ValidationFailed",
      status: 422,
      message: "VALIDATION_FAILED: currency"
    })
  ),
  payment(
    PaymentEvents.TerminalUnavailable.make({
      attempts: 4,
      lastReason: "DeviceOffline",
      deadlineAt: ms + 120_000,
      at: ms + 120_000
    })
  ),
  payment(
    PaymentEvents.OutcomeUnresolved.make({
      ...attemptFields,
      message: "no result and no reference to reconcile with",
      reason: "NoReference"
    })
  ),
  payment(PaymentEvents.PaymentAuthorised.make({ facts, at: ms })),
  payment(
    PaymentEvents.PaymentPartiallyApproved.make({
      facts: { ...facts, finStatus: "PARTIAL_APPROVAL", totalAmount: eur(700n), dueAmount: eur(350n) },
      at: ms
    })
  ),
  payment(
    PaymentEvents.PaymentDeclined.make({
      facts: { ...facts, finStatus: "DECLINED", issuerResponseCode: "05" },
      at: ms
    })
  ),
  payment(PaymentEvents.PaymentCancelled.make({ facts: { ...facts, finStatus: "CANCELLED" }, at: ms })),
  payment(PaymentEvents.PaymentFailed.make({ facts: { ...facts, finStatus: "FAILED" }, at: ms })),
  payment(PaymentEvents.ReceiptPrinted.make({ facts: { ...bareFacts, operation: "printReceipt" }, at: ms })),
  payment(
    PaymentEvents.CardTokenized.make({
      facts: { ...facts, operation: "saleAndTokenizeCard" },
      at: ms
    })
  ),
  payment(PaymentEvents.DevicePinged.make({ facts: bareFacts, at: ms })),
  payment(
    PaymentEvents.CardPanRead.make({
      facts: { ...bareFacts, operation: "cardPan", maskedCardNumber: "476173******0119" },
      at: ms
    })
  ),
  payment(
    PaymentEvents.PaymentNotCharged.make({ ...attemptFields, transactionReference: reference, attempts: 2 })
  ),
  payment(PaymentEvents.StopAccepted.make({ serialNumber, at: ms })),
  payment(
    PaymentEvents.StopRefused.make({ serialNumber, message: "1003: the step cannot be cancelled", at: ms })
  ),
  payment(
    PaymentEvents.LateResultRecorded.make({
      attemptId,
      resultHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      finStatus: "AUTHORISED",
      recovered: true,
      at: ms
    })
  ),
  payment(
    PaymentEvents.ResultMismatch.make({
      attemptId,
      recorded: "NOT_CHARGED",
      received: "AUTHORISED",
      resultHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      source: "callback",
      at: ms
    })
  )
]

const attemptSamples = [
  attempt(
    CallbackRegistration.AttemptRegistered.make({
      attemptId,
      attempt: 1,
      workflowName: "TerminalOperation",
      executionId,
      paymentStream: PaymentEvents.paymentStream(executionId),
      deferredName: `result/${attemptId}`,
      operation: "sale",
      serialNumber,
      transactionReference: reference,
      delivery: "callback",
      tokenHash: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
      registeredAt: ms
    })
  ),
  attempt(
    CallbackRegistration.ResultReceived.make({
      attemptId,
      resultHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      finStatus: "AUTHORISED",
      recovered: false,
      result: {
        finStatus: "AUTHORISED",
        transactionReference: reference,
        totalAmount: 1250,
        efttimestamp: 1_615_374_961_000,
        maskedCardNumber: "476173******0119",
        balance: null,
        mid: ""
      },
      redactedFields: ["unMaskedPan"],
      receivedAt: ms
    })
  ),
  attempt(
    CallbackRegistration.ResultUndecodable.make({
      attemptId,
      resultHash: "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752",
      reason: "finStatus: is missing",
      raw: { status: "weird", nested: [1, "two"] },
      redactedFields: [],
      receivedAt: ms
    })
  ),
  attempt(
    CallbackRegistration.CallbackRefused.make({
      attemptId,
      reason: "WrongToken",
      remoteAddress: "203.0.113.7",
      at: ms
    })
  )
]

const request = { requestId, at }
const onTerminal = { serialNumber }

const lifecycleSamples = [
  lifecycle(
    LifecycleEvent.TransactionRecorded.make({
      guid,
      kind: "sale",
      amount: eur(1050n),
      at,
      transactionReference: reference,
      serialNumber,
      terminalType: "ANDROID",
      batchNumber: "17",
      originalGuid: "a2f4c6e8-8192-11eb-9aca-ad4b0e95f241"
    })
  ),
  lifecycle(
    LifecycleEvent.PreAuthorizationOpened.make({
      guid,
      via: "preAuthorization",
      amount: eur(20_000n),
      at,
      scheme: "JCB",
      mcc: "7011",
      tenderType: "CREDIT",
      transactionReference: reference,
      serialNumber,
      terminalType: "ANDROID",
      batchNumber: "17",
      stayEndsAt: DateTime.unsafeMake("2024-11-28T11:00:00.000Z")
    })
  ),
  lifecycle(LifecycleEvent.HoldIncreaseRequested.make({ ...request, delta: eur(5_000n), tip: eur(500n) })),
  lifecycle(
    LifecycleEvent.HoldIncreased.make({
      ...request,
      ...onTerminal,
      delta: eur(5_000n),
      tip: eur(500n),
      hold: eur(25_500n),
      gatewayGuid: "b3e5d7f9-8192-11eb-9aca-ad4b0e95f241",
      reconciled: false
    })
  ),
  lifecycle(LifecycleEvent.HoldDecreaseRequested.make({ ...request, delta: eur(1_000n) })),
  lifecycle(
    LifecycleEvent.HoldDecreased.make({
      ...request,
      ...onTerminal,
      delta: eur(1_000n),
      hold: eur(24_500n),
      gatewayGuid: "c4f6e8a0-8192-11eb-9aca-ad4b0e95f241",
      reconciled: true
    })
  ),
  lifecycle(
    LifecycleEvent.CaptureRequested.make({
      ...request,
      amount: eur(24_000n),
      tip: eur(500n),
      total: eur(24_500n),
      limit: eur(28_175n),
      rule: "JCB lodging: the stay, 15%",
      warnings: ["CaptureOverTolerance"]
    })
  ),
  lifecycle(
    LifecycleEvent.PreAuthorizationCaptured.make({
      ...request,
      ...onTerminal,
      total: eur(24_500n),
      captureGuid: "d5a7b9c1-8192-11eb-9aca-ad4b0e95f241",
      reconciled: false
    })
  ),
  lifecycle(
    LifecycleEvent.ReversalRequested.make({
      ...request,
      endpoint: "reversal",
      target: "capture",
      amount: eur(500n),
      messageReasonCode: "4000"
    })
  ),
  lifecycle(
    LifecycleEvent.Reversed.make({
      ...request,
      ...onTerminal,
      target: "capture",
      amount: eur(500n),
      gatewayGuid: "e6b8c0d2-8192-11eb-9aca-ad4b0e95f241",
      reconciled: false
    })
  ),
  lifecycle(LifecycleEvent.RefundRequested.make({ ...request, amount: eur(300n) })),
  lifecycle(
    LifecycleEvent.Refunded.make({
      ...request,
      ...onTerminal,
      amount: eur(300n),
      refundGuid: "f7c9d1e3-8192-11eb-9aca-ad4b0e95f241",
      reconciled: true
    })
  ),
  lifecycle(LifecycleEvent.TipAdjustmentRequested.make({ ...request, tip: eur(250n) })),
  lifecycle(
    LifecycleEvent.TipAdjusted.make({ ...request, ...onTerminal, tip: eur(250n), replaces: eur(200n) })
  ),
  lifecycle(LifecycleEvent.TokenizationRequested.make(request)),
  lifecycle(
    LifecycleEvent.CardTokenized.make({
      ...request,
      cardToken: "tok_9c1d2e3f4a5b",
      cardTokenizationGuid: "a8d0e2f4-8192-11eb-9aca-ad4b0e95f241",
      maskedCardNumber: "476173******0119"
    })
  ),
  lifecycle(
    LifecycleEvent.MotoSaleRequested.make({
      ...request,
      transactionReference: reference,
      amount: eur(4_200n),
      cardToken: "tok_9c1d2e3f4a5b",
      customerReference: "order-1043",
      serialNumber: "VIRTUAL-1"
    })
  ),
  lifecycle(
    LifecycleEvent.MotoSaleApproved.make({
      ...request,
      guid,
      amount: eur(4_200n),
      approvalCode: "A1B2C3",
      serialNumber: "VIRTUAL-1",
      reconciled: false
    })
  ),
  lifecycle(
    LifecycleEvent.MotoSaleDeclined.make({
      ...request,
      finStatus: "DECLINED",
      reason: "issuer response 05",
      reconciled: false,
      serialNumber: "VIRTUAL-1"
    })
  ),
  lifecycle(LifecycleEvent.BatchCloseRequested.make({ ...request, batchNumber: "17" })),
  lifecycle(LifecycleEvent.BatchClosed.make({ ...request, at: later, batchNumber: "17", reconciled: true })),
  lifecycle(
    LifecycleEvent.DeviceCommandRequested.make({
      ...request,
      command: "setVolume",
      body: { volume: 7, muted: false, mode: "loud" }
    })
  ),
  lifecycle(LifecycleEvent.DeviceCommandAccepted.make({ ...request, command: "setVolume" })),
  lifecycle(
    LifecycleEvent.OperationRefused.make({
      ...request,
      operation: "capture",
      error: "CaptureAlreadyDone",
      rule: "captureOnce",
      message: "the pre-authorization was captured already"
    })
  ),
  lifecycle(
    LifecycleEvent.OperationFailed.make({
      ...request,
      operation: "tipAdjustment",
      error: "GatewayRejected",
      message: "Invalid guid"
    })
  ),
  lifecycle(
    LifecycleEvent.OperationInDoubt.make({
      ...request,
      operation: "reversal",
      message: "503 and reconciliation inconclusive"
    })
  ),
  lifecycle(
    LifecycleEvent.InDoubtResolved.make({
      ...request,
      operation: "capture",
      resolution: "applied",
      operator: "alice",
      reason: "the acquirer's settlement report shows the capture",
      statusEndpoint: "PRE_AUTHORIZATION_CAPTURE AUTHORISED",
      amount: Money.make(9000n, "EUR"),
      serialNumber: "0821032398",
      merchant: "MID-7"
    })
  ),
  lifecycle(
    LifecycleEvent.OperatorActionRequested.make({
      ...request,
      requestId: "action-refund-5d41402abc4b2a76b9719d911017c592",
      action: "refund",
      operator: "ana",
      via: "operator",
      reason: "the customer returned the goods",
      amount: Money.make(1500n, "EUR"),
      workflow: "TerminalOperation"
    })
  ),
  lifecycle(
    LifecycleEvent.ExecutionActionRequested.make({
      ...request,
      requestId: "retry-6a0ea39282599f7cbba0680372c3fe3e",
      action: "retry",
      of: "6a0ea39282599f7cbba0680372c3fe3e",
      started: "732e6202e89ecac593c44e74bff213cc",
      operator: "ana",
      via: "operator",
      reason: "the terminal is back online",
      workflow: "TerminalOperation"
    })
  ),
  lifecycle(
    LifecycleEvent.TerminalOutcomeResolved.make({
      ...request,
      requestId: "resolve-6a0ea392-1",
      executionId: "6a0ea39282599f7cbba0680372c3fe3e",
      attemptId: "6a0ea392-1",
      operation: "sale",
      resolution: "applied",
      operator: "ana",
      reason: "the terminal's journal shows the sale approved",
      statusEndpoint: "SALE AUTHORISED",
      guid: "4f8e2a10-9c1b-4d7e-8a5f-2b3c4d5e6f70",
      amount: Money.make(1050n, "EUR"),
      terminalType: "PAX",
      transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
      serialNumber: "0821032398"
    })
  ),
  lifecycle(
    LifecycleEvent.TransactionDeclined.make({
      guid: "4f8e2a10-9c1b-4d7e-8a5f-2b3c4d5e6f70",
      operation: "sale",
      finStatus: "DECLINED",
      at: DateTime.unsafeMake("2026-03-01T10:00:00.000Z"),
      serialNumber: "0821032398",
      transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"
    })
  )
]

const projectionSamples = [
  projection(
    LedgerProjection.LedgerSnapshotted.make({
      checkpoint: { transactionId: 7_421n, globalPosition: 1_204n },
      eventsRead: 1_204,
      entries: 3,
      undecodable: ["payment-0f1e2d3c4b5a69788796a5b4c3d2e1f0/4"],
      rows: [
        {
          day: "2024-11-24",
          terminal: serialNumber,
          merchant: "merchant-1",
          currency: "EUR",
          tallies: {
            sale: { count: 2, amount: 2_100n },
            refund: { count: 0, amount: 0n },
            reversal: { count: 0, amount: 0n },
            refundReversal: { count: 0, amount: 0n },
            preAuthorization: { count: 1, amount: 20_000n },
            increase: { count: 0, amount: 0n },
            release: { count: 0, amount: 0n },
            capture: { count: 0, amount: 0n },
            decline: { count: 1, amount: 3_784n },
            tip: { count: 1, amount: 200n }
          }
        }
      ]
    })
  ),
  projection(
    TerminalOutcomeRecorder.OutcomesRecordedUpTo.make({ transactionId: 7_421n, globalPosition: 1_204n })
  )
]

/** Every sample, by registry (`EventCatalog.registries` names). */
const merchantSamples = [
  merchant(
    MerchantKeys.MerchantKeyRefused.make({
      merchant: "cafe-sol",
      keyId: "key-3f9a1c07d2b84e65",
      endpoint: "sendTransaction",
      executionId: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
      at: ms
    }),
    "in-an-execution"
  ),
  merchant(
    MerchantKeys.MerchantKeyRefused.make({
      merchant: "cafe-sol",
      keyId: "key-3f9a1c07d2b84e65",
      endpoint: "listDevices",
      at: ms
    }),
    "outside-an-execution"
  )
]

export const samples: Effect.Effect<ReadonlyArray<Sample>, EventRegistry.EventCodecError> = Effect.all([
  ...paymentSamples,
  ...attemptSamples,
  ...lifecycleSamples,
  ...projectionSamples,
  ...merchantSamples
])
