/**
 * A lifecycle stream read back as a story a person can follow: one line per event, in
 * order, with its business time, what happened, the amounts and the request that led to
 * it — for auditors and support staff, who should not have to read JSON to learn that a
 * pre-authorization was opened, increased, decreased, captured and its capture reversed.
 *
 * @example
 * const lines = yield* Timeline.read(LifecycleEvent.transactionStream(guid))
 * // 2025-03-01 10:00:00 UTC  pre-authorization pa-1 opened (preAuthorization): 100.00 EUR held; …
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as CaptureRules from "../lifecycle/CaptureRules.js"
import * as EventStore from "@tillflow/engine/EventStore"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
import type * as Money from "../model/Money.js"

const pad = (n: number, width = 2): string => String(n).padStart(width, "0")

/** `2025-03-01 10:00:00 UTC`. */
export const formatTime = (at: DateTime.Utc): string => {
  const p = DateTime.toParts(at)
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hours)}:${pad(p.minutes)}:${pad(p.seconds)} UTC`
}

const tolerance = (rule: CaptureRules.CaptureRule): string => {
  switch (rule.tolerance._tag) {
    case "Percent":
      return `${rule.tolerance.percent}%`
    case "Fixed":
      return rule.tolerance.amount.toString()
    case "None":
      return "no tolerance"
  }
}

const kindLabel: Readonly<Record<LifecycleEvent.TransactionKind, string>> = {
  sale: "sale",
  saleAndTokenizeCard: "sale (tokenized)",
  refund: "refund",
  preAuthorization: "pre-authorization",
  moToPreAuthorization: "MOTO pre-authorization",
  preAuthorizationCapture: "pre-authorization capture",
  moToSale: "MOTO sale",
  moToRefund: "MOTO refund"
}

const plusTip = (amount: Money.Money, tip: Money.Money | undefined): string =>
  tip === undefined ? amount.toString() : `${amount} + tip ${tip}`

const reconciled = (flag: boolean): string =>
  flag ? " (outcome reconciled through the status endpoint)" : ""

/** What one event says, without its time. */
export const describe = (event: LifecycleEvent.Decoded, stands = false): string => {
  switch (event.type) {
    case "TransactionRecorded": {
      const d = event.data
      return (
        `${kindLabel[d.kind]} ${d.guid} recorded: ${d.amount}` +
        (d.originalGuid === undefined ? "" : ` (of ${d.originalGuid})`)
      )
    }
    case "PreAuthorizationOpened": {
      const d = event.data
      const rule = CaptureRules.ruleFor({ scheme: d.scheme, mcc: d.mcc, tenderType: d.tenderType })
      return (
        `pre-authorization ${d.guid} opened (${d.via}): ${d.amount} held; ${d.scheme}, MCC ${d.mcc}: ` +
        `capture within ${CaptureRules.describeWindow(rule.window)}, up to ${tolerance(rule)} over the hold (rule ${rule.id})`
      )
    }
    case "HoldIncreaseRequested":
      return `[${event.data.requestId}] increase of ${plusTip(event.data.delta, event.data.tip)} requested`
    case "HoldIncreased":
      return `[${event.data.requestId}] hold increased by ${plusTip(event.data.delta, event.data.tip)} to ${event.data.hold}${reconciled(event.data.reconciled)}`
    case "HoldDecreaseRequested":
      return `[${event.data.requestId}] decrease of ${event.data.delta} requested`
    case "HoldDecreased":
      return `[${event.data.requestId}] hold decreased by ${event.data.delta} to ${event.data.hold}${reconciled(event.data.reconciled)}`
    case "CaptureRequested": {
      const d = event.data
      return (
        `[${d.requestId}] capture of ${plusTip(d.amount, d.tip)} requested: limit ${d.limit} by rule ${d.rule}` +
        d.warnings.map((w) => `; warning: ${w}`).join("")
      )
    }
    case "PreAuthorizationCaptured":
      return `[${event.data.requestId}] captured ${event.data.total}: status CAPTURED${reconciled(event.data.reconciled)}`
    case "ReversalRequested": {
      const d = event.data
      const what =
        d.target === "hold"
          ? "the hold"
          : d.target === "capture"
            ? "the capture"
            : d.amount === undefined
              ? "the whole transaction"
              : d.amount.toString()
      const endpoint = d.endpoint === "motoReversal" ? "MOTO reversal" : "reversal"
      return (
        `[${d.requestId}] ${endpoint} of ${what} requested` +
        (d.messageReasonCode === undefined ? "" : ` (${d.messageReasonCode})`)
      )
    }
    case "Reversed": {
      const d = event.data
      const said =
        d.target === "hold"
          ? `hold of ${d.amount} released: status RELEASED`
          : d.target === "capture"
            ? `capture of ${d.amount} reversed: status AUTHORISED, withheld funds released`
            : `reversed ${d.amount}`
      return `[${d.requestId}] ${said}${reconciled(d.reconciled)}`
    }
    case "RefundRequested":
      return `[${event.data.requestId}] refund of ${event.data.amount} requested`
    case "Refunded":
      return `[${event.data.requestId}] refunded ${event.data.amount}${reconciled(event.data.reconciled)}`
    case "TipAdjustmentRequested":
      return `[${event.data.requestId}] tip of ${event.data.tip} requested`
    case "TipAdjusted":
      return (
        `[${event.data.requestId}] tip set to ${event.data.tip}` +
        (event.data.replaces === undefined ? "" : `, replacing ${event.data.replaces}`) +
        (stands ? " (stands)" : " (replaced later)")
      )
    case "TokenizationRequested":
      return `[${event.data.requestId}] card token requested`
    case "CardTokenized":
      return (
        `[${event.data.requestId}] card tokenized: ${event.data.cardToken}` +
        (event.data.maskedCardNumber === undefined ? "" : ` (${event.data.maskedCardNumber})`)
      )
    case "MotoSaleRequested":
      return `[${event.data.requestId}] MOTO sale of ${event.data.amount} requested (reference ${event.data.transactionReference})`
    case "MotoSaleApproved":
      return `[${event.data.requestId}] MOTO sale ${event.data.guid} authorised: ${event.data.amount}${reconciled(event.data.reconciled)}`
    case "MotoSaleDeclined":
      return `[${event.data.requestId}] MOTO sale declined (${event.data.finStatus}): ${event.data.reason}${reconciled(event.data.reconciled)}`
    case "BatchCloseRequested":
      return `[${event.data.requestId}] closing batch ${event.data.batchNumber} requested`
    case "BatchClosed":
      return `[${event.data.requestId}] batch ${event.data.batchNumber} closed${event.data.reconciled ? " (as the service reported it)" : ""}`
    case "DeviceCommandRequested":
      return `[${event.data.requestId}] ${event.data.command} ${JSON.stringify(event.data.body)} requested`
    case "DeviceCommandAccepted":
      return `[${event.data.requestId}] ${event.data.command} accepted by the device`
    case "OperationRefused":
      return `[${event.data.requestId}] ${event.data.operation} refused before sending: ${event.data.message}`
    case "OperationFailed":
      return `[${event.data.requestId}] ${event.data.operation} failed (${event.data.error}): ${event.data.message}`
    case "OperationInDoubt":
      return `[${event.data.requestId}] ${event.data.operation} outcome unknown, kept pending: ${event.data.message}`
    case "InDoubtResolved": {
      const d = event.data
      return (
        `[${d.requestId}] ${d.operation} resolved by ${d.operator} as ${d.resolution === "applied" ? "applied" : "not applied"}` +
        (d.amount === undefined || d.resolution !== "applied" ? "" : ` (${d.amount})`) +
        `: ${d.reason}` +
        (d.statusEndpoint === undefined ? "" : `; the status endpoint said: ${d.statusEndpoint}`)
      )
    }
    case "TransactionDeclined": {
      const d = event.data
      return `${d.operation} ${d.guid} ${d.finStatus} on its terminal: nothing charged`
    }
    case "OperatorActionRequested": {
      const d = event.data
      return (
        `[${d.requestId}] ${d.action}${d.amount === undefined ? "" : ` of ${d.amount}`} asked by ` +
        `${d.via === "token" ? "the intake's bearer token" : `operator ${d.operator}`}: ${d.reason} (${d.workflow})`
      )
    }
    case "ExecutionActionRequested": {
      const d = event.data
      return (
        `[${d.requestId}] ${d.action} of execution ${d.of} asked by ` +
        `${d.via === "token" ? "the intake's bearer token" : `operator ${d.operator}`}: ${d.reason} (execution ${d.started})`
      )
    }
    case "TerminalOutcomeResolved": {
      const d = event.data
      return (
        `[${d.requestId}] ${d.operation} left unresolved, resolved by ${d.operator} as ` +
        (d.resolution === "applied"
          ? `applied${d.guid === undefined ? "" : ` as transaction ${d.guid}`}${d.amount === undefined ? "" : ` (${d.amount})`}`
          : "not applied: nothing moved") +
        `: ${d.reason}` +
        (d.statusEndpoint === undefined ? "" : `; the status endpoint said: ${d.statusEndpoint}`)
      )
    }
  }
}

/** The lines of a stream's events, in order: `<time>  <what happened>`. */
export const render = (events: ReadonlyArray<LifecycleEvent.Decoded>): ReadonlyArray<string> => {
  const lastTip = events.reduce((last, e, i) => (e.type === "TipAdjusted" ? i : last), -1)
  return events.map((event, i) => `${formatTime(event.data.at)}  ${describe(event, i === lastTip)}`)
}

/** Reads a lifecycle stream from the store and renders it. */
export const read = (streamId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const events = yield* LifecycleEvent.registry.decodeAll(yield* store.readStream(streamId))
    return render(events)
  })
