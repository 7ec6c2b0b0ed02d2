/**
 * Step 5 of the payment protocol: learning the outcome of an attempt whose result did not
 * come, or said UNDEFINED, from the status endpoint — asked again and again, each answer an
 * activity (`attempt-N/status-J`, a `ReconciliationChecked` event) read by the rules of
 * `Reconciliation`, with durable pauses of the recovery rhythm between: IN_PROGRESS → ask
 * again; NOT FOUND within the 90 s window → wait for the rest of it; NOT FOUND after it →
 * not charged (`AttemptNotCharged`); a final status → settled; past `reconcileTimeout` →
 * unresolved. A result delivered by callback while the endpoint cannot yet tell (a sale
 * stopped at the card never reaches the gateway) settles the attempt at the next check.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import type * as Identifiers from "../model/Identifiers.js"
import * as CallbackRegistration from "./CallbackRegistration.js"
import { StoredStatus } from "../model/TransactionResult.js"
import * as PaymentEvents from "./PaymentEvents.js"
import * as OperationOutcome from "./OperationOutcome.js"
import {
  type Execution,
  type Payload,
  type Plan,
  recoveryDelay,
  undecodableGraceOf
} from "./ProtocolWorkflows.js"
import * as Reconciliation from "./Reconciliation.js"
import * as ResultRedaction from "./ResultRedaction.js"
import type { AttemptInfo } from "./SendAttempt.js"
import * as Settle from "./Settle.js"
import { durableSleep, now, type PaymentEvent } from "./internal/step.js"
import * as UndecodableAnswer from "./internal/UndecodableAnswer.js"

/** How reconciliation ended. */
export type Reconciled =
  | { readonly _tag: "Settled"; readonly outcome: OperationOutcome.Outcome }
  | { readonly _tag: "NotCharged"; readonly at: number }
  | {
      readonly _tag: "Unresolved"
      readonly message: string
      readonly reason: OperationOutcome.UnresolvedReason
    }

/**
 * Whether the status endpoint can tell about the attempt: an original operation by its own
 * reference, a linked one by the original's and the baseline recorded before its POST.
 */
export const reconcilable = (payload: Payload, attempt: AttemptInfo): boolean =>
  attempt.transactionReference !== undefined ||
  (payload.originalTransactionReference !== undefined && attempt.baseline !== undefined)

/** One answer of the status endpoint, as the step recorded it. */
const StatusCheck = Schema.Struct({
  verdict: Reconciliation.Verdict,
  /** Stored with its personal members wrapped (`TransactionResult.StoredStatus`). */
  entry: Schema.optional(StoredStatus),
  waitMillis: Schema.optional(Schema.Number),
  detail: Schema.optional(Schema.String),
  /** Proved not charged, yet a charge was delivered by callback for the attempt. */
  chargeDelivered: Schema.optional(Schema.Boolean),
  /** The service answered, but its answer does not decode. */
  undecodable: Schema.optional(Schema.Boolean),
  /**
   * The status endpoint did not settle the attempt, but a result was delivered for it by
   * callback meanwhile (recorded in its attempt's stream): the attempt settles with it.
   * Absent from checks recorded before it was looked for.
   */
  delivered: Schema.optional(CallbackRegistration.DeliveredResult),
  at: Schema.Number
})
type StatusCheck = typeof StatusCheck.Type

/** `…/status-N`, its schemas built once. */
const statusStep = DurableStep.family({ success: StatusCheck })

/**
 * Step 5: asks the status endpoint until it settles the attempt or proves it not charged.
 * `sentAt` is when the attempt's POST ended.
 */
