/**
 * The terminal operations as a library user calls them: one function per operation of
 * the spec (`sale`, `refund`, `printReceipt`, `stopCurrentTransaction` …), each a thin
 * entry point into the `PaymentProtocol` workflows. A call waits for the known outcome;
 * `start` only starts it (the same idempotency key joins the same execution) and
 * `outcome` reads it later. Original operations get a fresh `transactionReference` when
 * the caller gives none.
 *
 * @example
 * const outcome = yield* TerminalOperations.sale(
 *   { serialNumber, terminalType, amount: Money.make(1050n, "EUR") },
 *   { idempotencyKey: "order-42", delivery: "callback" }
 * )
 */
import type * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as CallbackRegistration from "./CallbackRegistration.js"
import * as DurableEngine from "@tillflow/engine/DurableEngine"
import type * as ExecutionQueue from "@tillflow/engine/ExecutionQueue"
import * as Identifiers from "../model/Identifiers.js"
import * as Money from "../model/Money.js"
import * as OperationOutcome from "./OperationOutcome.js"
import * as PaymentProtocol from "./PaymentProtocol.js"
import * as ProtocolSettings from "./ProtocolSettings.js"
import * as TransactionRequest from "../model/TransactionRequest.js"

/** How a call runs. */
export interface CallOptions {
  /** The same key is the same operation: a repeated call joins it instead of charging again. */
  readonly idempotencyKey: string
  /** Result delivery for this call (the configured default otherwise). */
  readonly delivery?: CallbackRegistration.Delivery | undefined
  /** How long a busy, offline or queued terminal may be waited for (the configured default otherwise). */
  readonly deadline?: Duration.DurationInput | undefined
  /** Whether an attempt proved not charged may be followed by a new one. */
  readonly retryNotCharged?: boolean | undefined
}

/** Options of a linked operation: the original's reference makes it reconcilable. */
export interface LinkedCallOptions extends CallOptions {
  readonly originalTransactionReference?: Identifiers.TransactionReference | undefined
}

type Outcome = OperationOutcome.Outcome
/** Why a call ended without an outcome: refused before it started, or by the protocol. */
type Failure = OperationOutcome.OperationError | OperationOutcome.InvalidRequest

const validateRequest = Schema.validateEither(TransactionRequest.TransactionRequest)

