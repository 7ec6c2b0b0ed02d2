/**
 * Operational metrics read from the event log, as Effect `Metric`s: outcomes and latency
 * per operation, reconciliation checks by verdict, callback deliveries by result, result
 * mismatches. Because they are computed from the shared log, every process that observes
 * it counts the work of every worker: scrape any one of them. An exporter (the worker's
 * Prometheus endpoint) reads them from Effect's metric registry.
 *
 * @example
 * const observer = yield* LogMetrics.makeObserver({ since: startedAt })
 * yield* Stream.runForEach(store.subscribe(from), observer.observe)
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Money from "../model/Money.js"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as CallbackRegistration from "../terminal/CallbackRegistration.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import type * as EventStore from "@tillflow/engine/EventStore"

/** Terminal operations that ended, by operation and outcome event type. */
export const outcomes = Metric.counter("tillflow_operation_outcomes_total", {
  description: "terminal operations that reached an outcome or ended without one, by operation and outcome",
  incremental: true
})

/** Seconds from the request to the outcome, by operation. */
export const latency = Metric.histogram(
  "tillflow_operation_latency_seconds",
  MetricBoundaries.fromIterable([0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900]),
  "seconds from the request to the outcome of a terminal operation"
)

/** Status endpoint checks during reconciliation, by verdict. */
export const reconciliations = Metric.counter("tillflow_reconciliation_checks_total", {
  description: "status endpoint checks made to reconcile an unknown outcome, by verdict",
  incremental: true
})

/** Attempts whose outcome was unknown after the POST (timeouts, 5xx, network). */
export const unknownOutcomes = Metric.counter("tillflow_unknown_outcomes_total", {
  description: "attempts whose outcome was unknown after sending (then reconciled)",
  incremental: true
})

/** Callback deliveries by result: recorded, late, undecodable, refused (with its reason). */
export const callbackDeliveries = Metric.counter("tillflow_callback_deliveries_total", {
  description: "results delivered to the callback receiver, by what became of them",
  incremental: true
})

/** Results that disagree with the recorded outcome: each one needs a human. */
export const mismatches = Metric.counter("tillflow_result_mismatches_total", {
  description: "delivered results that disagree with the recorded outcome",
  incremental: true
})

const ended = new Set([
  ...PaymentEvents.outcomeTypes,
  PaymentEvents.PaymentNotCharged.type,
  PaymentEvents.OperationRejected.type,
  PaymentEvents.TerminalUnavailable.type,
  PaymentEvents.OutcomeUnresolved.type
])

const field = (data: EventStore.Json, key: string): EventStore.Json | undefined =>
  typeof data === "object" && data !== null && !Array.isArray(data)
    ? (data as EventStore.JsonObject)[key]
    : undefined

const text = (value: EventStore.Json | undefined): string | undefined =>
  typeof value === "string" ? value : undefined

/** How each ending reads in the outcome's log line. */
const verdicts: Readonly<Record<string, string>> = {
  [PaymentEvents.PaymentAuthorised.type]: "approved",
  [PaymentEvents.PaymentPartiallyApproved.type]: "partially approved",
  [PaymentEvents.PaymentDeclined.type]: "declined",
  [PaymentEvents.PaymentCancelled.type]: "cancelled",
  [PaymentEvents.PaymentFailed.type]: "failed",
  [PaymentEvents.ReceiptPrinted.type]: "done",
  [PaymentEvents.CardTokenized.type]: "done",
  [PaymentEvents.DevicePinged.type]: "done",
  [PaymentEvents.CardPanRead.type]: "done",
  [PaymentEvents.PaymentNotCharged.type]: "not charged",
  [PaymentEvents.OperationRejected.type]: "rejected",
  [PaymentEvents.TerminalUnavailable.type]: "terminal unavailable",
  [PaymentEvents.OutcomeUnresolved.type]: "unresolved"
}

interface Requested {
  readonly executionId: string | undefined
  readonly operation: string
  readonly terminal: string | undefined
  readonly amount: Money.Money | undefined
  readonly at: number | undefined
}

const requestedOf = (data: EventStore.Json): Requested => ({
  executionId: text(field(data, "executionId")),
  operation: text(field(data, "operation")) ?? "unknown",
  terminal: text(field(data, "serialNumber")),
  amount: Option.getOrUndefined(decodeAmount(field(data, "amount"))),
  at: ((at) => (typeof at === "number" ? at : undefined))(field(data, "requestedAt"))
})

const decodeAmount = Schema.decodeUnknownOption(Money.FromMinorUnitsFields)

/**
 * The one INFO line of an operation's end: execution, operation, terminal, requested amount
 * (major units, as a string) and outcome. Never the facts themselves: they hold the masked
 * card number and a card token.
 */
