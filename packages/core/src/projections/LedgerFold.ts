/**
 * The ledger's view of a transaction's history: what each event of a `txn-<guid>` stream
 * moved is read off the transaction's state (`TransactionHistory`, the state the money
 * rules decide from) before and after the event, not off the event's own fields. The rules
 * and the ledger therefore fold one model: a refund, a reversal (whole or partial), a
 * capture or its reversal, a hold change, a tip that replaces another, an operator's
 * resolution of a request in doubt, all count in the ledger exactly as they count for the
 * rules.
 *
 * What the fold does not book: the opening of a transaction (its sale or pre-authorization
 * is booked from the terminal's outcome event, or from `MotoSaleApproved`), and linked
 * operations sent to a terminal (`refund`, `saleReversal` …), whose outcome events book
 * them, except what an outcome cannot tell (a terminal reversal of a captured
 * pre-authorization takes the capture out of the net) and an operator's resolution (a
 * request in doubt has no outcome event).
 *
 * `Cache` keeps the folded state of recent streams between reads of the log, so a
 * projection that reads the log in batches does not read a stream's beginning again for
 * each of its events.
 */
import * as Option from "effect/Option"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
import * as LinkedTerminalRules from "../lifecycle/LinkedTerminalRules.js"
import * as TransactionHistory from "../lifecycle/TransactionHistory.js"
import * as Money from "../model/Money.js"
import type * as Ledger from "./Ledger.js"

/** What one event moved, for the ledger: the entry without where and when it belongs. */
export interface Delta {
  readonly kind: Ledger.Kind
  readonly operation: string
  readonly amount: Money.Money
  readonly finStatus: string
}

type State = TransactionHistory.State

const minus = (a: Money.Money, b: Money.Money): Money.Money =>
  Money.make(a.minorUnits - b.minorUnits, a.currency)

/**
 * What `event` moved, read off the transaction's state before it (`None`: the event opens
 * the history) and after it. Empty for an event that moved nothing the ledger counts.
 */
export const deltas = (
  before: Option.Option<State>,
  after: State,
  event: LifecycleEvent.Decoded
): ReadonlyArray<Delta> => {
  // An opening is booked from its outcome (terminal) or its MOTO approval.
  if (Option.isNone(before)) return []
  const was = before.value
  const resolution = event.type === "InDoubtResolved"
  // A linked operation sent to a terminal is booked from its outcome event; an operator's
  // resolution of one is booked here (it has no outcome event).
  const byOutcome = LinkedTerminalRules.isFromTerminal(event) && !resolution
  const out: Array<Delta> = []

  if (!byOutcome) {
    for (const refund of after.refunds.slice(was.refunds.length)) {
      out.push({ kind: "refund", operation: "moto/refund", amount: refund.amount, finStatus: "REFUNDED" })
    }
    const reversed = minus(after.reversed, was.reversed)
    if (reversed.minorUnits !== 0n) {
      out.push({ kind: "reversal", operation: "reversal", amount: reversed, finStatus: "REVERSED" })
    }
  }

  const pre = was.preAuthorization
  const post = after.preAuthorization
  if (pre !== undefined && post !== undefined) {
    if (!byOutcome && pre.capture === undefined && post.capture !== undefined) {
      out.push({
        kind: "capture",
        operation: "preauthorization/capture",
        amount: post.capture.total,
        finStatus: "CAPTURED"
      })
    }
    if (!byOutcome && pre.status !== "RELEASED" && post.status === "RELEASED") {
      out.push({ kind: "release", operation: "reversal", amount: pre.hold, finStatus: "REVERSED" })
    }
    // A capture reversed takes the capture out of the net, whoever reversed it: a terminal's
    // outcome books it as a release (net 0), which cannot tell a capture from a hold.
    if (
      pre.captureReversedAt === undefined &&
      post.captureReversedAt !== undefined &&
      pre.capture !== undefined
    ) {
      out.push({ kind: "reversal", operation: "reversal", amount: pre.capture.total, finStatus: "REVERSED" })
    }
    const held = minus(post.hold, pre.hold)
    if (
      !byOutcome &&
      pre.status === "AUTHORISED" &&
      post.status === "AUTHORISED" &&
      post.captureReversedAt === pre.captureReversedAt &&
      held.minorUnits !== 0n
    ) {
      out.push({
        kind: "increase",
        operation: "preauthorization/increase",
        amount: held,
        finStatus: "AUTHORISED"
      })
    }
  }

  const tipBefore = TransactionHistory.standingTip(was)
  const tipAfter = TransactionHistory.standingTip(after)
  if (tipAfter !== undefined && tipAfter !== tipBefore) {
    // The adjustment replaces the standing tip: the net moves by the difference.
    const amount =
      tipBefore === undefined || tipBefore.tip.currency !== tipAfter.tip.currency
        ? tipAfter.tip
        : minus(tipAfter.tip, tipBefore.tip)
    out.push({ kind: "tip", operation: "tip-adjustment", amount, finStatus: "AUTHORISED" })
  }
  return out
}

/** A stream folded up to `version` (`state`: none when its first event opened no history). */
export interface Folded {
  readonly version: number
  readonly state: Option.Option<State>
  /** Whose transaction it is: the first tenant its events' metadata names (its opening's). */
  readonly tenant?: string | undefined
}

/** The folded state of recent streams, at most `limit` of them (the least recently used go first). */
export class Cache {
  private readonly streams = new Map<string, Folded>()
  constructor(readonly limit: number = 10_000) {}

  /** The stream's fold, if kept. */
  get(streamId: string): Folded | undefined {
    const folded = this.streams.get(streamId)
    if (folded !== undefined) {
      this.streams.delete(streamId)
      this.streams.set(streamId, folded)
    }
    return folded
  }

  /** Keeps the stream's fold, dropping the least recently used beyond the limit. */
  set(streamId: string, folded: Folded): void {
    this.streams.delete(streamId)
    this.streams.set(streamId, folded)
    while (this.streams.size > this.limit) {
      const oldest = this.streams.keys().next()
      if (oldest.done === true) break
      this.streams.delete(oldest.value)
    }
  }

  /** Forgets a stream (its history could not be read). */
  delete(streamId: string): void {
    this.streams.delete(streamId)
  }

  /** How many streams are kept. */
  get size(): number {
    return this.streams.size
  }
}

/** One event applied to a stream's fold: the state after it (none while the history is unopened). */
export const step = (before: Option.Option<State>, event: LifecycleEvent.Decoded): Option.Option<State> =>
  Option.isNone(before)
    ? TransactionHistory.fold([event])
    : Option.some(TransactionHistory.apply(before.value, event))
