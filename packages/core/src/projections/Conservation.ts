/**
 * Money conservation, checked per transaction for the audit (`audit verify`): what every
 * original transaction (`txn-<guid>`) credited back — its refunds and its reversals, each by
 * its amount — never exceeds what it charged (its amount and the tip that stands on it; a
 * pre-authorization's capture while it stands), per currency. A credit in a currency the
 * transaction never charged in is a break too. The rules refuse such credits before they are
 * sent (`MoneyRules`); this check reads what the log says happened, so a log written some
 * other way (an old version, a hand-made repair, a tampered row whose chain was rebuilt)
 * is caught.
 *
 * @example
 * const report = yield* Conservation.checkStore(store)
 * if (report.broken.length > 0) console.log(report.broken.map(Conservation.describe))
 */
import * as Effect from "effect/Effect"
import * as EventStore from "@tillflow/engine/EventStore"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
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

/** The kinds that charge money (a refund's own stream charges nothing). */
const charges: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "moToSale",
  "preAuthorization",
  "moToPreAuthorization"
])

interface Balance {
  guid: string
  kind: string | undefined
  amount: Money.Money | undefined
  /** A pre-authorization: the capture that stands, if any. */
  capture: Money.Money | undefined
  tip: Money.Money | undefined
  readonly credited: Map<string, bigint>
}

const add = (map: Map<string, bigint>, money: Money.Money) =>
  map.set(money.currency, (map.get(money.currency) ?? 0n) + money.minorUnits)

const evolve = (balance: Balance, event: LifecycleEvent.Decoded): void => {
  switch (event.type) {
    case "TransactionRecorded":
      balance.kind = event.data.kind
      balance.amount = event.data.amount
      return
    case "PreAuthorizationOpened":
      balance.kind = event.data.via
      return
    case "PreAuthorizationCaptured":
      balance.capture = event.data.total
      return
    case "TipAdjusted":
      balance.tip = event.data.tip
      return
    case "Refunded":
      add(balance.credited, event.data.amount)
      return
    case "Reversed":
      if (event.data.target === "transaction") add(balance.credited, event.data.amount)
      else if (event.data.target === "capture") balance.capture = undefined
      return
    default:
      return
  }
}

/** What a transaction charged, per currency. */
const chargedOf = (balance: Balance): Map<string, bigint> => {
  const charged = new Map<string, bigint>()
  const preAuthorization = balance.kind === "preAuthorization" || balance.kind === "moToPreAuthorization"
  if (preAuthorization) {
    if (balance.capture !== undefined) add(charged, balance.capture)
  } else if (balance.amount !== undefined) add(charged, balance.amount)
  if (balance.tip !== undefined) add(charged, balance.tip)
  return charged
}

/** The breaks of one transaction's balance (none for a transaction that charges nothing). */
const breaksOf = (balance: Balance): ReadonlyArray<Break> => {
  if (balance.kind === undefined || !charges.has(balance.kind)) return []
  const charged = chargedOf(balance)
  const out: Array<Break> = []
  for (const [currency, credited] of balance.credited) {
    const limit = charged.get(currency) ?? 0n
    if (credited > limit) out.push({ guid: balance.guid, currency, charged: limit, credited })
  }
  return out
}

/** Checks the decoded events of transaction streams, grouped by stream in log order. */
export const check = (
  streams: ReadonlyMap<string, ReadonlyArray<LifecycleEvent.Decoded>>
): Omit<Report, "undecodable"> => {
  const broken: Array<Break> = []
  for (const [streamId, events] of streams) {
    const balance: Balance = {
      guid: streamId.slice(LifecycleEvent.transactionStreamPrefix.length),
      kind: undefined,
      amount: undefined,
      capture: undefined,
      tip: undefined,
      credited: new Map()
    }
    for (const event of events) evolve(balance, event)
    broken.push(...breaksOf(balance))
  }
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
