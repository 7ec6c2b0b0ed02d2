/**
 * The port through which a linked operation sent to a terminal (a capture, an increase, a
 * reversal of a sale, a refund, a pre-authorization or a MOTO transaction) goes through the
 * same money rules as its terminal-less twin: before anything is sent it is decided from
 * the original transaction's history and recorded there at the version read (`admit`),
 * and once it ends its outcome is folded into that history (`conclude`). The rules live
 * in the lifecycle layer, which provides this port (`LinkedTerminalRules.layer`); the
 * payment protocol only calls it. Without that layer nothing is checked: a composition
 * that sends linked operations provides it (the worker's and the command line's do).
 * `admit` also says the original's `transactionReference` from its history, so that an
 * operation whose answer is lost is reconciled through it (selector `all`) even when the
 * caller gave only the original's guid.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Identifiers from "../model/Identifiers.js"
import type * as TransactionRequest from "../model/TransactionRequest.js"
import type * as OperationOutcome from "./OperationOutcome.js"

/** The operations decided from their original's history. */
export const linkedOperations: ReadonlySet<string> = new Set([
  "preAuthorizationCapture",
  "preAuthorizationIncrease",
  "preAuthorizationReversal",
  "saleReversal",
  "refundReversal",
  "moToReversal",
  "refund",
  "moToRefund"
])

/** Whether a request is decided from its original's history. */
export const isLinked = (request: TransactionRequest.TransactionRequest): boolean =>
  linkedOperations.has(request.operation) && "originalTransactionId" in request

/** A linked operation of an execution. */
export interface Linked {
  readonly executionId: string
  readonly request: TransactionRequest.TransactionRequest
}

/** How the operation ended: an outcome, or why there is none. */
export type Ending = Either.Either<OperationOutcome.Outcome, OperationOutcome.OperationError>

/**
 * What admitting returns: the original's `transactionReference` as its history holds it
 * (none when it holds none, or when nothing was checked). Recorded with the admit step:
 * absent from steps recorded before it existed, which read as none.
 */
export const Admitted = Schema.UndefinedOr(Identifiers.TransactionReference)
/** @see Admitted */
export type Admitted = typeof Admitted.Type

/** The rules of linked operations. */
export interface Service {
  /**
   * Decides from the original's history and records the request there; a refusal fails.
   * Returns the original's reference from that history, if it has one.
   */
  readonly admit: (linked: Linked) => Effect.Effect<Admitted, OperationOutcome.OperationRefused>
  /** Folds how the operation ended into the original's history. */
  readonly conclude: (linked: Linked, ending: Ending) => Effect.Effect<void>
}

/** Checks nothing: the payment protocol alone, without the lifecycle layer. */
export const unchecked: Service = { admit: () => Effect.succeed(undefined), conclude: () => Effect.void }

/** The rules of linked operations in force (`unchecked` unless the lifecycle layer is provided). */
export class LinkedOperationRules extends Context.Reference<LinkedOperationRules>()(
  "tillflow/LinkedOperationRules",
  { defaultValue: (): Service => unchecked }
) {}
