import { describe, expect, it } from "@effect/vitest"
import {
  CallbackRegistration,
  PaymentEvents,
  LogMetrics,
  Money,
  OperationOutcome,
  OperationReport,
  OperationTimeline
} from "@tillflow/core"
import { EngineEvent, EventStore, MemoryEventStore } from "@tillflow/engine"
import type { EventRegistry } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const at = Date.UTC(2026, 2, 1, 10, 0, 0)
const attemptId = "0c2b2f31-0a1d-4baf-81fc-84328263f3ef"
const executionId = "e1"

const facts = (overrides: Partial<OperationOutcome.Facts> = {}): OperationOutcome.Facts => ({
  operation: "sale",
  serialNumber: "T1",
  terminalType: "PAXA920",
  attempt: 1,
  attemptId,
  finStatus: "AUTHORISED",
  source: "callback",
  totalAmount: Money.make(1050n, "EUR"),
  maskedCardNumber: "476173******0010",
  authorisationCode: "711663",
  ...overrides
})

type PaymentEvent = EventRegistry.Event<(typeof PaymentEvents.events.definitions)[number]>

const appendPayment = (events: ReadonlyArray<PaymentEvent>) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    yield* store.append(
      PaymentEvents.paymentStream(executionId),
      EventStore.AnyVersion,
      yield* PaymentEvents.events.encodeAll(events)
    )
    return yield* store.readStream(PaymentEvents.paymentStream(executionId))
  })

const requested = PaymentEvents.OperationRequested.make({
  executionId,
  operation: "sale",
  serialNumber: "T1",
  terminalType: "PAXA920",
  amount: Money.make(1050n, "EUR"),
  delivery: "callback",
  requestedAt: at,
  deadlineAt: at + 300_000,
  at
})
const recorded = PaymentEvents.AttemptRecorded.make({
  attempt: 1,
  attemptId,
  at: at + 10,
  transactionReference: "7d242a93-4985-4f66-9c38-857e6879e825"
})
const accepted = PaymentEvents.AttemptAccepted.make({ attempt: 1, attemptId, at: at + 20 })
const unknown = PaymentEvents.AttemptOutcomeUnknown.make({
  attempt: 1,
  attemptId,
  at: at + 30,
  reason: "Timeout",
  message: "no answer"
})
const notFoundYet = PaymentEvents.ReconciliationChecked.make({
  attempt: 1,
  attemptId,
  at: at + 40,
  verdict: "NotFoundYet"
})

