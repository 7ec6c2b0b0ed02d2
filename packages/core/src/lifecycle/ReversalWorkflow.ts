/**
 * Reversal without a terminal (`POST /reversal`, spec 4.8) as a durable workflow, decided
 * from the transaction's history: a pre-authorization's reversal releases its whole hold,
 * or — once captured, before the batch settles — reverses the capture (status back to
 * AUTHORISED, withheld funds released); any other transaction is reversed in full, or in
 * part where the acquirer supports it. MOTO transactions keep their 24-hour window
 * (`MotoRules`) whichever endpoint reverses them. `messageReasonCode` defaults to
 * CUSTOMER_CANCELLATION.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as BatchWorkflow from "./BatchWorkflow.js"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Tenant from "@tillflow/engine/Tenant"
import type * as MerchantRegistry from "../merchants/MerchantRegistry.js"
import * as Identifiers from "../model/Identifiers.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as Money from "../model/Money.js"
import * as MoneyRules from "./MoneyRules.js"
import * as MotoRules from "./MotoRules.js"
import * as PolicyError from "./PolicyError.js"
import * as RemoteError from "../model/RemoteError.js"
import type { ReversalRequest, ReversalResponse } from "../model/Reversal.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import * as TransactionHistory from "./TransactionHistory.js"
import { optional } from "../model/internal/Strict.js"

/** The reason sent when the caller gives none (spec 4.8). */
export const DEFAULT_REASON = "CUSTOMER_CANCELLATION"

// The MOTO rules live in `MotoRules`; these names stay here for the callers that know them.
export { MOTO_REVERSAL_WINDOW, reversalWindow as motoWindow } from "./MotoRules.js"

/**
 * What the merchant's acquirer supports, which the spec leaves to the acquirer: partial
 * reversals (default no) and reversing a capture before settlement (default yes).
 */
export class AcquirerCapabilities extends Context.Reference<AcquirerCapabilities>()(
  "tillflow/ReversalWorkflow/AcquirerCapabilities",
  { defaultValue: () => ({ partialReversal: false, captureReversal: true }) }
) {}

/**
 * What each merchant's acquirer supports, as the merchant registry holds it
 * (`MerchantRegistry.acquirerOf`): a merchant's registered capabilities override
 * {@link AcquirerCapabilities} (the deployment's), each one left unset keeping the
 * deployment's. None (the default): the deployment's for every merchant.
 */
export class MerchantAcquirers extends Context.Reference<MerchantAcquirers>()(
  "tillflow/ReversalWorkflow/MerchantAcquirers",
  { defaultValue: (): { readonly of: MerchantRegistry.AcquirerOf | undefined } => ({ of: undefined }) }
) {}

/** The capabilities of a merchant: its registered ones over the deployment's `defaults`. */
export const withRegistered = (
  defaults: AcquirerCapabilities["Type"],
  registered: Option.Option<MerchantRegistry.Acquirer>
): AcquirerCapabilities["Type"] =>
  Option.isNone(registered)
    ? defaults
    : {
        partialReversal: registered.value.partialReversal ?? defaults.partialReversal,
        captureReversal: registered.value.captureReversal ?? defaults.captureReversal
      }

/**
 * What the acquirer of a merchant (`undefined`: the deployment's own) supports, from the
 * {@link AcquirerCapabilities} and {@link MerchantAcquirers} in context where it is built.
 * The registry can change: a workflow asks it only inside a recorded step, where the
 * decision it makes is recorded with the step (replays read the record, never the registry).
 */
export const capabilitiesOf: Effect.Effect<
  (merchant: string | undefined) => Effect.Effect<AcquirerCapabilities["Type"]>
> = Effect.zipWith(
  AcquirerCapabilities,
  MerchantAcquirers,
  (defaults, merchants) => (merchant) =>
    merchant === undefined || merchants.of === undefined
      ? Effect.succeed(defaults)
      : Effect.map(merchants.of(merchant), (registered) => withRegistered(defaults, registered))
)

