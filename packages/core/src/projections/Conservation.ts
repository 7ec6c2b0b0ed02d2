/**
 * Money conservation, checked per transaction for the audit (`audit verify`): what every
 * transaction (`txn-<guid>`) credited back never exceeds what it charged, per currency, as
 * the money model reads them (`MoneyRules.charged` and `credited` of its
 * `TransactionHistory`: a sale's amount and standing tip, a pre-authorization's capture;
 * every refund and reversal by its amount). A credit in a currency the transaction never
 * charged in is a break too. The rules refuse such credits before they are
 * sent (`MoneyRules`); this check reads what the log says happened, so a log written some
 * other way (an old version, a hand-made repair, a tampered row whose chain was rebuilt)
 * is caught.
 *
 * It also reports **disagreements**: a fact whose stated amount is not what the model's fold
 * says it moved — a release (`Reversed` of the hold) or a capture's reversal stating another
 * amount than the hold or capture it ended, a hold change whose `delta` (with the tip of an
 * increase) is not the difference of the holds, a tip whose `replaces` is not the standing tip. The ledger books what the
 * fold says, so a disagreement means the log and the ledger tell two stories about it.
 *
 * @example
 * const report = yield* Conservation.checkStore(store)
 * if (report.broken.length > 0) console.log(report.broken.map(Conservation.describe))
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as EventStore from "@tillflow/engine/EventStore"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
import * as MoneyRules from "../lifecycle/MoneyRules.js"
import * as TransactionHistory from "../lifecycle/TransactionHistory.js"
import * as LedgerFold from "./LedgerFold.js"
import * as Money from "../model/Money.js"
import * as Currency from "../model/Currency.js"

/** A transaction whose credits exceed its charge in one currency. */
export interface Break {
  readonly guid: string
  readonly currency: string
  /** Minor units charged in the currency. */
  readonly charged: bigint
  /** Minor units credited back in the currency (refunds and reversals). */
  readonly credited: bigint
}

/** A fact whose stated amount differs from what the model's fold says it moved. */
export interface Disagreement {
  readonly guid: string
  /** The fact's version in the transaction's stream. */
  readonly version: number
  readonly eventType: string
  /** What the amount is: `release`, `capture reversal`, `hold increase`, `hold decrease`, `replaced tip`. */
  readonly what: string
  readonly stated: Money.Money
  /** What the fold says; none when it has nothing there (a release of no hold). */
  readonly folded: Money.Money | undefined
}

/** What the check read and found. */
export interface Report {
  readonly transactionsChecked: number
  readonly broken: ReadonlyArray<Break>
  readonly disagreements: ReadonlyArray<Disagreement>
  /** Events of transaction streams that could not be read (`stream@version: why`). */
  readonly undecodable: ReadonlyArray<string>
}

/** The amount of a credit event (a refund, a reversal of the transaction itself), if it is one. */
const creditOf = (event: LifecycleEvent.Decoded): Money.Money | undefined =>
  event.type === "Refunded"
    ? event.data.amount
    : event.type === "Reversed" && event.data.target === "transaction"
      ? event.data.amount
      : undefined

/**
 * The breaks of one transaction's stream. Its money is the model's fold
 * (`TransactionHistory`, read by `MoneyRules.charged` and `credited`) in its own currency; a
 * credit in another currency is kept out of the fold (which adds amounts in the original's
 * currency) and charged nothing in its own.
 */
const breaksOf = (guid: string, events: ReadonlyArray<LifecycleEvent.Decoded>): ReadonlyArray<Break> => {
  const first = events[0]
  const currency =
    first?.type === "TransactionRecorded" || first?.type === "PreAuthorizationOpened"
      ? first.data.amount.currency
      : undefined
  if (currency === undefined) return []
  const foreign = new Map<string, bigint>()
  const own = events.filter((event) => {
    const credit = creditOf(event)
    if (credit === undefined || credit.currency === currency) return true
    foreign.set(credit.currency, (foreign.get(credit.currency) ?? 0n) + credit.minorUnits)
    return false
  })
  const out: Array<Break> = []
  const state = TransactionHistory.fold(own)
  if (Option.isSome(state)) {
    const charged = MoneyRules.charged(state.value).minorUnits
    const credited = MoneyRules.credited(state.value).minorUnits
    if (credited > charged) out.push({ guid, currency, charged, credited })
  }
  for (const [other, credited] of foreign) out.push({ guid, currency: other, charged: 0n, credited })
  return out
}

const sameMoney = (a: Money.Money, b: Money.Money | undefined): boolean =>
  b !== undefined && a.currency === b.currency && a.minorUnits === b.minorUnits

