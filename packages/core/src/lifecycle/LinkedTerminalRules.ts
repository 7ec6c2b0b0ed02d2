/**
 * The money rules of linked operations sent to a terminal (`TerminalOperations`): a
 * `preAuthorizationCapture`, `preAuthorizationIncrease`, `preAuthorizationReversal`,
 * `saleReversal`, `refundReversal` or `moToReversal` is decided from its original's
 * history by the same decisions as its terminal-less twin — `PreAuthorizationRules`
 * (capture once, window and tolerance, hold changes while open), `ReversalWorkflow`
 * (what a reversal undoes, a capture before settlement), `MotoRules` (24 h, before the
 * batch) — recorded there at the version read before anything is sent, and its ending
 * folded into that history. So a terminal capture and a terminal-less capture of one
 * pre-authorization, however they race, end with one capture: the second to record its
 * request reads the first's and is refused. An operation whose answer is lost is
 * reconciled through the original's reference, which `admit` reads from the history when
 * the caller did not give it, and its reconciled ending concludes the request; only one
 * that stays unresolved leaves the original in doubt. This module provides the payment protocol's
 * `LinkedOperationRules` port.
 *
 * @example
 * const Protocol = PaymentProtocol.layer.pipe(
 *   Layer.provide(LinkedTerminalRules.layer({ mcc: Option.some("7011") }))
 * )
 */
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Identifiers from "../model/Identifiers.js"
import * as Money from "../model/Money.js"
import type * as TransactionRequest from "../model/TransactionRequest.js"
import * as LinkedOperationRules from "../terminal/LinkedOperationRules.js"
import * as OperationOutcome from "../terminal/OperationOutcome.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as MotoRules from "./MotoRules.js"
import * as PreAuthorizationRules from "./PreAuthorizationRules.js"
import * as ReversalWorkflow from "./ReversalWorkflow.js"
import * as TerminalOutcomeRecorder from "./TerminalOutcomeRecorder.js"
import * as MoneyRules from "./MoneyRules.js"
import * as TransactionHistory from "./TransactionHistory.js"

/** Options of the rules. */
export interface Options {
  /** The merchant category code, with which approved pre-authorizations open their history. */
  readonly mcc: Option.Option<string>
  /** A merchant's MCC, for its own pre-authorizations (`TerminalOutcomeRecorder.Options.mccOf`). */
  readonly mccOf?: ((merchant: string) => Effect.Effect<Option.Option<string>>) | undefined
  /** How long to wait for the original's history to show in the log (`TerminalOutcomeRecorder.catchUpFor`). */
  readonly historyWait?: Duration.DurationInput | undefined
}

/** The `requestId` a linked terminal operation is recorded under in its original's history. */
export const requestIdOf = (executionId: string): string =>
  TransactionHistory.terminalRequestIdOf(executionId)

/**
 * Whether a lifecycle event was folded from a linked operation sent to a terminal: the
 * terminal's own outcome event counts it (in the ledger), the fold must not count it again.
 */
export const isFromTerminal = (event: LifecycleEvent.Decoded): boolean => {
  const requestId = Guarded.requestIdOf(event)
  return requestId !== undefined && requestId.startsWith(TransactionHistory.terminalRequestPrefix)
}

type Refusal = { readonly _tag: string; readonly message: string }
type State = TransactionHistory.State

/** One linked operation: how it is decided, and what its approval records. */
interface Plan {
  readonly guid: string
  readonly decision: Guarded.Decision<State, void, Refusal>
  readonly applied: (
    state: State,
    requested: LifecycleEvent.Event,
    facts: OperationOutcome.Facts,
    now: DateTime.Utc
  ) => ReadonlyArray<Guarded.Append>
}

const stateOf = (guid: string, operation: LifecycleEvent.Operation) => Ops.foldTransaction(guid, operation)

/** What the ending of a linked operation leads its original's history to record. */
const notApplicable = (state: State, operation: string, kinds: string, rule: string) =>
  new LifecycleError.OperationNotApplicable({
    message: `${operation} applies to ${kinds}; ${state.guid} is a ${state.kind}`,
    guid: state.guid,
    operation,
    kind: state.kind,
    rule
  })

const reversed =
  (requestId: string) =>
  (
    state: State,
    requested: LifecycleEvent.Event,
    facts: OperationOutcome.Facts,
    now: DateTime.Utc
  ): ReadonlyArray<Guarded.Append> =>
    ReversalWorkflow.reversed(
      state.guid,
      requestId,
      requested,
      now,
      facts.efttransactionID,
      facts.source === "status",
      state
    ).appends

