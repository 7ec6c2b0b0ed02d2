/**
 * One terminal operation's full story, for a person: what was asked, every attempt, what
 * the service and the terminal answered, each result delivered (and how), every
 * reconciliation check, and how it ended — one line per fact, in order of business time,
 * from the operation's payment stream, its attempts' streams and its engine stream. An
 * auditor reads this instead of JSON; nothing secret is in any of these streams.
 *
 * @example
 * const lines = yield* OperationTimeline.read(executionId)
 * // 2026-03-01 10:00:00.120 UTC  sale of 10.50 EUR asked of terminal 5876799134 (PAXA920), result by callback
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as CallbackRegistration from "../terminal/CallbackRegistration.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import * as EngineEvent from "@tillflow/engine/EngineEvent"
import * as EventStore from "@tillflow/engine/EventStore"
import type * as Money from "../model/Money.js"
import type * as OperationOutcome from "../terminal/OperationOutcome.js"

/** One line before rendering: when, and what. */
export interface Line {
  readonly at: number
  /** Tie-break for facts of the same millisecond: their order in the log. */
  readonly order: string
  readonly text: string
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0")

/** `2026-03-01 10:00:00.120 UTC`. */
export const formatTime = (epochMillis: number): string => {
  const d = new Date(epochMillis)
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)} UTC`
  )
}

const amount = (m: Money.Money | undefined): string => (m === undefined ? "" : ` ${m.toString()}`)

const outcomeText = (label: string, facts: OperationOutcome.Facts): string => {
  const parts = [
    `${label}:${amount(facts.totalAmount ?? facts.requestedAmount)} (${facts.finStatus})`,
    facts.dueAmount === undefined ? undefined : `${facts.dueAmount.toString()} still due`,
    facts.maskedCardNumber === undefined
      ? undefined
      : `card ${facts.maskedCardNumber}${facts.cardSchemeName === undefined ? "" : ` ${facts.cardSchemeName}`}`,
    facts.authorisationCode === undefined ? undefined : `authorisation code ${facts.authorisationCode}`,
    facts.issuerResponseCode === undefined ? undefined : `issuer response ${facts.issuerResponseCode}`,
    facts.efttransactionID === undefined ? undefined : `gateway transaction ${facts.efttransactionID}`,
    `learnt by ${facts.source}${facts.source === "status" ? " (reconciled)" : ""}`,
    `attempt ${facts.attempt}`
  ]
  return parts.filter((p): p is string => p !== undefined).join(", ")
}

type PaymentEvent = Effect.Effect.Success<ReturnType<typeof PaymentEvents.events.decode>>

/** The line of one business event. */
export const describePayment = (event: PaymentEvent): string => {
  switch (event.type) {
    case "OperationRequested": {
      const d = event.data
      return (
        `${d.operation}${amount(d.amount)} asked of terminal ${d.serialNumber} (${d.terminalType}), result by ${d.delivery}` +
        (d.originalTransactionId === undefined ? "" : `, of transaction ${d.originalTransactionId}`) +
        (d.customerReference === undefined ? "" : `, customer reference ${d.customerReference}`) +
        `, deadline ${formatTime(d.deadlineAt)}`
      )
    }
    case "AttemptRecorded":
      return (
        `attempt ${event.data.attempt} recorded before sending` +
        (event.data.transactionReference === undefined
          ? ""
          : `, reference ${event.data.transactionReference}`)
      )
    case "AttemptAccepted":
      return (
        `attempt ${event.data.attempt} accepted by the service (202)` +
        (event.data.transactionResultId === undefined ? "" : `, result id ${event.data.transactionResultId}`)
      )
    case "AttemptNotProcessed":
      return `attempt ${event.data.attempt} not processed (${event.data.reason}): ${event.data.message}`
    case "AttemptOutcomeUnknown":
      return `attempt ${event.data.attempt}: outcome unknown (${event.data.reason}): ${event.data.message}; reconciling, never resent blindly`
    case "ReconciliationChecked":
      return (
        `attempt ${event.data.attempt}: status endpoint says ${event.data.verdict}` +
        (event.data.finStatus === undefined ? "" : ` (${event.data.finStatus})`) +
        (event.data.detail === undefined ? "" : `: ${event.data.detail}`)
      )
    case "AttemptNotCharged":
      return `attempt ${event.data.attempt} proved not charged (not found 90 s after it was sent)`
    case "OperationRejected":
      return `rejected by the service (${event.data.error}${event.data.status === undefined ? "" : ` ${event.data.status}`}): ${event.data.message}`
    case "TerminalUnavailable":
      return `terminal unavailable until the deadline after ${event.data.attempts} attempt(s) (${event.data.lastReason})`
    case "OutcomeUnresolved":
      return `outcome could not be learnt: ${event.data.message}`
    case "PaymentAuthorised":
      return outcomeText("approved", event.data.facts)
    case "PaymentPartiallyApproved":
      return outcomeText("partially approved", event.data.facts)
    case "PaymentDeclined":
      return outcomeText("declined", event.data.facts)
    case "PaymentCancelled":
      return outcomeText("cancelled", event.data.facts)
    case "PaymentFailed":
      return outcomeText("failed", event.data.facts)
    case "ReceiptPrinted":
      return outcomeText("receipt printed", event.data.facts)
    case "CardTokenized":
      return outcomeText("card tokenized", event.data.facts)
    case "DevicePinged":
      return outcomeText("terminal answered the ping", event.data.facts)
    case "CardPanRead":
      return outcomeText("card number read (not stored)", event.data.facts)
    case "PaymentNotCharged":
      return `ended not charged after ${event.data.attempts} attempt(s)`
    case "StopAccepted":
      return `stop accepted by terminal ${event.data.serialNumber}`
    case "StopRefused":
      return `stop refused by terminal ${event.data.serialNumber}: ${event.data.message}`
    case "LateResultRecorded":
      return `a late result arrived${event.data.finStatus === undefined ? "" : ` (${event.data.finStatus})`}${event.data.recovered ? " from the terminal's recovery loop" : ""}, recorded`
    case "ResultMismatch":
      return `ALERT: a ${event.data.source} result says ${event.data.received} but the recorded outcome is ${event.data.recorded}`
  }
}

type AttemptEvent = Effect.Effect.Success<ReturnType<typeof CallbackRegistration.events.decode>>

/** The line of one event of an attempt's stream. */
export const describeAttempt = (
  event: AttemptEvent
): Option.Option<{ readonly at: number; readonly text: string }> => {
  switch (event.type) {
    case "AttemptRegistered":
      return Option.some({
        at: event.data.registeredAt,
        text:
          `attempt ${event.data.attempt} registered for ${event.data.delivery}` +
          (event.data.delivery === "callback" ? " (callback token stored as a hash only)" : "")
      })
    case "ResultReceived":
      return Option.some({
        at: event.data.receivedAt,
        text:
          `result delivered by callback${event.data.recovered ? " (recovery loop resend)" : ""}: ${event.data.finStatus ?? "no finStatus"}` +
          (event.data.redactedFields.length === 0
            ? ""
            : `; not stored: ${event.data.redactedFields.join(", ")}`)
      })
    case "ResultUndecodable":
      return Option.some({
        at: event.data.receivedAt,
        text: `a delivered result could not be read (${event.data.reason}); stored raw`
      })
    case "CallbackRefused":
      return Option.some({
        at: event.data.at,
        text: `a callback delivery was refused (${event.data.reason})`
      })
  }
}

const engineLine = (recorded: EventStore.RecordedEvent): Option.Option<string> => {
  const decoded = EngineEvent.fromStored(recorded)
  if (Option.isNone(decoded) || decoded.value._tag === "Left") return Option.none()
  const event = decoded.value.right
  switch (event._tag) {
    case "WorkflowStarted":
      return Option.some(`execution started (${event.workflowName})`)
    case "WorkflowInterrupted":
      return Option.some("interruption requested")
    case "WorkflowCompleted":
      return Option.some(
        `execution completed (${event.exit._tag === "Success" ? "with an outcome" : "with an error"})`
      )
    case "DeterminismViolated":
      return Option.some(
        `STUCK: the code asked for ${event.requested} where the history has ${event.recorded}` +
          (event.change === undefined ? "" : ` (workflow change "${event.change}")`)
      )
    case "VersionMarked":
      return Option.some(`took the new branch of workflow change "${event.change}"`)
    case "WorkflowResumed":
      return Option.some("resumed by an operator")
    default:
      return Option.none()
  }
}

/** Renders lines in order: `<time>  <text>`. */
export const render = (lines: ReadonlyArray<Line>): ReadonlyArray<string> =>
  [...lines]
    .sort((a, b) => a.at - b.at || (a.order < b.order ? -1 : a.order > b.order ? 1 : 0))
    .map((line) => `${formatTime(line.at)}  ${line.text}`)

const order = (recorded: EventStore.RecordedEvent): string =>
  `${recorded.transactionId.toString().padStart(20, "0")}:${recorded.globalPosition.toString().padStart(20, "0")}`

/** Reads an execution's streams and renders its timeline (empty when nothing is stored). */
export const read = (
  executionId: string
): Effect.Effect<ReadonlyArray<string>, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const lines: Array<Line> = []
    for (const recorded of yield* store.readStream(EngineEvent.streamId(executionId))) {
      const text = engineLine(recorded)
      if (Option.isSome(text)) {
        lines.push({ at: recorded.recordedAt.epochMillis, order: order(recorded), text: text.value })
      }
    }
    const attempts: Array<string> = []
    for (const recorded of yield* store.readStream(PaymentEvents.paymentStream(executionId))) {
      const decoded = yield* Effect.option(PaymentEvents.events.decode(recorded))
      if (Option.isNone(decoded)) {
        lines.push({
          at: recorded.recordedAt.epochMillis,
          order: order(recorded),
          text: `(unreadable ${recorded.type} event)`
        })
        continue
      }
      const event = decoded.value
      if (event.type === "AttemptRecorded") attempts.push(event.data.attemptId)
      const at =
        "at" in event.data && typeof event.data.at === "number"
          ? event.data.at
          : recorded.recordedAt.epochMillis
      lines.push({ at, order: order(recorded), text: describePayment(event) })
    }
    for (const attemptId of attempts) {
      for (const recorded of yield* store.readStream(CallbackRegistration.attemptStream(attemptId))) {
        const decoded = yield* Effect.option(CallbackRegistration.events.decode(recorded))
        if (Option.isNone(decoded)) continue
        const line = describeAttempt(decoded.value)
        if (Option.isSome(line)) lines.push({ ...line.value, order: order(recorded) })
      }
    }
    return render(lines)
  }).pipe(Effect.withSpan("OperationTimeline.read", { attributes: { executionId } }))
