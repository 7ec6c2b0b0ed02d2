/**
 * What a person or a script is told about a terminal operation: while it runs, where it
 * stands and what it waits for (read from its payment stream: requested, sent, accepted,
 * reconciling …); once it ended, its verdict — approved, declined, failed, approved only
 * after an unknown outcome was reconciled, still unknown — with a one-line summary. The
 * worker's intake API and the command line both report through this module, so they say
 * the same thing; the command line maps verdicts to exit codes.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import * as EngineEvent from "@tillflow/engine/EngineEvent"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as Money from "../model/Money.js"
import * as OperationOutcome from "../terminal/OperationOutcome.js"

// ---------------------------------------------------------------------------------------
// Progress

/** Where a running operation stands. */
export const Phase = Schema.Literal(
  "queued",
  "sending",
  "waiting",
  "retrying",
  "reconciling",
  "settled",
  "ended"
)
/** @see Phase */
export type Phase = typeof Phase.Type

/**
 * The progress of an operation: its phase, the attempt, what it waits for, in words, and
 * the step last recorded (in words) with its time, so a progress line can follow the steps
 * as they are recorded rather than one sentence for the whole operation.
 */
export const Progress = Schema.Struct({
  phase: Phase,
  attempt: Schema.Int,
  waitingFor: Schema.String,
  step: Schema.optional(Schema.String),
  /** When `step` was recorded (epoch milliseconds). */
  stepAt: Schema.optional(Schema.Number)
})
/** @see Progress */
export type Progress = typeof Progress.Type

const queued: Progress = {
  phase: "queued",
  attempt: 0,
  waitingFor: "the terminal to be free (an operation runs on it)"
}

/**
 * The progress told by an operation's payment stream (`payment-<executionId>`), from its
 * events in order. Unknown or undecodable events are skipped.
 */
export const progressOf = (events: ReadonlyArray<EventStore.RecordedEvent>): Effect.Effect<Progress> =>
  Effect.gen(function* () {
    let progress = queued
    let delivery = "polling"
    for (const recorded of events) {
      if (!PaymentEvents.events.has(recorded.type)) continue
      const decoded = yield* Effect.option(PaymentEvents.events.decode(recorded))
      if (Option.isNone(decoded)) continue
      const event = decoded.value
      switch (event.type) {
        case "OperationRequested":
          delivery = event.data.delivery
          progress = {
            phase: "sending",
            attempt: 0,
            waitingFor: "the first attempt to be sent",
            step: `${event.data.delivery === "callback" ? "asked for, its result by callback" : "asked for, its result by polling"}`,
            stepAt: event.data.at
          }
          break
        case "AttemptRecorded":
          progress = {
            phase: "sending",
            attempt: event.data.attempt,
            waitingFor: `the service to take attempt ${event.data.attempt}`,
            step: `attempt ${event.data.attempt} recorded, sending it to the service`,
            stepAt: event.data.at
          }
          break
        case "AttemptAccepted":
          progress = {
            phase: "waiting",
            attempt: event.data.attempt,
            waitingFor:
              delivery === "callback"
                ? "the terminal's result (callback)"
                : "the terminal's result (polling)",
            step: `attempt ${event.data.attempt} accepted: the terminal has the operation`,
            stepAt: event.data.at
          }
          break
        case "AttemptNotProcessed":
          progress = {
            phase: "retrying",
            attempt: event.data.attempt,
            waitingFor: `the terminal (${event.data.reason === "DeviceBusy" ? "busy" : "offline"}) to take a new attempt`,
            step: `attempt ${event.data.attempt} not taken: the terminal is ${event.data.reason === "DeviceBusy" ? "busy" : "offline"}`,
            stepAt: event.data.at
          }
          break
        case "AttemptOutcomeUnknown":
          progress = {
            phase: "reconciling",
            attempt: event.data.attempt,
            waitingFor: `the status endpoint: the outcome is unknown (${event.data.reason})`,
            step: `attempt ${event.data.attempt}: no answer from the service (${event.data.reason})`,
            stepAt: event.data.at
          }
          break
        case "ReconciliationChecked":
          progress = {
            phase: "reconciling",
            attempt: event.data.attempt,
            waitingFor:
              event.data.verdict === "NotFoundYet"
                ? "the status endpoint: not found yet (not charged only after 90 s)"
                : event.data.verdict === "InProgress"
                  ? "the status endpoint: IN_PROGRESS at the gateway"
                  : `the status endpoint (${event.data.verdict})`,
            step:
              event.data.verdict === "NotFoundYet"
                ? "the status endpoint answered: not found yet"
                : event.data.verdict === "InProgress"
                  ? "the status endpoint answered: IN_PROGRESS at the gateway"
                  : `the status endpoint answered: ${event.data.verdict}`,
            stepAt: event.data.at
          }
          break
        case "AttemptNotCharged":
          progress = {
            phase: "retrying",
            attempt: event.data.attempt,
            waitingFor: "a new attempt: the last one was not charged",
            step: `attempt ${event.data.attempt} not charged`,
            stepAt: event.data.at
          }
          break
        case "PaymentAuthorised":
        case "PaymentPartiallyApproved":
        case "PaymentDeclined":
        case "PaymentCancelled":
        case "PaymentFailed":
        case "ReceiptPrinted":
        case "CardTokenized":
        case "DevicePinged":
        case "CardPanRead":
          progress = {
            phase: "settled",
            attempt: event.data.facts.attempt,
            waitingFor: `nothing: ${event.data.facts.finStatus}`,
            step: `result recorded: ${event.data.facts.finStatus}`,
            stepAt: event.data.at
          }
          break
        case "PaymentNotCharged":
        case "OperationRejected":
        case "TerminalUnavailable":
        case "OutcomeUnresolved":
        case "StopAccepted":
        case "StopRefused":
          progress = { phase: "ended", attempt: progress.attempt, waitingFor: "nothing" }
          break
        default:
          break
      }
    }
    return progress
  })

