/**
 * The two workflows of the payment protocol as the engine knows them — `TerminalOperation`
 * (every operation sent to a terminal but a stop, one at a time per terminal) and
 * `StopCurrentTransaction` (deliberately without the terminal's key) — with what a caller
 * gives them, and step 1 of `TerminalOperation`: the plan, the settings in force fixed for
 * the whole execution. `PaymentProtocol` re-exports the public part and runs the steps.
 */
import * as Workflow from "@effect/workflow/Workflow"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as DurableEngine from "@tillflow/engine/DurableEngine"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as SchemaCache from "@tillflow/engine/SchemaCache"
import * as Identifiers from "../model/Identifiers.js"
import * as Money from "../model/Money.js"
import type * as TerminalCloud from "../model/TerminalCloud.js"
import * as TransactionRequest from "../model/TransactionRequest.js"
import * as CallbackRegistration from "./CallbackRegistration.js"
import * as PaymentEvents from "./PaymentEvents.js"
import * as OperationOutcome from "./OperationOutcome.js"
import * as ProtocolSettings from "./ProtocolSettings.js"
import * as RecoverySchedule from "./RecoverySchedule.js"
import { type Emit, now } from "./internal/step.js"

// ---------------------------------------------------------------------------------------
// The workflows

/**
 * What a caller asks. `request` is the operation without delivery (the protocol sets the
 * callback address and token of each attempt); for an original operation its
 * `transactionReference` is the reference of the first attempt.
 */
export const Payload = Schema.Struct({
  /** The caller's idempotency key: the same key is the same execution. */
  idempotencyKey: Schema.NonEmptyString,
  /**
   * Stored with its personal members (`billing`, `moneyRemittanceOptions`) wrapped,
   * removable after their retention; absent once removed (`TransactionRequest.Stored`).
   */
  request: TransactionRequest.Stored,
  /** Result delivery for this call (the configured default otherwise). */
  delivery: Schema.optional(CallbackRegistration.Delivery),
  /** When the caller asked (epoch ms): deadlines count from here, queueing included. */
  requestedAt: Schema.Number,
  /** Until when (epoch ms) a busy, offline or queued terminal may be waited for. */
  deadlineAt: Schema.optional(Schema.Number),
  /** Whether an attempt proved not charged may be followed by a new one. */
  retryNotCharged: Schema.optional(Schema.Boolean),
  /** For linked operations: the original's reference, through which they are reconciled. */
  originalTransactionReference: Schema.optional(Identifiers.TransactionReference)
}).annotations({ identifier: "TerminalOperationPayload" })
/** @see Payload */
export type Payload = typeof Payload.Type

/** The concurrency key of a terminal: one operation per key at a time on tillflow's engine. */
export const terminalKey = (serialNumber: string): string => `terminal:${serialNumber}`

/** Every operation sent to a terminal except stopCurrentTransaction. */
export const TerminalOperation = SchemaCache.withCompiledCalls(
  // Queued behind the terminal's operation past its deadline, an execution leaves the
  // line and runs at once: its plan sees the deadline passed and ends it, sending nothing.
  DurableEngine.withStartDeadline(
    DurableEngine.withConcurrencyKey(
      Workflow.make({
        name: "TerminalOperation",
        payload: Payload,
        success: OperationOutcome.Outcome,
        error: OperationOutcome.OperationError,
        idempotencyKey: (payload) => payload.idempotencyKey
      }),
      (payload) => terminalKey(payload.request.serialNumber)
    ),
    (payload) => payload.deadlineAt
  ),
  // `Workflow.make`'s `execute` compiled the payload's validator and went through Web
  // Crypto for the id at every call: the same, compiled once and digested synchronously.
  (payload) => payload.idempotencyKey
)

/** stopCurrentTransaction was accepted: the operation in flight will end CANCELLED. */
export class StopAccepted extends Schema.TaggedClass<StopAccepted>()("StopAccepted", {
  serialNumber: Schema.String,
  at: Schema.Number
}) {}

/** A stop of the operation in flight on a terminal; deliberately without the terminal's key. */
export const StopCurrentTransaction = Workflow.make({
  name: "StopCurrentTransaction",
  payload: {
    idempotencyKey: Schema.NonEmptyString,
    serialNumber: Identifiers.SerialNumber,
    terminalType: Identifiers.TerminalType,
    requestedAt: Schema.Number
  },
  success: StopAccepted,
  error: OperationOutcome.OperationError,
  idempotencyKey: (payload) => payload.idempotencyKey
})

/** What every step of a `TerminalOperation` execution is given. */
export interface Execution {
  readonly payload: Payload
  readonly executionId: string
  readonly cloud: TerminalCloud.Service
  readonly store: EventStore.Service
  /** Appends a step's events to the payment's stream, once however often the step runs. */
  readonly emit: Emit
}

