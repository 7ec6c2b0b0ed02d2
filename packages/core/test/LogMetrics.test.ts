import { describe, expect, it } from "@effect/vitest"
import { LifecycleEvent, LogMetrics, Money, TerminalLessOutcomes } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"

const t0 = Date.UTC(2026, 2, 1, 10, 0, 0)
let position = 0n

/** An event as the log hands it to an observer, recorded at `recordedAt` (epoch ms). */
const event = (streamId: string, type: string, data: Record<string, unknown>, recordedAt: number) => {
  position += 1n
  return new EventStore.RecordedEvent({
    streamId,
    version: 1,
    globalPosition: position,
    transactionId: position,
    eventId: globalThis.crypto.randomUUID(),
    type,
    schemaVersion: 1,
    data: data as EventStore.Json,
    metadata: {},
    recordedAt: DateTime.unsafeMake(recordedAt),
    hash: "0"
  })
}

/** One operation's events: requested at t0, first POST at t0 + 40 ms, the terminal's result at t0 + 5 s. */
const operation = (id: string, operation: string, options: { readonly callback: boolean }) => {
  const stream = `payment-${id}`
  const attemptId = `attempt-${id}`
  return [
    event(
      stream,
      "OperationRequested",
      { executionId: id, operation, serialNumber: "T1", requestedAt: t0, at: t0 + 2 },
      t0 + 2
    ),
    event(stream, "AttemptRecorded", { attempt: 1, attemptId, at: t0 + 30 }, t0 + 30),
    event(
      `callback-${attemptId}`,
      "AttemptRegistered",
      { attemptId, paymentStream: stream, registeredAt: t0 + 40 },
      t0 + 40
    ),
    event(stream, "AttemptAccepted", { attempt: 1, attemptId, at: t0 + 300 }, t0 + 300),
    ...(options.callback
      ? [event(`callback-${attemptId}`, "ResultReceived", { attemptId, recovered: false }, t0 + 5_000)]
      : []),
    event(
      stream,
      "PaymentAuthorised",
      { facts: { operation, serialNumber: "T1" }, at: t0 + 5_015 },
      t0 + 5_016
    )
  ]
}

describe("LogMetrics: tillflow's share of an operation's time", () => {
  it.effect(
    "the overhead is the request to the first POST plus the result's receipt to the outcome, not the terminal's time",
    () =>
      Effect.gen(function* () {
        const overhead = Metric.tagged(LogMetrics.overhead, "operation", "refund")
        const latency = Metric.tagged(LogMetrics.latency, "operation", "refund")
        const before = { overhead: yield* Metric.value(overhead), latency: yield* Metric.value(latency) }
        const observer = yield* LogMetrics.makeObserver({ since: 0 })
        yield* Effect.forEach(operation("o1", "refund", { callback: true }), observer.observe, {
          discard: true
        })
        const after = yield* Metric.value(overhead)
        expect(after.count - before.overhead.count).toBe(1)
        // 40 ms to the POST, 15 ms from the result to the outcome; the terminal's 4.96 s left out.
        expect(after.sum - before.overhead.sum).toBeCloseTo(0.055, 6)
        expect((yield* Metric.value(latency)).sum - before.latency.sum).toBeCloseTo(5.015, 6)

        // By polling the result's receipt is not in the log: only the time to the POST counts.
        yield* Effect.forEach(operation("o2", "refund", { callback: false }), observer.observe, {
          discard: true
        })
        const polled = yield* Metric.value(overhead)
        expect(polled.count - after.count).toBe(1)
        expect(polled.sum - after.sum).toBeCloseTo(0.04, 6)
      })
  )
})

describe("LogMetrics.initialize", () => {
  it.effect("every documented series exists at zero before anything is counted", () =>
    Effect.gen(function* () {
      yield* LogMetrics.initialize
      const names = new Map<string, number>()
      for (const pair of yield* Metric.snapshot) {
        const name = pair.metricKey.name
        names.set(name, (names.get(name) ?? 0) + 1)
      }
      expect(names.get("tillflow_result_mismatches_total")).toBe(1)
      for (const name of [
        "tillflow_operation_outcomes_total",
        "tillflow_operation_latency_seconds",
        "tillflow_operation_overhead_seconds",
        "tillflow_reconciliation_checks_total",
        "tillflow_unknown_outcomes_total",
        "tillflow_callback_deliveries_total",
        "tillflow_terminal_less_outcomes_total"
      ]) {
        expect(names.get(name) ?? 0, name).toBeGreaterThan(0)
      }
      const mismatches = yield* Metric.value(LogMetrics.mismatches)
      expect(mismatches.count).toBe(0)
      const declinedPreAuth = Metric.tagged(
        Metric.tagged(LogMetrics.outcomes, "operation", "preAuthorization"),
        "outcome",
        "PaymentDeclined"
      )
      expect((yield* Metric.value(declinedPreAuth)).count).toBe(0)
    })
  )
})