// ---------------------------------------------------------------------------------------
// Verdicts

/** How an operation ended, for scripts. */
export const Verdict = Schema.Literal(
  "approved",
  "partially-approved",
  "declined",
  "cancelled",
  "failed",
  "rejected",
  "unavailable",
  "not-charged",
  "unresolved",
  "stop-refused",
  "error"
)
/** @see Verdict */
export type Verdict = typeof Verdict.Type

/** The report of a finished operation. */
export const Report = Schema.Struct({
  verdict: Verdict,
  /** True when the outcome was unknown first and learnt from the status endpoint. */
  reconciled: Schema.Boolean,
  summary: Schema.String,
  /**
   * Why an operation that moved no money ended as it did, as the service said it: the
   * issuer's or gateway's text and the issuer response code (`Do not honour (issuer
   * response 05)`); absent when the answer gave no reason.
   */
  reason: Schema.optional(Schema.String),
  finStatus: Schema.optional(Schema.String),
  transactionReference: Schema.optional(Schema.String),
  amount: Schema.optional(Schema.String)
})
/** @see Report */
export type Report = typeof Report.Type

const money = (m: Money.Money | undefined): string | undefined => (m === undefined ? undefined : m.toString())

const outcomeVerdict: Readonly<Record<OperationOutcome.Outcome["_tag"], Verdict>> = {
  Approved: "approved",
  PartiallyApproved: "partially-approved",
  Declined: "declined",
  Cancelled: "cancelled",
  Failed: "failed"
}

const nonEmpty = (text: unknown): string | undefined =>
  typeof text === "string" && text.trim() !== "" ? text.trim() : undefined

/** The service's reason in words and the issuer's code: `Do not honour (issuer response 05)`. */
const reasonOf = (text: unknown, code: unknown): string | undefined => {
  const words = nonEmpty(text)
  const issuer = nonEmpty(code) === undefined ? undefined : `issuer response ${String(code).trim()}`
  if (words === undefined) return issuer
  return issuer === undefined ? words : `${words} (${issuer})`
}

/** The report of an outcome. */
export const ofOutcome = (outcome: OperationOutcome.Outcome): Report => {
  const facts = outcome.facts
  // A decline or a cancellation moved nothing: say what was asked.
  const amount =
    outcome._tag === "Approved" || outcome._tag === "PartiallyApproved"
      ? (facts.totalAmount ?? facts.requestedAmount)
      : (facts.requestedAmount ?? facts.totalAmount)
  const moved = outcome._tag === "Approved" || outcome._tag === "PartiallyApproved"
  const reason = moved ? undefined : reasonOf(facts.errorMessage, facts.issuerResponseCode)
  const parts = [
    `${facts.operation} on ${facts.serialNumber}: ${facts.finStatus}`,
    amount === undefined ? undefined : money(amount),
    facts.dueAmount === undefined || outcome._tag !== "PartiallyApproved"
      ? undefined
      : `${money(facts.dueAmount)} still due`,
    facts.maskedCardNumber === undefined ? undefined : `card ${facts.maskedCardNumber}`,
    reason,
    facts.authorisationCode === undefined ? undefined : `authorisation ${facts.authorisationCode}`,
    facts.source === "status" ? "outcome reconciled through the status endpoint" : undefined
  ].filter((p): p is string => p !== undefined)
  return {
    verdict: outcomeVerdict[outcome._tag],
    reconciled: facts.source === "status",
    summary: parts.join(", "),
    ...(reason === undefined ? {} : { reason }),
    finStatus: facts.finStatus,
    ...(facts.transactionReference === undefined ? {} : { transactionReference: facts.transactionReference }),
    ...(amount === undefined ? {} : { amount: amount.toString() })
  }
}