/** The amount a request asks for, if it asks for one. */
export const requestedAmountOf = (request: TransactionRequest.TransactionRequest): Money.Money | undefined =>
  "amount" in request && request.amount instanceof Money.Money ? request.amount : undefined

// ---------------------------------------------------------------------------------------
// Step 1: the plan

/** The settings in force for one execution, read once and recorded with the plan. */
export const Plan = Schema.Struct({
  delivery: CallbackRegistration.Delivery,
  callbackBaseUrl: Schema.optional(Schema.String),
  deadlineAt: Schema.Number,
  retryNotCharged: Schema.Boolean,
  callbackFallbackMillis: Schema.Number,
  pollIntervalMillis: Schema.Number,
  resultTimeoutMillis: Schema.Number,
  notFoundWindowMillis: Schema.Number,
  maxWaitMillis: Schema.Number,
  reconcileTimeoutMillis: Schema.Number,
  requestTimeoutMillis: Schema.Number,
  /** Absent from plans recorded before it existed: `undecodableGraceOf` supplies the default. */
  undecodableGraceMillis: Schema.optional(Schema.Number),
  startedAt: Schema.Number
})
/** @see Plan */
export type Plan = typeof Plan.Type

/** Step 1 (`plan`), its schemas built once. */
const planStep = DurableStep.make({ name: "plan", success: Plan })

/**
 * Step 1, `plan`: the settings in force, the delivery mode (callback only when a base
 * address is configured), the deadline, and the `OperationRequested` event.
 */
export const plan = ({ payload, executionId, emit }: Execution) =>
  planStep(
    Effect.gen(function* () {
      const request = payload.request
      const settings = yield* ProtocolSettings.ProtocolSettings
      const startedAt = yield* now
      const wanted = payload.delivery ?? settings.defaultDelivery
      const delivery: CallbackRegistration.Delivery =
        wanted === "callback" && Option.isSome(settings.callbackBaseUrl) ? "callback" : "polling"
      if (wanted !== delivery) {
        yield* Effect.logWarning("callback delivery asked but no callback base URL is configured: polling")
      }
      const deadlineAt = payload.deadlineAt ?? payload.requestedAt + Duration.toMillis(settings.terminalWait)
      const amount = requestedAmountOf(request)
      yield* emit("plan", [
        PaymentEvents.OperationRequested.make({
          executionId,
          operation: request.operation,
          serialNumber: request.serialNumber,
          terminalType: request.terminalType,
          ...(amount === undefined ? {} : { amount }),
          ...Option.match(TransactionRequest.originalTransactionId(request), {
            onNone: () => ({}),
            onSome: (id) => ({ originalTransactionId: id })
          }),
          ...(payload.originalTransactionReference === undefined
            ? {}
            : { originalTransactionReference: payload.originalTransactionReference }),
          ...(request.customerReference === undefined
            ? {}
            : { customerReference: request.customerReference }),
          delivery,
          requestedAt: payload.requestedAt,
          deadlineAt,
          at: startedAt
        })
      ])
      return {
        delivery,
        ...(delivery === "callback"
          ? { callbackBaseUrl: Option.getOrUndefined(settings.callbackBaseUrl) }
          : {}),
        deadlineAt,
        retryNotCharged: payload.retryNotCharged ?? settings.retryNotCharged,
        callbackFallbackMillis: Duration.toMillis(settings.callbackFallback),
        pollIntervalMillis: Duration.toMillis(settings.pollInterval),
        resultTimeoutMillis: Duration.toMillis(settings.resultTimeout),
        notFoundWindowMillis: Duration.toMillis(settings.notFoundWindow),
        maxWaitMillis: Duration.toMillis(settings.maxWait),
        reconcileTimeoutMillis: Duration.toMillis(settings.reconcileTimeout),
        requestTimeoutMillis: Duration.toMillis(settings.requestTimeout),
        undecodableGraceMillis: Duration.toMillis(settings.undecodableGrace),
        startedAt
      }
    })
  )

/** How long undecodable answers are asked again before the outcome is unresolved (ms). */
export const undecodableGraceOf = (plan: Plan): number =>
  plan.undecodableGraceMillis ?? Duration.toMillis(ProtocolSettings.defaults.undecodableGrace)

/** The wait before retry number `step` of the recovery rhythm, capped by the plan's `maxWait` (ms). */
export const recoveryDelay = (plan: Plan, step: number): number =>
  Duration.toMillis(RecoverySchedule.delay(step, { cap: Duration.millis(plan.maxWaitMillis) }))