describe("OperationReport: progress", () => {
  it.effect("says what a running operation waits for, step by step", () =>
    Effect.gen(function* () {
      expect((yield* OperationReport.progressOf([])).phase).toBe("queued")
      const afterRequest = yield* OperationReport.progressOf(yield* appendPayment([requested, recorded]))
      expect(afterRequest).toMatchObject({ phase: "sending", attempt: 1 })
      const afterAccept = yield* OperationReport.progressOf(yield* appendPayment([accepted]))
      expect(afterAccept.phase).toBe("waiting")
      expect(afterAccept.waitingFor).toContain("callback")
      const reconciling = yield* OperationReport.progressOf(yield* appendPayment([unknown, notFoundYet]))
      expect(reconciling.phase).toBe("reconciling")
      expect(reconciling.waitingFor).toContain("90 s")
      const settled = yield* OperationReport.progressOf(
        yield* appendPayment([
          PaymentEvents.PaymentAuthorised.make({ facts: facts({ source: "status" }), at: at + 50 })
        ])
      )
      expect(settled).toMatchObject({ phase: "settled", waitingFor: "nothing: AUTHORISED" })
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect(
    "names the step last recorded and when, so a progress line follows the steps (no fixed 'card, PIN and host' for the whole sale)",
    () =>
      Effect.gen(function* () {
        const sent = yield* OperationReport.progressOf(yield* appendPayment([requested, recorded]))
        expect(sent).toMatchObject({ step: "attempt 1 recorded, sending it to the service", stepAt: at + 10 })
        const taken = yield* OperationReport.progressOf(yield* appendPayment([accepted]))
        expect(taken).toMatchObject({
          step: "attempt 1 accepted: the terminal has the operation",
          stepAt: at + 20
        })
        expect(taken.waitingFor).not.toContain("card, PIN and host")
        const checked = yield* OperationReport.progressOf(yield* appendPayment([unknown, notFoundYet]))
        expect(checked).toMatchObject({
          step: "the status endpoint answered: not found yet",
          stepAt: at + 40
        })
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})

const exitJson = (exit: Exit.Exit<OperationOutcome.Outcome, OperationOutcome.OperationError>) =>
  Schema.encodeSync(
    Schema.Exit({
      success: OperationOutcome.Outcome,
      failure: OperationOutcome.OperationError,
      defect: Schema.Defect
    })
  )(exit)

describe("OperationReport: verdicts", () => {
  it("an approval learnt from the status endpoint is approved and reconciled; one by callback is not", () => {
    const reconciled = Option.getOrThrow(
      OperationReport.ofTerminalExit(
        exitJson(Exit.succeed(new OperationOutcome.Approved({ facts: facts({ source: "status" }) })))
      )
    )
    expect(reconciled).toMatchObject({
      verdict: "approved",
      reconciled: true,
      finStatus: "AUTHORISED",
      amount: "10.50 EUR"
    })
    expect(reconciled.summary).toContain("reconciled")
    const direct = Option.getOrThrow(
      OperationReport.ofTerminalExit(
        exitJson(Exit.succeed(new OperationOutcome.Approved({ facts: facts() })))
      )
    )
    expect(direct).toMatchObject({ verdict: "approved", reconciled: false })
    expect(direct.summary).toContain("card 476173******0010")
  })

  it("declines, partial approvals and each operation error get their own verdict", () => {
    const verdict = (exit: Exit.Exit<OperationOutcome.Outcome, OperationOutcome.OperationError>) =>
      Option.getOrThrow(OperationReport.ofTerminalExit(exitJson(exit))).verdict
    expect(
      verdict(
        Exit.succeed(
          new OperationOutcome.Declined({ facts: facts({ finStatus: "DECLINED", issuerResponseCode: "05" }) })
        )
      )
    ).toBe("declined")
    expect(
      verdict(
        Exit.succeed(
          new OperationOutcome.PartiallyApproved({
            facts: facts({ finStatus: "PARTIAL_APPROVAL", dueAmount: Money.make(1n, "EUR") })
          })
        )
      )
    ).toBe("partially-approved")
    expect(
      verdict(
        Exit.fail(new OperationOutcome.NotCharged({ message: "m", transactionReference: "r", attempts: 1 }))
      )
    ).toBe("not-charged")
    expect(verdict(Exit.fail(new OperationOutcome.OutcomeUnresolved({ message: "m", attemptId })))).toBe(
      "unresolved"
    )
    expect(
      verdict(
        Exit.fail(
          new OperationOutcome.TerminalUnavailable({
            message: "m",
            serialNumber: "T1",
            attempts: 3,
            lastReason: "DeviceBusy"
          })
        )
      )
    ).toBe("unavailable")
    expect(
      Option.isNone(OperationReport.ofTerminalExit({ _tag: "Success", value: { not: "an outcome" } }))
    ).toBe(true)
  })

  it("a decline says why, in the service's words and the issuer's code; an approval gives no reason", () => {
    const report = (outcome: OperationOutcome.Outcome) =>
      Option.getOrThrow(OperationReport.ofTerminalExit(exitJson(Exit.succeed(outcome))))
    const declined = report(
      new OperationOutcome.Declined({
        facts: facts({ finStatus: "DECLINED", issuerResponseCode: "05", errorMessage: "Do not honour" })
      })
    )
    expect(declined.reason).toBe("Do not honour (issuer response 05)")
    expect(declined.summary).toContain("Do not honour (issuer response 05)")
    const noOriginal = report(
      new OperationOutcome.Declined({
        facts: facts({
          operation: "refund",
          finStatus: "DECLINED",
          errorMessage: "Original transaction g not found"
        })
      })
    )
    expect(noOriginal.reason).toBe("Original transaction g not found")
    expect(noOriginal.summary).toContain("Original transaction g not found")
    const codeOnly = report(
      new OperationOutcome.Declined({
        facts: facts({ finStatus: "DECLINED", issuerResponseCode: "51", errorMessage: " " })
      })
    )
    expect(codeOnly.reason).toBe("issuer response 51")
    const approved = report(new OperationOutcome.Approved({ facts: facts({ errorMessage: "" }) }))
    expect(approved.reason).toBeUndefined()
  })

  it("a terminal-less decline says why too (a MOTO sale DECLINED by its issuer)", () => {
    const report = OperationReport.ofLifecycleExit("MotoSale", {
      _tag: "Success",
      value: { status: "DECLINED", issuerResponseText: "Refer to card issuer", issuerResponseCode: "01" }
    } as unknown as EngineEvent.ExitJson)
    expect(report).toMatchObject({ verdict: "declined", reason: "Refer to card issuer (issuer response 01)" })
  })
})

describe("OperationTimeline", () => {
  it.effect("tells one operation's story in order, from its engine, payment and attempt streams", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const started = EngineEvent.toStored({
        _tag: "WorkflowStarted",
        workflowName: "TerminalOperation",
        payload: {},
        parent: null
      })
      yield* store.append(EngineEvent.streamId(executionId), EventStore.NoStream, [
        { type: started.type, data: started.data as EventStore.JsonObject }
      ])
      yield* appendPayment([requested, recorded, accepted, unknown, notFoundYet])
      yield* store.append(CallbackRegistration.attemptStream(attemptId), EventStore.NoStream, [
        yield* CallbackRegistration.events.encode(
          CallbackRegistration.ResultReceived.make({
            attemptId,
            resultHash: "h",
            finStatus: "AUTHORISED",
            recovered: true,
            result: {},
            redactedFields: [],
            receivedAt: at + 45
          })
        )
      ])
      yield* appendPayment([
        PaymentEvents.PaymentAuthorised.make({ facts: facts({ source: "status" }), at: at + 50 })
      ])
      // The attempt stream is found through the payment stream's AttemptRecorded.
      const lines = yield* OperationTimeline.read(executionId)
      const story = lines.filter((l) => l.startsWith("2026-03-01"))
      expect(story.map((l) => l.slice(0, 27))).toEqual([...story.map((l) => l.slice(0, 27))].sort())
      const text = story.join("\n")
      expect(text).toContain("sale 10.50 EUR asked of terminal T1 (PAXA920), result by callback")
      expect(text).toContain("reference 7d242a93-4985-4f66-9c38-857e6879e825")
      expect(text).toContain("outcome unknown (Timeout)")
      expect(text).toContain("status endpoint says NotFoundYet")
      expect(text).toContain("result delivered by callback (recovery loop resend): AUTHORISED")
      expect(text).toContain("approved: 10.50 EUR (AUTHORISED), card 476173******0010")
      expect(text).toContain("learnt by status (reconciled)")
      expect(story[story.length - 1]).toContain("approved")
      expect(OperationTimeline.formatTime(at + 45)).toBe("2026-03-01 10:00:00.045 UTC")
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})

describe("LogMetrics", () => {
  it.effect(
    "counts outcomes and latency per operation, reconciliation checks and callback deliveries from the log",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        yield* appendPayment([requested, recorded, accepted, unknown, notFoundYet])
        yield* appendPayment([PaymentEvents.PaymentAuthorised.make({ facts: facts(), at: at + 2_500 })])
        yield* store.append(CallbackRegistration.securityStream, EventStore.AnyVersion, [
          yield* CallbackRegistration.events.encode(
            CallbackRegistration.CallbackRefused.make({ attemptId, reason: "WrongToken", at })
          )
        ])
        const outcomes = Metric.tagged(
          Metric.tagged(LogMetrics.outcomes, "operation", "sale"),
          "outcome",
          "PaymentAuthorised"
        )
        const refused = Metric.tagged(LogMetrics.callbackDeliveries, "result", "refused:WrongToken")
        const checks = Metric.tagged(LogMetrics.reconciliations, "verdict", "NotFoundYet")
        const latency = Metric.tagged(LogMetrics.latency, "operation", "sale")
        const before = {
          outcomes: (yield* Metric.value(outcomes)).count,
          refused: (yield* Metric.value(refused)).count,
          checks: (yield* Metric.value(checks)).count,
          latency: yield* Metric.value(latency)
        }
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100 })
        const observer = yield* LogMetrics.makeObserver({ since: 0 })
        yield* Effect.forEach(page.events, observer.observe, { discard: true })
        expect((yield* Metric.value(outcomes)).count - before.outcomes).toBe(1)
        expect((yield* Metric.value(refused)).count - before.refused).toBe(1)
        expect((yield* Metric.value(checks)).count - before.checks).toBe(1)
        const after = yield* Metric.value(latency)
        expect(after.count - before.latency.count).toBe(1)
        expect(after.sum - before.latency.sum).toBeCloseTo(2.5)
        // Events recorded before the observer's start are folded for latency but not counted.
        const late = yield* LogMetrics.makeObserver({ since: Date.now() + 60_000 })
        yield* Effect.forEach(page.events, late.observe, { discard: true })
        expect((yield* Metric.value(outcomes)).count - before.outcomes).toBe(1)
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})

/** A logger that keeps each line's level, message and annotations. */
const captureLogs = () => {
  const logged: Array<{ level: string; message: unknown; annotations: Record<string, unknown> }> = []
  const capture = Logger.make(({ annotations, logLevel, message }) => {
    logged.push({
      level: logLevel.label,
      message: Array.isArray(message) ? message.join(" ") : message,
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return { logged, capture }
}

describe("LogMetrics' outcome lines", () => {
  it.effect(
    "logs one INFO line per ending, a tokenizing sale's token event included in its one line, with the amount in major units and no card data",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const { logged, capture } = captureLogs()
        const tokenized = facts({ operation: "saleAndTokenizeCard", cardToken: "tok_4761730000000010" })
        yield* appendPayment([
          PaymentEvents.OperationRequested.make({ ...requested.data, operation: "saleAndTokenizeCard" }),
          recorded,
          ...PaymentEvents.outcomeEventsOf(new OperationOutcome.Approved({ facts: tokenized }), at + 100)
        ])
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100 })
        const observer = yield* LogMetrics.makeObserver({ since: 0 })
        yield* Effect.forEach(page.events, observer.observe, { discard: true }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, capture))
        )
        expect(page.events.map((e) => e.type)).toContain(PaymentEvents.CardTokenized.type)
        expect(logged).toEqual([
          {
            level: "INFO",
            message: "saleAndTokenizeCard approved",
            annotations: {
              executionId,
              operation: "saleAndTokenizeCard",
              terminal: "T1",
              amount: "10.50",
              currency: "EUR",
              outcome: "approved",
              event: PaymentEvents.PaymentAuthorised.type,
              stream: PaymentEvents.paymentStream(executionId)
            }
          }
        ])
        expect(JSON.stringify(logged)).not.toContain("tok_")
        expect(JSON.stringify(logged)).not.toContain("0010")
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("an unresolved outcome is an alert: one ERROR line with its reason and what to do", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const { logged, capture } = captureLogs()
      yield* appendPayment([
        requested,
        recorded,
        PaymentEvents.OutcomeUnresolved.make({
          attempt: 1,
          attemptId,
          at: at + 200_000,
          message: "the service's answers could not be decoded",
          reason: "Undecodable"
        })
      ])
      const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 100 })
      const observer = yield* LogMetrics.makeObserver({ since: 0 })
      yield* Effect.forEach(page.events, observer.observe, { discard: true }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, capture))
      )
      expect(logged).toEqual([
        {
          level: "ERROR",
          message: "sale unresolved: the service's answers could not be decoded; look at the terminal",
          annotations: expect.objectContaining({ executionId, outcome: "unresolved", reason: "Undecodable" })
        }
      ])
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})