/** Every error of the reversal workflows (MOTO's included). */
export const ReversalError = Schema.Union(
  LifecycleError.TransactionNotRecorded,
  LifecycleError.OperationInProgress,
  LifecycleError.ReversalNotAllowed,
  LifecycleError.CurrencyNotOfTransaction,
  LifecycleError.RequestAlreadyFailed,
  PolicyError.ReversalWindowClosed,
  PolicyError.NotCharged,
  Money.InvalidAmount,
  RemoteError.RemoteError,
  EventStore.EventStoreError
)
/** @see ReversalError */
export type ReversalError = typeof ReversalError.Type

/** A reversal applied. */
export class ReversalDone extends Schema.Class<ReversalDone>("ReversalDone")({
  requestId: Schema.String,
  target: LifecycleEvent.ReversalTarget,
  amount: LifecycleEvent.MoneyJson,
  gatewayGuid: optional(Schema.String),
  reconciled: Schema.Boolean
}) {}

/** Reverse a transaction without its card: in full, or `amount` where partial reversals are supported. */
export const Reverse = Workflow.make({
  name: "Reversal.Reverse",
  payload: {
    requestId: Schema.String,
    originalGuid: Identifiers.Guid,
    amount: optional(LifecycleEvent.RequestedPositiveMoneyJson),
    messageReasonCode: optional(Schema.NonEmptyString)
  },
  success: ReversalDone,
  error: ReversalError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

const notAllowed = (guid: string, rule: string, message: string) =>
  new LifecycleError.ReversalNotAllowed({ message, guid, rule })

/** What is left to reverse of a transaction. */
export const remaining = (state: TransactionHistory.State): Money.Money => MoneyRules.left(state)

/** What a reversal will undo, or why it cannot. */
export const decideTarget = (
  state: TransactionHistory.State,
  amount: Money.Money | undefined,
  capabilities: AcquirerCapabilities["Type"],
  now: DateTime.Utc
): Either.Either<
  { readonly target: LifecycleEvent.ReversalTarget; readonly amount: Money.Money; readonly partial: boolean },
  ReversalError
> => {
  const guid = state.guid
  const busy = Ops.inProgress(state, "reversal")
  if (Option.isSome(busy)) return Either.left(busy.value)
  const preAuth = state.preAuthorization
  if (preAuth !== undefined) {
    if (preAuth.status === "RELEASED")
      return Either.left(
        notAllowed(guid, "reverse-once", `the hold of pre-authorization ${guid} was already released`)
      )
    if (preAuth.captureReversedAt !== undefined)
      return Either.left(
        notAllowed(
          guid,
          "reverse-once",
          `the capture of ${guid} was already reversed and the withheld funds released: nothing is held`
        )
      )
    if (amount !== undefined)
      return Either.left(
        notAllowed(
          guid,
          "pre-authorization-reversal-is-whole",
          preAuth.status === "CAPTURED"
            ? `a capture is reversed whole; ${guid} cannot be reversed by ${amount}`
            : `a pre-authorization reversal releases the whole hold; decrease the hold of ${guid} to release ${amount}`
        )
      )
    if (preAuth.status === "CAPTURED") {
      if (!capabilities.captureReversal)
        return Either.left(
          notAllowed(guid, "acquirer-capture-reversal", "the acquirer does not support reversing a capture")
        )
      return Either.right({
        target: "capture",
        amount: preAuth.capture?.total ?? preAuth.hold,
        partial: false
      })
    }
    return Either.right({ target: "hold", amount: preAuth.hold, partial: false })
  }
  const window = MotoRules.reversalWindow(state, now)
  if (Option.isSome(window)) return Either.left(window.value)
  if (state.fullyReversedAt !== undefined)
    return Either.left(notAllowed(guid, "reverse-once", `${guid} is already reversed`))
  const credit = MoneyRules.reversalRefusal(state, amount)
  if (Option.isSome(credit)) return Either.left(credit.value)
  const left = remaining(state)
  if (left.minorUnits <= 0n)
    return Either.left(notAllowed(guid, "reverse-once", `${guid} is already reversed`))
  // Sent whole (no amount), the gateway reverses what it approved less what was reversed,
  // refunds not deducted: after a refund, what is left is reversed by its amount (partial).
  const refunded = TransactionHistory.refunded(state).minorUnits > 0n
  if (amount === undefined || (amount.minorUnits === left.minorUnits && !refunded))
    return Either.right({ target: "transaction", amount: left, partial: false })
  const refusal = Ops.firstRefusal<ReversalError>(
    () => Ops.currencyOf(state, amount, "the reversal"),
    () => Ops.positive(amount, "the reversal"),
    () =>
      amount.minorUnits > left.minorUnits
        ? Option.some(
            notAllowed(
              guid,
              "reversal-not-above-remaining",
              `a reversal of ${amount} is above the ${left} left to reverse on ${guid}`
            )
          )
        : Option.none(),
    () =>
      capabilities.partialReversal
        ? Option.none()
        : Option.some(
            notAllowed(
              guid,
              "acquirer-partial-reversal",
              `the acquirer does not support partial reversals: reverse ${guid} in full (${left})`
            )
          )
  )
  return Option.isSome(refusal)
    ? Either.left(refusal.value)
    : Either.right({ target: "transaction", amount, partial: true })
}

/**
 * Refuses to reverse a capture once its batch has settled, a MOTO transaction once its
 * terminal's daily batch was submitted (`MotoRules.reversalBeforeBatch`, whichever endpoint
 * reverses it), and any other transaction once its terminal's batch closed: a reversal
 * voids what has not settled yet; after the batch only a refund can credit it back (the
 * spec says so of MOTO reversals and captures and is silent on sales, whose reversal the
 * gateway refuses then: tillflow refuses it before sending, rule `reversal-before-batch`).
 */
export const settlementCheck = (
  state: TransactionHistory.State
): Effect.Effect<
  Option.Option<LifecycleError.ReversalNotAllowed>,
  EventStore.EventStoreError,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    if (state.kind === "moToSale" || state.kind === "moToRefund")
      return yield* MotoRules.reversalBeforeBatch(state)
    if (state.preAuthorization === undefined) {
      const closed = yield* BatchWorkflow.batchedOut(state.serialNumber, state.batchNumber, state.at)
      return Option.map(closed, (batch) =>
        notAllowed(
          state.guid,
          "reversal-before-batch",
          `${state.guid} settled with batch ${batch.batchNumber} of its terminal (closed ${DateTime.formatIso(batch.at)}): it can no longer be reversed; refund it instead`
        )
      )
    }
    const capture = state.preAuthorization.capture
    if (state.preAuthorization.status !== "CAPTURED" || capture === undefined) return Option.none()
    const closed = yield* BatchWorkflow.batchedOut(state.serialNumber, undefined, capture.at)
    return Option.map(closed, (batch) =>
      notAllowed(
        state.guid,
        "capture-reversal-before-settlement",
        `the capture of ${state.guid} settled with batch ${batch.batchNumber} (closed ${DateTime.formatIso(batch.at)}): it can no longer be reversed`
      )
    )
  })

