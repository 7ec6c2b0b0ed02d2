/**
 * The payment protocol (DESIGN.md, "The payment protocol") as one durable workflow,
 * `TerminalOperation`, parameterised by the request: every operation sent to a terminal
 * ends with a known outcome or a typed error, whatever crashes, timeouts or lost results
 * happen on the way. Its steps, each an activity whose result the engine records:
 *
 * 1. `plan`: the settings in force, the deadline, the `OperationRequested` event.
 * 2. `attempt-N/record`: a fresh attempt id and, for original operations, a fresh UUID v4
 *    `transactionReference` (attempt 1 uses the request's), recorded before anything
 *    leaves; for a linked operation, the entries already under the original's reference.
 * 3. `attempt-N/send`: registers the attempt (callback token hash) in its own stream,
 *    which can be done once only — a send run again after a crash does not POST again,
 *    it reconciles — then POSTs. 1001/1002: a new attempt after a pause of the recovery
 *    rhythm, until the deadline. 403/422/other 400: `OperationRejected`. 5xx, network,
 *    timeout: outcome unknown, reconcile.
 * 4. The result: by callback (a `DurableDeferred` the receiver resolves, raced against a
 *    durable fallback timer) or by polling `transaction-result`.
 * 5. Reconciliation on the status endpoint (`Reconciliation`) when the result does not
 *    come or says UNDEFINED: IN_PROGRESS → ask again; NOT FOUND within 90 s → wait;
 *    NOT FOUND after 90 s → not charged (a new attempt if allowed, else `NotCharged`).
 * 6. `attempt-N/settle`: the outcome events (`DomainEvents`), and `ResultMismatch` for
 *    any delivered result that disagrees; then a second look at the attempt's stream,
 *    which notes a result the callback receiver recorded meanwhile (`LateResults`): the
 *    ordering point of a race with the receiver, argued at `settle`. A not-charged
 *    conclusion takes the same second look.
 *
 * The workflow carries a concurrency key per terminal (`terminal:<serial>`): on tillflow's
 * engine one operation runs per terminal at a time across all workers, and a second caller
 * waits for the first instead of provoking 1001. `StopCurrentTransaction` is a separate
 * workflow without that key, so a stop is never queued behind the operation it stops.
 */
import * as Activity from "@effect/workflow/Activity"
import * as DurableClock from "@effect/workflow/DurableClock"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as CallbackRegistration from "./CallbackRegistration.js"
import * as DomainEvents from "./DomainEvents.js"
import * as DurableEngine from "@tillflow/engine/DurableEngine"
import type * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Identifiers from "../model/Identifiers.js"
import { uuidFrom } from "@tillflow/engine/DeterministicId"
import * as SchemaCache from "@tillflow/engine/SchemaCache"
import * as StoreRetry from "@tillflow/engine/StoreRetry"
import * as LateResults from "./LateResults.js"
import * as Money from "../model/Money.js"
import * as OperationOutcome from "./OperationOutcome.js"
import * as ProtocolSettings from "./ProtocolSettings.js"
import * as Reconciliation from "./Reconciliation.js"
import * as RecoverySchedule from "./RecoverySchedule.js"
import * as RemoteError from "../model/RemoteError.js"
import * as ResultRedaction from "./ResultRedaction.js"
import * as TerminalCloud from "../model/TerminalCloud.js"
import * as TransactionRequest from "../model/TransactionRequest.js"
import { TransactionStatusResult } from "../model/TransactionResult.js"

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
  request: TransactionRequest.TransactionRequest,
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

// ---------------------------------------------------------------------------------------
// Step results (what the engine records)

const Plan = Schema.Struct({
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
  startedAt: Schema.Number
})
type Plan = typeof Plan.Type

const AttemptInfo = Schema.Struct({
  attempt: Schema.Int,
  attemptId: CallbackRegistration.AttemptId,
  transactionReference: Schema.optional(Identifiers.TransactionReference),
  attemptedAt: Schema.Number,
  /** Linked operations: the entries under the original's reference before the POST. */
  baseline: Schema.optional(Schema.Array(Schema.String))
})
type AttemptInfo = typeof AttemptInfo.Type

class Accepted extends Schema.TaggedClass<Accepted>()("Accepted", {
  transactionResultId: Schema.optional(Schema.String),
  at: Schema.Number
}) {}
class NotProcessed extends Schema.TaggedClass<NotProcessed>()("NotProcessed", {
  reason: Schema.String,
  message: Schema.String,
  at: Schema.Number
}) {}
class Rejected extends Schema.TaggedClass<Rejected>()("Rejected", {
  error: RemoteError.RemoteError,
  at: Schema.Number
}) {}
class Unknown extends Schema.TaggedClass<Unknown>()("Unknown", {
  reason: Schema.String,
  message: Schema.String,
  at: Schema.Number
}) {}
const SendOutcome = Schema.Union(Accepted, NotProcessed, Rejected, Unknown)
type SendOutcome = typeof SendOutcome.Type

