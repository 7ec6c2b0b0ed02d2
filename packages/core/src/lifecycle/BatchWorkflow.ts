/**
 * Batch operations (beta, spec 4.11) as durable workflows: close a terminal's batch
 * (recorded in `batch-<serial>`, which tip adjustments and capture reversals read: after
 * the batch closes, neither is possible), and read a batch's summary and detail with every
 * amount parsed into `Money`. The service's amounts here are major-unit decimals without
 * a currency, so the caller names the terminal's currency.
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
import * as Batch from "../model/Batch.js"
import {
  BatchDetailRequest,
  type BatchDetailResponse,
  BatchRequest,
  type BatchSummaryResponse
} from "../model/Batch.js"
import * as Currency from "../model/Currency.js"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Identifiers from "../model/Identifiers.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as Money from "../model/Money.js"
import * as PolicyError from "./PolicyError.js"
import * as Reconciliation from "../terminal/Reconciliation.js"
import * as RecoverySchedule from "../terminal/RecoverySchedule.js"
import * as ProtocolSettings from "../terminal/ProtocolSettings.js"
import * as RemoteError from "../model/RemoteError.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import { optional } from "../model/internal/Strict.js"

/** A closed batch of a terminal, as its stream records it. */
export interface ClosedBatch {
  readonly batchNumber: string
  readonly at: DateTime.Utc
}

/**
 * The batches a `batch-<serial>` stream records as closed: by the service's answer, or by
 * an operator who resolved a close in doubt as applied (`InDoubtResolution`), the batch its
 * request named.
 */
export const closedBatches = (events: ReadonlyArray<LifecycleEvent.Decoded>): ReadonlyArray<ClosedBatch> =>
  events.flatMap((e) => {
    if (e.type === "BatchClosed") return [{ batchNumber: e.data.batchNumber, at: e.data.at }]
    if (e.type !== "InDoubtResolved" || e.data.operation !== "batchClose" || e.data.resolution !== "applied")
      return []
    const requestId = e.data.requestId
    const requested = events.find((r) => r.type === "BatchCloseRequested" && r.data.requestId === requestId)
    return requested?.type === "BatchCloseRequested"
      ? [{ batchNumber: requested.data.batchNumber, at: e.data.at }]
      : []
  })

/**
 * The closure that batched out a transaction of `serialNumber` made at `at`: the close of
 * its own batch when its number is known, else any close after it.
 */
export const batchedOut = (
  serialNumber: string | undefined,
  batchNumber: string | undefined,
  at: DateTime.Utc
): Effect.Effect<Option.Option<ClosedBatch>, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    if (serialNumber === undefined) return Option.none()
    const store = yield* EventStore.EventStore
    const { events } = yield* Guarded.read(store, LifecycleEvent.batchStream(serialNumber))
    return Option.fromNullable(
      closedBatches(events).find((closed) =>
        batchNumber === undefined
          ? DateTime.greaterThanOrEqualTo(closed.at, at)
          : closed.batchNumber === batchNumber
      )
    )
  })

/** Every error of the batch workflows. */
export const BatchError = Schema.Union(
  LifecycleError.OperationNotApplicable,
  LifecycleError.OperationInProgress,
  LifecycleError.RequestAlreadyFailed,
  PolicyError.NotCharged,
  Money.InvalidAmount,
  RemoteError.RemoteError,
  EventStore.EventStoreError
)
/** @see BatchError */
export type BatchError = typeof BatchError.Type

/** A batch closed. */
export class Closed extends Schema.Class<Closed>("BatchClosed")({
  serialNumber: Schema.String,
  batchNumber: Schema.String,
  reconciled: Schema.Boolean
}) {}

/** One `customFields.entry` of a summary (counts of sales, refunds …), kept as text. */
export const CustomField = Schema.Struct({ key: Schema.String, value: Schema.String })