const reversalRows = (rows: ReadonlyArray<{ readonly type?: string | undefined }>) =>
  rows.filter((r) => /VOID|CANCEL|REVERSAL/i.test(r.type ?? "")).length

/** Reconciles a reversal by what the status endpoint shows of the original. */
export const reconcileReversal = <Res>(
  cloud: TerminalCloud.Service,
  state: TransactionHistory.State,
  target: LifecycleEvent.ReversalTarget,
  requestedAt: DateTime.Utc,
  empty: Res
) => {
  const known = [...state.completed.values()].filter((e) => e.type === "Reversed").length
  return Ops.reconcileByStatus<Res>(cloud, state.transactionReference, requestedAt, (view) => {
    const head = view.rows[0]
    const applied =
      head !== undefined &&
      (target === "hold"
        ? head.finStatus === "CANCELLED"
        : target === "capture"
          ? head.finStatus === "AUTHORISED" && head.capturedAmount === undefined
          : head.finStatus === "CANCELLED" || reversalRows(view.rows) > known)
    if (applied) return Option.some({ _tag: "Applied", response: empty })
    if (view.graceOver && !Ops.anyInProgress(view.rows))
      return Option.some({ _tag: "NotApplied", message: "the status endpoint shows no reversal" })
    return Option.none()
  })
}

