/**
 * MOTO without a terminal (spec 4.10) as durable workflows. A sale on a stored card token
 * is recorded under its `transactionReference` (`moto-sale-<reference>`) before it is sent
 * and, once authorised, opens the sale's own history (`txn-<guid>`), which refunds and the
 * reversal read. What each may do is decided by `MotoRules`: refunds add up to at most
 * the sale, in its currency; the reversal is possible within 24 hours of the recorded sale
 * time and before the daily batch, else it is refused without calling the service. A 5xx
 * is reconciled through the status endpoint, which supports MOTO.
 *
 * Amounts: the workflows take `Money`; the wire form of `/moto/sale` is chosen once, in
 * `Moto.AMOUNT_FORM` (major-unit decimals), and derived by the request schema, so a
 * minor-unit string cannot be sent by mistake.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as EventStore from "@tillflow/engine/EventStore"
import { Billing } from "../model/Billing.js"
import * as Identifiers from "../model/Identifiers.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as Money from "../model/Money.js"
import * as Personal from "../model/Personal.js"
import * as MotoRules from "./MotoRules.js"
import {
  MotoReversalRequest,
  type MotoRefundRequest,
  type MotoResponse,
  type MotoSaleRequest
} from "../model/Moto.js"
import * as PolicyError from "./PolicyError.js"
import * as RemoteError from "../model/RemoteError.js"
import * as ReversalWorkflow from "./ReversalWorkflow.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import * as TransactionHistory from "./TransactionHistory.js"
import { VirtualTerminal } from "./VirtualTerminal.js"
import { optional } from "../model/internal/Strict.js"

// The rules live in `MotoRules`; this name stays here for the callers that know it.
export { decideRefund } from "./MotoRules.js"

// The merchant's virtual terminal lives in its own module (`InDoubtResolution` reads it too);
// its name stays here for the callers that know it.
export { VirtualTerminal }

/** Every error of the MOTO workflows. */
export const MotoError = Schema.Union(
  LifecycleError.TransactionNotRecorded,
  LifecycleError.OperationNotApplicable,
  LifecycleError.OperationInProgress,
  LifecycleError.CurrencyNotOfTransaction,
  LifecycleError.RefundExceedsSale,
  LifecycleError.ReversalNotAllowed,
  LifecycleError.RequestAlreadyFailed,
  PolicyError.ReversalWindowClosed,
  PolicyError.NotCharged,
  Money.InvalidAmount,
  RemoteError.RemoteError,
  EventStore.EventStoreError
)
/** @see MotoError */
export type MotoError = typeof MotoError.Type

/** The outcome of a MOTO sale: authorised (with its guid) or declined (not charged). */
export class SaleOutcome extends Schema.Class<SaleOutcome>("MotoSaleOutcome")({
  /** PARTIAL_APPROVAL (United States): `amount` is the part approved and charged. */
  status: Schema.Literal("AUTHORISED", "PARTIAL_APPROVAL", "DECLINED"),
  transactionReference: Schema.String,
  amount: LifecycleEvent.MoneyJson,
  guid: optional(Schema.String),
  approvalCode: optional(Schema.String),
  reason: optional(Schema.String),
  reconciled: Schema.Boolean
}) {}

/** A refund applied. */
export class RefundDone extends Schema.Class<RefundDone>("MotoRefundDone")({
  requestId: Schema.String,
  amount: LifecycleEvent.MoneyJson,
  /** Everything refunded on the sale so far, this refund included. */
  refundedSoFar: LifecycleEvent.MoneyJson,
  refundGuid: optional(Schema.String),
  reconciled: Schema.Boolean
}) {}

/**
 * A MOTO sale on a card token. `transactionReference` (UUID v4) is generated when not
 * given, once per execution; an account requiring the security code answers 3107, a
 * typed `SecurityCodeRequired`.
 */
