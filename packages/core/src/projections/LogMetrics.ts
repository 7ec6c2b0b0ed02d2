/**
 * Operational metrics read from the event log, as Effect `Metric`s: outcomes, latency and
 * tillflow's own share of the latency per operation, reconciliation checks by verdict,
 * callback deliveries by result, result mismatches. `initialize` makes each series exist
 * at zero from the start, so a rate over the first increment is not lost. Because they are computed from the shared log, every process that observes
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
import * as Enumerations from "../model/Enumerations.js"
import * as Money from "../model/Money.js"
import * as RemoteError from "../model/RemoteError.js"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Reconciliation from "../terminal/Reconciliation.js"
import * as CallbackRegistration from "../terminal/CallbackRegistration.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import * as TerminalLessOutcomes from "./TerminalLessOutcomes.js"
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

/**
 * Seconds tillflow adds to a terminal operation beyond the terminal's own time, by
 * operation: from the request to its first POST (recording, queueing, registering the
 * attempt), plus from the result's receipt by callback to the recorded outcome. The
 * terminal's time (from the POST to its result, busy retries included) is not in it; by
 * polling, the result is taken as received when the outcome is recorded.
 */
export const overhead = Metric.histogram(
  "tillflow_operation_overhead_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "seconds tillflow adds to a terminal operation beyond the terminal's own time (request to first POST, plus result received to outcome recorded)"
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

/**
 * Every series of these metrics at zero, for each value its labels can take (operations
 * and endings, verdicts, reasons, results): present from the first scrape, as Prometheus
 * expects, instead of appearing with their first increment. Idempotent.
 */
export const initialize: Effect.Effect<void> = Effect.suspend(() => {
  const operations = Enumerations.OperationType.literals
  // Reading a metric registers it (at zero) in the registry the exporter reads.
  const touch = <Type, In, Out>(metric: Metric.Metric<Type, In, Out>): Effect.Effect<Out> =>
    Metric.value(metric)
  return Effect.all(
    [
      ...operations.flatMap((operation) => [
        ...Array.from(ended, (ending) =>
          touch(Metric.tagged(Metric.tagged(outcomes, "operation", operation), "outcome", ending))
        ),
        touch(Metric.tagged(latency, "operation", operation)),
        touch(Metric.tagged(overhead, "operation", operation))
      ]),
      ...Reconciliation.Verdict.literals.map((verdict) =>
        touch(Metric.tagged(reconciliations, "verdict", verdict))
      ),
      ...[...RemoteError.UnknownReason.literals, "Interrupted"].map((reason) =>
        touch(Metric.tagged(unknownOutcomes, "reason", reason))
      ),
      ...[
        "recorded",
        "late",
        "undecodable",
        ...CallbackRegistration.RefusalReason.literals.map((reason) => `refused:${reason}`)
      ].map((result) => touch(Metric.tagged(callbackDeliveries, "result", result))),
      touch(mismatches),
      TerminalLessOutcomes.initialize
    ],
    { discard: true }
  )
})

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
 * execution, operation, terminal, amount and outcome, no card data; terminal-less
 * operations too (`TerminalLessOutcomes`).
 */
export const makeObserver = (options: { readonly since: number }): Effect.Effect<Observer> =>
  Effect.sync(() => {
    const requested = new Map<string, Requested>()
    // For the overhead: the first POST of each operation, each attempt's operation, the result's receipt.
    const firstSent = new Map<string, number>()
    const streamOfAttempt = new Map<string, string>()
    const resultReceived = new Map<string, number>()
    const observe = (event: EventStore.RecordedEvent): Effect.Effect<void> =>
      Effect.suspend(() => {
        // A terminal-less operation's end (a deferred tokenization's CardTokenized is not a
        // terminal's): its own line and counter.
        if (TerminalLessOutcomes.isEnding(event))
          return event.recordedAt.epochMillis >= options.since
            ? TerminalLessOutcomes.observe(event)
            : Effect.void
        const data = event.data
        if (event.type === PaymentEvents.OperationRequested.type) {
          requested.set(event.streamId, requestedOf(data))
          return Effect.void
        }
        if (event.type === CallbackRegistration.AttemptRegistered.type) {
          const stream = text(field(data, "paymentStream"))
          const attemptId = text(field(data, "attemptId"))
          const at = field(data, "registeredAt")
          if (stream !== undefined && attemptId !== undefined && requested.has(stream)) {
            streamOfAttempt.set(attemptId, stream)
            if (!firstSent.has(stream) && typeof at === "number") firstSent.set(stream, at)
          }
          return Effect.void
        }
        if (event.type === CallbackRegistration.ResultReceived.type) {
          const stream = streamOfAttempt.get(text(field(data, "attemptId")) ?? "")
          if (stream !== undefined && !resultReceived.has(stream)) {
            resultReceived.set(stream, event.recordedAt.epochMillis)
          }
        }
        const fresh = event.recordedAt.epochMillis >= options.since
        if (ended.has(event.type)) {
          const origin = requested.get(event.streamId)
          const sentAt = firstSent.get(event.streamId)
          const receivedAt = resultReceived.get(event.streamId)
          requested.delete(event.streamId)
          firstSent.delete(event.streamId)
          resultReceived.delete(event.streamId)
          for (const [attemptId, stream] of streamOfAttempt) {
            if (stream === event.streamId) streamOfAttempt.delete(attemptId)
          }
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
            requestedAt !== undefined &&
            sentAt !== undefined &&
            typeof at === "number" &&
            PaymentEvents.outcomeTypes.includes(event.type)
              ? Metric.update(
                  Metric.tagged(overhead, "operation", operation),
                  (Math.max(0, sentAt - requestedAt) + Math.max(0, at - (receivedAt ?? at))) / 1000
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
