/**
 * The terminal-less pre-authorization lifecycle (spec 4.9) as durable workflows: increase
 * and decrease the hold, and capture it once, within the scheme's window and tolerance
 * (`CaptureRules`). Each decision (`PreAuthorizationRules`) is made from the
 * pre-authorization's history (`txn-<guid>`, opened by
 * `TransactionHistory.openPreAuthorization` from its recorded authorisation) and recorded
 * at the version it read before the request leaves, so two concurrent captures — on one
 * worker or on two — cannot both reach the gateway: the one that records
 * `CaptureRequested` second re-reads and gets `CaptureAlreadyDone`. Releasing the hold and
 * reversing the capture are in `ReversalWorkflow`.
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
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as Identifiers from "../model/Identifiers.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as Money from "../model/Money.js"
import * as PolicyError from "./PolicyError.js"
import * as PreAuthorizationRules from "./PreAuthorizationRules.js"
import {
  PreAuthorizationCaptureRequest,
  PreAuthorizationIncreaseRequest,
  type PreAuthorizationResponse
} from "../model/PreAuthorization.js"
import * as RemoteError from "../model/RemoteError.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import type * as TransactionHistory from "./TransactionHistory.js"
import { optional } from "../model/internal/Strict.js"

// The rules live in `PreAuthorizationRules`; these names stay here for the callers that know them.
export { decideCapture, Enforcement, ruleOf } from "./PreAuthorizationRules.js"

/** Every error of the pre-authorization workflows. */
export const PreAuthorizationError = Schema.Union(
  LifecycleError.TransactionNotRecorded,
  LifecycleError.OperationNotApplicable,
  LifecycleError.OperationInProgress,
  LifecycleError.PreAuthorizationNotOpen,
  LifecycleError.MccExcluded,
  LifecycleError.DecreaseExceedsHold,
  LifecycleError.CurrencyNotOfTransaction,
  LifecycleError.RequestAlreadyFailed,
  PolicyError.CaptureAlreadyDone,
  PolicyError.CaptureOverTolerance,
  PolicyError.CaptureWindowClosed,
  PolicyError.NotCharged,
  Money.InvalidAmount,
  RemoteError.RemoteError,
  EventStore.EventStoreError
)
/** @see PreAuthorizationError */
export type PreAuthorizationError = typeof PreAuthorizationError.Type

/** The hold after an increase or a decrease. */
export class HoldChanged extends Schema.Class<HoldChanged>("HoldChanged")({
  requestId: Schema.String,
  delta: LifecycleEvent.MoneyJson,
  hold: LifecycleEvent.MoneyJson,
  gatewayGuid: optional(Schema.String),
  /** True when the outcome was established through the status endpoint after a 5xx. */
  reconciled: Schema.Boolean
}) {}

/** A capture made. */
export class Captured extends Schema.Class<Captured>("Captured")({
  requestId: Schema.String,
  total: LifecycleEvent.MoneyJson,
  limit: LifecycleEvent.MoneyJson,
  rule: Schema.String,
  warnings: Schema.Array(Schema.String),
  captureGuid: optional(Schema.String),
  reconciled: Schema.Boolean
}) {}