export const Sale = Workflow.make({
  name: "Moto.Sale",
  payload: {
    requestId: Schema.String,
    cardToken: Identifiers.CardToken,
    amount: LifecycleEvent.RequestedPositiveMoneyJson,
    transactionReference: optional(Identifiers.TransactionReference),
    customerReference: optional(Schema.String),
    /**
     * The merchant's virtual terminal that books terminal-less MOTO sales (spec §1): the
     * sale is recorded on it, so its batch closing ends the MOTO reversal window.
     */
    serialNumber: optional(Identifiers.SerialNumber),
    /**
     * Address verification data (spec 2.2 rule 3), sent as given. Personal data: stored
     * wrapped, removable after its retention (`Personal`); absent once removed.
     */
    billing: Personal.optional(Schema.Struct(Billing.fields))
  },
  success: SaleOutcome,
  error: MotoError,
  idempotencyKey: (p) => p.requestId
})

/** A refund of a MOTO sale: not above what is left of the sale, in its currency. */
export const Refund = Workflow.make({
  name: "Moto.Refund",
  payload: {
    requestId: Schema.String,
    originalGuid: Identifiers.Guid,
    amount: LifecycleEvent.RequestedPositiveMoneyJson,
    customerReference: optional(Schema.String),
    /** Optional on /moto/refund (spec 4.10): a UUID v4 of the caller's, sent as given. */
    transactionReference: optional(Identifiers.TransactionReference)
  },
  success: RefundDone,
  error: MotoError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

/** The reversal of a MOTO sale or refund (`/moto/reversal`): within 24 hours, whole. */
export const Reverse = Workflow.make({
  name: "Moto.Reverse",
  payload: { requestId: Schema.String, originalGuid: Identifiers.Guid },
  success: ReversalWorkflow.ReversalDone,
  error: MotoError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

interface SaleAttempt {
  readonly requested: LifecycleEvent.Decoded | undefined
}

const isApproved = (response: MotoResponse): boolean =>
  response.finStatus === undefined ||
  response.finStatus === "AUTHORISED" ||
  response.finStatus === "APPROVED" ||
  response.finStatus === "PARTIAL_APPROVAL"

/** What was charged: the approved part of a partial approval, else the amount asked. */
const approvedAmount = (response: MotoResponse, asked: Money.Money): Money.Money => {
  const approved = response["approvedAmount"]
  return response.finStatus === "PARTIAL_APPROVAL" && typeof approved === "string"
    ? (Ops.readDecimal(approved, asked.currency) ?? asked)
    : asked
}

/**
 * A 200 whose finStatus is UNDEFINED (no answer from the acquirer) or IN_PROGRESS says
 * nothing final: it is an unknown outcome, reconciled like a 5xx.
 */
const finalOrUnknown = (response: MotoResponse): Effect.Effect<MotoResponse, RemoteError.RemoteError> =>
  response.finStatus === "UNDEFINED" || response.finStatus === "IN_PROGRESS"
    ? Effect.fail(
        new RemoteError.OutcomeUnknown({
          message: `the MOTO sale answered finStatus ${response.finStatus}: no final outcome from the acquirer`,
          reason: "Timeout",
          body: JSON.stringify({ finStatus: response.finStatus })
        })
      )
    : Effect.succeed(response)

/** Reconciles a sale by what the status endpoint shows under its reference. */
const reconcileSale = (
  cloud: TerminalCloud.Service,
  reference: Identifiers.TransactionReference,
  currency: Money.Money["currency"],
  requestedAt: DateTime.Utc
) =>
  Ops.reconcileByStatus<MotoResponse>(cloud, reference, requestedAt, (view) => {
    const head = view.rows[0]
    if (
      head !== undefined &&
      head.finStatus !== undefined &&
      head.finStatus !== "IN_PROGRESS" &&
      head.finStatus !== "UNDEFINED"
    )
      return Option.some({
        _tag: "Applied",
        response: defined({
          guid: head.efttransactionID ?? head.transactionID,
          finStatus: head.finStatus,
          approvalCode: head.authorisationCode,
          approvedAmount:
            head.totalAmount === undefined
              ? undefined
              : Money.toMajorUnitsString(Money.make(head.totalAmount, currency))
        })
      })
    if (view.notFound && view.graceOver)
      return Option.some({
        _tag: "NotApplied",
        message: "the status endpoint does not know the reference after 90 s"
      })
    return Option.none()
  })

/** What a sale is recorded under and was asked for. */
interface SaleContext {
  readonly requestId: string
  readonly reference: Identifiers.TransactionReference
  readonly streamId: string
  readonly amount: Money.Money
  readonly serialNumber: string | undefined
}

/** The batch a MOTO answer names, if it names one (a field beyond those the spec shows). */
const batchOf = (response: MotoResponse): string | undefined => {
  const batch = response["batchNumber"]
  return typeof batch === "string" && batch !== "" ? batch : undefined
}

/**
 * The events and output of a sale's answer: approved (the sale's own history opens under
 * its guid) or declined.
 */
const saleAnswered = (
  sale: SaleContext,
  response: MotoResponse,
  { now, reconciled }: Guarded.AppliedContext<SaleAttempt>
): { readonly appends: ReadonlyArray<Guarded.Append>; readonly output: SaleOutcome } => {
  const guid = response.guid
  if (isApproved(response) && guid !== undefined) {
    const charged = approvedAmount(response, sale.amount)
    const approved = SaleOutcome.make(
      defined({
        status:
          response.finStatus === "PARTIAL_APPROVAL" ? ("PARTIAL_APPROVAL" as const) : ("AUTHORISED" as const),
        transactionReference: sale.reference,
        amount: charged,
        guid,
        approvalCode: response.approvalCode ?? response.authorisationCode,
        reconciled
      })
    )
    return {
      appends: [
        {
          streamId: sale.streamId,
          expected: "any",
          events: [
            LifecycleEvent.MotoSaleApproved.make(
              defined({
                requestId: sale.requestId,
                at: now,
                guid,
                amount: charged,
                approvalCode: approved.approvalCode,
                serialNumber: sale.serialNumber,
                reconciled
              })
            )
          ]
        },
        {
          streamId: LifecycleEvent.transactionStream(guid),
          expected: "noStream",
          events: [
            LifecycleEvent.TransactionRecorded.make(
              defined({
                guid,
                kind: "moToSale" as const,
                amount: charged,
                at: now,
                transactionReference: sale.reference,
                serialNumber: sale.serialNumber,
                batchNumber: batchOf(response)
              })
            )
          ]
        }
      ],
      output: approved
    }
  }
  const reason =
    response.issuerResponseText ??
    (guid === undefined ? "the answer carried no transaction guid" : `finStatus ${response.finStatus}`)
  return {
    appends: [
      {
        streamId: sale.streamId,
        expected: "any",
        events: [
          LifecycleEvent.MotoSaleDeclined.make(
            defined({
              requestId: sale.requestId,
              at: now,
              finStatus: response.finStatus ?? "UNDEFINED",
              reason,
              reconciled,
              serialNumber: sale.serialNumber
            })
          )
        ]
      }
    ],
    output: SaleOutcome.make(
      defined({
        status: "DECLINED" as const,
        transactionReference: sale.reference,
        amount: sale.amount,
        guid,
        reason,
        reconciled
      })
    )
  }
}

/** The output of a sale outcome already recorded (a re-run). */
const saleRecorded = (sale: SaleContext, outcome: LifecycleEvent.Decoded): SaleOutcome =>
  outcome.type === "MotoSaleApproved"
    ? SaleOutcome.make(
        defined({
          status:
            outcome.data.amount.minorUnits < sale.amount.minorUnits
              ? ("PARTIAL_APPROVAL" as const)
              : ("AUTHORISED" as const),
          transactionReference: sale.reference,
          amount: outcome.data.amount,
          guid: outcome.data.guid,
          approvalCode: outcome.data.approvalCode,
          reconciled: outcome.data.reconciled
        })
      )
    : SaleOutcome.make({
        status: "DECLINED",
        transactionReference: sale.reference,
        amount: sale.amount,
        reason: outcome.type === "MotoSaleDeclined" ? outcome.data.reason : "declined",
        reconciled: outcome.type === "MotoSaleDeclined" ? outcome.data.reconciled : false
      })

const sale = (payload: Workflow.Workflow.Payload<typeof Sale>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const virtualTerminal = yield* VirtualTerminal
    // Generated once: the engine records the activity's result, a replay reuses it.
    const reference =
      payload.transactionReference ?? (yield* motoSaleReferenceStep(Identifiers.makeTransactionReference))
    const streamId = LifecycleEvent.motoSaleStream(reference)
    const context: SaleContext = {
      requestId: payload.requestId,
      reference,
      streamId,
      amount: payload.amount,
      serialNumber: payload.serialNumber ?? Option.getOrUndefined(virtualTerminal)
    }
    const spec: Guarded.Spec<SaleAttempt, MotoSaleRequest, MotoResponse, SaleOutcome, MotoError> = {
      operation: "motoSale",
      streamId,
      requestId: payload.requestId,
      requestedType: "MotoSaleRequested",
      outcomeTypes: ["MotoSaleApproved", "MotoSaleDeclined"],
      notChargedReference: reference,
      fold: (events) => Either.right({ requested: events.find((e) => e.type === "MotoSaleRequested") }),
      decide: (state, at) =>
        Option.match(MotoRules.saleRefusal({ reference, usedBy: state.requested, amount: payload.amount }), {
          onSome: Either.left,
          onNone: () =>
            Either.right(
              LifecycleEvent.MotoSaleRequested.make(
                defined({
                  requestId: payload.requestId,
                  at,
                  transactionReference: reference,
                  amount: payload.amount,
                  cardToken: payload.cardToken,
                  customerReference: payload.customerReference,
                  serialNumber: context.serialNumber
                })
              )
            )
        }),
      toRequest: (requested) => {
        const d = requested.data as {
          readonly amount: Money.Money
          readonly cardToken: string
          readonly customerReference?: string
        }
        return defined({
          cardToken: Identifiers.CardToken.make(d.cardToken),
          amount: d.amount,
          transactionReference: reference,
          customerReference: d.customerReference,
          billing: payload.billing === undefined ? undefined : new Billing(payload.billing)
        }) as MotoSaleRequest
      },
      send: (request) => Effect.flatMap(cloud.motoSale(request), finalOrUnknown),
      onUnknown: "reconcile",
      reconcile: (_request, { requestedAt }) =>
        reconcileSale(cloud, reference, payload.amount.currency, requestedAt),
      applied: (response, applied) => Either.right(saleAnswered(context, response, applied)),
      output: (outcome) => saleRecorded(context, outcome)
    }
    return yield* motoSaleStep(Guarded.run(spec))
  })

const refund = (payload: Workflow.Workflow.Payload<typeof Refund>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const guid = payload.originalGuid
    const spec: Guarded.Spec<
      TransactionHistory.State,
      MotoRefundRequest,
      MotoResponse,
      RefundDone,
      MotoError
    > = {
      operation: "motoRefund",
      streamId: LifecycleEvent.transactionStream(guid),
      requestId: payload.requestId,
      requestedType: "RefundRequested",
      outcomeTypes: ["Refunded"],
      notChargedReference: guid,
      fold: Ops.foldTransaction(guid, "motoRefund"),
      decide: (state, at) =>
        Option.match(MotoRules.decideRefund(state, payload.amount), {
          onSome: Either.left,
          onNone: () =>
            Either.right(
              LifecycleEvent.RefundRequested.make({
                requestId: payload.requestId,
                at,
                amount: payload.amount
              })
            )
        }),
      toRequest: (requested) =>
        defined({
          originalGuid: guid,
          amount: (requested.data as { readonly amount: Money.Money }).amount,
          customerReference: payload.customerReference,
          transactionReference: payload.transactionReference
        }) as MotoRefundRequest,
      send: (request) => cloud.motoRefund(request),
      onUnknown: "reconcile",
      reconcile: (_request, { requestedAt, state }) =>
        Ops.reconcileByStatus<MotoResponse>(cloud, state.transactionReference, requestedAt, (view) => {
          const refundRows = view.rows.filter((r) => /REFUND/i.test(r.type ?? "")).length
          if (refundRows > state.refunds.length) return Option.some({ _tag: "Applied", response: {} })
          if (view.graceOver && !Ops.anyInProgress(view.rows))
            return Option.some({ _tag: "NotApplied", message: "the status endpoint shows no new refund" })
          return Option.none()
        }),
      applied: (response, { now, reconciled, state }) => {
        const refundedSoFar = Ops.plus(TransactionHistory.refunded(state), payload.amount)
        const refundGuid = response.guid
        const appends: Array<Guarded.Append> = [
          {
            streamId: LifecycleEvent.transactionStream(guid),
            expected: "any",
            events: [
              LifecycleEvent.Refunded.make(
                defined({
                  requestId: payload.requestId,
                  at: now,
                  amount: payload.amount,
                  refundGuid,
                  reconciled,
                  serialNumber: state.serialNumber,
                  merchant: state.merchant
                })
              )
            ]
          }
        ]
        if (refundGuid !== undefined)
          appends.push({
            streamId: LifecycleEvent.transactionStream(refundGuid),
            expected: "noStream",
            events: [
              LifecycleEvent.TransactionRecorded.make(
                defined({
                  guid: refundGuid,
                  kind: "moToRefund" as const,
                  amount: payload.amount,
                  at: now,
                  transactionReference: state.transactionReference,
                  originalGuid: guid
                })
              )
            ]
          })
        return Either.right({
          appends,
          output: RefundDone.make(
            defined({
              requestId: payload.requestId,
              amount: payload.amount,
              refundedSoFar,
              refundGuid,
              reconciled
            })
          )
        })
      },
      output: (outcome, state) => {
        const d = outcome.data as {
          readonly amount: Money.Money
          readonly refundGuid?: string
          readonly reconciled: boolean
        }
        return RefundDone.make(
          defined({
            requestId: payload.requestId,
            amount: d.amount,
            refundedSoFar: TransactionHistory.refunded(state),
            refundGuid: d.refundGuid,
            reconciled: d.reconciled
          })
        )
      }
    }
    return yield* motoRefundStep(Guarded.run(spec))
  })

const reverse = (payload: Workflow.Workflow.Payload<typeof Reverse>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const guid = payload.originalGuid
    const spec: Guarded.Spec<
      TransactionHistory.State,
      MotoReversalRequest,
      MotoResponse,
      ReversalWorkflow.ReversalDone,
      MotoError
    > = {
      operation: "motoReversal",
      streamId: LifecycleEvent.transactionStream(guid),
      requestId: payload.requestId,
      requestedType: "ReversalRequested",
      outcomeTypes: ["Reversed"],
      notChargedReference: guid,
      fold: Ops.foldTransaction(guid, "motoReversal"),
      precheck: (state) => MotoRules.reversalBeforeBatch(state),
      decide: (state, at) =>
        Option.match(MotoRules.decideReversal(state, at), {
          onSome: Either.left,
          onNone: () =>
            Either.right(
              LifecycleEvent.ReversalRequested.make({
                requestId: payload.requestId,
                at,
                endpoint: "motoReversal",
                target: "transaction"
              })
            )
        }),
      toRequest: () => MotoReversalRequest.make({ originalGuid: guid }),
      send: (request) => cloud.motoReversal(request),
      onUnknown: "reconcile",
      reconcile: (_request, { requestedAt, state }) =>
        ReversalWorkflow.reconcileReversal<MotoResponse>(cloud, state, "transaction", requestedAt, {}),
      applied: (response, { now, reconciled, requested, state }) =>
        Either.right(
          ReversalWorkflow.reversed(guid, payload.requestId, requested, now, response.guid, reconciled, state)
        ),
      output: (outcome) => ReversalWorkflow.doneOf(payload.requestId, outcome)
    }
    return yield* motoReverseStep(Guarded.run(spec))
  })

/** The MOTO workflows, registered with the engine. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Layer.mergeAll(
  Sale.toLayer((payload) => sale(payload)),
  Refund.toLayer((payload) => refund(payload)),
  Reverse.toLayer((payload) => reverse(payload))
)

// The durable steps of this module, defined once (schemas built once; `DurableStep`).
const motoSaleReferenceStep = DurableStep.make({
  name: "Moto.Sale/reference",
  success: Identifiers.TransactionReference
})
const motoSaleStep = DurableStep.make({ name: "Moto.Sale", success: SaleOutcome, error: MotoError })
const motoRefundStep = DurableStep.make({ name: "Moto.Refund", success: RefundDone, error: MotoError })
const motoReverseStep = DurableStep.make({
  name: "Moto.Reverse",
  success: ReversalWorkflow.ReversalDone,
  error: MotoError
})