/** A capture through the terminal: `PreAuthorizationRules.decideCapture` (the full hold when no amount is given). */
const capturePlan = (guid: string, requestId: string, amount: Money.Money | undefined): Plan => ({
  guid,
  decision: {
    operation: "capture",
    streamId: LifecycleEvent.transactionStream(guid),
    requestId,
    requestedType: "CaptureRequested",
    outcomeTypes: ["PreAuthorizationCaptured"],
    fold: stateOf(guid, "capture"),
    decide: (state, now) =>
      PreAuthorizationRules.decideCapture(
        state,
        {
          requestId,
          amount: amount ?? state.preAuthorization?.hold ?? state.amount,
          enforcement: "refuse"
        },
        now
      ),
    output: () => undefined
  },
  applied: (_state, requested, facts, now) => [
    {
      streamId: LifecycleEvent.transactionStream(guid),
      expected: "any",
      events: [
        LifecycleEvent.PreAuthorizationCaptured.make(
          defined({
            requestId,
            at: now,
            total: (requested.data as { readonly total: Money.Money }).total,
            captureGuid: facts.efttransactionID,
            reconciled: facts.source === "status"
          })
        )
      ]
    }
  ]
})

/** An increase through the terminal: `decideHoldChange`, a negative amount being a decrease. */
const holdChangePlan = (guid: string, requestId: string, amount: Money.Money): Plan => {
  const direction = amount.minorUnits < 0n ? "decrease" : "increase"
  const delta = Money.make(amount.minorUnits < 0n ? -amount.minorUnits : amount.minorUnits, amount.currency)
  return {
    guid,
    decision: {
      operation: direction,
      streamId: LifecycleEvent.transactionStream(guid),
      requestId,
      requestedType: direction === "increase" ? "HoldIncreaseRequested" : "HoldDecreaseRequested",
      outcomeTypes: direction === "increase" ? ["HoldIncreased"] : ["HoldDecreased"],
      fold: stateOf(guid, direction),
      decide: (state, at) =>
        PreAuthorizationRules.decideHoldChange(state, direction, { requestId, amount: delta }, at),
      output: () => undefined
    },
    applied: (state, _requested, facts, now) => {
      const before = state.preAuthorization?.hold ?? Money.zero(delta.currency)
      const hold = direction === "increase" ? Ops.plus(before, delta) : Ops.minus(before, delta)
      const data = defined({
        requestId,
        at: now,
        delta,
        hold,
        gatewayGuid: facts.efttransactionID,
        reconciled: facts.source === "status"
      })
      return [
        {
          streamId: LifecycleEvent.transactionStream(guid),
          expected: "any",
          events: [
            direction === "increase"
              ? LifecycleEvent.HoldIncreased.make(data)
              : LifecycleEvent.HoldDecreased.make(data)
          ]
        }
      ]
    }
  }
}

/** Which transactions a reversal sent to a terminal applies to. */
const reversalApplies = (operation: string, state: State): Option.Option<Refusal> => {
  switch (operation) {
    case "preAuthorizationReversal":
      return state.preAuthorization === undefined
        ? Option.some(notApplicable(state, operation, "a pre-authorization", "pre-authorization-only"))
        : Option.none()
    case "saleReversal":
      return state.kind === "sale" || state.kind === "saleAndTokenizeCard"
        ? Option.none()
        : Option.some(notApplicable(state, operation, "a sale", "sale-only"))
    default:
      return state.kind === "refund"
        ? Option.none()
        : Option.some(notApplicable(state, operation, "a refund", "refund-only"))
  }
}

/** A reversal through the terminal: `ReversalWorkflow.decideTarget`, after the settlement check. */
const reversalPlan = (
  guid: string,
  requestId: string,
  operation: string,
  amount: Money.Money | undefined,
  capabilities: ReversalWorkflow.AcquirerCapabilities["Type"]
): Plan => ({
  guid,
  decision: {
    operation: "reversal",
    streamId: LifecycleEvent.transactionStream(guid),
    requestId,
    requestedType: "ReversalRequested",
    outcomeTypes: ["Reversed"],
    fold: stateOf(guid, "reversal"),
    precheck: (state) => ReversalWorkflow.settlementCheck(state),
    decide: (state, at) =>
      Option.match(reversalApplies(operation, state), {
        onSome: (refusal): Either.Either<LifecycleEvent.Event, Refusal> => Either.left(refusal),
        onNone: () =>
          Either.map(ReversalWorkflow.decideTarget(state, amount, capabilities, at), (decided) =>
            LifecycleEvent.ReversalRequested.make(
              defined({
                requestId,
                at,
                endpoint: "reversal" as const,
                target: decided.target,
                amount: decided.partial ? decided.amount : undefined
              })
            )
          )
      }),
    output: () => undefined
  },
  applied: reversed(requestId)
})

