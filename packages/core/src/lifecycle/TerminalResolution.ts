/**
 * An operator's resolution of a terminal operation whose outcome stayed unknown: its
 * payment stream (`payment-<executionId>`) ended `OutcomeUnresolved` — no reference to
 * reconcile with and no result, reconciliation out of time, a contradiction — and only a
 * person who looked (at the terminal, the acquirer's report, the status endpoint) can say
 * what became of it. `decide` reads that stream and the execution's actions and records an
 * audited `TerminalOutcomeResolved` in `execution-actions-<id>`: `applied` with the guid
 * the gateway gave the transaction and what it moved (the amount asked unless the operator
 * says otherwise), `notApplied` as nothing moved. The ledger books an applied one as the
 * approval it stands for, and the terminal outcome recorder opens its transaction's history
 * from it (`TerminalOutcomeRecorder`), so a refund or a reversal can follow — through the
 * same money rules as any other. Refused, naming the rule, when the operation is not
 * unresolved (`resolve-only-in-doubt`: it ended otherwise, or is resolved already), when
 * the operator or the reason is blank, when an applied money-moving operation has no guid
 * (`applied-terminal-needs-guid`), when the amount is not above zero in the currency asked
 * (`resolved-amount-positive`), when the guid already has a history
 * (`guid-already-recorded`: the transaction is booked already, a second booking would count
 * it twice), or when it is a linked operation recorded as a request in its original's
 * history (`resolve-linked-on-original`: resolved there, by `InDoubtResolution`, which books
 * it).
 *
 * @example
 * const resolved = yield* TerminalResolution.resolve({
 *   executionId: "sale-7f3…",
 *   resolution: "applied",
 *   guid: "4f8e2a10-…",
 *   operator: "alice",
 *   reason: "the terminal's journal shows the sale approved"
 * })
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Money from "../model/Money.js"
import * as OperationOutcome from "../terminal/OperationOutcome.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as InDoubtResolution from "./InDoubtResolution.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as TransactionHistory from "./TransactionHistory.js"

/** The rule: an applied operation that moves money names the guid the gateway gave it. */
export const APPLIED_TERMINAL_NEEDS_GUID = "applied-terminal-needs-guid"
/** The rule: what an applied operation moved is above zero, in the currency it asked. */
export const RESOLVED_AMOUNT_POSITIVE = "resolved-amount-positive"
/** The rule: a guid already booked is not booked again. */
export const GUID_ALREADY_RECORDED = "guid-already-recorded"

/** What an operator says of a terminal operation left unresolved. */
export interface Input {
  /** The execution whose terminal operation ended unresolved. */
  readonly executionId: string
  /**
   * The request the operator means, when named: the attempt that ended unresolved (its
   * `attemptId`) or the execution itself; another is refused, so a resolution written for
   * one attempt is never recorded on another.
   */
  readonly requestId?: string | undefined
  readonly resolution: LifecycleEvent.Resolution
  /** Who resolves it. */
  readonly operator: string
  /** Why: what the operator knows. */
  readonly reason: string
  /** What the status endpoint said, if the operator asked it. */
  readonly statusEndpoint?: string | undefined
  /** Applied: the gateway's guid of the transaction (from its report or the status endpoint). */
  readonly guid?: string | undefined
  /** Applied: what it moved, when not the amount asked (a partial approval, a tip at the terminal). */
  readonly amount?: Money.Money | undefined
}

/** What was recorded. */
export interface Resolved {
  readonly executionId: string
  readonly attemptId: string
  readonly operation: string
  readonly resolution: LifecycleEvent.Resolution
  readonly at: DateTime.Utc
  readonly guid: string | undefined
  readonly amount: Money.Money | undefined
}

type Payment = EventRegistry.Decoded<(typeof PaymentEvents.events.definitions)[number]>

const blank = (text: string | undefined): boolean => text === undefined || text.trim().length === 0

/** The events that end a terminal operation, besides an unresolved outcome. */
const endings: ReadonlySet<string> = new Set([
  "PaymentAuthorised",
  "PaymentPartiallyApproved",
  "PaymentDeclined",
  "PaymentCancelled",
  "PaymentFailed",
  "ReceiptPrinted",
  "CardTokenized",
  "DevicePinged",
  "CardPanRead",
  "PaymentNotCharged",
  "OperationRejected",
  "TerminalUnavailable"
])

/**
 * The terminal operations that move or hold money (those the ledger books: the test holds
 * the two lists together): an applied one needs its guid and an amount, and is booked.
 */
export const moneyOperations: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "refund",
  "saleReversal",
  "refundReversal",
  "preAuthorization",
  "preAuthorizationIncrease",
  "preAuthorizationReversal",
  "preAuthorizationCapture",
  "moToSale",
  "moToRefund",
  "moToReversal",
  "moToPreAuthorization"
])

/** Whether an applied `operation` moves or holds money. */
export const movesMoney = (operation: string): boolean => moneyOperations.has(operation)