class Arrived extends Schema.TaggedClass<Arrived>()("Arrived", {
  delivered: CallbackRegistration.DeliveredResult
}) {}
/** `new Arrived(…)` compiles a validator per call (the result holds transformations): compiled once. */
const makeArrived = SchemaCache.construct(Arrived)
class Elapsed extends Schema.TaggedClass<Elapsed>()("Elapsed", {}) {}
const CallbackWait = Schema.Union(Arrived, Elapsed)
type CallbackWait = typeof CallbackWait.Type

const PollResult = Schema.Union(
  Schema.TaggedStruct("Ready", { delivered: CallbackRegistration.DeliveredResult, at: Schema.Number }),
  Schema.TaggedStruct("Pending", { at: Schema.Number }),
  Schema.TaggedStruct("Gone", { at: Schema.Number }),
  Schema.TaggedStruct("Trouble", { reason: Schema.String, at: Schema.Number })
)

const StatusCheck = Schema.Struct({
  verdict: Reconciliation.Verdict,
  entry: Schema.optional(TransactionStatusResult),
  waitMillis: Schema.optional(Schema.Number),
  detail: Schema.optional(Schema.String),
  /** Proved not charged, yet a charge was delivered by callback for the attempt. */
  chargeDelivered: Schema.optional(Schema.Boolean),
  at: Schema.Number
})
type StatusCheck = typeof StatusCheck.Type

/** How waiting for a result ended before settlement. */
type Waited =
  | { readonly _tag: "Settled"; readonly outcome: OperationOutcome.Outcome }
  | { readonly _tag: "Reconcile" }
  | { readonly _tag: "Unresolved"; readonly message: string }

/** How reconciliation ended. */
type Reconciled =
  | { readonly _tag: "Settled"; readonly outcome: OperationOutcome.Outcome }
  | { readonly _tag: "NotCharged"; readonly at: number }
  | { readonly _tag: "Unresolved"; readonly message: string }

// ---------------------------------------------------------------------------------------
// Helpers

const now = Clock.currentTimeMillis

type PaymentEvent = EventRegistry.Event<(typeof DomainEvents.events.definitions)[number]>

/**
 * Appends domain events with ids derived from the execution and the step, so a step run
 * again after a crash appends nothing twice. Transient store failures are retried; a
 * store that stays down is a defect of the step (the engine runs it again).
 */
const appendPaymentEvents = (
  store: EventStore.Service,
  executionId: string,
  step: string,
  events: ReadonlyArray<PaymentEvent>
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const withIds = yield* withStepIds(executionId, step, events, {})
    yield* store.append(DomainEvents.paymentStream(executionId), EventStore.AnyVersion, withIds).pipe(
      Effect.asVoid,
      Effect.catchTag("DuplicateEventId", () => Effect.void),
      retryStore
    )
  }).pipe(Effect.orDie)

/** A step's events encoded, with ids derived from the execution, the step and their place. */
const withStepIds = (
  executionId: string,
  step: string,
  events: ReadonlyArray<PaymentEvent>,
  metadata: EventStore.JsonObject
): Effect.Effect<ReadonlyArray<EventStore.NewEvent>> =>
  Effect.gen(function* () {
    const encoded = yield* DomainEvents.events.encodeAll(events)
    return yield* Effect.forEach(encoded, (event, index) =>
      Effect.map(uuidFrom(`${executionId}/${step}/${index}`), (eventId) => ({
        ...event,
        eventId,
        metadata: { ...metadata, executionId }
      }))
    )
  }).pipe(Effect.orDie)

/**
 * Retries what the store may answer transiently, at its patient pace: a payment's own
 * events must land, and an append at any version may also lose a race with another writer.
 */
const retryStore = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  StoreRetry.retry(
    effect,
    StoreRetry.patient,
    (e) => StoreRetry.isTransient(e) || e._tag === "ConcurrencyConflict"
  )

const isOriginal = (request: TransactionRequest.TransactionRequest): boolean =>
  "transactionReference" in request

const requestedAmountOf = (request: TransactionRequest.TransactionRequest): Money.Money | undefined =>
  "amount" in request && request.amount instanceof Money.Money ? request.amount : undefined

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