/** Increase the hold of a pre-authorization by `amount` (and `tip`, added to the hold). */
export const Increase = Workflow.make({
  name: "PreAuthorization.Increase",
  payload: {
    requestId: Schema.String,
    originalGuid: Identifiers.Guid,
    amount: LifecycleEvent.RequestedPositiveMoneyJson,
    tip: optional(LifecycleEvent.RequestedTipMoneyJson),
    customerReference: optional(Schema.String)
  },
  success: HoldChanged,
  error: PreAuthorizationError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

/** Decrease the hold of a pre-authorization by `amount` (terminal-less `subtract: "1"`). */
export const Decrease = Workflow.make({
  name: "PreAuthorization.Decrease",
  payload: {
    requestId: Schema.String,
    originalGuid: Identifiers.Guid,
    amount: LifecycleEvent.RequestedPositiveMoneyJson,
    customerReference: optional(Schema.String)
  },
  success: HoldChanged,
  error: PreAuthorizationError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

/** Capture a pre-authorization: once, within its scheme's window and tolerance. */
export const Capture = Workflow.make({
  name: "PreAuthorization.Capture",
  payload: {
    requestId: Schema.String,
    originalGuid: Identifiers.Guid,
    amount: LifecycleEvent.RequestedPositiveMoneyJson,
    tip: optional(LifecycleEvent.RequestedTipMoneyJson),
    customerReference: optional(Schema.String),
    enforcement: optional(PreAuthorizationRules.Enforcement)
  },
  success: Captured,
  error: PreAuthorizationError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

/** The 403 a partner key gets on these endpoints (spec §5.4), said plainly. */
export const partnerKeyMessage = (error: RemoteError.RemoteError): RemoteError.RemoteError =>
  error._tag === "Forbidden"
    ? new RemoteError.Forbidden({
        ...error,
        message:
          "partner keys cannot increase, decrease or capture a pre-authorization (spec §5.4): " +
          `use one of the merchant's own API keys (${error.message})`
      })
    : error

const fromResponse = (
  response: PreAuthorizationResponse,
  field: "preAuthorizationIncreaseGuid" | "preAuthorizationCaptureGuid"
) => response[field] ?? undefined

/** Reconciles a hold change by the hold the status endpoint reports. */
const reconcileHold = (
  cloud: TerminalCloud.Service,
  state: TransactionHistory.State,
  requestedAt: DateTime.Utc,
  before: Money.Money,
  after: Money.Money
) =>
  Ops.reconcileByStatus<PreAuthorizationResponse>(cloud, state.transactionReference, requestedAt, (view) => {
    const hold = view.rows[0]?.holdAmount
    if (hold === after.minorUnits) return Option.some({ _tag: "Applied", response: {} })
    if (view.graceOver && !Ops.anyInProgress(view.rows) && (hold === before.minorUnits || view.notFound))
      return Option.some({
        _tag: "NotApplied",
        message: view.notFound
          ? "the status endpoint does not know the pre-authorization"
          : `the hold is still ${before}`
      })
    return Option.none()
  })

/** The workflow body of an increase or a decrease. */
const changeHold = (
  direction: "increase" | "decrease",
  payload: {
    readonly requestId: string
    readonly originalGuid: Identifiers.Guid
    readonly amount: Money.Money
    readonly tip?: Money.Money | undefined
    readonly customerReference?: string | undefined
  }
) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const guid = payload.originalGuid
    const spec: Guarded.Spec<
      TransactionHistory.State,
      PreAuthorizationIncreaseRequest,
      PreAuthorizationResponse,
      HoldChanged,
      PreAuthorizationError
    > = {
      operation: direction,
      streamId: LifecycleEvent.transactionStream(guid),
      requestId: payload.requestId,
      requestedType: direction === "increase" ? "HoldIncreaseRequested" : "HoldDecreaseRequested",
      outcomeTypes: direction === "increase" ? ["HoldIncreased"] : ["HoldDecreased"],
      notChargedReference: guid,
      fold: Ops.foldTransaction(guid, direction),
      decide: (state, at) =>
        PreAuthorizationRules.decideHoldChange(
          state,
          direction,
          defined({ requestId: payload.requestId, amount: payload.amount, tip: payload.tip }),
          at
        ),
      toRequest: (requested) => {
        const data = requested.data as { readonly delta: Money.Money; readonly tip?: Money.Money }
        return PreAuthorizationIncreaseRequest.make(
          defined({
            originalGuid: guid,
            increaseAmount: Ops.decimal(data.delta),
            tipAmount: data.tip === undefined ? undefined : Ops.decimal(data.tip),
            subtract: direction === "decrease" ? (true as const) : undefined,
            customerReference: payload.customerReference
          })
        )
      },
      send: (request) => cloud.preAuthorizationIncrease(request),
      onUnknown: "reconcile",
      reconcile: (_request, { requestedAt, state }) => {
        const before = state.preAuthorization?.hold ?? Money.zero(state.amount.currency)
        return reconcileHold(
          cloud,
          state,
          requestedAt,
          before,
          holdAfter(direction, before, payload.amount, payload.tip)
        )
      },
      mapRemote: partnerKeyMessage,
      applied: (response, { state, now, reconciled }) => {
        const before = state.preAuthorization?.hold ?? Money.zero(state.amount.currency)
        const hold = holdAfter(direction, before, payload.amount, payload.tip)
        const gatewayGuid = fromResponse(response, "preAuthorizationIncreaseGuid")
        const event =
          direction === "increase"
            ? LifecycleEvent.HoldIncreased.make(
                defined({
                  requestId: payload.requestId,
                  at: now,
                  delta: payload.amount,
                  tip: payload.tip,
                  hold,
                  gatewayGuid,
                  reconciled,
                  serialNumber: state.serialNumber,
                  merchant: state.merchant
                })
              )
            : LifecycleEvent.HoldDecreased.make(
                defined({
                  requestId: payload.requestId,
                  at: now,
                  delta: payload.amount,
                  hold,
                  gatewayGuid,
                  reconciled,
                  serialNumber: state.serialNumber,
                  merchant: state.merchant
                })
              )
        return Either.right({
          appends: [{ streamId: LifecycleEvent.transactionStream(guid), expected: "any", events: [event] }],
          output: HoldChanged.make(
            defined({ requestId: payload.requestId, delta: payload.amount, hold, gatewayGuid, reconciled })
          )
        })
      },
      output: (outcome) => {
        const d = outcome.data as {
          readonly delta: Money.Money
          readonly hold: Money.Money
          readonly gatewayGuid?: string
          readonly reconciled: boolean
        }
        return HoldChanged.make(
          defined({
            requestId: payload.requestId,
            delta: d.delta,
            hold: d.hold,
            gatewayGuid: d.gatewayGuid,
            reconciled: d.reconciled
          })
        )
      }
    }
    return yield* holdChangeStep(`PreAuthorization.${direction === "increase" ? "Increase" : "Decrease"}`)(
      Guarded.run(spec)
    )
  })

const holdAfter = (
  direction: "increase" | "decrease",
  before: Money.Money,
  delta: Money.Money,
  tip: Money.Money | undefined
): Money.Money => {
  const change = tip === undefined ? delta : Ops.plus(delta, tip)
  return direction === "increase" ? Ops.plus(before, change) : Ops.minus(before, change)
}

const capture = (payload: Workflow.Workflow.Payload<typeof Capture>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const guid = payload.originalGuid
    const spec: Guarded.Spec<
      TransactionHistory.State,
      PreAuthorizationCaptureRequest,
      PreAuthorizationResponse,
      Captured,
      PreAuthorizationError
    > = {
      operation: "capture",
      streamId: LifecycleEvent.transactionStream(guid),
      requestId: payload.requestId,
      requestedType: "CaptureRequested",
      outcomeTypes: ["PreAuthorizationCaptured"],
      notChargedReference: guid,
      fold: Ops.foldTransaction(guid, "capture"),
      decide: (state, now) =>
        PreAuthorizationRules.decideCapture(
          state,
          defined({
            requestId: payload.requestId,
            amount: payload.amount,
            tip: payload.tip,
            enforcement: payload.enforcement ?? "refuse"
          }),
          now
        ),
      toRequest: (requested) => {
        const data = requested.data as { readonly amount: Money.Money; readonly tip?: Money.Money }
        return PreAuthorizationCaptureRequest.make(
          defined({
            originalGuid: guid,
            capturedAmount: Ops.decimal(data.amount),
            tipAmount: data.tip === undefined ? undefined : Ops.decimal(data.tip),
            customerReference: payload.customerReference
          })
        )
      },
      send: (request) => cloud.preAuthorizationCapture(request),
      onUnknown: "reconcile",
      reconcile: (_request, { requestedAt, state }) =>
        Ops.reconcileByStatus<PreAuthorizationResponse>(
          cloud,
          state.transactionReference,
          requestedAt,
          (view) => {
            const captured = view.rows.some(
              (r) =>
                r.finStatus === "CAPTURED" || (r.capturedAmount ?? 0n) > 0n || /CAPTURE/i.test(r.type ?? "")
            )
            if (captured) return Option.some({ _tag: "Applied", response: {} })
            if (view.graceOver && !Ops.anyInProgress(view.rows))
              return Option.some({
                _tag: "NotApplied",
                message: view.notFound
                  ? "the status endpoint does not know the pre-authorization"
                  : "the status shows no capture"
              })
            return Option.none()
          }
        ),
      mapRemote: partnerKeyMessage,
      applied: (response, { state, requested, now, reconciled }) => {
        const data = requested.data as {
          readonly total: Money.Money
          readonly limit: Money.Money
          readonly rule: string
          readonly warnings: ReadonlyArray<string>
        }
        const captureGuid = fromResponse(response, "preAuthorizationCaptureGuid")
        const appends: Array<Guarded.Append> = [
          {
            streamId: LifecycleEvent.transactionStream(guid),
            expected: "any",
            events: [
              LifecycleEvent.PreAuthorizationCaptured.make(
                defined({
                  requestId: payload.requestId,
                  at: now,
                  total: data.total,
                  captureGuid,
                  reconciled,
                  serialNumber: state.serialNumber,
                  merchant: state.merchant
                })
              )
            ]
          }
        ]
        if (captureGuid !== undefined)
          appends.push({
            streamId: LifecycleEvent.transactionStream(captureGuid),
            expected: "noStream",
            events: [
              LifecycleEvent.TransactionRecorded.make(
                defined({
                  guid: captureGuid,
                  kind: "preAuthorizationCapture" as const,
                  amount: data.total,
                  at: now,
                  transactionReference: state.transactionReference,
                  serialNumber: state.serialNumber,
                  merchant: state.merchant,
                  terminalType: state.terminalType,
                  originalGuid: guid
                })
              )
            ]
          })
        return Either.right({
          appends,
          output: Captured.make(
            defined({
              requestId: payload.requestId,
              total: data.total,
              limit: data.limit,
              rule: data.rule,
              warnings: data.warnings,
              captureGuid,
              reconciled
            })
          )
        })
      },
      output: (outcome, _state, requested) => {
        const d = outcome.data as {
          readonly total: Money.Money
          readonly captureGuid?: string
          readonly reconciled: boolean
        }
        const r = requested?.data as
          | { readonly limit: Money.Money; readonly rule: string; readonly warnings: ReadonlyArray<string> }
          | undefined
        return Captured.make(
          defined({
            requestId: payload.requestId,
            total: d.total,
            limit: r?.limit ?? d.total,
            rule: r?.rule ?? "",
            warnings: r?.warnings ?? [],
            captureGuid: d.captureGuid,
            reconciled: d.reconciled
          })
        )
      }
    }
    return yield* preAuthorizationCaptureStep(Guarded.run(spec))
  })

/** The three workflows, registered with the engine; they need the event store and the cloud. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Layer.mergeAll(
  Increase.toLayer((payload) => changeHold("increase", payload)),
  Decrease.toLayer((payload) => changeHold("decrease", payload)),
  Capture.toLayer((payload) => capture(payload))
)

// The durable steps of this module, defined once (schemas built once; `DurableStep`).
const holdChangeStep = DurableStep.family({ success: HoldChanged, error: PreAuthorizationError })
const preAuthorizationCaptureStep = DurableStep.make({
  name: "PreAuthorization.Capture",
  success: Captured,
  error: PreAuthorizationError
})