/**
 * A refund linked to its sale through the terminal (`refund` or `moToRefund` with an
 * `originalTransactionId`): `MoneyRules.decideRefund`, folded as a refund of the sale.
 */
const refundPlan = (guid: string, requestId: string, amount: Money.Money): Plan => ({
  guid,
  decision: {
    operation: "refund",
    streamId: LifecycleEvent.transactionStream(guid),
    requestId,
    requestedType: "RefundRequested",
    outcomeTypes: ["Refunded"],
    fold: stateOf(guid, "refund"),
    decide: (state, at) =>
      Option.match(MoneyRules.decideRefund(state, amount, "refund"), {
        onSome: (refusal): Either.Either<LifecycleEvent.Event, Refusal> => Either.left(refusal),
        onNone: () => Either.right(LifecycleEvent.RefundRequested.make({ requestId, at, amount }))
      }),
    output: () => undefined
  },
  applied: (state, _requested, facts, now) => [
    {
      streamId: LifecycleEvent.transactionStream(guid),
      expected: "any",
      events: [
        LifecycleEvent.Refunded.make(
          defined({
            requestId,
            at: now,
            // A partial approval refunds what the result says it totalled.
            amount: facts.totalAmount?.currency === amount.currency ? facts.totalAmount : amount,
            refundGuid: facts.efttransactionID,
            reconciled: facts.source === "status",
            serialNumber: state.serialNumber,
            merchant: state.merchant
          })
        )
      ]
    }
  ]
})

/** A MOTO reversal through the terminal: `MotoRules` (24 h, before the batch). */
const motoReversalPlan = (guid: string, requestId: string): Plan => ({
  guid,
  decision: {
    operation: "motoReversal",
    streamId: LifecycleEvent.transactionStream(guid),
    requestId,
    requestedType: "ReversalRequested",
    outcomeTypes: ["Reversed"],
    fold: stateOf(guid, "motoReversal"),
    precheck: (state) => MotoRules.reversalBeforeBatch(state),
    decide: (state, at) =>
      Option.match(MotoRules.decideReversal(state, at), {
        onSome: (refusal): Either.Either<LifecycleEvent.Event, Refusal> => Either.left(refusal),
        onNone: () =>
          Either.right(
            LifecycleEvent.ReversalRequested.make({
              requestId,
              at,
              endpoint: "motoReversal",
              target: "transaction"
            })
          )
      }),
    output: () => undefined
  },
  applied: reversed(requestId)
})

/** The plan of a linked request (none for any other). */
export const planOf = (
  linked: LinkedOperationRules.Linked,
  capabilities: ReversalWorkflow.AcquirerCapabilities["Type"]
): Plan | undefined => {
  const request: TransactionRequest.TransactionRequest = linked.request
  if (!("originalTransactionId" in request)) return undefined
  const guid = request.originalTransactionId
  const requestId = requestIdOf(linked.executionId)
  switch (request.operation) {
    case "preAuthorizationCapture":
      return capturePlan(guid, requestId, request.amount)
    case "preAuthorizationIncrease":
      return holdChangePlan(guid, requestId, request.amount)
    case "preAuthorizationReversal":
      return reversalPlan(guid, requestId, request.operation, undefined, capabilities)
    case "saleReversal":
    case "refundReversal":
      return reversalPlan(guid, requestId, request.operation, request.amount, capabilities)
    case "refund":
    case "moToRefund":
      return refundPlan(guid, requestId, request.amount)
    case "moToReversal":
      return motoReversalPlan(guid, requestId)
    default:
      return undefined
  }
}

const ruleOf = (refusal: Refusal): string =>
  "rule" in refusal && typeof refusal.rule === "string" ? refusal.rule : refusal._tag

