/**
 * @tillflow/core: the payments domain on the tillflow engine, in layers, each importing
 * only the layers below it (an ESLint rule keeps it so):
 *
 * - `model/`: the remote interface: schemas of every resource, `Money`, `Currency`, the
 *   remote errors, `RemoteApi` (the one contract the HTTP client and the simulator derive
 *   from) and the `TerminalCloud` port;
 * - `terminal/`: the payment protocol for operations sent to a terminal, with
 *   `TerminalOperations` as its front door;
 * - `lifecycle/`: the terminal-less operations, decided from a transaction's history;
 * - `projections/`: what is read back from the log (ledger, timelines, reports, metrics);
 * - `testing/`: scripted clouds for tests, exported from `@tillflow/core/testing` only.
 */

// The remote interface
export * as Accepted from "./model/Accepted.js"
export * as Balance from "./model/Balance.js"
export * as Batch from "./model/Batch.js"
export * as Billing from "./model/Billing.js"
export * as BypassOptions from "./model/BypassOptions.js"
export * as Credential from "./model/Credential.js"
export * as Currency from "./model/Currency.js"
export * as DeferredTokenization from "./model/DeferredTokenization.js"
export * as Device from "./model/Device.js"
export * as DeviceCommand from "./model/DeviceCommand.js"
export * as DeviceStatus from "./model/DeviceStatus.js"
export * as EftTimestamp from "./model/EftTimestamp.js"
export * as Enumerations from "./model/Enumerations.js"
export * as Identifiers from "./model/Identifiers.js"
export * as JsonLimits from "./model/JsonLimits.js"
export * as Metadata from "./model/Metadata.js"
export * as Money from "./model/Money.js"
export * as MoneyRemittanceOptions from "./model/MoneyRemittanceOptions.js"
export * as Personal from "./model/Personal.js"
export * as KeyWrapper from "./merchants/KeyWrapper.js"
export * as MerchantKeys from "./merchants/MerchantKeys.js"
export * as MerchantRegistry from "./merchants/MerchantRegistry.js"
export * as Moto from "./model/Moto.js"
export * as PreAuthorization from "./model/PreAuthorization.js"
export * as ReceiptRef from "./model/ReceiptRef.js"
export * as RemoteApi from "./model/RemoteApi.js"
export * as RemoteError from "./model/RemoteError.js"
export * as Reversal from "./model/Reversal.js"
export * as TerminalCloud from "./model/TerminalCloud.js"
export * as TipAdjustment from "./model/TipAdjustment.js"
export * as TipConfiguration from "./model/TipConfiguration.js"
export * as TransactionRequest from "./model/TransactionRequest.js"
export * as TransactionResult from "./model/TransactionResult.js"

// The payment protocol (operations sent to a terminal)
export * as CallbackRegistration from "./terminal/CallbackRegistration.js"
export * as PaymentEvents from "./terminal/PaymentEvents.js"
export * as LateResults from "./terminal/LateResults.js"
export * as OperationOutcome from "./terminal/OperationOutcome.js"
export * as PaymentProtocol from "./terminal/PaymentProtocol.js"
export * as ProtocolSettings from "./terminal/ProtocolSettings.js"
export * as Reconciliation from "./terminal/Reconciliation.js"
export * as RecoverySchedule from "./terminal/RecoverySchedule.js"
export * as ResultRedaction from "./terminal/ResultRedaction.js"
export * as TerminalOperations from "./terminal/TerminalOperations.js"
export * as LinkedOperationRules from "./terminal/LinkedOperationRules.js"

// Terminal-less lifecycles
export * as BatchWorkflow from "./lifecycle/BatchWorkflow.js"
export * as CaptureRules from "./lifecycle/CaptureRules.js"
export * as DeferredTokenizationWorkflow from "./lifecycle/DeferredTokenizationWorkflow.js"
export * as DeviceCommandWorkflow from "./lifecycle/DeviceCommandWorkflow.js"
export * as LifecycleError from "./lifecycle/LifecycleError.js"
export * as LifecycleEvent from "./lifecycle/LifecycleEvent.js"
export * as InDoubtResolution from "./lifecycle/InDoubtResolution.js"
export * as TerminalResolution from "./lifecycle/TerminalResolution.js"
export * as Lifecycles from "./lifecycle/Lifecycles.js"
export * as LinkedTerminalRules from "./lifecycle/LinkedTerminalRules.js"
export * as MotoRules from "./lifecycle/MotoRules.js"
export * as MoneyRules from "./lifecycle/MoneyRules.js"
export * as MotoWorkflow from "./lifecycle/MotoWorkflow.js"
export * as PolicyError from "./lifecycle/PolicyError.js"
export * as PreAuthorizationRules from "./lifecycle/PreAuthorizationRules.js"
export * as PreAuthorizationWorkflow from "./lifecycle/PreAuthorizationWorkflow.js"
export * as ReversalWorkflow from "./lifecycle/ReversalWorkflow.js"
export * as TerminalOutcomeRecorder from "./lifecycle/TerminalOutcomeRecorder.js"
export * as TipAdjustmentWorkflow from "./lifecycle/TipAdjustmentWorkflow.js"
export * as TransactionHistory from "./lifecycle/TransactionHistory.js"

// Read models of the log
export * as Conservation from "./projections/Conservation.js"
export * as EventCatalog from "./projections/EventCatalog.js"
export * as Ledger from "./projections/Ledger.js"
export * as LedgerFold from "./projections/LedgerFold.js"
export * as LedgerProjection from "./projections/LedgerProjection.js"
export * as LogMetrics from "./projections/LogMetrics.js"
export * as TerminalLessOutcomes from "./projections/TerminalLessOutcomes.js"
export * as OperationReport from "./projections/OperationReport.js"
export * as OperationTimeline from "./projections/OperationTimeline.js"
export * as Timeline from "./projections/Timeline.js"

/** @deprecated Renamed `PaymentEvents`: the events of the `payment-<executionId>` stream. */
export * as DomainEvents from "./terminal/PaymentEvents.js"

// The engine's modules, re-exported so that code written against `@tillflow/core` before the
// engine became its own package keeps compiling. New code imports them from `@tillflow/engine`.
export {
  DurableEngine,
  EngineEvent,
  EngineWorker,
  EventRegistry,
  EventStore,
  ExecutionQueue,
  HashChain,
  MemoryEventStore,
  Redaction
} from "@tillflow/engine"