/** The rule: a linked operation recorded in its original's history is resolved there. */
export const RESOLVE_LINKED_ON_ORIGINAL = "resolve-linked-on-original"

/**
 * Decides a resolution from the operation's payment stream and the execution's actions:
 * the event to record, or the refusal.
 */
export const decide = (
  payment: ReadonlyArray<Payment>,
  actions: ReadonlyArray<LifecycleEvent.Decoded>,
  input: Input,
  at: DateTime.Utc
): Either.Either<LifecycleEvent.Event, LifecycleError.ResolutionRefused> => {
  const subject = `execution ${input.executionId}`
  const refuse = (rule: string, message: string) =>
    Either.left(
      new LifecycleError.ResolutionRefused({
        message,
        guid: input.executionId,
        requestId: input.executionId,
        rule
      })
    )
  if (blank(input.operator) || blank(input.reason))
    return refuse(
      InDoubtResolution.OPERATOR_AND_REASON_REQUIRED,
      `a resolution of ${subject} needs the operator's name and a reason`
    )
  const requested = payment.find((e) => e.type === "OperationRequested")
  if (requested === undefined || requested.type !== "OperationRequested")
    return refuse(
      InDoubtResolution.RESOLVE_ONLY_IN_DOUBT,
      `nothing to resolve: ${subject} sent no operation to a terminal`
    )
  const last = [...payment].reverse().find((e) => e.type === "OutcomeUnresolved" || endings.has(e.type))
  if (last === undefined || last.type !== "OutcomeUnresolved")
    return refuse(
      InDoubtResolution.RESOLVE_ONLY_IN_DOUBT,
      `nothing to resolve: the ${requested.data.operation} of ${subject} ` +
        (last === undefined ? "is still in flight" : `ended ${last.type}, not unresolved`)
    )
  const attemptId = last.data.attemptId
  if (
    input.requestId !== undefined &&
    ![attemptId, input.executionId, `resolve-${attemptId}`].includes(input.requestId.trim())
  )
    return refuse(
      InDoubtResolution.RESOLVE_ONLY_IN_DOUBT,
      `nothing to resolve under ${input.requestId}: the attempt of ${subject} left unresolved is ${attemptId}`
    )
  const earlier = actions.find((e) => e.type === "TerminalOutcomeResolved")
  if (earlier !== undefined && earlier.type === "TerminalOutcomeResolved")
    return refuse(
      InDoubtResolution.RESOLVE_ONLY_IN_DOUBT,
      `nothing to resolve: the ${requested.data.operation} of ${subject} was resolved as ` +
        `${earlier.data.resolution} by ${earlier.data.operator} at ${DateTime.formatIso(earlier.data.at)}`
    )
  const operation = requested.data.operation
  const applied = input.resolution === "applied"
  const money = applied && movesMoney(operation)
  if (money && blank(input.guid))
    return refuse(
      APPLIED_TERMINAL_NEEDS_GUID,
      `an applied ${operation} needs the guid the gateway gave it (from its report or the status endpoint): its history opens under it`
    )
  const asked = requested.data.amount
  const amount = money ? (input.amount ?? asked) : undefined
  if (money && amount === undefined)
    return refuse(
      RESOLVED_AMOUNT_POSITIVE,
      `an applied ${operation} without an amount asked needs the amount it moved`
    )
  if (
    amount !== undefined &&
    (!Money.isPositive(amount) || (asked !== undefined && asked.currency !== amount.currency))
  )
    return refuse(
      RESOLVED_AMOUNT_POSITIVE,
      `what an applied ${operation} moved must be above zero` +
        (asked === undefined ? "" : ` and in ${asked.currency}, the currency it asked`) +
        `, not ${Money.toMajorUnitsString(amount)} ${amount.currency}`
    )
  const reference = [...payment]
    .reverse()
    .find((e) => e.type === "AttemptRecorded" && e.data.attemptId === last.data.attemptId)
  return Either.right(
    LifecycleEvent.TerminalOutcomeResolved.make(
      defined({
        requestId: `resolve-${last.data.attemptId}`,
        at,
        executionId: input.executionId,
        attemptId: last.data.attemptId,
        operation,
        resolution: input.resolution,
        operator: input.operator.trim(),
        reason: input.reason.trim(),
        statusEndpoint: blank(input.statusEndpoint) ? undefined : input.statusEndpoint?.trim(),
        guid: applied && !blank(input.guid) ? input.guid?.trim() : undefined,
        amount,
        terminalType: requested.data.terminalType,
        transactionReference:
          reference !== undefined && reference.type === "AttemptRecorded"
            ? reference.data.transactionReference
            : undefined,
        originalTransactionId: requested.data.originalTransactionId,
        serialNumber: requested.data.serialNumber
      })
    )
  )
}

/**
 * The outcome an applied resolution stands for, as the terminal would have reported it:
 * what the ledger and the outcome recorder read (nothing for a resolution that moved none).
 */
