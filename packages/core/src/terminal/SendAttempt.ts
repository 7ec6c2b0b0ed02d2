/**
 * Steps 2 and 3 of the payment protocol: one attempt at getting an operation to the
 * terminal. `record` draws the attempt's id and reference and records them before anything
 * leaves; `send` registers the attempt in its own stream — possible once only, so a send
 * run again after a crash never POSTs again, it reconciles — then POSTs, and says what
 * became of it. A busy or offline terminal (1001/1002) is tried again as a new attempt
 * after a pause of the recovery rhythm, until the caller's deadline (`pauseBeforeRetry`).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as EventStore from "@tillflow/engine/EventStore"
import * as StoreRetry from "@tillflow/engine/StoreRetry"
import * as Tenant from "@tillflow/engine/Tenant"
import * as TraceContext from "@tillflow/engine/TraceContext"
import * as Identifiers from "../model/Identifiers.js"
import * as RemoteError from "../model/RemoteError.js"
import * as TransactionRequest from "../model/TransactionRequest.js"
import * as CallbackRegistration from "./CallbackRegistration.js"
import * as PaymentEvents from "./PaymentEvents.js"
import type * as OperationOutcome from "./OperationOutcome.js"
import {
  type Execution,
  type Payload,
  type Plan,
  recoveryDelay,
  requestedAmountOf,
  TerminalOperation
} from "./ProtocolWorkflows.js"
import * as Reconciliation from "./Reconciliation.js"
import { durableSleep, now, type PaymentEvent } from "./internal/step.js"

// ---------------------------------------------------------------------------------------
// What the steps record

/** One attempt, as its `record` step fixed it. */
export const AttemptInfo = Schema.Struct({
  attempt: Schema.Int,
  attemptId: CallbackRegistration.AttemptId,
  transactionReference: Schema.optional(Identifiers.TransactionReference),
  attemptedAt: Schema.Number,
  /** Linked operations: the entries under the original's reference before the POST. */
  baseline: Schema.optional(Schema.Array(Schema.String))
})
/** @see AttemptInfo */
export type AttemptInfo = typeof AttemptInfo.Type

/** 202: the terminal took the operation. */
export class Accepted extends Schema.TaggedClass<Accepted>()("Accepted", {
  transactionResultId: Schema.optional(Schema.String),
  at: Schema.Number
}) {}
/** 1001/1002: busy or offline, definitely not processed. */
export class NotProcessed extends Schema.TaggedClass<NotProcessed>()("NotProcessed", {
  reason: Schema.String,
  message: Schema.String,
  at: Schema.Number
}) {}
/** 403/422/other 4xx: refused, never retried. */
export class Rejected extends Schema.TaggedClass<Rejected>()("Rejected", {
  error: RemoteError.RemoteError,
  at: Schema.Number
}) {}
/** 5xx, network, timeout, or a send run again after a crash: it may have reached the terminal. */
export class Unknown extends Schema.TaggedClass<Unknown>()("Unknown", {
  reason: Schema.String,
  message: Schema.String,
  at: Schema.Number
}) {}
/** What became of a POST. */
export const SendOutcome = Schema.Union(Accepted, NotProcessed, Rejected, Unknown)
/** @see SendOutcome */
export type SendOutcome = typeof SendOutcome.Type

// The steps of an attempt, their schemas built once (`attempt-N/record`, `attempt-N/send`).
const recordStep = DurableStep.family({ success: AttemptInfo })
const sendStep = DurableStep.family({ success: SendOutcome })

/** What a failed POST tells: not processed (busy, offline), unknown, or refused. */
export const outcomeOfFailure = (error: RemoteError.RemoteError, at: number): SendOutcome => {
  switch (error._tag) {
    case "DeviceBusy":
    case "DeviceOffline":
      return new NotProcessed({ reason: error._tag, message: error.message, at })
    case "OutcomeUnknown":
      return new Unknown({ reason: error.reason, message: error.message, at })
    default:
      return new Rejected({ error, at })
  }
}

/** What results of the attempt are read against (`OperationOutcome.read`). */
export const contextOf = (payload: Payload, attempt: AttemptInfo): OperationOutcome.AttemptContext => {
  const request = payload.request
  return {
    operation: request.operation,
    serialNumber: request.serialNumber,
    terminalType: request.terminalType,
    attempt: attempt.attempt,
    attemptId: attempt.attemptId,
    transactionReference: attempt.transactionReference,
    originalTransactionId: Option.getOrUndefined(TransactionRequest.originalTransactionId(request)),
    requestedAmount: requestedAmountOf(request),
    financial: TransactionRequest.isFinancial(request)
  }
}

