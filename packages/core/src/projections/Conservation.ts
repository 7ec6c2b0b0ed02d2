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

/** What the check read and found. */
export interface Report {
  readonly transactionsChecked: number
  readonly broken: ReadonlyArray<Break>
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

/** Checks the decoded events of transaction streams, grouped by stream in log order. */
export const check = (
  streams: ReadonlyMap<string, ReadonlyArray<LifecycleEvent.Decoded>>
): Omit<Report, "undecodable"> => {
  const broken: Array<Break> = []
  for (const [streamId, events] of streams)
    broken.push(...breaksOf(streamId.slice(LifecycleEvent.transactionStreamPrefix.length), events))
  return { transactionsChecked: streams.size, broken }
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
      return { transactionsChecked: 0, broken: [], undecodable: [] } satisfies Report
    recorded.push(...(yield* store.readStream(streamId)))
  } else {
    let checkpoint = EventStore.Checkpoint.start
    for (;;) {
      const page = yield* store.readAll(checkpoint, { maxCount: 1000 })
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