/** A batch summary, typed. */
export class Summary extends Schema.Class<Summary>("BatchSummary")({
  batchNumber: Schema.String,
  batchStatus: optional(Schema.String),
  transactionCount: optional(Schema.Int),
  netAmount: LifecycleEvent.MoneyJson,
  customFields: Schema.Array(CustomField),
  batchSummaryGuid: optional(Schema.String)
}) {}

/** A line of a batch detail. */
export const DetailLine = Schema.Struct({
  transactionType: optional(Schema.String),
  retrievalReferenceNumber: optional(Schema.String),
  amount: LifecycleEvent.MoneyJson,
  batchDetailElementGuid: optional(Schema.String)
})

/** A batch detail, typed. */
export class Detail extends Schema.Class<Detail>("BatchDetail")({
  batchNumber: Schema.String,
  batchStatus: optional(Schema.String),
  closedAt: optional(Schema.String),
  lines: Schema.Array(DetailLine)
}) {}

const terminal = {
  serialNumber: Identifiers.SerialNumber,
  terminalType: Identifiers.TerminalType,
  batchNumber: Identifiers.BatchNumber
}

/** Close a batch of a terminal (once). */
export const Close = Workflow.make({
  name: "Batch.Close",
  payload: { requestId: Schema.String, ...terminal },
  success: Closed,
  error: BatchError,
  idempotencyKey: (p) => `${p.serialNumber}/${p.requestId}`
})

/** Read a batch's summary; a batch it shows CLOSED is recorded as closed. */
export const ReadSummary = Workflow.make({
  name: "Batch.Summary",
  payload: { requestId: Schema.String, ...terminal, currency: Currency.Currency },
  success: Summary,
  error: BatchError,
  idempotencyKey: (p) => `${p.serialNumber}/${p.requestId}`
})

/** Read a batch's detail (its transactions). */
export const ReadDetail = Workflow.make({
  name: "Batch.Detail",
  payload: {
    requestId: Schema.String,
    ...terminal,
    currency: Currency.Currency,
    rrn: optional(Schema.String),
    /** A string or an object (spec 2.4), sent as given. */
    customerReference: optional(Batch.CustomerReference)
  },
  success: Detail,
  error: BatchError,
  idempotencyKey: (p) => `${p.serialNumber}/${p.requestId}`
})

const amountOf = (text: string | undefined, currency: Currency.Currency, what: string) =>
  Money.fromMajorUnitsString(text ?? "", currency).pipe(
    Either.mapLeft(
      (e) =>
        new Money.InvalidAmount({
          input: e.input,
          currency: e.currency,
          message: `${what} of the batch is not a ${currency} amount: ${e.message}`
        })
    )
  )

/** A summary answer, typed: `netAmount` parsed into Money (a sign allowed). */
export const parseSummary = (
  response: BatchSummaryResponse,
  batchNumber: string,
  currency: Currency.Currency
): Either.Either<Summary, Money.InvalidAmount> =>
  Either.map(amountOf(response.netAmount, currency, "netAmount"), (netAmount) => {
    const count =
      response.transactionCount === undefined ? undefined : Number.parseInt(response.transactionCount, 10)
    return Summary.make(
      defined({
        batchNumber: response.batchNumber ?? batchNumber,
        batchStatus: response.batchStatus,
        transactionCount: count !== undefined && Number.isSafeInteger(count) ? count : undefined,
        netAmount,
        customFields: (response.customFields?.entry ?? []).map((e) => ({ key: e.key, value: e.value })),
        batchSummaryGuid: response.batchSummaryGuid
      })
    )
  })

/** A detail answer, typed: each line's amount parsed into Money. */
export const parseDetail = (
  response: BatchDetailResponse,
  batchNumber: string,
  currency: Currency.Currency
): Either.Either<Detail, Money.InvalidAmount> =>
  Either.map(
    Either.all(
      (response.details ?? []).map((line, i) =>
        Either.map(amountOf(line.amount, currency, `line ${i + 1}`), (amount) => ({ line, amount }))
      )
    ),
    (lines) =>
      Detail.make(
        defined({
          batchNumber: response.batchNumber ?? batchNumber,
          batchStatus: response.batchStatus,
          closedAt: response.closedAt,
          lines: lines.map(({ amount, line }) =>
            defined({
              transactionType: line.transactionType,
              retrievalReferenceNumber: line.retrievalReferenceNumber,
              amount,
              batchDetailElementGuid: line.batchDetailElementGuid
            })
          )
        })
      )
  )