// ---------------------------------------------------------------------------------------
// Step 2: record

const isOriginal = (request: TransactionRequest.TransactionRequest): boolean =>
  "transactionReference" in request

/**
 * Step 2, `attempt-N/record`: a fresh attempt id and, for original operations, a fresh
 * UUID v4 `transactionReference` (attempt 1 uses the request's), recorded before anything
 * leaves; for a linked operation, the entries already under the original's reference.
 */
export const record = ({ payload, cloud, emit }: Execution, n: number) =>
  recordStep(`attempt-${n}/record`)(
    Effect.gen(function* () {
      const request = payload.request
      const attemptId = yield* CallbackRegistration.makeAttemptId
      const attemptedAt = yield* now
      const first = Option.getOrUndefined(TransactionRequest.transactionReference(request))
      const transactionReference = !isOriginal(request)
        ? undefined
        : n === 1 && first !== undefined
          ? first
          : yield* Identifiers.makeTransactionReference
      let baseline: ReadonlyArray<string> | undefined
      if (!isOriginal(request) && payload.originalTransactionReference !== undefined) {
        const answer = yield* Effect.either(
          cloud.transactionStatus(payload.originalTransactionReference, "all")
        )
        baseline =
          answer._tag === "Right"
            ? Reconciliation.baselineOf(answer.right)
            : answer.left._tag === "NotFound"
              ? []
              : undefined
      }
      yield* emit(`attempt-${n}/record`, [
        PaymentEvents.AttemptRecorded.make({
          attempt: n,
          attemptId,
          at: attemptedAt,
          ...(transactionReference === undefined ? {} : { transactionReference })
        })
      ])
      return {
        attempt: n,
        attemptId,
        attemptedAt,
        ...(transactionReference === undefined ? {} : { transactionReference }),
        ...(baseline === undefined ? {} : { baseline })
      }
    })
  )

// ---------------------------------------------------------------------------------------
// Step 3: send

/** Step 3, `attempt-N/send`: register the attempt once, then POST, and say what became of it. */
export const send = (execution: Execution, plan: Plan, attempt: AttemptInfo) =>
  sendStep(`attempt-${attempt.attempt}/send`)(registerAndPost(execution, plan, attempt))

const registerAndPost = (
  execution: Execution,
  plan: Plan,
  attempt: AttemptInfo
): Effect.Effect<SendOutcome> =>
  Effect.gen(function* () {
    const step = `attempt-${attempt.attempt}/send`
    const record = (outcome: SendOutcome) =>
      Effect.as(execution.emit(step, [sentEvent(attempt, outcome)]), outcome)
    const { registered, registeredAt, token } = yield* register(execution, plan, attempt)
    if (!registered) {
      // This step ran before and stopped after registering: the POST may have left. Never resend.
      return yield* record(
        new Unknown({
          reason: "Interrupted",
          message: "the worker stopped while this attempt was being sent: it may have reached the terminal",
          at: registeredAt
        })
      )
    }
    const delivery =
      token === undefined || plan.callbackBaseUrl === undefined
        ? undefined
        : { callbackUrl: CallbackRegistration.callbackUrl(plan.callbackBaseUrl, attempt.attemptId), token }
    const answer = yield* execution.cloud
      .sendTransaction(requestForAttempt(execution.payload.request, attempt.transactionReference, delivery))
      .pipe(
        Effect.timeoutFail({
          duration: Duration.millis(plan.requestTimeoutMillis),
          onTimeout: () =>
            new RemoteError.OutcomeUnknown({ message: "no answer to the request in time", reason: "Timeout" })
        }),
        Effect.either
      )
    const at = yield* now
    if (answer._tag === "Left") return yield* record(outcomeOfFailure(answer.left, at))
    return yield* record(
      new Accepted({
        at,
        ...(answer.right.transactionResultId === undefined
          ? {}
          : { transactionResultId: answer.right.transactionResultId })
      })
    )
  }).pipe(Effect.withSpan("PaymentProtocol.send"))

/**
 * Opens the attempt's stream with its registration (in callback mode with the hash of a
 * fresh token, never the token), expecting no stream yet: `registered` is false when a
 * run of this step before a crash opened it already.
 */