describe("LogMetrics: terminal-less operations are logged and counted like terminal ones", () => {
  const lifecycle = (streamId: string, fact: LifecycleEvent.Event, recordedAt: number) =>
    Effect.map(LifecycleEvent.registry.encode(fact), (encoded) =>
      event(streamId, encoded.type, encoded.data as Record<string, unknown>, recordedAt)
    )
  const count = (operation: string, outcome: string) =>
    Effect.map(
      Metric.value(
        Metric.tagged(
          Metric.tagged(TerminalLessOutcomes.outcomes, "operation", operation),
          "outcome",
          outcome
        )
      ),
      (state) => state.count
    )

  it.effect(
    "a capture, a refused capture, a tokenization and a reversal in doubt each give one line and one count; none counts as a terminal outcome",
    () =>
      Effect.gen(function* () {
        const lines: Array<{
          readonly level: string
          readonly message: string
          readonly annotations: unknown
        }> = []
        const logger = Logger.make(({ annotations, logLevel, message }) => {
          lines.push({
            level: logLevel.label,
            message: String(Array.isArray(message) ? message[0] : message),
            annotations: Object.fromEntries(HashMap.toEntries(annotations))
          })
        })
        const at = DateTime.unsafeMake(t0)
        const events = [
          yield* lifecycle(
            "txn-pa-1",
            LifecycleEvent.PreAuthorizationCaptured.make({
              requestId: "cap-1",
              at,
              total: Money.make(4500n, "EUR"),
              reconciled: false
            }),
            t0
          ),
          yield* lifecycle(
            "txn-pa-1",
            LifecycleEvent.OperationRefused.make({
              requestId: "cap-2",
              at,
              operation: "capture",
              error: "CaptureAlreadyDone",
              rule: "capture-once",
              message: "pa-1 was captured once only"
            }),
            t0 + 1
          ),
          yield* lifecycle(
            "txn-sale-1",
            LifecycleEvent.CardTokenized.make({ requestId: "tok-1", at, cardToken: "tok_1" }),
            t0 + 2
          ),
          yield* lifecycle(
            "txn-sale-2",
            LifecycleEvent.OperationInDoubt.make({
              requestId: "rev-1",
              at,
              operation: "reversal",
              message: "the status endpoint did not say"
            }),
            t0 + 3
          ),
          // Folded from a refund sent to a terminal: that terminal operation's own outcome counts it.
          yield* lifecycle(
            "txn-sale-3",
            LifecycleEvent.Refunded.make({
              requestId: "terminal-exec-1",
              at,
              amount: Money.make(100n, "EUR"),
              reconciled: false
            }),
            t0 + 4
          )
        ]
        const before = {
          capture: yield* count("capture", "approved"),
          refused: yield* count("capture", "refused"),
          tokenization: yield* count("tokenization", "approved"),
          doubt: yield* count("reversal", "in doubt"),
          refund: yield* count("motoRefund", "approved"),
          unknown: (yield* Metric.value(
            Metric.tagged(
              Metric.tagged(LogMetrics.outcomes, "operation", "unknown"),
              "outcome",
              "CardTokenized"
            )
          )).count
        }
        const observer = yield* LogMetrics.makeObserver({ since: 0 })
        yield* Effect.forEach(events, observer.observe).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        expect(yield* count("capture", "approved")).toBe(before.capture + 1)
        expect(yield* count("capture", "refused")).toBe(before.refused + 1)
        expect(yield* count("tokenization", "approved")).toBe(before.tokenization + 1)
        expect(yield* count("reversal", "in doubt")).toBe(before.doubt + 1)
        expect(yield* count("motoRefund", "approved")).toBe(before.refund)
        expect(
          (yield* Metric.value(
            Metric.tagged(
              Metric.tagged(LogMetrics.outcomes, "operation", "unknown"),
              "outcome",
              "CardTokenized"
            )
          )).count
        ).toBe(before.unknown)
        expect(lines.map((l) => [l.level, l.message])).toEqual([
          ["INFO", "capture approved"],
          ["INFO", "capture refused: rule capture-once: pa-1 was captured once only"],
          ["INFO", "tokenization approved"],
          [
            "ERROR",
            "reversal in doubt: the status endpoint did not say; look at the status endpoint, then resolve it"
          ]
        ])
        expect(lines[0]?.annotations).toMatchObject({
          operation: "capture",
          outcome: "approved",
          requestId: "cap-1",
          amount: "45.00",
          currency: "EUR",
          stream: "txn-pa-1"
        })
        expect(JSON.stringify(lines)).not.toContain("tok_1")
      })
  )
})
