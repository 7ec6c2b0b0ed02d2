import { describe, expect, it } from "@effect/vitest"
import { LogMetrics } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
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
        "tillflow_callback_deliveries_total"
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