const contextOf = (payload: Payload, attempt: AttemptInfo): OperationOutcome.AttemptContext => {
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

const reconcilable = (payload: Payload, attempt: AttemptInfo): boolean =>
  attempt.transactionReference !== undefined ||
  (payload.originalTransactionReference !== undefined && attempt.baseline !== undefined)

const durableSleep = (name: string, millis: number) =>
  DurableClock.sleep({ name, duration: Duration.millis(Math.max(1, Math.ceil(millis))) })

// ---------------------------------------------------------------------------------------
// The workflow body

const run = (payload: Payload, executionId: string) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const store = yield* EventStore.EventStore
    const request = payload.request
    const serialNumber = request.serialNumber
    const emit = (step: string, events: ReadonlyArray<PaymentEvent>) =>
      appendPaymentEvents(store, executionId, step, events)
    // Proved not charged, an attempt's conclusion weighed no result: its horizon is 0, and
    // every result of the attempt, delivered before or after it, is late (`settle` says why
    // they are read once the conclusion has landed).
    const noteNotCharged = (attemptId: string) =>
      noteLateResults(store, executionId, attemptId, LateResults.notCharged, 0)

    // 1. The plan --------------------------------------------------------------------
    const plan: Plan = yield* Activity.make({
      name: "plan",
      success: Plan,
      execute: Effect.gen(function* () {
        const settings = yield* ProtocolSettings.ProtocolSettings
        const startedAt = yield* now
        const wanted = payload.delivery ?? settings.defaultDelivery
        const delivery: CallbackRegistration.Delivery =
          wanted === "callback" && Option.isSome(settings.callbackBaseUrl) ? "callback" : "polling"
        if (wanted !== delivery) {
          yield* Effect.logWarning("callback delivery asked but no callback base URL is configured: polling")
        }
        const deadlineAt =
          payload.deadlineAt ?? payload.requestedAt + Duration.toMillis(settings.terminalWait)
        const amount = requestedAmountOf(request)
        yield* emit("plan", [
          DomainEvents.OperationRequested.make({
            executionId,
            operation: request.operation,
            serialNumber,
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
          startedAt
        }
      })
    })

    const recoveryDelay = (step: number) =>
      Duration.toMillis(RecoverySchedule.delay(step, { cap: Duration.millis(plan.maxWaitMillis) }))

    const giveUp = (attempts: number, lastReason: string) =>
      Effect.gen(function* () {
        yield* Activity.make({
          name: "end/terminal-unavailable",
          execute: Effect.flatMap(now, (at) =>
            emit("end/terminal-unavailable", [
              DomainEvents.TerminalUnavailable.make({ attempts, lastReason, deadlineAt: plan.deadlineAt, at })
            ])
          )
        })
        return yield* new OperationOutcome.TerminalUnavailable({
          message: `terminal ${serialNumber} was not available before the deadline (${lastReason})`,
          serialNumber,
          attempts,
          lastReason
        })
      })

    // Queued behind other operations of the terminal past the caller's deadline: send nothing.
    if (plan.startedAt > plan.deadlineAt) return yield* giveUp(0, "QueuedPastDeadline")

    // 2.–6. Attempts -------------------------------------------------------------------
    for (let n = 1; ; n++) {
      const prefix = `attempt-${n}`

      const attempt: AttemptInfo = yield* Activity.make({
        name: `${prefix}/record`,
        success: AttemptInfo,
        execute: Effect.gen(function* () {
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
          yield* emit(`${prefix}/record`, [
            DomainEvents.AttemptRecorded.make({
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
      })
      const context = contextOf(payload, attempt)

      const sent: SendOutcome = yield* Activity.make({
        name: `${prefix}/send`,
        success: SendOutcome,
        execute: send(payload, plan, attempt, executionId, store, cloud, emit)
      })

      if (sent._tag === "NotProcessed") {
        const wait = recoveryDelay(n - 1)
        // A new attempt must leave strictly before the deadline: one due at the deadline is late.
        if (sent.at + wait >= plan.deadlineAt) return yield* giveUp(n, sent.reason)
        yield* durableSleep(`${prefix}/retry-wait`, wait)
        continue
      }
      if (sent._tag === "Rejected") {
        return yield* new OperationOutcome.OperationRejected({
          message: `the service refused ${request.operation}: ${sent.error.message}`,
          error: sent.error
        })
      }

      // 4. The result ----------------------------------------------------------------
      let waited: Waited = { _tag: "Reconcile" }
      if (sent._tag === "Accepted") {
        waited =
          plan.delivery === "callback"
            ? yield* awaitCallback(payload, plan, attempt, context, store)
            : yield* awaitPoll(payload, plan, attempt, context, sent, cloud)
      }

      // 5. Reconciliation --------------------------------------------------------------
      let reconciled: Reconciled
      if (waited._tag === "Settled") {
        reconciled = waited
      } else if (waited._tag === "Unresolved") {
        reconciled = waited
      } else {
        // The 90 s window counts from when the POST ended, not from when the attempt was
        // recorded before it: the later instant is the safe one for "never reached".
        const windowFrom = { ...attempt, attemptedAt: Math.max(attempt.attemptedAt, sent.at) }
        reconciled = yield* reconcile(
          payload,
          plan,
          windowFrom,
          context,
          cloud,
          emit,
          recoveryDelay,
          noteNotCharged
        )
      }

      if (reconciled._tag === "NotCharged") {
        if (plan.retryNotCharged && reconciled.at < plan.deadlineAt) continue
        yield* Activity.make({
          name: `${prefix}/end-not-charged`,
          execute: Effect.flatMap(now, (at) =>
            emit(`${prefix}/end-not-charged`, [
              DomainEvents.PaymentNotCharged.make({
                attempt: n,
                attemptId: attempt.attemptId,
                at,
                attempts: n,
                ...(attempt.transactionReference === undefined
                  ? {}
                  : { transactionReference: attempt.transactionReference })
              })
            ])
          )
        })
        return yield* new OperationOutcome.NotCharged({
          message: `${request.operation} on terminal ${serialNumber} never reached the gateway: nothing was charged`,
          transactionReference: attempt.transactionReference ?? payload.originalTransactionReference ?? "",
          attempts: n
        })
      }
      if (reconciled._tag === "Unresolved") {
        const message = reconciled.message
        yield* Activity.make({
          name: `${prefix}/end-unresolved`,
          execute: Effect.flatMap(now, (at) =>
            emit(`${prefix}/end-unresolved`, [
              DomainEvents.OutcomeUnresolved.make({ attempt: n, attemptId: attempt.attemptId, at, message })
            ])
          )
        })
        return yield* new OperationOutcome.OutcomeUnresolved({ message, attemptId: attempt.attemptId })
      }

      // 6. Settle ----------------------------------------------------------------------
      const outcome = reconciled.outcome
      yield* Activity.make({
        name: `${prefix}/settle`,
        execute: settle(outcome, attempt, executionId, store, `${prefix}/settle`)
      })
      return outcome
    }
  })

// ---------------------------------------------------------------------------------------
// Steps

/** Step 3: register the attempt once, then POST, and say what became of it. */
const send = (
  payload: Payload,
  plan: Plan,
  attempt: AttemptInfo,
  executionId: string,
  store: EventStore.Service,
  cloud: TerminalCloud.Service,
  emit: (step: string, events: ReadonlyArray<PaymentEvent>) => Effect.Effect<void>
): Effect.Effect<SendOutcome> =>
  Effect.gen(function* () {
    const request = payload.request
    const step = `attempt-${attempt.attempt}/send`
    const token = plan.delivery === "callback" ? yield* CallbackRegistration.makeToken : undefined
    const tokenHash = token === undefined ? undefined : yield* CallbackRegistration.hashToken(token)
    const registeredAt = yield* now
    const registrationData = CallbackRegistration.AttemptRegistered.make({
      attemptId: attempt.attemptId,
      attempt: attempt.attempt,
      workflowName: TerminalOperation.name,
      executionId,
      paymentStream: DomainEvents.paymentStream(executionId),
      deferredName: CallbackRegistration.resultDeferred(attempt.attemptId).name,
      operation: request.operation,
      serialNumber: request.serialNumber,
      ...(attempt.transactionReference === undefined
        ? {}
        : { transactionReference: attempt.transactionReference }),
      delivery: plan.delivery,
      ...(tokenHash === undefined ? {} : { tokenHash }),
      registeredAt
    })
    const registration = yield* CallbackRegistration.events.encode(registrationData).pipe(Effect.orDie)
    const registered = yield* store
      .append(CallbackRegistration.attemptStream(attempt.attemptId), EventStore.NoStream, [registration])
      .pipe(
        Effect.as(true),
        Effect.catchTag("ConcurrencyConflict", () => Effect.succeed(false)),
        (effect) => StoreRetry.retry(effect, StoreRetry.patient),
        Effect.orDie
      )

    const record = (outcome: SendOutcome) =>
      Effect.as(
        emit(step, [
          outcome._tag === "Accepted"
            ? DomainEvents.AttemptAccepted.make({
                attempt: attempt.attempt,
                attemptId: attempt.attemptId,
                at: outcome.at,
                ...(outcome.transactionResultId === undefined
                  ? {}
                  : { transactionResultId: outcome.transactionResultId })
              })
            : outcome._tag === "NotProcessed"
              ? DomainEvents.AttemptNotProcessed.make({
                  attempt: attempt.attempt,
                  attemptId: attempt.attemptId,
                  at: outcome.at,
                  reason: outcome.reason,
                  message: outcome.message
                })
              : outcome._tag === "Rejected"
                ? DomainEvents.OperationRejected.make({
                    attempt: attempt.attempt,
                    attemptId: attempt.attemptId,
                    at: outcome.at,
                    error: outcome.error._tag,
                    status: RemoteError.statusOf(outcome.error),
                    message: outcome.error.message
                  })
                : DomainEvents.AttemptOutcomeUnknown.make({
                    attempt: attempt.attempt,
                    attemptId: attempt.attemptId,
                    at: outcome.at,
                    reason: outcome.reason,
                    message: outcome.message
                  })
        ]),
        outcome
      )

    if (registered && plan.delivery === "callback") {
      // The receiver of this process then checks the token without reading the stream.
      const attempts = yield* Effect.serviceOption(CallbackRegistration.RegisteredAttempts)
      if (Option.isSome(attempts)) {
        attempts.value.note({ registration: registrationData.data, version: 1, resultHashes: [] })
      }
    }

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
    const answer = yield* cloud
      .sendTransaction(requestForAttempt(request, attempt.transactionReference, delivery))
      .pipe(
        Effect.timeoutFail({
          duration: Duration.millis(plan.requestTimeoutMillis),
          onTimeout: () =>
            new RemoteError.OutcomeUnknown({ message: "no answer to the request in time", reason: "Timeout" })
        }),
        Effect.either
      )
    const at = yield* now
    if (answer._tag === "Right") {
      return yield* record(
        new Accepted({
          at,
          ...(answer.right.transactionResultId === undefined
            ? {}
            : { transactionResultId: answer.right.transactionResultId })
        })
      )
    }
    const error = answer.left
    switch (error._tag) {
      case "DeviceBusy":
      case "DeviceOffline":
        return yield* record(new NotProcessed({ reason: error._tag, message: error.message, at }))
      case "OutcomeUnknown":
        return yield* record(new Unknown({ reason: error.reason, message: error.message, at }))
      default:
        return yield* record(new Rejected({ error, at }))
    }
  }).pipe(Effect.withSpan("PaymentProtocol.send"))

/** Step 4, callback mode: the receiver resolves the attempt's deferred; a durable timer races it. */
const awaitCallback = (
  payload: Payload,
  plan: Plan,
  attempt: AttemptInfo,
  context: OperationOutcome.AttemptContext,
  store: EventStore.Service
) =>
  Effect.gen(function* () {
    const prefix = `attempt-${attempt.attempt}`
    const canReconcile = reconcilable(payload, attempt)
    let waitedMillis = 0
    for (let k = 0; ; k++) {
      const slice = canReconcile
        ? plan.callbackFallbackMillis
        : Math.min(plan.callbackFallbackMillis, plan.resultTimeoutMillis - waitedMillis)
      const arrived: Effect.Effect<CallbackWait, never, WorkflowEngine | WorkflowInstance> = Effect.map(
        DurableDeferred.await(CallbackRegistration.resultDeferred(attempt.attemptId)),
        (delivered) => makeArrived({ delivered })
      )
      // The receiver acknowledges a delivery once its result is in the attempt's stream and
      // resolves the deferred after its reply: a crash in between leaves the result recorded
      // but never forwarded. So when the clock wins, the result is looked for where it was
      // recorded; what the race returns is stored with it, so a replay does not look again.
      const elapsed: Effect.Effect<CallbackWait, never, WorkflowEngine | WorkflowInstance> = Effect.zipRight(
        DurableClock.sleep({
          name: `${prefix}/callback-fallback-${k}`,
          duration: Duration.millis(Math.max(1, slice)),
          // Durable even when short: the workflow suspends, and the callback wakes it.
          inMemoryThreshold: Duration.zero
        }),
        Effect.map(recordedResult(store, attempt.attemptId), (delivered) =>
          delivered === null ? new Elapsed() : makeArrived({ delivered })
        )
      )
      const raced = yield* DurableDeferred.raceAll({
        name: `${prefix}/await-callback-${k}`,
        success: CallbackWait,
        error: Schema.Never,
        effects: [arrived, elapsed]
      })
      if (raced._tag === "Arrived") {
        const reading = OperationOutcome.read(raced.delivered.result, context, "callback")
        if (reading._tag === "Settled") return reading satisfies Waited
        return canReconcile
          ? ({ _tag: "Reconcile" } satisfies Waited)
          : ({
              _tag: "Unresolved",
              message: `the result says ${reading.finStatus} and there is no reference to reconcile with`
            } satisfies Waited)
      }
      if (canReconcile) return { _tag: "Reconcile" } satisfies Waited
      waitedMillis += slice
      if (waitedMillis >= plan.resultTimeoutMillis) {
        return {
          _tag: "Unresolved",
          message: `no result was delivered within ${Duration.format(Duration.millis(plan.resultTimeoutMillis))} and there is no reference to reconcile with`
        } satisfies Waited
      }
    }
  })

/**
 * The first result recorded in the attempt's stream, if any (undecodable bodies are not
 * results). A store that cannot answer counts as none: the wait goes on as without it.
 */
const recordedResult = (
  store: EventStore.Service,
  attemptId: string
): Effect.Effect<CallbackRegistration.DeliveredResult | null> =>
  Effect.gen(function* () {
    const read = yield* store
      .readStream(CallbackRegistration.attemptStream(attemptId))
      .pipe((effect) => StoreRetry.retry(effect, StoreRetry.patient), Effect.option)
    if (Option.isNone(read)) return null
    const events = read.value
    for (const recorded of events) {
      if (recorded.type !== CallbackRegistration.ResultReceived.type) continue
      const decoded = yield* Effect.option(CallbackRegistration.events.decode(recorded))
      if (Option.isNone(decoded) || decoded.value.type !== "ResultReceived") continue
      const received = decoded.value.data as typeof CallbackRegistration.ResultReceived.schema.Type
      const result = Schema.decodeUnknownOption(CallbackRegistration.DeliveredResult.fields.result)(
        received.result
      )
      if (Option.isNone(result)) continue
      return { result: result.value, resultHash: received.resultHash, receivedAt: received.receivedAt }
    }
    return null
  })

/** Step 4, polling mode: `transaction-result` until 200, or reconcile on 404 or timeout. */
const awaitPoll = (
  payload: Payload,
  plan: Plan,
  attempt: AttemptInfo,
  context: OperationOutcome.AttemptContext,
  accepted: Accepted,
  cloud: TerminalCloud.Service
) =>
  Effect.gen(function* () {
    const prefix = `attempt-${attempt.attempt}`
    const canReconcile = reconcilable(payload, attempt)
    const resultId = accepted.transactionResultId
    const unresolved = (why: string): Waited => ({
      _tag: "Unresolved",
      message: `${why} and there is no reference to reconcile with`
    })
    if (resultId === undefined)
      return canReconcile ? ({ _tag: "Reconcile" } as Waited) : unresolved("no result id")
    for (let i = 0; ; i++) {
      const polled = yield* Activity.make({
        name: `${prefix}/poll-${i}`,
        success: PollResult,
        execute: Effect.gen(function* () {
          const answer = yield* Effect.either(
            cloud.transactionResult(Identifiers.TransactionResultId.make(resultId))
          )
          const at = yield* now
          if (answer._tag === "Left") return { _tag: "Trouble" as const, reason: answer.left._tag, at }
          const outcome = answer.right
          switch (outcome._tag) {
            case "Pending":
              return { _tag: "Pending" as const, at }
            case "Unknown":
              return { _tag: "Gone" as const, at }
            case "Ready": {
              const result = ResultRedaction.sanitiseResult(outcome.result)
              const sanitised = ResultRedaction.sanitise(
                Schema.encodeSync(CallbackRegistration.DeliveredResult.fields.result)(result)
              )
              const resultHash = yield* CallbackRegistration.resultHash(sanitised.value)
              return { _tag: "Ready" as const, delivered: { result, resultHash, receivedAt: at }, at }
            }
          }
        })
      })
      if (polled._tag === "Ready") {
        const reading = OperationOutcome.read(polled.delivered.result, context, "polling")
        if (reading._tag === "Settled") return reading satisfies Waited
        return canReconcile
          ? ({ _tag: "Reconcile" } as Waited)
          : unresolved(`the result says ${reading.finStatus}`)
      }
      if (polled._tag === "Gone") {
        return canReconcile
          ? ({ _tag: "Reconcile" } as Waited)
          : unresolved("the result id is no longer known")
      }
      if (polled.at - attempt.attemptedAt >= plan.resultTimeoutMillis) {
        return canReconcile ? ({ _tag: "Reconcile" } as Waited) : unresolved("no result in time")
      }
      yield* durableSleep(`${prefix}/poll-wait-${i}`, plan.pollIntervalMillis)
    }
  })

/** Step 5: ask the status endpoint until it settles the attempt or proves it not charged. */
const reconcile = (
  payload: Payload,
  plan: Plan,
  attempt: AttemptInfo,
  context: OperationOutcome.AttemptContext,
  cloud: TerminalCloud.Service,
  emit: (step: string, events: ReadonlyArray<PaymentEvent>) => Effect.Effect<void>,
  recoveryDelay: (step: number) => number,
  noteNotCharged: (attemptId: string) => Effect.Effect<{ readonly disagreeing: number }>
) =>
  Effect.gen(function* () {
    const prefix = `attempt-${attempt.attempt}`
    const reference = attempt.transactionReference ?? payload.originalTransactionReference
    if (reference === undefined || !reconcilable(payload, attempt)) {
      return {
        _tag: "Unresolved",
        message: "the outcome is unknown and the operation has no reference to reconcile with"
      } satisfies Reconciled
    }
    const linked = attempt.transactionReference === undefined
    for (let j = 0; ; j++) {
      const step = `${prefix}/status-${j}`
      const check: StatusCheck = yield* Activity.make({
        name: step,
        success: StatusCheck,
        execute: Effect.gen(function* () {
          const answer = yield* Effect.either(cloud.transactionStatus(reference, linked ? "all" : "first"))
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
            ...(reading._tag === "Settled"
              ? { entry: ResultRedaction.sanitiseStatusResult(reading.entry) }
              : {}),
            ...(reading._tag === "NotFoundYet" ? { waitMillis: Duration.toMillis(reading.remaining) } : {}),
            ...(reading._tag === "Unavailable" ? { detail: reading.reason } : {})
          }
          const events: Array<PaymentEvent> = [
            DomainEvents.ReconciliationChecked.make({
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
              DomainEvents.AttemptNotCharged.make({
                attempt: attempt.attempt,
                attemptId: attempt.attemptId,
                at: checkedAt,
                ...(attempt.transactionReference === undefined
                  ? {}
                  : { transactionReference: attempt.transactionReference })
              })
            )
          }
          yield* emit(step, events)
          // Its results, once the conclusion has landed: those the receiver could not
          // yet note against it, those delivered during reconciliation included. A charge
          // among them contradicts the status endpoint: the attempt is not retried.
          if (reading._tag === "NotCharged") {
            const noted = yield* noteNotCharged(attempt.attemptId)
            if (noted.disagreeing > 0) return { ...check, chargeDelivered: true }
          }
          return check
        })
      })
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
                "the status endpoint found no transaction, but the terminal delivered a charge for this attempt: not retried, see its ResultMismatch"
            } satisfies Reconciled
          }
          return { _tag: "NotCharged", at: check.at } satisfies Reconciled
        case "NotFoundYet":
          yield* durableSleep(
            `${prefix}/status-wait-${j}`,
            Math.min(recoveryDelay(j), check.waitMillis ?? recoveryDelay(j))
          )
          continue
        case "InProgress":
        case "Unavailable":
          break
      }
      if (check.at - attempt.attemptedAt > plan.reconcileTimeoutMillis) {
        return {
          _tag: "Unresolved",
          message: `reconciliation found no final status within ${Duration.format(Duration.millis(plan.reconcileTimeoutMillis))}`
        } satisfies Reconciled
      }
      yield* durableSleep(`${prefix}/status-wait-${j}`, recoveryDelay(j))
    }
  })

/**
 * Step 6: the outcome events, a `ResultMismatch` for every delivered result it weighs that
 * disagrees, then the notes of any result recorded while it concluded.
 *
 * This is the ordering point of a race with the callback receiver. The receiver appends a
 * result R to the attempt's stream, then reads the payment's stream for a conclusion to
 * note R against; settle reads the attempt's stream, appends the outcome to the payment's,
 * then reads the attempt's stream again (`noteLateResults`). Appends and reads of a stream
 * are linearizable, so either R's append precedes that second read, which finds R, or it
 * follows it, hence follows the outcome's append, and the receiver's read, after R's
 * append, finds the outcome. Either way R is noted; both sides may note it, and the notes'
 * ids make the second writer's a no-op (`LateResults`). With the first read alone, settle
 * could read before R was appended and the receiver read before the outcome was: R, a
 * charge perhaps, would be noted by neither.
 *
 * The version of the first read is the outcome's horizon, recorded in the metadata of the
 * events appended here: a result at or below it is weighed by the outcome (a mismatch when
 * it disagrees, and it is not late); one above it is late, whichever side notes it. Run
 * again after a crash, the step finds its events stored already: the horizon is then the
 * one the first run recorded, read back, and whatever that run did not note is noted now.
 */
const settle = (
  outcome: OperationOutcome.Outcome,
  attempt: AttemptInfo,
  executionId: string,
  store: EventStore.Service,
  step: string
) =>
  Effect.gen(function* () {
    const at = yield* now
    const attemptId = attempt.attemptId
    const paymentStream = DomainEvents.paymentStream(executionId)
    const recorded = outcome.facts.finStatus
    // Unreadable, the attempt's stream is weighed as empty: horizon 0, and any result in it
    // is noted as late by the second read.
    const first = yield* store
      .readStream(CallbackRegistration.attemptStream(attemptId))
      .pipe(Effect.orElseSucceed((): ReadonlyArray<EventStore.RecordedEvent> => []))
    const horizon = first.at(-1)?.version ?? 0
    const disagreeing = (yield* LateResults.resultsIn(first)).filter((result) =>
      LateResults.disagrees(recorded, result.finStatus)
    )
    const outcomeEvents = yield* withStepIds(executionId, step, DomainEvents.outcomeEventsOf(outcome, at), {
      [LateResults.horizonKey]: horizon
    })
    const mismatches = yield* Effect.forEach(disagreeing, (result) =>
      LateResults.mismatchOf({ executionId, attemptId, recorded, result })
    )
    yield* logMismatches(attemptId, recorded, disagreeing)
    const landed = yield* retryStore(
      LateResults.appendEach(store, paymentStream, [...outcomeEvents, ...mismatches])
    ).pipe(Effect.orDie)
    const settledHorizon = landed
      ? horizon
      : yield* retryStore(store.readStream(paymentStream)).pipe(
          Effect.orDie,
          Effect.map((events) =>
            Option.match(LateResults.conclusionOf(events, attemptId), {
              onNone: () => horizon,
              onSome: (conclusion) => conclusion.horizon ?? horizon
            })
          )
        )
    yield* noteLateResults(store, executionId, attemptId, recorded, settledHorizon)
  })

/**
 * After a conclusion about an attempt has landed in the payment's stream: reads the
 * attempt's stream again and notes every result recorded above the conclusion's horizon
 * (`LateResults.notesOf`, the same events the receiver would write). Why this closes the
 * race with the receiver: see `settle`. A store that stays down is a defect of the step,
 * which then runs again, notes included.
 */
const noteLateResults = (
  store: EventStore.Service,
  executionId: string,
  attemptId: string,
  recorded: string,
  horizon: number
): Effect.Effect<{ readonly disagreeing: number }> =>
  Effect.gen(function* () {
    const events = yield* retryStore(store.readStream(CallbackRegistration.attemptStream(attemptId)))
    const late = (yield* LateResults.resultsIn(events)).filter((result) => result.version > horizon)
    if (late.length === 0) return { disagreeing: 0 }
    const notes = yield* Effect.forEach(late, (result) =>
      LateResults.notesOf({ executionId, attemptId, recorded, result })
    )
    const disagreeing = late.filter((result) => LateResults.disagrees(recorded, result.finStatus))
    yield* logMismatches(attemptId, recorded, disagreeing)
    yield* retryStore(LateResults.appendEach(store, DomainEvents.paymentStream(executionId), notes.flat()))
    return { disagreeing: disagreeing.length }
  }).pipe(Effect.orDie)

const logMismatches = (attemptId: string, recorded: string, results: ReadonlyArray<LateResults.Result>) =>
  Effect.forEach(
    results,
    (result) =>
      Effect.logError("a delivered result disagrees with the recorded outcome").pipe(
        Effect.annotateLogs({ attemptId, recorded, received: result.finStatus ?? "UNDEFINED" })
      ),
    { discard: true }
  )

// ---------------------------------------------------------------------------------------
// Stop

const stop = (payload: typeof StopCurrentTransaction.payloadSchema.Type, executionId: string) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const store = yield* EventStore.EventStore
    const { serialNumber, terminalType } = payload
    const sent = yield* Activity.make({
      name: "stop",
      success: SendOutcome,
      execute: Effect.gen(function* () {
        const answer = yield* Effect.either(
          cloud.sendTransaction({ operation: "stopCurrentTransaction", serialNumber, terminalType })
        )
        const at = yield* now
        const outcome: SendOutcome =
          answer._tag === "Right"
            ? new Accepted({ at })
            : answer.left._tag === "OutcomeUnknown"
              ? new Unknown({ reason: answer.left.reason, message: answer.left.message, at })
              : answer.left._tag === "DeviceBusy" || answer.left._tag === "DeviceOffline"
                ? new NotProcessed({ reason: answer.left._tag, message: answer.left.message, at })
                : new Rejected({ error: answer.left, at })
        yield* appendPaymentEvents(store, executionId, "stop", [
          outcome._tag === "Accepted"
            ? DomainEvents.StopAccepted.make({ serialNumber, at })
            : DomainEvents.StopRefused.make({
                serialNumber,
                at,
                message: outcome._tag === "Rejected" ? outcome.error.message : outcome.message
              })
        ])
        return outcome
      })
    })
    switch (sent._tag) {
      case "Accepted":
        return new StopAccepted({ serialNumber, at: sent.at })
      case "NotProcessed":
        return yield* new OperationOutcome.TerminalUnavailable({
          message: `terminal ${serialNumber} did not take the stop: ${sent.message}`,
          serialNumber,
          attempts: 1,
          lastReason: sent.reason
        })
      case "Unknown":
        return yield* new OperationOutcome.OutcomeUnresolved({
          message: `whether terminal ${serialNumber} took the stop is unknown: ${sent.message}`,
          attemptId: executionId
        })
      case "Rejected":
        return sent.error._tag === "CancelNotAllowed"
          ? yield* new OperationOutcome.StopRefused({
              message: `terminal ${serialNumber} cannot stop its operation at its present step`,
              serialNumber
            })
          : yield* new OperationOutcome.OperationRejected({
              message: `the service refused the stop: ${sent.error.message}`,
              error: sent.error
            })
    }
  })

// ---------------------------------------------------------------------------------------
// Layer

/**
 * Registers both workflows with the engine in context. Needs the `TerminalCloud` and the
 * `EventStore`; reads `ProtocolSettings` (defaults when none is provided).
 */
export const layer = Layer.mergeAll(
  TerminalOperation.toLayer((payload, executionId) => run(payload, executionId)),
  StopCurrentTransaction.toLayer((payload, executionId) => stop(payload, executionId))
)
