/**
 * How each terminal-less operation ended — a capture, a hold change, a reversal, a MOTO sale
 * or refund, a tip adjustment, a tokenization, a batch close, a device command — read from
 * the event log as terminal operations' endings are (`LogMetrics`): one log line per ending
 * (INFO; ERROR for an outcome still in doubt, which needs a person) with the operation, the
 * transaction, the terminal, the amount and the outcome, and a counter by operation and
 * outcome. Facts folded from a linked operation sent to a terminal (`terminal-…` request
 * ids) are that terminal operation's, already logged and counted by its own outcome.
 *
 * @example
 * yield* TerminalLessOutcomes.observe(recorded) // for every event of the global log
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
import * as LinkedTerminalRules from "../lifecycle/LinkedTerminalRules.js"
import * as Money from "../model/Money.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import * as Ledger from "./Ledger.js"

/** Terminal-less operations that ended, by operation and outcome. */
export const outcomes = Metric.counter("tillflow_terminal_less_outcomes_total", {
  description:
    "terminal-less operations (capture, hold change, reversal, MOTO, tip, tokenization, batch, device command) that ended, by operation and outcome",
  incremental: true
})

/** How an operation ended. */
export type Outcome = "approved" | "declined" | "refused" | "failed" | "in doubt"

/** The outcomes, as the metric's `outcome` label takes them. */
export const outcomeLabels: ReadonlyArray<Outcome> = ["approved", "declined", "refused", "failed", "in doubt"]

/** One operation's end. */
export interface Ending {
  readonly operation: string
  readonly outcome: Outcome
  readonly requestId: string
  readonly amount?: Money.Money | undefined
  readonly terminal?: string | undefined
  /** The refused rule, or the error and message of a failure or a doubt. */
  readonly detail?: string | undefined
}

/** The event types that end a terminal-less operation. */
export const endingTypes: ReadonlySet<string> = new Set([
  ...Ledger.lifecycleFactTypes,
  "CardTokenized",
  "BatchClosed",
  "DeviceCommandAccepted",
  "OperationRefused",
  "OperationFailed",
  "OperationInDoubt"
])

const paymentStreamPrefix = PaymentEvents.paymentStream("")

/** Whether a recorded event ends a terminal-less operation (not a terminal operation's own event). */
export const isEnding = (event: EventStore.RecordedEvent): boolean =>
  endingTypes.has(event.type) && !event.streamId.startsWith(paymentStreamPrefix)

/** The end an event records, if it is one (none for facts folded from a terminal operation). */
export const endingOf = (event: LifecycleEvent.Decoded): Ending | undefined => {
  // Folded from a linked operation sent to a terminal: its own outcome ended it.
  if (LinkedTerminalRules.isFromTerminal(event)) return undefined
  const data = event.data as { readonly requestId?: string; readonly serialNumber?: string }
  const requestId = data.requestId ?? ""
  const base = { requestId, terminal: data.serialNumber }
  switch (event.type) {
    case "MotoSaleApproved":
      return { ...base, operation: "motoSale", outcome: "approved", amount: event.data.amount }
    case "MotoSaleDeclined":
      return { ...base, operation: "motoSale", outcome: "declined", detail: event.data.finStatus }
    case "PreAuthorizationCaptured":
      return { ...base, operation: "capture", outcome: "approved", amount: event.data.total }
    case "HoldIncreased":
      return { ...base, operation: "increase", outcome: "approved", amount: event.data.delta }
    case "HoldDecreased":
      return { ...base, operation: "decrease", outcome: "approved", amount: event.data.delta }
    case "Reversed":
      return { ...base, operation: "reversal", outcome: "approved", amount: event.data.amount }
    case "Refunded":
      return { ...base, operation: "motoRefund", outcome: "approved", amount: event.data.amount }
    case "TipAdjusted":
      return { ...base, operation: "tipAdjustment", outcome: "approved", amount: event.data.tip }
    case "CardTokenized":
      return { ...base, operation: "tokenization", outcome: "approved" }
    case "BatchClosed":
      return {
        ...base,
        operation: "batchClose",
        outcome: "approved",
        detail: `batch ${event.data.batchNumber}`
      }
    case "DeviceCommandAccepted":
      return { ...base, operation: "deviceCommand", outcome: "approved", detail: event.data.command }
    case "OperationRefused":
      return {
        ...base,
        operation: event.data.operation,
        outcome: "refused",
        detail: `rule ${event.data.rule}: ${event.data.message}`
      }
    case "OperationFailed":
      return {
        ...base,
        operation: event.data.operation,
        outcome: "failed",
        detail: `${event.data.error}: ${event.data.message}`
      }
    case "OperationInDoubt":
      return { ...base, operation: event.data.operation, outcome: "in doubt", detail: event.data.message }
    case "InDoubtResolved":
      return {
        ...base,
        operation: event.data.operation,
        outcome: event.data.resolution === "applied" ? "approved" : "failed",
        amount: event.data.amount,
        detail: `resolved by ${event.data.operator}: ${event.data.reason}`
      }
    default:
      return undefined
  }
}

/** The one line of an ending: an ERROR for an outcome in doubt (a person must look), else INFO. */
const log = (ending: Ending, event: EventStore.RecordedEvent): Effect.Effect<void> => {
  const text = `${ending.operation} ${ending.outcome}${ending.detail === undefined ? "" : `: ${ending.detail}`}`
  const line =
    ending.outcome === "in doubt"
      ? Effect.logError(`${text}; look at the status endpoint, then resolve it`)
      : Effect.logInfo(text)
  return line.pipe(
    Effect.annotateLogs({
      operation: ending.operation,
      outcome: ending.outcome,
      requestId: ending.requestId,
      ...(ending.terminal === undefined ? {} : { terminal: ending.terminal }),
      ...(ending.amount === undefined
        ? {}
        : { amount: Money.toMajorUnitsString(ending.amount), currency: ending.amount.currency }),
      event: event.type,
      stream: event.streamId
    })
  )
}

/**
 * Logs and counts the end an event records, if it is one. An event that does not decode is
 * logged as a warning (the audit's `verify` and ledger report it too), never dropped silently.
 */
export const observe = (event: EventStore.RecordedEvent): Effect.Effect<void> =>
  LifecycleEvent.registry.decode(event).pipe(
    Effect.flatMap((decoded) => {
      const ending = endingOf(decoded)
      return ending === undefined
        ? Effect.void
        : Effect.zipRight(
            Metric.increment(
              Metric.tagged(Metric.tagged(outcomes, "operation", ending.operation), "outcome", ending.outcome)
            ),
            log(ending, event)
          )
    }),
    Effect.catchAll((error) =>
      Effect.logWarning(`a terminal-less fact could not be read: ${error.message}`).pipe(
        Effect.annotateLogs({ event: event.type, stream: event.streamId })
      )
    )
  )

/** Every series of the counter at zero, for each operation and outcome. Idempotent. */
export const initialize: Effect.Effect<void> = Effect.forEach(
  LifecycleEvent.Operation.literals.flatMap((operation) =>
    outcomeLabels.map((outcome) =>
      Metric.value(Metric.tagged(Metric.tagged(outcomes, "operation", operation), "outcome", outcome))
    )
  ),
  (touch) => touch,
  { discard: true }
)