/** The request as the contract allows it, or `InvalidRequest` saying what is wrong. */
const checked = (
  request: TransactionRequest.TransactionRequest
): Effect.Effect<TransactionRequest.TransactionRequest, OperationOutcome.InvalidRequest> =>
  Either.match(validateRequest(request), {
    onRight: (valid) => Effect.succeed(valid),
    onLeft: (error) =>
      Effect.fail(
        new OperationOutcome.InvalidRequest({
          operation: request.operation,
          message: `${request.operation} was not started: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
        })
      )
  })

// The deadline is always in the payload (the configured wait when the caller gives none):
// the queue lets an execution out of its terminal's line by it.
const payloadOf = (
  unchecked: TransactionRequest.TransactionRequest,
  options: LinkedCallOptions
): Effect.Effect<PaymentProtocol.Payload, OperationOutcome.InvalidRequest> =>
  Effect.flatMap(checked(unchecked), (request) =>
    Effect.zipWith(Clock.currentTimeMillis, ProtocolSettings.ProtocolSettings, (requestedAt, settings) => {
      const { delivery: _secret, ...withoutDelivery } = request as TransactionRequest.TransactionRequest & {
        readonly delivery?: unknown
      }
      return {
        idempotencyKey: options.idempotencyKey,
        request: withoutDelivery as TransactionRequest.TransactionRequest,
        requestedAt,
        ...(options.delivery === undefined ? {} : { delivery: options.delivery }),
        deadlineAt:
          requestedAt +
          Duration.toMillis(
            options.deadline === undefined ? settings.terminalWait : Duration.decode(options.deadline)
          ),
        ...(options.retryNotCharged === undefined ? {} : { retryNotCharged: options.retryNotCharged }),
        ...(options.originalTransactionReference === undefined
          ? {}
          : { originalTransactionReference: options.originalTransactionReference })
      }
    })
  )

/**
 * Runs any terminal operation and waits for its outcome. The request's own delivery
 * fields are ignored: the protocol sets a callback address and token per attempt.
 */
export const execute: (
  request: TransactionRequest.TransactionRequest,
  options: LinkedCallOptions
) => Effect.Effect<Outcome, Failure, WorkflowEngine> = Effect.fn("TerminalOperations.execute")(function* (
  request: TransactionRequest.TransactionRequest,
  options: LinkedCallOptions
) {
  const payload = yield* payloadOf(request, options)
  return yield* PaymentProtocol.TerminalOperation.execute(payload)
})

/** Starts an operation without waiting; returns its execution id (the same for the same key). */
export const start: (
  request: TransactionRequest.TransactionRequest,
  options: LinkedCallOptions
) => Effect.Effect<string, OperationOutcome.InvalidRequest, WorkflowEngine> = Effect.fn(
  "TerminalOperations.start"
)(function* (request: TransactionRequest.TransactionRequest, options: LinkedCallOptions) {
  const payload = yield* payloadOf(request, options)
  return yield* PaymentProtocol.TerminalOperation.execute(payload, { discard: true })
})

/** The outcome of a started operation, if it has one yet. */
export const outcome = (
  executionId: string
): Effect.Effect<Workflow.Result<Outcome, Failure> | undefined, never, WorkflowEngine> =>
  PaymentProtocol.TerminalOperation.poll(executionId)

/** The execution id of the operation of an idempotency key. */
export const executionIdOf = (
  request: TransactionRequest.TransactionRequest,
  idempotencyKey: string
): Effect.Effect<string> =>
  PaymentProtocol.TerminalOperation.executionId({ idempotencyKey, request, requestedAt: 0 })

// ---------------------------------------------------------------------------------------
// Named entry points

type Fields<R> = R extends unknown ? Omit<R, "operation" | "delivery" | "transactionReference"> : never

/** The input of an original operation: its fields, the reference optional. */
export type OriginalInput<R> = Fields<R> & {
  readonly transactionReference?: Identifiers.TransactionReference | undefined
}

const original =
  <R extends TransactionRequest.TransactionRequest>(operation: R["operation"]) =>
  (input: OriginalInput<R>, options: CallOptions): Effect.Effect<Outcome, Failure, WorkflowEngine> =>
    Effect.flatMap(
      input.transactionReference === undefined
        ? Identifiers.makeTransactionReference
        : Effect.succeed(input.transactionReference),
      (transactionReference) =>
        execute(
          { ...input, operation, transactionReference } as unknown as TransactionRequest.TransactionRequest,
          options
        )
    )

const linked =
  <R extends TransactionRequest.TransactionRequest>(operation: R["operation"]) =>
  (input: Fields<R>, options: LinkedCallOptions): Effect.Effect<Outcome, Failure, WorkflowEngine> =>
    execute({ ...input, operation } as unknown as TransactionRequest.TransactionRequest, options)

const utility =
  <R extends TransactionRequest.TransactionRequest>(operation: R["operation"]) =>
  (input: Fields<R>, options: CallOptions): Effect.Effect<Outcome, Failure, WorkflowEngine> =>
    execute({ ...input, operation } as unknown as TransactionRequest.TransactionRequest, options)

/** A card payment. */
export const sale = original<TransactionRequest.Sale>("sale")
/** A card payment that also returns a card token. */
export const saleAndTokenizeCard = original<TransactionRequest.SaleAndTokenizeCard>("saleAndTokenizeCard")
/** An unlinked refund (its own reference). */
export const refund = original<TransactionRequest.Refund>("refund")
/** A refund linked to its sale (`originalTransactionId`). */
export const linkedRefund = linked<TransactionRequest.LinkedRefund>("refund")
/** Reverses a refund. */
export const refundReversal = linked<TransactionRequest.RefundReversal>("refundReversal")
/** Reverses a sale. */
export const saleReversal = linked<TransactionRequest.SaleReversal>("saleReversal")
/** A MOTO sale keyed on the terminal. */
export const motoSale = original<TransactionRequest.MotoSale>("moToSale")
/** An unlinked MOTO refund. */
export const motoRefund = original<TransactionRequest.MotoRefund>("moToRefund")
/** A MOTO refund linked to its sale. */
export const linkedMotoRefund = linked<TransactionRequest.LinkedMotoRefund>("moToRefund")
/** A MOTO reversal (within 24 h). */
export const motoReversal = linked<TransactionRequest.MotoReversal>("moToReversal")
/** A MOTO pre-authorization. */
export const motoPreAuthorization = original<TransactionRequest.MotoPreAuthorization>("moToPreAuthorization")
/** A pre-authorization (a hold). */
export const preAuthorization = original<TransactionRequest.PreAuthorization>("preAuthorization")
/** Increases (or with a negative amount, decreases) a pre-authorization through the terminal. */
export const preAuthorizationIncrease =
  linked<TransactionRequest.PreAuthorizationIncrease>("preAuthorizationIncrease")
/** Captures a pre-authorization through the terminal (once). */
export const preAuthorizationCapture =
  linked<TransactionRequest.PreAuthorizationCapture>("preAuthorizationCapture")
/** Releases a pre-authorization, or reverses its capture before settlement. */
export const preAuthorizationReversal =
  linked<TransactionRequest.PreAuthorizationReversal>("preAuthorizationReversal")
/** Reads a card and returns its token. */
export const tokenizeCard = utility<TransactionRequest.TokenizeCard>("tokenizeCard")
/** Reads a whitelisted card's number (never stored: the outcome carries the masked number). */
export const cardPan = utility<TransactionRequest.CardPan>("cardPan")
/** Prints a receipt. */
export const printReceipt = utility<TransactionRequest.PrintReceipt>("printReceipt")
/** Checks that a terminal answers. */
export const pingDevice = utility<TransactionRequest.PingDevice>("pingDevice")

/** A terminal, as a stop names it. */
export interface Terminal {
  readonly serialNumber: Identifiers.SerialNumber
  readonly terminalType: Identifiers.TerminalType
}

const stopPayloadOf = (
  terminal: Terminal,
  options: { readonly idempotencyKey: string }
): Effect.Effect<typeof PaymentProtocol.StopCurrentTransaction.payloadSchema.Type> =>
  Effect.map(Clock.currentTimeMillis, (requestedAt) => ({
    idempotencyKey: options.idempotencyKey,
    serialNumber: terminal.serialNumber,
    terminalType: terminal.terminalType,
    requestedAt
  }))

/**
 * Stops the operation in flight on a terminal, if it is at a stoppable step (else
 * `StopRefused`); that operation then ends `Cancelled`. Never queued behind it.
 */
export const stopCurrentTransaction: (
  terminal: Terminal,
  options: { readonly idempotencyKey: string }
) => Effect.Effect<PaymentProtocol.StopAccepted, Failure, WorkflowEngine> = Effect.fn(
  "TerminalOperations.stopCurrentTransaction"
)(function* (terminal: Terminal, options: { readonly idempotencyKey: string }) {
  const payload = yield* stopPayloadOf(terminal, options)
  return yield* PaymentProtocol.StopCurrentTransaction.execute(payload)
})

// ---------------------------------------------------------------------------------------
// Listed starts: what an operator's intake starts, found again with `DurableEngine.list`

/**
 * The search attributes of an operation: its operation, terminal and idempotency key, its
 * references (its own, its original's) and its amount in major units with its currency.
 */
export const searchAttributes = (payload: PaymentProtocol.Payload): ExecutionQueue.SearchAttributes => {
  const request = payload.request
  const reference = Option.getOrUndefined(TransactionRequest.transactionReference(request))
  const original = Option.getOrUndefined(TransactionRequest.originalTransactionId(request))
  const amount = "amount" in request && request.amount instanceof Money.Money ? request.amount : undefined
  return {
    operation: request.operation,
    serialNumber: request.serialNumber,
    idempotencyKey: payload.idempotencyKey,
    ...(reference === undefined ? {} : { transactionReference: reference }),
    ...(original === undefined ? {} : { originalTransactionId: original }),
    ...(payload.originalTransactionReference === undefined
      ? {}
      : { originalTransactionReference: payload.originalTransactionReference }),
    ...(amount === undefined ? {} : { amount: Money.toMajorUnitsString(amount), currency: amount.currency })
  }
}

/** `PaymentProtocol.TerminalOperation` listed by its `searchAttributes`. */
export const ListedOperation: typeof PaymentProtocol.TerminalOperation = DurableEngine.withSearchAttributes(
  PaymentProtocol.TerminalOperation,
  searchAttributes
)

/** `PaymentProtocol.StopCurrentTransaction` listed by its operation, terminal and idempotency key. */
export const ListedStop: typeof PaymentProtocol.StopCurrentTransaction = DurableEngine.withSearchAttributes(
  PaymentProtocol.StopCurrentTransaction,
  (payload) => ({
    operation: "stopCurrentTransaction",
    serialNumber: payload.serialNumber,
    idempotencyKey: payload.idempotencyKey
  })
)

/**
 * Starts an operation as `start` does, listed by its `searchAttributes`; returns its
 * execution id (the same for the same key: a repeated call joins the first).
 */
export const startListed = (
  request: TransactionRequest.TransactionRequest,
  options: LinkedCallOptions
): Effect.Effect<string, OperationOutcome.InvalidRequest, WorkflowEngine> =>
  Effect.flatMap(payloadOf(request, options), (payload) =>
    ListedOperation.execute(payload, { discard: true })
  )

/** Starts a stop of a terminal's operation without waiting, listed; returns its execution id. */
export const startStop = (
  terminal: Terminal,
  options: { readonly idempotencyKey: string }
): Effect.Effect<string, never, WorkflowEngine> =>
  Effect.flatMap(stopPayloadOf(terminal, options), (payload) =>
    ListedStop.execute(payload, { discard: true })
  )
