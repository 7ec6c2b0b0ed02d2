/**
 * Every event type the payments domain stores, by registry: what a reader of the whole log
 * (an audit, a replay, the golden-file tests that pin each type's stored form) needs to
 * know to decode any business event, whichever path wrote it. The engine's own events are
 * `EngineEvent`'s. A registry is named for the streams it writes; one type name may appear
 * in two registries with two schemas (`CardTokenized` of a payment stream and of a
 * transaction's), so an event is decoded by the registry of its stream, never by type alone.
 */
import * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as TerminalOutcomeRecorder from "../lifecycle/TerminalOutcomeRecorder.js"
import * as MerchantKeys from "../merchants/MerchantKeys.js"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
import * as CallbackRegistration from "../terminal/CallbackRegistration.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import * as LedgerProjection from "./LedgerProjection.js"

/** The projections' own bookkeeping: ledger snapshots and the terminal-outcome recorder's checkpoint. */
export const projectionEvents = EventRegistry.make(
  LedgerProjection.LedgerSnapshotted,
  TerminalOutcomeRecorder.OutcomesRecordedUpTo
)

/** One registry of the catalogue and the streams its events are appended to. */
export interface Entry {
  readonly name: string
  readonly streams: string
  readonly registry: EventRegistry.Registry<EventRegistry.Any>
}

/** The registries of every event core stores. */
export const registries: ReadonlyArray<Entry> = [
  { name: "payment", streams: "payment-<executionId>", registry: PaymentEvents.events },
  {
    name: "attempt",
    streams: `attempt-<attemptId> and ${CallbackRegistration.securityStream}`,
    registry: CallbackRegistration.events
  },
  {
    name: "lifecycle",
    streams: "txn-<guid>, moto-sale-<reference>, batch-<serial>, device-<serial>",
    registry: LifecycleEvent.registry
  },
  {
    name: "projection",
    streams: `${LedgerProjection.snapshotStream} and ${TerminalOutcomeRecorder.checkpointStream}`,
    registry: projectionEvents
  },
  { name: "merchant", streams: "merchant-<merchantId>", registry: MerchantKeys.events }
]