export const reconcile = (
  execution: Execution,
  plan: Plan,
  recorded: AttemptInfo,
  context: OperationOutcome.AttemptContext,
  sentAt: number
) =>
  Effect.gen(function* () {
    // The 90 s window counts from when the POST ended, not from when the attempt was
    // recorded before it: the later instant is the safe one for "never reached".
    const attempt = { ...recorded, attemptedAt: Math.max(recorded.attemptedAt, sentAt) }
    const prefix = `attempt-${attempt.attempt}`
    const reference = attempt.transactionReference ?? execution.payload.originalTransactionReference
    if (reference === undefined || !reconcilable(execution.payload, attempt)) {
      return {
        _tag: "Unresolved",
        message: "the outcome is unknown and the operation has no reference to reconcile with",
        reason: "NoReference"
      } satisfies Reconciled
    }
    // Since when every answer has been one that does not decode: asking again does not
    // mend that, so after the grace the outcome is unresolved (minutes, not the day
    // reconciliation may take through outages).
    let undecodableSince: number | undefined
    for (let j = 0; ; j++) {
      const step = `${prefix}/status-${j}`
      const check: StatusCheck = yield* statusStep(step)(
        checkStatus(execution, plan, attempt, reference, step)
      )
      // A result delivered by callback while reconciling (the terminal's own word: a sale
      // stopped at the card never reaches the gateway, whose status endpoint then knows
      // nothing of it until the window proves it not charged, and a retry would sell again).
      if (check.delivered !== undefined) {
        const reading = OperationOutcome.read(check.delivered.result, context, "callback")
        if (reading._tag === "Settled") return reading satisfies Reconciled
      }
      switch (check.verdict) {
        case "Settled": {
          if (check.entry !== undefined) {
            const reading = OperationOutcome.read(check.entry, context, "status")
            if (reading._tag === "Settled") return reading satisfies Reconciled
          }
          break
        }
        case "NotCharged":
          // The terminal delivered a charge the status endpoint does not know: a new
          // attempt could charge the card twice, so the operation ends unresolved, its
          // `ResultMismatch` recorded, for a person to look at.
          if (check.chargeDelivered === true) {
            return {
              _tag: "Unresolved",
              message:
                "the status endpoint found no transaction, but the terminal delivered a charge for this attempt: not retried, see its ResultMismatch",
              reason: "ChargeContradicted"
            } satisfies Reconciled
          }
          return { _tag: "NotCharged", at: check.at } satisfies Reconciled
        case "NotFoundYet":
          yield* durableSleep(
            `${prefix}/status-wait-${j}`,
            Math.min(recoveryDelay(plan, j), check.waitMillis ?? recoveryDelay(plan, j))
          )
          continue
        case "InProgress":
        case "Unavailable":
          break
      }
      undecodableSince = check.undecodable === true ? (undecodableSince ?? check.at) : undefined
      if (undecodableSince !== undefined && check.at - undecodableSince >= undecodableGraceOf(plan)) {
        return {
          _tag: "Unresolved",
          message: `the service's answers about ${reference} could not be decoded for ${Duration.format(Duration.millis(check.at - undecodableSince))} (${check.detail ?? "undecodable"}): the outcome is unresolved; what it sent is stored raw`,
          reason: "Undecodable"
        } satisfies Reconciled
      }
      if (check.at - attempt.attemptedAt > plan.reconcileTimeoutMillis) {
        return {
          _tag: "Unresolved",
          message: `reconciliation found no final status within ${Duration.format(Duration.millis(plan.reconcileTimeoutMillis))}`,
          reason: "ReconcileTimeout"
        } satisfies Reconciled
      }
      yield* durableSleep(`${prefix}/status-wait-${j}`, recoveryDelay(plan, j))
    }
  })

/**
 * One status check (the body of `attempt-N/status-J`): the answer read into a verdict and
 * recorded, with `AttemptNotCharged` when it proves the attempt not charged.
 */
const checkStatus = (
  execution: Execution,
  plan: Plan,
  attempt: AttemptInfo,
  reference: Identifiers.TransactionReference,
  step: string
): Effect.Effect<StatusCheck> =>
  Effect.gen(function* () {
    const linked = attempt.transactionReference === undefined
    const answer = yield* Effect.either(
      execution.cloud.transactionStatus(reference, linked ? "all" : "first")
    )
    const checkedAt = yield* now
    const reading = Reconciliation.read(
      answer._tag === "Right"
        ? { _tag: "Entries", entries: answer.right }
        : { _tag: "Failed", error: answer.left },
      {
        attemptedAt: attempt.attemptedAt,
        checkedAt,
        baseline: linked ? attempt.baseline : undefined,
        window: Duration.millis(plan.notFoundWindowMillis)
      }
    )
    const check: StatusCheck = {
      verdict: reading._tag,
      at: checkedAt,
      ...(reading._tag === "Settled" ? { entry: ResultRedaction.sanitiseStatusResult(reading.entry) } : {}),
      ...(reading._tag === "NotFoundYet" ? { waitMillis: Duration.toMillis(reading.remaining) } : {}),
      ...(reading._tag === "Unavailable" ? { detail: reading.reason } : {}),
      ...(answer._tag === "Left" && UndecodableAnswer.bodyOf(answer.left) !== undefined
        ? { undecodable: true }
        : {})
    }
    const events: Array<PaymentEvent> = [
      PaymentEvents.ReconciliationChecked.make({
        attempt: attempt.attempt,
        attemptId: attempt.attemptId,
        at: checkedAt,
        verdict: reading._tag,
        ...(reading._tag === "Settled" && reading.entry.finStatus !== undefined
          ? { finStatus: reading.entry.finStatus }
          : {}),
        ...(reading._tag === "Unavailable" ? { detail: reading.reason } : {})
      })
    ]
    if (reading._tag === "NotCharged") {
      events.push(
        PaymentEvents.AttemptNotCharged.make({
          attempt: attempt.attempt,
          attemptId: attempt.attemptId,
          at: checkedAt,
          ...(attempt.transactionReference === undefined
            ? {}
            : { transactionReference: attempt.transactionReference })
        })
      )
    }
    yield* execution.emit(step, events)
    // Not settled by the endpoint: a result delivered by callback meanwhile settles it.
    if (reading._tag === "NotFoundYet" || reading._tag === "InProgress" || reading._tag === "Unavailable") {
      const delivered = yield* CallbackRegistration.recordedResult(execution.store, attempt.attemptId)
      if (delivered !== null && delivered !== "undecodable") return { ...check, delivered }
    }
    // Its results, once the conclusion has landed: those the receiver could not
    // yet note against it, those delivered during reconciliation included. A charge
    // among them contradicts the status endpoint: the attempt is not retried.
    if (reading._tag === "NotCharged") {
      const noted = yield* Settle.noteNotCharged(execution, attempt.attemptId)
      if (noted.disagreeing > 0) return { ...check, chargeDelivered: true }
    }
    return check
  })