const logOutcome = (
  event: EventStore.RecordedEvent,
  operation: string,
  origin: Requested | undefined
): Effect.Effect<void> => {
  const outcome = verdicts[event.type] ?? event.type
  const terminal = text(field(field(event.data, "facts") ?? null, "serialNumber")) ?? origin?.terminal
  const amount = origin?.amount
  // An unresolved outcome needs a person: it is the one ending logged as an ERROR (an
  // alert), with its reason and message.
  const unresolved = event.type === PaymentEvents.OutcomeUnresolved.type
  const reason = unresolved ? text(field(event.data, "reason")) : undefined
  const line = unresolved
    ? Effect.logError(
        `${operation} ${outcome}: ${text(field(event.data, "message")) ?? "the outcome is unknown"}; look at the terminal`
      )
    : Effect.logInfo(`${operation} ${outcome}`)
  return line.pipe(
    Effect.annotateLogs({
      ...(reason === undefined ? {} : { reason }),
      ...(origin?.executionId === undefined ? {} : { executionId: origin.executionId }),
      operation,
      ...(terminal === undefined ? {} : { terminal }),
      ...(amount === undefined
        ? {}
        : { amount: Money.toMajorUnitsString(amount), currency: amount.currency }),
      outcome,
      event: event.type,
      stream: event.streamId
    })
  )
}

/** Something that observes the log. */
export interface Observer {
  readonly observe: (event: EventStore.RecordedEvent) => Effect.Effect<void>
}

/**
 * An observer that counts events recorded at or after `since` (epoch ms): counters count
 * from the observer's start, as Prometheus expects of a process, even when it replays
 * older events. It remembers when each operation was requested to measure its latency.
 * Each operation that ends (at or after `since`) is also logged in one INFO line: its
 * execution, operation, terminal, amount and outcome, no card data.
 */
export const makeObserver = (options: { readonly since: number }): Effect.Effect<Observer> =>
  Effect.sync(() => {
    const requested = new Map<string, Requested>()
    const observe = (event: EventStore.RecordedEvent): Effect.Effect<void> =>
      Effect.suspend(() => {
        const data = event.data
        if (event.type === PaymentEvents.OperationRequested.type) {
          requested.set(event.streamId, requestedOf(data))
          return Effect.void
        }
        const fresh = event.recordedAt.epochMillis >= options.since
        if (ended.has(event.type)) {
          const origin = requested.get(event.streamId)
          requested.delete(event.streamId)
          if (!fresh) return Effect.void
          const facts = field(data, "facts")
          const operation = text(field(facts ?? null, "operation")) ?? origin?.operation ?? "unknown"
          const at = field(data, "at")
          const tagged = Metric.tagged(Metric.tagged(outcomes, "operation", operation), "outcome", event.type)
          const requestedAt = origin?.at
          return Effect.all([
            Metric.increment(tagged),
            requestedAt !== undefined &&
            typeof at === "number" &&
            PaymentEvents.outcomeTypes.includes(event.type)
              ? Metric.update(
                  Metric.tagged(latency, "operation", operation),
                  Math.max(0, at - requestedAt) / 1000
                )
              : Effect.void,
            // A tokenizing sale's second outcome event (its token) is no second ending.
            event.type === PaymentEvents.CardTokenized.type && operation === "saleAndTokenizeCard"
              ? Effect.void
              : logOutcome(event, operation, origin)
          ])
        }
        if (!fresh) return Effect.void
        switch (event.type) {
          case PaymentEvents.ReconciliationChecked.type:
            return Metric.increment(
              Metric.tagged(reconciliations, "verdict", text(field(data, "verdict")) ?? "unknown")
            )
          case PaymentEvents.AttemptOutcomeUnknown.type:
            return Metric.increment(
              Metric.tagged(unknownOutcomes, "reason", text(field(data, "reason")) ?? "unknown")
            )
          case CallbackRegistration.ResultReceived.type:
            return Metric.increment(Metric.tagged(callbackDeliveries, "result", "recorded"))
          case CallbackRegistration.ResultUndecodable.type:
            return Metric.increment(Metric.tagged(callbackDeliveries, "result", "undecodable"))
          case PaymentEvents.LateResultRecorded.type:
            return Metric.increment(Metric.tagged(callbackDeliveries, "result", "late"))
          case CallbackRegistration.CallbackRefused.type:
            return Metric.increment(
              Metric.tagged(
                callbackDeliveries,
                "result",
                `refused:${text(field(data, "reason")) ?? "unknown"}`
              )
            )
          case PaymentEvents.ResultMismatch.type:
            return Metric.increment(mismatches)
          default:
            return Effect.void
        }
      })
    return { observe }
  })