/** The outcome events of a reversal, and its output. */
export const reversed = (
  guid: string,
  requestId: string,
  requested: LifecycleEvent.Event,
  now: DateTime.Utc,
  gatewayGuid: string | undefined,
  reconciled: boolean,
  state: TransactionHistory.State
) => {
  const data = requested.data as {
    readonly target: LifecycleEvent.ReversalTarget
    readonly amount?: Money.Money
  }
  const amount =
    data.amount ??
    (data.target === "hold"
      ? (state.preAuthorization?.hold ?? state.amount)
      : data.target === "capture"
        ? (state.preAuthorization?.capture?.total ?? state.amount)
        : remaining(state))
  return {
    appends: [
      {
        streamId: LifecycleEvent.transactionStream(guid),
        expected: "any" as const,
        events: [
          LifecycleEvent.Reversed.make(
            defined({
              requestId,
              at: now,
              target: data.target,
              amount,
              gatewayGuid,
              reconciled,
              serialNumber: state.serialNumber,
              merchant: state.merchant
            })
          )
        ]
      }
    ],
    output: ReversalDone.make(defined({ requestId, target: data.target, amount, gatewayGuid, reconciled }))
  }
}

/** The output of a recorded `Reversed`. */
export const doneOf = (requestId: string, outcome: LifecycleEvent.Decoded): ReversalDone => {
  const d = outcome.data as {
    readonly target: LifecycleEvent.ReversalTarget
    readonly amount: Money.Money
    readonly gatewayGuid?: string
    readonly reconciled: boolean
  }
  return ReversalDone.make(
    defined({
      requestId,
      target: d.target,
      amount: d.amount,
      gatewayGuid: d.gatewayGuid,
      reconciled: d.reconciled
    })
  )
}

const reverse = (payload: Workflow.Workflow.Payload<typeof Reverse>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    // The merchant's acquirer (the execution's tenant), read inside the recorded step below.
    const capabilitiesFor = yield* capabilitiesOf
    const guid = payload.originalGuid
    const specOf = (
      capabilities: AcquirerCapabilities["Type"]
    ): Guarded.Spec<
      TransactionHistory.State,
      ReversalRequest,
      ReversalResponse,
      ReversalDone,
      ReversalError
    > => ({
      operation: "reversal",
      streamId: LifecycleEvent.transactionStream(guid),
      requestId: payload.requestId,
      requestedType: "ReversalRequested",
      outcomeTypes: ["Reversed"],
      notChargedReference: guid,
      fold: Ops.foldTransaction(guid, "reversal"),
      precheck: (state) => settlementCheck(state),
      decide: (state, at) =>
        Either.map(decideTarget(state, payload.amount, capabilities, at), (decided) =>
          LifecycleEvent.ReversalRequested.make(
            defined({
              requestId: payload.requestId,
              at,
              endpoint: "reversal" as const,
              target: decided.target,
              amount: decided.partial ? decided.amount : undefined,
              messageReasonCode: payload.messageReasonCode ?? DEFAULT_REASON
            })
          )
        ),
      toRequest: (requested) => {
        const data = requested.data as { readonly amount?: Money.Money; readonly messageReasonCode?: string }
        return defined({
          originalGuid: guid,
          amount: data.amount,
          messageReasonCode: data.messageReasonCode ?? DEFAULT_REASON
        }) as ReversalRequest
      },
      send: (request) => cloud.reversal(request),
      onUnknown: "reconcile",
      reconcile: (_request, { requested, requestedAt, state }) =>
        reconcileReversal<ReversalResponse>(
          cloud,
          state,
          (requested.data as { readonly target: LifecycleEvent.ReversalTarget }).target,
          requestedAt,
          {}
        ),
      applied: (response, { now, reconciled, requested, state }) =>
        Either.right(
          reversed(
            guid,
            payload.requestId,
            requested,
            now,
            typeof response["reversalGuid"] === "string"
              ? response["reversalGuid"]
              : response.cardTokenizationGuid,
            reconciled,
            state
          )
        ),
      output: (outcome) => doneOf(payload.requestId, outcome)
    })
    return yield* reversalReverseStep(
      Tenant.current.pipe(
        Effect.flatMap(capabilitiesFor),
        Effect.flatMap((capabilities) => Guarded.run(specOf(capabilities)))
      )
    )
  })

/** The reversal workflow, registered with the engine. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Reverse.toLayer((payload) => reverse(payload))

// The durable steps of this module, defined once (schemas built once; `DurableStep`).
const reversalReverseStep = DurableStep.make({
  name: "Reversal.Reverse",
  success: ReversalDone,
  error: ReversalError
})