export const outcomeOf = (
  resolved: Extract<LifecycleEvent.Decoded, { readonly type: "TerminalOutcomeResolved" }>["data"]
): OperationOutcome.Approved | undefined =>
  resolved.resolution !== "applied" || resolved.guid === undefined || !movesMoney(resolved.operation)
    ? undefined
    : new OperationOutcome.Approved({
        facts: defined({
          operation: resolved.operation,
          serialNumber: resolved.serialNumber ?? "",
          terminalType: resolved.terminalType ?? "",
          attempt: 0,
          attemptId: resolved.attemptId,
          transactionReference: resolved.transactionReference,
          originalTransactionId: resolved.originalTransactionId,
          finStatus: "AUTHORISED",
          source: "status" as const,
          requestedAmount: resolved.amount,
          totalAmount: resolved.amount,
          efttransactionID: resolved.guid,
          statusMessage: `resolved by ${resolved.operator}`
        })
      })

/** How many times a lost race is read and decided again. */
const maxRaces = 10

/**
 * Resolves a terminal operation left unresolved (see the module description): read,
 * decide, record at the version of the actions read; a concurrent append reads and decides
 * again.
 */
export const resolve = (
  input: Input
): Effect.Effect<
  Resolved,
  LifecycleError.ResolutionRefused | EventStore.EventStoreError,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const streamId = LifecycleEvent.executionActionsStream(input.executionId)
    const recorded = yield* store
      .readStream(PaymentEvents.paymentStream(input.executionId))
      .pipe(Effect.mapError(Guarded.storeFailure("read")))
    const payment = yield* PaymentEvents.events
      .decodeAll(recorded.filter((e) => PaymentEvents.events.has(e.type)))
      .pipe(Effect.mapError(Guarded.storeFailure("read")))
    // Whose operation it was (the engine's tenant on its events): the resolution is theirs too.
    const tenant = recorded[0]?.metadata["tenant"]
    // A linked operation (a capture, a reversal, a refund of an original tillflow knows) is
    // recorded as a request in its original's history and left in doubt there: it is resolved
    // there (`InDoubtResolution`), which books it; resolving it here too would book it twice.
    const requested = payment.find((e) => e.type === "OperationRequested")
    const original =
      requested?.type === "OperationRequested" ? requested.data.originalTransactionId : undefined
    if (original !== undefined) {
      const requestId = TransactionHistory.terminalRequestIdOf(input.executionId)
      const history = yield* Guarded.read(store, LifecycleEvent.transactionStream(original))
      if (history.events.some((e) => Guarded.requestIdOf(e) === requestId))
        return yield* new LifecycleError.ResolutionRefused({
          message: `the ${requested?.data.operation ?? "operation"} of execution ${input.executionId} is a request on transaction ${original}, left in doubt there: resolve it there (POST /v1/transactions/${original}/resolve, tillflow transactions resolve ${original} --request ${requestId}), which books it`,
          guid: input.executionId,
          requestId,
          rule: RESOLVE_LINKED_ON_ORIGINAL
        })
    }
    for (let race = 0; ; race++) {
      const { events, version } = yield* Guarded.read(store, streamId)
      const at = yield* DateTime.now
      const event = yield* decide(payment, events, input, at)
      const data = event.data as Extract<
        LifecycleEvent.Decoded,
        { readonly type: "TerminalOutcomeResolved" }
      >["data"]
      if (data.guid !== undefined) {
        const history = yield* Guarded.read(store, LifecycleEvent.transactionStream(data.guid))
        if (history.events.length > 0)
          return yield* new LifecycleError.ResolutionRefused({
            message: `transaction ${data.guid} already has a history: it is booked, and resolving execution ${input.executionId} as applied under it would count it twice`,
            guid: input.executionId,
            requestId: data.requestId,
            rule: GUID_ALREADY_RECORDED
          })
      }
      const eventId = yield* Guarded.eventId(streamId, "resolve-terminal", data.attemptId, String(version))
      const encoded = yield* LifecycleEvent.registry
        .encodeAll([{ ...event, eventId } as LifecycleEvent.Event])
        .pipe(Effect.mapError(Guarded.storeFailure("encode")))
      const stamped =
        typeof tenant === "string"
          ? encoded.map((e) => ({ ...e, metadata: { ...e.metadata, tenant } }))
          : encoded
      const appended = yield* Effect.either(store.append(streamId, EventStore.exactVersion(version), stamped))
      if (Either.isRight(appended))
        return {
          executionId: input.executionId,
          attemptId: data.attemptId,
          operation: data.operation,
          resolution: data.resolution,
          at,
          guid: data.guid,
          amount: data.amount
        }
      const error = appended.left
      if (error._tag !== "ConcurrencyConflict" || race >= maxRaces)
        return yield* Effect.fail(Guarded.storeFailure("append")(error))
    }
  }).pipe(Effect.withSpan("TerminalResolution.resolve", { attributes: { executionId: input.executionId } }))