interface BatchState {
  readonly serialNumber: string
  readonly closed: ReadonlyArray<ClosedBatch>
  readonly pending: { readonly requestId: string; readonly batchNumber: string } | undefined
}

const foldBatches = (serialNumber: string) => (events: ReadonlyArray<LifecycleEvent.Decoded>) => {
  let pending: BatchState["pending"] = undefined
  for (const e of events) {
    if (e.type === "BatchCloseRequested")
      pending = { requestId: e.data.requestId, batchNumber: e.data.batchNumber }
    else if (
      (e.type === "BatchClosed" || e.type === "OperationFailed" || e.type === "InDoubtResolved") &&
      pending?.requestId === e.data.requestId
    )
      pending = undefined
  }
  return Either.right<BatchState>({ serialNumber, closed: closedBatches(events), pending })
}

const close = (payload: Workflow.Workflow.Payload<typeof Close>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const request = BatchRequest.make({
      serialNumber: payload.serialNumber,
      deviceType: payload.terminalType,
      batchNumber: payload.batchNumber
    })
    const streamId = LifecycleEvent.batchStream(payload.serialNumber)
    const spec: Guarded.Spec<BatchState, BatchRequest, unknown, Closed, BatchError> = {
      operation: "batchClose",
      streamId,
      requestId: payload.requestId,
      requestedType: "BatchCloseRequested",
      outcomeTypes: ["BatchClosed"],
      notChargedReference: `${payload.serialNumber}/${payload.batchNumber}`,
      fold: foldBatches(payload.serialNumber),
      decide: (state, at) => {
        if (state.closed.some((c) => c.batchNumber === payload.batchNumber))
          return Either.left(
            new LifecycleError.OperationNotApplicable({
              message: `batch ${payload.batchNumber} of terminal ${payload.serialNumber} is already closed: a batch closes once`,
              guid: payload.serialNumber,
              operation: "batchClose",
              kind: "batch",
              rule: "batch-closes-once"
            })
          )
        if (state.pending !== undefined)
          return Either.left(
            new LifecycleError.OperationInProgress({
              message: `closing batch ${state.pending.batchNumber} of terminal ${payload.serialNumber} is in flight (request ${state.pending.requestId})`,
              guid: payload.serialNumber,
              operation: "batchClose",
              pendingOperation: "batchClose",
              pendingRequestId: state.pending.requestId,
              rule: "one-operation-at-a-time"
            })
          )
        return Either.right(
          LifecycleEvent.BatchCloseRequested.make({
            requestId: payload.requestId,
            at,
            batchNumber: payload.batchNumber
          })
        )
      },
      toRequest: () => request,
      send: (r) => cloud.batchClose(r),
      onUnknown: "reconcile",
      reconcile: (r, { requestedAt }) => {
        const graceEnd = DateTime.addDuration(requestedAt, Reconciliation.notFoundWindow)
        return Effect.gen(function* () {
          const deadline = DateTime.max(
            DateTime.addDuration(requestedAt, (yield* ProtocolSettings.ProtocolSettings).terminalLessBudget),
            yield* DateTime.now
          )
          return yield* Guarded.poll<unknown>({
            interval: RecoverySchedule.terminalLessInterval,
            deadline,
            check: Effect.gen(function* () {
              const summary = yield* Effect.either(cloud.batchSummary(r))
              if (Either.isLeft(summary)) return Option.none()
              if ((summary.right.batchStatus ?? "").toUpperCase() === "CLOSED")
                return Option.some({ _tag: "Applied", response: summary.right } as const)
              return DateTime.greaterThanOrEqualTo(yield* DateTime.now, graceEnd)
                ? Option.some({
                    _tag: "NotApplied",
                    message: `the batch reads ${summary.right.batchStatus ?? "not closed"}`
                  } as const)
                : Option.none()
            })
          })
        })
      },
      applied: (_response, { now, reconciled }) =>
        Either.right({
          appends: [
            {
              streamId,
              expected: "any",
              events: [
                LifecycleEvent.BatchClosed.make({
                  requestId: payload.requestId,
                  at: now,
                  batchNumber: payload.batchNumber,
                  reconciled
                })
              ]
            }
          ],
          output: Closed.make({
            serialNumber: payload.serialNumber,
            batchNumber: payload.batchNumber,
            reconciled
          })
        }),
      output: (outcome) =>
        Closed.make({
          serialNumber: payload.serialNumber,
          batchNumber: payload.batchNumber,
          reconciled: outcome.type === "BatchClosed" ? outcome.data.reconciled : false
        })
    }
    return yield* batchCloseStep(Guarded.run(spec))
  })

