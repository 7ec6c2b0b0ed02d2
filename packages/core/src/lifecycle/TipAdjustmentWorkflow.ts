/**
 * Tip adjustment without a terminal (`POST /transactions/{guid}/tip-adjustment`, spec
 * 4.6) as a durable workflow: sales only, before the terminal's batch closes, in the
 * sale's currency; a later adjustment replaces the earlier one, and the history keeps
 * every adjustment (`tipAdjustments` tells which one stands). Because the last one wins,
 * resending the same tip after a 5xx is harmless: an unknown outcome is resent, not
 * reconciled.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as BatchWorkflow from "./BatchWorkflow.js"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Identifiers from "../model/Identifiers.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as MoneyRules from "./MoneyRules.js"
import * as Money from "../model/Money.js"
import * as PolicyError from "./PolicyError.js"
import * as RemoteError from "../model/RemoteError.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import { TipAdjustment, type TipAdjustmentResponse } from "../model/TipAdjustment.js"
import * as TransactionHistory from "./TransactionHistory.js"
import { optional } from "../model/internal/Strict.js"

/** Every error of the tip adjustment workflow. */
export const TipAdjustmentError = Schema.Union(
  LifecycleError.TransactionNotRecorded,
  LifecycleError.OperationInProgress,
  LifecycleError.CurrencyNotOfTransaction,
  LifecycleError.RequestAlreadyFailed,
  PolicyError.TipAdjustmentNotAllowed,
  PolicyError.NotCharged,
  Money.InvalidAmount,
  RemoteError.RemoteError,
  EventStore.EventStoreError
)
/** @see TipAdjustmentError */
export type TipAdjustmentError = typeof TipAdjustmentError.Type

/** The tip that now stands on the sale. */
export class TipSet extends Schema.Class<TipSet>("TipSet")({
  requestId: Schema.String,
  tip: LifecycleEvent.MoneyJson,
  /** The tip it replaced, if there was one. */
  replaces: optional(LifecycleEvent.MoneyJson)
}) {}

/** Set the tip of a sale (replacing any earlier adjustment). */
export const Adjust = Workflow.make({
  name: "TipAdjustment.Adjust",
  payload: {
    requestId: Schema.String,
    originalGuid: Identifiers.Guid,
    tip: LifecycleEvent.RequestedTipMoneyJson
  },
  success: TipSet,
  error: TipAdjustmentError,
  idempotencyKey: (p) => `${p.originalGuid}/${p.requestId}`
})

/** Every adjustment of a sale, in order, and whether it is the one that stands. */
export const tipAdjustments = (
  state: TransactionHistory.State
): ReadonlyArray<TransactionHistory.TipAdjustment & { readonly standing: boolean }> =>
  state.tips.map((tip, i) => ({ ...tip, standing: i === state.tips.length - 1 }))

const refused = (guid: string, message: string) =>
  new PolicyError.TipAdjustmentNotAllowed({ message, originalGuid: guid })

/** What a tip adjustment is checked against (the batch is checked apart). */
export const decideTip = (
  state: TransactionHistory.State,
  tip: Money.Money
): Option.Option<TipAdjustmentError> =>
  Ops.firstRefusal<TipAdjustmentError>(
    () =>
      state.kind === "sale" || state.kind === "saleAndTokenizeCard"
        ? Option.none()
        : Option.some(
            refused(state.guid, `rule sales-only: a tip adjusts a sale; ${state.guid} is a ${state.kind}`)
          ),
    () =>
      state.fullyReversedAt === undefined
        ? Option.none()
        : Option.some(refused(state.guid, `rule sales-only: sale ${state.guid} was reversed`)),
    () =>
      Option.map(MoneyRules.tipRefusal(state), (why) =>
        refused(
          state.guid,
          `rule nothing-credited-back: ${why}; a tip adjusts a sale nothing was credited back from`
        )
      ),
    () => Ops.inProgress(state, "tipAdjustment"),
    () => Ops.currencyOf(state, tip, "the tip"),
    () =>
      tip.minorUnits >= 0n
        ? Option.none()
        : Option.some(
            new Money.InvalidAmount({
              input: Money.toMajorUnitsString(tip),
              currency: tip.currency,
              message: `a tip cannot be negative, got ${tip}`
            })
          )
  )

const adjust = (payload: Workflow.Workflow.Payload<typeof Adjust>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const guid = payload.originalGuid
    const spec: Guarded.Spec<
      TransactionHistory.State,
      TipAdjustment,
      TipAdjustmentResponse,
      TipSet,
      TipAdjustmentError
    > = {
      operation: "tipAdjustment",
      streamId: LifecycleEvent.transactionStream(guid),
      requestId: payload.requestId,
      requestedType: "TipAdjustmentRequested",
      outcomeTypes: ["TipAdjusted"],
      notChargedReference: guid,
      fold: Ops.foldTransaction(guid, "tipAdjustment"),
      precheck: (state) =>
        Effect.map(BatchWorkflow.batchedOut(state.serialNumber, state.batchNumber, state.at), (closed) =>
          Option.map(closed, (batch) =>
            refused(
              guid,
              `rule before-batch-close: sale ${guid} was batched out with batch ${batch.batchNumber} of terminal ` +
                `${state.serialNumber} (closed ${DateTime.formatIso(batch.at)}); a tip is adjusted before the batch closes`
            )
          )
        ),
      decide: (state, at) =>
        Option.match(decideTip(state, payload.tip), {
          onSome: Either.left,
          onNone: () =>
            Either.right(
              LifecycleEvent.TipAdjustmentRequested.make({
                requestId: payload.requestId,
                at,
                tip: payload.tip
              })
            )
        }),
      toRequest: (requested) =>
        TipAdjustment.make({ amount: Ops.decimal((requested.data as { readonly tip: Money.Money }).tip) }),
      send: (body) => cloud.tipAdjustment(guid, body),
      onUnknown: "resend",
      applied: (_response, { now, state }) => {
        const replaces = TransactionHistory.standingTip(state)?.tip
        return Either.right({
          appends: [
            {
              streamId: LifecycleEvent.transactionStream(guid),
              expected: "any",
              events: [
                LifecycleEvent.TipAdjusted.make(
                  defined({
                    requestId: payload.requestId,
                    at: now,
                    tip: payload.tip,
                    replaces,
                    serialNumber: state.serialNumber,
                    merchant: state.merchant
                  })
                )
              ]
            }
          ],
          output: TipSet.make(defined({ requestId: payload.requestId, tip: payload.tip, replaces }))
        })
      },
      output: (outcome) => {
        const d = outcome.data as { readonly tip: Money.Money; readonly replaces?: Money.Money }
        return TipSet.make(defined({ requestId: payload.requestId, tip: d.tip, replaces: d.replaces }))
      }
    }
    return yield* tipAdjustmentAdjustStep(Guarded.run(spec))
  })

/** The tip adjustment workflow, registered with the engine. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Adjust.toLayer((payload) => adjust(payload))

// The durable steps of this module, defined once (schemas built once; `DurableStep`).
const tipAdjustmentAdjustStep = DurableStep.make({
  name: "TipAdjustment.Adjust",
  success: TipSet,
  error: TipAdjustmentError
})