const register = (
  { payload, executionId, store }: Execution,
  plan: Plan,
  attempt: AttemptInfo
): Effect.Effect<{
  readonly registered: boolean
  readonly registeredAt: number
  readonly token: Redacted.Redacted<string> | undefined
}> =>
  Effect.gen(function* () {
    const request = payload.request
    const token = plan.delivery === "callback" ? yield* CallbackRegistration.makeToken : undefined
    const tokenHash = token === undefined ? undefined : yield* CallbackRegistration.hashToken(token)
    const registeredAt = yield* now
    const traceparent = yield* TraceContext.current
    const registrationData = CallbackRegistration.AttemptRegistered.make({
      attemptId: attempt.attemptId,
      attempt: attempt.attempt,
      workflowName: TerminalOperation.name,
      executionId,
      paymentStream: PaymentEvents.paymentStream(executionId),
      deferredName: CallbackRegistration.resultDeferred(attempt.attemptId).name,
      operation: request.operation,
      serialNumber: request.serialNumber,
      ...(attempt.transactionReference === undefined
        ? {}
        : { transactionReference: attempt.transactionReference }),
      delivery: plan.delivery,
      ...(tokenHash === undefined ? {} : { tokenHash }),
      registeredAt,
      ...(traceparent === undefined ? {} : { traceparent })
    })
    const tenant = yield* Tenant.current
    // Stamped with whose payment it is, so the merchant's log reads it and the receiver
    // stamps what it appends to the stream the same (`KnownAttempt.tenant`).
    const registration = yield* Tenant.stamp([
      yield* CallbackRegistration.events.encode(registrationData).pipe(Effect.orDie)
    ])
    const registered = yield* store
      .append(CallbackRegistration.attemptStream(attempt.attemptId), EventStore.NoStream, registration)
      .pipe(
        Effect.as(true),
        Effect.catchTag("ConcurrencyConflict", () => Effect.succeed(false)),
        (effect) => StoreRetry.retry(effect, StoreRetry.patient),
        Effect.orDie
      )
    if (registered && plan.delivery === "callback") {
      // The receiver of this process then checks the token without reading the stream.
      const attempts = yield* Effect.serviceOption(CallbackRegistration.RegisteredAttempts)
      if (Option.isSome(attempts)) {
        attempts.value.note({ registration: registrationData.data, version: 1, resultHashes: [], tenant })
      }
    }
    return { registered, registeredAt, token }
  })

/** The event that records what became of a POST. */
const sentEvent = (attempt: AttemptInfo, outcome: SendOutcome): PaymentEvent => {
  const { attempt: n, attemptId } = attempt
  switch (outcome._tag) {
    case "Accepted":
      return PaymentEvents.AttemptAccepted.make({
        attempt: n,
        attemptId,
        at: outcome.at,
        ...(outcome.transactionResultId === undefined
          ? {}
          : { transactionResultId: outcome.transactionResultId })
      })
    case "NotProcessed":
      return PaymentEvents.AttemptNotProcessed.make({
        attempt: n,
        attemptId,
        at: outcome.at,
        reason: outcome.reason,
        message: outcome.message
      })
    case "Rejected":
      return PaymentEvents.OperationRejected.make({
        attempt: n,
        attemptId,
        at: outcome.at,
        error: outcome.error._tag,
        status: RemoteError.statusOf(outcome.error),
        message: outcome.error.message
      })
    case "Unknown":
      return PaymentEvents.AttemptOutcomeUnknown.make({
        attempt: n,
        attemptId,
        at: outcome.at,
        reason: outcome.reason,
        message: outcome.message
      })
  }
}

/** The request of one attempt: its reference and delivery set, nothing else changed. */
const requestForAttempt = (
  request: TransactionRequest.TransactionRequest,
  reference: Identifiers.TransactionReference | undefined,
  delivery: { readonly callbackUrl: string; readonly token: Redacted.Redacted<string> } | undefined
): TransactionRequest.TransactionRequest => {
  const { delivery: _ignored, ...rest } = request as TransactionRequest.TransactionRequest & {
    readonly delivery?: unknown
  }
  return {
    ...rest,
    ...(reference !== undefined && "transactionReference" in rest ? { transactionReference: reference } : {}),
    ...(delivery === undefined ? {} : { delivery })
  } as TransactionRequest.TransactionRequest
}

// ---------------------------------------------------------------------------------------
// Busy or offline: a new attempt, until the deadline

/**
 * After 1001/1002: pauses for the recovery rhythm's wait and answers true (a new attempt
 * goes), or answers false at once when that attempt would leave at the deadline or after.
 */
export const pauseBeforeRetry = (plan: Plan, attempt: AttemptInfo, sent: NotProcessed) =>
  Effect.gen(function* () {
    const wait = recoveryDelay(plan, attempt.attempt - 1)
    // A new attempt must leave strictly before the deadline: one due at the deadline is late.
    if (sent.at + wait >= plan.deadlineAt) return false
    yield* durableSleep(`attempt-${attempt.attempt}/retry-wait`, wait)
    return true
  })