const summary = (payload: Workflow.Workflow.Payload<typeof ReadSummary>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const store = yield* EventStore.EventStore
    return yield* batchSummaryStep(
      Effect.gen(function* () {
        const response = yield* cloud.batchSummary(
          BatchRequest.make({
            serialNumber: payload.serialNumber,
            deviceType: payload.terminalType,
            batchNumber: payload.batchNumber
          })
        )
        const parsed = yield* parseSummary(response, payload.batchNumber, payload.currency)
        if ((parsed.batchStatus ?? "").toUpperCase() === "CLOSED") {
          // The acquirer closed it (nightly): record it, so tips and capture reversals know.
          const streamId = LifecycleEvent.batchStream(payload.serialNumber)
          const { events } = yield* Guarded.read(store, streamId)
          if (!closedBatches(events).some((c) => c.batchNumber === payload.batchNumber)) {
            const event = yield* LifecycleEvent.registry
              .encode(
                LifecycleEvent.BatchClosed.make({
                  requestId: payload.requestId,
                  at: yield* DateTime.now,
                  batchNumber: payload.batchNumber,
                  reconciled: true
                })
              )
              .pipe(Effect.mapError(Guarded.storeFailure("encode")))
            const id = yield* Guarded.eventId(streamId, "batchSummary", payload.requestId)
            yield* store.append(streamId, EventStore.AnyVersion, [{ ...event, eventId: id }]).pipe(
              Effect.catchTag("DuplicateEventId", () => Effect.void),
              Effect.mapError(Guarded.storeFailure("append"))
            )
          }
        }
        return parsed
      })
    )
  })

const detail = (payload: Workflow.Workflow.Payload<typeof ReadDetail>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    return yield* batchDetailStep(
      Effect.gen(function* () {
        const response = yield* cloud.batchDetail(
          BatchDetailRequest.make(
            defined({
              serialNumber: payload.serialNumber,
              deviceType: payload.terminalType,
              batchNumber: payload.batchNumber,
              rrn: payload.rrn,
              customerReference: payload.customerReference
            })
          )
        )
        return yield* parseDetail(response, payload.batchNumber, payload.currency)
      })
    )
  })

/** The batch workflows, registered with the engine. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Layer.mergeAll(
  Close.toLayer((payload) => close(payload)),
  ReadSummary.toLayer((payload) => summary(payload)),
  ReadDetail.toLayer((payload) => detail(payload))
)

// The durable steps of this module, defined once (schemas built once; `DurableStep`).
const batchCloseStep = DurableStep.make({ name: "Batch.Close", success: Closed, error: BatchError })
const batchSummaryStep = DurableStep.make({ name: "Batch.Summary", success: Summary, error: BatchError })
const batchDetailStep = DurableStep.make({ name: "Batch.Detail", success: Detail, error: BatchError })