/** What the fold says one fact moved, beside what it states, where it states an amount. */
const statedAndFolded = (
  before: TransactionHistory.State,
  after: TransactionHistory.State,
  event: LifecycleEvent.Decoded
):
  | { readonly what: string; readonly stated: Money.Money; readonly folded: Money.Money | undefined }
  | undefined => {
  const pre = before.preAuthorization
  const post = after.preAuthorization
  switch (event.type) {
    case "Reversed":
      return event.data.target === "hold"
        ? { what: "release", stated: event.data.amount, folded: pre?.hold }
        : event.data.target === "capture"
          ? { what: "capture reversal", stated: event.data.amount, folded: pre?.capture?.total }
          : undefined
    case "HoldIncreased":
    case "HoldDecreased": {
      if (pre === undefined || post === undefined || pre.hold.currency !== post.hold.currency)
        return {
          what: event.type === "HoldIncreased" ? "hold increase" : "hold decrease",
          stated: event.data.delta,
          folded: undefined
        }
      const moved =
        event.type === "HoldIncreased"
          ? post.hold.minorUnits - pre.hold.minorUnits
          : pre.hold.minorUnits - post.hold.minorUnits
      // An increase with a tip (spec: preAuthorizationIncrease's tip) raises the hold by both.
      const tip = event.type === "HoldIncreased" ? event.data.tip : undefined
      const stated =
        tip === undefined || tip.currency !== event.data.delta.currency
          ? event.data.delta
          : Money.make(event.data.delta.minorUnits + tip.minorUnits, event.data.delta.currency)
      return {
        what: event.type === "HoldIncreased" ? "hold increase" : "hold decrease",
        stated,
        folded: Money.make(moved, post.hold.currency)
      }
    }
    case "TipAdjusted":
      return event.data.replaces === undefined
        ? undefined
        : {
            what: "replaced tip",
            stated: event.data.replaces,
            folded: TransactionHistory.standingTip(before)?.tip
          }
    default:
      return undefined
  }
}

/** The disagreements of one transaction's stream, folded event by event. */
const disagreementsOf = (
  guid: string,
  events: ReadonlyArray<LifecycleEvent.Decoded>
): ReadonlyArray<Disagreement> => {
  const out: Array<Disagreement> = []
  let state: Option.Option<TransactionHistory.State> = Option.none()
  for (const event of events) {
    const next = LedgerFold.step(state, event)
    if (Option.isSome(state) && Option.isSome(next)) {
      const found = statedAndFolded(state.value, next.value, event)
      if (found !== undefined && !sameMoney(found.stated, found.folded))
        out.push({ guid, version: event.recorded.version, eventType: event.type, ...found })
    }
    state = next
  }
  return out
}

/** Checks the decoded events of transaction streams, grouped by stream in log order. */
export const check = (
  streams: ReadonlyMap<string, ReadonlyArray<LifecycleEvent.Decoded>>
): Omit<Report, "undecodable"> => {
  const broken: Array<Break> = []
  const disagreements: Array<Disagreement> = []
  for (const [streamId, events] of streams) {
    const guid = streamId.slice(LifecycleEvent.transactionStreamPrefix.length)
    broken.push(...breaksOf(guid, events))
    disagreements.push(...disagreementsOf(guid, events))
  }
  return { transactionsChecked: streams.size, broken, disagreements }
}

/**
 * Reads the log (every transaction stream, or the one of `streamId`) and checks every
 * transaction's conservation.
 */
export const checkStore = Effect.fn("Conservation.checkStore")(function* (
  store: EventStore.Service,
  streamId?: string
) {
  const recorded: Array<EventStore.RecordedEvent> = []
  if (streamId !== undefined) {
    if (!streamId.startsWith(LifecycleEvent.transactionStreamPrefix))
      return { transactionsChecked: 0, broken: [], disagreements: [], undecodable: [] } satisfies Report
    recorded.push(...(yield* store.readStream(streamId)))
  } else {
    let checkpoint = EventStore.Checkpoint.start
    let settle: EventStore.ReadAllOptions["settle"] = EventStore.reportSettle
    for (;;) {
      const page = yield* store.readAll(checkpoint, { maxCount: 1000, settle })
      settle = undefined
      for (const event of page.events)
        if (event.streamId.startsWith(LifecycleEvent.transactionStreamPrefix)) recorded.push(event)
      checkpoint = page.next
      if (page.caughtUp) break
    }
  }
  const streams = new Map<string, Array<LifecycleEvent.Decoded>>()
  const undecodable: Array<string> = []
  for (const event of recorded) {
    const decoded = yield* Effect.either(LifecycleEvent.registry.decode(event))
    if (decoded._tag === "Left") {
      undecodable.push(`${event.streamId}@${event.version}: ${decoded.left.message}`)
      continue
    }
    const list = streams.get(event.streamId) ?? []
    list.push(decoded.right)
    streams.set(event.streamId, list)
  }
  return { ...check(streams), undecodable } satisfies Report
})

/** An amount of a break in its currency, for people ("51.01 EUR"), minor units when unknown. */
const format = (minor: bigint, currency: string): string =>
  Currency.isCurrency(currency) ? `${Money.make(minor, currency)}` : `${minor} (minor units of ${currency})`

/** One line saying what a break is. */
export const describe = (b: Break): string =>
  `transaction ${b.guid} credited back ${format(b.credited, b.currency)}, above the ${format(b.charged, b.currency)} it charged`

/** One line saying what a disagreement is. */
export const describeDisagreement = (d: Disagreement): string =>
  `transaction ${d.guid}: the ${d.what} at version ${d.version} (${d.eventType}) states ${d.stated}, ` +
  (d.folded === undefined ? "where the history has none" : `where the history says ${d.folded}`)
