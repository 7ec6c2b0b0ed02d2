/**
 * Reconciliation: learning the outcome of an operation whose result did not come (a
 * network error, a timeout or a 5xx on the POST, a lost callback, a result with finStatus
 * UNDEFINED) from the status endpoint, keyed by `transactionReference`. The rules (spec
 * section 3): IN_PROGRESS → ask again after a few seconds; NOT FOUND within 90 s of the
 * attempt → the card may not have been presented yet, wait; NOT FOUND after 90 s → the
 * operation never reached the gateway and nothing was charged; a final status → done.
 *
 * An original operation has its own reference (selector `first`). A linked operation
 * (refund, reversal, capture …) carries none: it is found under the original's reference
 * with selector `all`, as an entry that was not there before the attempt was sent (the
 * `baseline` recorded before the POST).
 *
 * This module is pure: it reads one answer of the status endpoint at one instant into a
 * verdict. The workflow records each answer in an activity and decides from the record.
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as OperationOutcome from "./OperationOutcome.js"
import type * as RemoteError from "../model/RemoteError.js"
import type { TransactionStatusResult } from "../model/TransactionResult.js"

/** The 90-second window of the status endpoint (spec section 8, "Unknown status window"). */
export const notFoundWindow: Duration.Duration = Duration.seconds(90)

/** What a status check tells about the attempt. */
export const Verdict = Schema.Literal("Settled", "InProgress", "NotFoundYet", "NotCharged", "Unavailable")
/** @see Verdict */
export type Verdict = typeof Verdict.Type

/** The verdict on one answer, and the entry that settled it (an index into the answer). */
export type Reading =
  | { readonly _tag: "Settled"; readonly entry: TransactionStatusResult }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "NotFoundYet"; readonly remaining: Duration.Duration }
  | { readonly _tag: "NotCharged" }
  | { readonly _tag: "Unavailable"; readonly reason: string }

/** How a status check went: the entries, or the error of the status host. */
export type Answer =
  | { readonly _tag: "Entries"; readonly entries: ReadonlyArray<TransactionStatusResult> }
  | { readonly _tag: "Failed"; readonly error: RemoteError.RemoteError }

/** What is known of the attempt being reconciled. */
export interface Subject {
  /** When the attempt was recorded (before its request left), epoch ms. */
  readonly attemptedAt: number
  /** When the answer was read, epoch ms. */
  readonly checkedAt: number
  /** For a linked operation: the ids of the entries under the original's reference before the attempt. */
  readonly baseline?: ReadonlyArray<string> | undefined
  /** The window after which NOT FOUND means not charged (default 90 s). */
  readonly window?: Duration.DurationInput | undefined
}

const notFound = (subject: Subject): Reading => {
  const window = Duration.toMillis(subject.window ?? notFoundWindow)
  const elapsed = subject.checkedAt - subject.attemptedAt
  return elapsed > window
    ? { _tag: "NotCharged" }
    : { _tag: "NotFoundYet", remaining: Duration.millis(Math.max(0, window - elapsed) + 1) }
}

const isFinal = (entry: TransactionStatusResult): boolean =>
  entry.finStatus !== undefined && OperationOutcome.outcomeOf(entry.finStatus) !== undefined

/** An id for an entry of the status list: its gateway id, else its position. */
export const entryId = (entry: TransactionStatusResult, index: number): string =>
  entry.efttransactionID ?? entry.transactionID ?? `#${index + 1}`

/**
 * Reads one answer of the status endpoint.
 *
 * - original operation (no `baseline`): the first entry is the attempt;
 * - linked operation (`baseline` given): the entries not in the baseline are the attempt's.
 *
 * A 404, an empty list, or only entries with finStatus UNDEFINED mean NOT FOUND. Any other
 * error of the status host (5xx, network, 403) leaves the question open: ask again later.
 */
export const read = (answer: Answer, subject: Subject): Reading => {
  if (answer._tag === "Failed") {
    return answer.error._tag === "NotFound"
      ? notFound(subject)
      : { _tag: "Unavailable", reason: `${answer.error._tag}: ${answer.error.message}` }
  }
  const baseline = subject.baseline
  const candidates =
    baseline === undefined
      ? answer.entries.slice(0, 1)
      : answer.entries.filter((entry, index) => !baseline.includes(entryId(entry, index)))
  const settled = candidates.find(isFinal)
  if (settled !== undefined) return { _tag: "Settled", entry: settled }
  if (candidates.some((entry) => entry.finStatus === "IN_PROGRESS")) return { _tag: "InProgress" }
  if (candidates.length > 0 && candidates.some((entry) => entry.finStatus !== "UNDEFINED")) {
    // A status this version does not know: neither final nor "not found". Ask again.
    return { _tag: "InProgress" }
  }
  return notFound(subject)
}

/** The ids of the entries of an answer, to keep as the baseline of a linked operation. */
export const baselineOf = (entries: ReadonlyArray<TransactionStatusResult>): ReadonlyArray<string> =>
  entries.map(entryId)

/** The first final entry, if any (for tests and tools). */
export const firstFinal = (
  entries: ReadonlyArray<TransactionStatusResult>
): Option.Option<TransactionStatusResult> => Option.fromNullable(entries.find(isFinal))