/** The report of an operation error. */
export const ofError = (error: OperationOutcome.OperationError): Report => {
  const verdicts: Record<OperationOutcome.OperationError["_tag"], Verdict> = {
    TerminalUnavailable: "unavailable",
    OperationRejected: "rejected",
    // Refused by the money rules before anything was sent, as a terminal-less refusal is.
    OperationRefused: "rejected",
    OutcomeUnresolved: "unresolved",
    NotCharged: "not-charged",
    StopRefused: "stop-refused"
  }
  const verdict = verdicts[error._tag]
  return { verdict, reconciled: error._tag === "NotCharged", summary: error.message }
}

const TerminalExit = Schema.Exit({
  success: OperationOutcome.Outcome,
  failure: OperationOutcome.OperationError,
  defect: Schema.Defect
})

/**
 * The report of a finished `TerminalOperation` from its stored exit (the `exit` of its
 * `WorkflowCompleted` event); `None` when the exit does not decode as one.
 */
export const ofTerminalExit = (exit: EngineEvent.ExitJson | unknown): Option.Option<Report> =>
  Option.map(Schema.decodeUnknownOption(TerminalExit)(exit), (decoded) => {
    if (Exit.isSuccess(decoded)) return ofOutcome(decoded.value)
    const failure = decoded.cause._tag === "Fail" ? decoded.cause.error : undefined
    if (failure !== undefined) return ofError(failure)
    return {
      verdict: "error" as const,
      reconciled: false,
      summary: `the workflow ended without an outcome: ${String(decoded.cause._tag)}`
    }
  })

const StopExit = Schema.Exit({
  success: Schema.Struct({
    _tag: Schema.Literal("StopAccepted"),
    serialNumber: Schema.String,
    at: Schema.Number
  }),
  failure: OperationOutcome.OperationError,
  defect: Schema.Defect
})

/** The report of a finished `StopCurrentTransaction` from its stored exit. */
export const ofStopExit = (exit: EngineEvent.ExitJson | unknown): Option.Option<Report> =>
  Option.map(Schema.decodeUnknownOption(StopExit)(exit), (decoded): Report => {
    if (Exit.isSuccess(decoded)) {
      return {
        verdict: "approved",
        reconciled: false,
        summary: `terminal ${decoded.value.serialNumber} took the stop: its operation ends CANCELLED`
      }
    }
    const failure = decoded.cause._tag === "Fail" ? decoded.cause.error : undefined
    return failure !== undefined
      ? ofError(failure)
      : { verdict: "error", reconciled: false, summary: "the stop ended without an answer" }
  })

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const describeValue = (value: unknown): string | undefined => {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return String(value)
  if (isRecord(value) && typeof value["amount"] === "string" && typeof value["currency"] === "string") {
    const decoded = Schema.decodeUnknownOption(Money.FromMinorUnitsFields)(value)
    return Option.isSome(decoded)
      ? decoded.value.toString()
      : `${value["amount"]} ${value["currency"]} (minor units)`
  }
  return undefined
}

/**
 * The report of a finished terminal-less workflow (pre-authorization, reversal, MOTO, tip,
 * token, batch, device command) from its stored exit: its result's status (a MOTO sale may
 * be DECLINED or a PARTIAL_APPROVAL), whether it was reconciled, its money and ids; or the
 * refusal or failure that ended it.
 */
export const ofLifecycleExit = (workflowName: string, exit: EngineEvent.ExitJson): Report => {
  if (exit._tag === "Success") {
    const value = isRecord(exit.value) ? exit.value : {}
    const status = typeof value["status"] === "string" ? value["status"] : undefined
    const verdict: Verdict =
      status === "DECLINED" ? "declined" : status === "PARTIAL_APPROVAL" ? "partially-approved" : "approved"
    const details = Object.entries(value)
      .filter(([key]) => key !== "requestId" && key !== "reconciled" && key !== "_tag")
      .flatMap(([key, v]) => {
        const text = describeValue(v)
        return text === undefined ? [] : [`${key} ${text}`]
      })
    const reason =
      verdict === "declined" ? reasonOf(value["issuerResponseText"], value["issuerResponseCode"]) : undefined
    return {
      verdict,
      reconciled: value["reconciled"] === true,
      summary: `${workflowName}: ${details.join(", ") || "done"}`,
      ...(reason === undefined ? {} : { reason }),
      ...(status === undefined ? {} : { finStatus: status })
    }
  }
  const cause = exit.cause
  const error = cause._tag === "Fail" && isRecord(cause.error) ? cause.error : undefined
  if (error === undefined) {
    return { verdict: "error", reconciled: false, summary: `${workflowName} ended without a result` }
  }
  const tag = typeof error["_tag"] === "string" ? error["_tag"] : "Error"
  const message = typeof error["message"] === "string" ? error["message"] : tag
  const verdict: Verdict = tag === "OutcomeUnknown" || tag === "OperationInDoubt" ? "unresolved" : "rejected"
  return { verdict, reconciled: false, summary: `${workflowName} refused (${tag}): ${message}` }
}