/** How an ending is recorded: applied, not applied, or unknown (nothing for a refusal). */
const conclusionOf = (
  plan: Plan,
  state: State,
  requested: LifecycleEvent.Event,
  ending: LinkedOperationRules.Ending,
  now: DateTime.Utc
): Guarded.Conclusion | undefined => {
  if (Either.isRight(ending)) {
    const outcome = ending.right
    return outcome._tag === "Approved" || outcome._tag === "PartiallyApproved"
      ? { _tag: "Applied", appends: plan.applied(state, requested, outcome.facts, now) }
      : {
          _tag: "Failed",
          error: outcome._tag,
          message: `the terminal answered ${outcome.facts.finStatus}: nothing was applied`
        }
  }
  const error = ending.left
  switch (error._tag) {
    case "OperationRefused":
      return undefined
    case "OutcomeUnresolved":
      return { _tag: "InDoubt", message: error.message }
    default:
      return { _tag: "Failed", error: error._tag, message: error.message }
  }
}

const decodeReference = Schema.decodeUnknownOption(Identifiers.TransactionReference)
/** A reference the history holds, if it is one the status endpoint takes (a UUID v4). */
const referenceOf = (reference: string | undefined): Option.Option<Identifiers.TransactionReference> =>
  reference === undefined ? Option.none() : decodeReference(reference)

/** The rules over the event store in context. */
export const make = (
  options: Options
): Effect.Effect<LinkedOperationRules.Service, never, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    // The merchant's acquirer: the deployment's, as configured where the rules are built (the
    // worker's stack), under what the registry holds for the execution's merchant (read in
    // `admit`, a recorded step of the payment protocol).
    const defaults = yield* ReversalWorkflow.AcquirerCapabilities
    const capabilitiesFor = yield* ReversalWorkflow.capabilitiesOf
    const withStore = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore>) =>
      Effect.provideService(effect, EventStore.EventStore, store)

    const admit = (linked: LinkedOperationRules.Linked) =>
      Effect.gen(function* () {
        const plan = planOf(linked, yield* Effect.flatMap(Tenant.current, capabilitiesFor))
        if (plan === undefined) return
        // Terminal operations approved so far become histories (the original's among them),
        // waited for a moment if the log does not show the original's yet.
        yield* TerminalOutcomeRecorder.catchUpFor(
          { mcc: options.mcc, mccOf: options.mccOf },
          plan.guid,
          options.historyWait
        )
        const admitted = yield* Guarded.admit(plan.decision).pipe(
          Effect.catchIf(
            (error): error is Refusal => error._tag !== "EventStoreError",
            (refusal) =>
              Effect.fail(
                new OperationOutcome.OperationRefused({
                  message: `${linked.request.operation} refused, nothing was sent: ${refusal.message}`,
                  operation: linked.request.operation,
                  originalTransactionId: plan.guid,
                  error: refusal._tag,
                  rule: ruleOf(refusal)
                })
              )
          )
        )
        // The original's reference, through which a lost answer is reconciled (selector `all`).
        return Option.getOrUndefined(referenceOf(admitted.state.transactionReference))
      }).pipe(
        withStore,
        Effect.catchTag("EventStoreError", (error) => Effect.die(error)),
        Effect.withSpan("LinkedTerminalRules.admit")
      )

    const conclude = (linked: LinkedOperationRules.Linked, ending: LinkedOperationRules.Ending) =>
      Effect.gen(function* () {
        // What it concludes does not depend on the acquirer (only what `admit` decided does).
        const plan = planOf(linked, defaults)
        if (plan === undefined) return
        const { events } = yield* Guarded.read(store, plan.decision.streamId)
        const folded = plan.decision.fold(events)
        const requested = events.find(
          (e) => Guarded.requestIdOf(e) === plan.decision.requestId && e.type === plan.decision.requestedType
        )
        if (Either.isLeft(folded) || requested === undefined) return
        const now = yield* DateTime.now
        const conclusion = conclusionOf(plan, folded.right, Guarded.asEvent(requested), ending, now)
        if (conclusion !== undefined) yield* Guarded.conclude(plan.decision, conclusion)
      }).pipe(withStore, Effect.orDie, Effect.withSpan("LinkedTerminalRules.conclude"))

    return { admit, conclude }
  })

/** The rules as the payment protocol's `LinkedOperationRules`, over the event store in context. */
export const layer = (
  options: Options
): Layer.Layer<LinkedOperationRules.LinkedOperationRules, never, EventStore.EventStore> =>
  Layer.effect(LinkedOperationRules.LinkedOperationRules, make(options))
