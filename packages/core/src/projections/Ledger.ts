/**
 * The audit ledger: a pure fold of the event log's business facts into what finance reads
 * — sales, refunds, reversals, pre-authorizations, captures and declines, counted and
 * totalled as Money per currency, per day, terminal and merchant. Only outcome events
 * count — `PaymentAuthorised`, `PaymentDeclined` … of `PaymentEvents` for operations made on
 * terminals, and for those made without one the transactions' histories (`txn-<guid>`),
 * folded through the same state the money rules decide from (`LedgerFold`): what an event
 * moved is what it changed in that state (captures, reversals, refunds, hold changes, tips,
 * an operator's resolution) — never both for one fact. Engine events, attempts and
 * reconciliation checks are how an outcome was reached, not money moved.
 * Folding the same events always gives the same ledger, so a ledger rebuilt from the
 * first event can be compared with one maintained live (`LedgerProjection`).
 *
 * @example
 * const ledger = yield* Ledger.foldRecorded(Ledger.empty, page.events)
 * const byDay = Ledger.summarize(ledger, ["day"])
 * console.log(Ledger.toCsv(byDay))
 */
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Currency from "../model/Currency.js"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import type * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as EventStore from "@tillflow/engine/EventStore"
import * as HashChain from "@tillflow/engine/HashChain"
import * as Tenant from "@tillflow/engine/Tenant"
import * as LifecycleEvent from "../lifecycle/LifecycleEvent.js"
import type * as TransactionHistory from "../lifecycle/TransactionHistory.js"
import * as Money from "../model/Money.js"
import * as LedgerFold from "./LedgerFold.js"

// ---------------------------------------------------------------------------------------
// Entries

/** What an entry is, for finance. */
export const Kind = Schema.Literal(
  "sale",
  "refund",
  "reversal",
  "refundReversal",
  "preAuthorization",
  "increase",
  "release",
  "capture",
  "decline",
  "tip"
)
/** @see Kind */
export type Kind = typeof Kind.Type

/** Every kind, in the order columns are written. */
export const kinds: ReadonlyArray<Kind> = Kind.literals

/** How each kind moves the merchant's net: sales and captures in, refunds and reversals out. */
export const netSign: Readonly<Record<Kind, -1n | 0n | 1n>> = {
  sale: 1n,
  capture: 1n,
  refundReversal: 1n,
  refund: -1n,
  reversal: -1n,
  preAuthorization: 0n,
  increase: 0n,
  release: 0n,
  decline: 0n,
  /** A tip adjustment: what it changed the standing tip by (the last one wins). */
  tip: 1n
}

/** One line of the ledger: a business fact with its amount and where it belongs. */
export interface Entry {
  readonly kind: Kind
  /** The operation of the spec that led to it (`sale`, `moToRefund` …). */
  readonly operation: string
  readonly amount: Money.Money | undefined
  /** UTC day of the fact (`YYYY-MM-DD`). */
  readonly day: string
  /** Epoch milliseconds of the fact. */
  readonly at: number
  readonly terminal: string
  /** The merchant the result named (its `mid`): the service's, not tillflow's. */
  readonly merchant: string
  /**
   * Whose fact it is in tillflow: the tenant (merchant of the deployment) its event's
   * metadata names — for a transaction's history, its opening's — none for the deployment's
   * own merchant and for what was written before tenants. A merchant's audit reads by it.
   */
  readonly tenant?: string | undefined
  readonly finStatus: string
  readonly transactionReference: string | undefined
  /** True when the outcome was learnt from the status endpoint (it was unknown first). */
  readonly reconciled: boolean
  readonly streamId: string
  readonly eventType: string
  /** `transactionId:globalPosition` of the event in the log. */
  readonly position: string
  /**
   * The gateway guid of the original transaction the fact belongs to (a linked operation's
   * original, else the transaction itself), when known: per-transaction nets group by it.
   */
  readonly original: string | undefined
}

const operationKind: Readonly<Record<string, Kind>> = {
  sale: "sale",
  saleAndTokenizeCard: "sale",
  moToSale: "sale",
  refund: "refund",
  moToRefund: "refund",
  saleReversal: "reversal",
  moToReversal: "reversal",
  refundReversal: "refundReversal",
  preAuthorization: "preAuthorization",
  moToPreAuthorization: "preAuthorization",
  preAuthorizationIncrease: "increase",
  preAuthorizationReversal: "release",
  preAuthorizationCapture: "capture"
}

/** The kind of an approved operation, if it moves or holds money. */
export const kindOfOperation = (operation: string): Kind | undefined => operationKind[operation]

/** `YYYY-MM-DD` in UTC. */
export const dayOf = (epochMillis: number): string => new Date(epochMillis).toISOString().slice(0, 10)

/** `transactionId:globalPosition`. */
export const positionOf = (checkpoint: EventStore.Checkpoint): string =>
  `${checkpoint.transactionId}:${checkpoint.globalPosition}`

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim().length === 0 ? undefined : value

/** The outcome events the ledger counts, decoded. */
export type OutcomeEvent = Extract<
  EventRegistry.Decoded<(typeof PaymentEvents.events.definitions)[number]>,
  { readonly type: "PaymentAuthorised" | "PaymentPartiallyApproved" | "PaymentDeclined" }
>

const isLedgerType = (type: string): type is OutcomeEvent["type"] =>
  type === "PaymentAuthorised" || type === "PaymentPartiallyApproved" || type === "PaymentDeclined"

/** The entry of one decoded outcome event, if it is one the ledger counts. */
export const entryOf = (event: OutcomeEvent): Entry | undefined => {
  const { facts, at } = event.data
  const recorded = event.recorded
  const declined = event.type === "PaymentDeclined"
  const kind = declined ? "decline" : kindOfOperation(facts.operation)
  if (kind === undefined) return undefined
  const amount = declined
    ? (facts.requestedAmount ?? facts.totalAmount)
    : (facts.totalAmount ?? facts.requestedAmount)
  return {
    kind,
    operation: facts.operation,
    amount,
    day: dayOf(at),
    at,
    terminal: facts.serialNumber,
    merchant: nonEmpty(facts.mid) ?? nonEmpty(facts.merchantName) ?? "-",
    tenant: Tenant.ofMetadata(recorded.metadata),
    finStatus: facts.finStatus,
    transactionReference: facts.transactionReference,
    reconciled: facts.source === "status",
    streamId: recorded.streamId,
    eventType: recorded.type,
    position: positionOf(recorded.checkpoint),
    original: nonEmpty(facts.originalTransactionId) ?? nonEmpty(facts.efttransactionID)
  }
}

/**
 * The MOTO sale's facts, in its attempt's stream (`moto-sale-<reference>`): the sale opens
 * its transaction's history there, before the gateway gave it a guid, so they are booked
 * from the facts themselves. Every other money fact is in a transaction's history and is
 * booked by the fold of that history (`LedgerFold`).
 */
const motoSaleFactTypes: ReadonlySet<string> = new Set(["MotoSaleApproved", "MotoSaleDeclined"])

/**
 * The terminal-less facts that move or hold money (what `TerminalLessOutcomes` counts): the
 * MOTO sale's, and those of transactions' histories, which the ledger books by folding them.
 */
export const lifecycleFactTypes: ReadonlySet<string> = new Set([
  ...motoSaleFactTypes,
  "PreAuthorizationCaptured",
  "HoldIncreased",
  "HoldDecreased",
  "Reversed",
  "Refunded",
  "TipAdjusted",
  "InDoubtResolved"
])

const whereOf = (recorded: EventStore.RecordedEvent) => ({
  tenant: Tenant.ofMetadata(recorded.metadata),
  transactionReference: undefined,
  streamId: recorded.streamId,
  eventType: recorded.type,
  position: positionOf(recorded.checkpoint)
})

/** The entry of a MOTO sale's approval or decline (in its attempt's stream). */
const entryOfMotoSale = (event: LifecycleEvent.Decoded): Entry | undefined => {
  switch (event.type) {
    case "MotoSaleApproved":
      return {
        ...whereOf(event.recorded),
        original: event.data.guid,
        terminal: nonEmpty(event.data.serialNumber) ?? "-",
        merchant: "-",
        at: event.data.at.epochMillis,
        day: dayOf(event.data.at.epochMillis),
        kind: "sale",
        operation: "moto/sale",
        amount: event.data.amount,
        finStatus: "AUTHORISED",
        reconciled: event.data.reconciled
      }
    case "MotoSaleDeclined":
      return {
        ...whereOf(event.recorded),
        original: undefined,
        terminal: nonEmpty(event.data.serialNumber) ?? "-",
        merchant: "-",
        at: event.data.at.epochMillis,
        day: dayOf(event.data.at.epochMillis),
        kind: "decline",
        operation: "moto/sale",
        amount: undefined,
        finStatus: event.data.finStatus,
        reconciled: event.data.reconciled
      }
    default:
      return undefined
  }
}

/**
 * The entry of an operator's resolution of a terminal operation left unresolved
 * (`TerminalOutcomeResolved`, in the execution's actions stream): an applied one is booked
 * as the approval it stands for — its operation's kind, by the amount the operator
 * confirmed, on the terminal the operation was sent to — exactly as its `PaymentAuthorised`
 * would have been; one not applied moved nothing.
 */
const entryOfTerminalResolution = (event: LifecycleEvent.Decoded): Entry | undefined => {
  if (event.type !== "TerminalOutcomeResolved") return undefined
  const d = event.data
  const kind = kindOfOperation(d.operation)
  if (d.resolution !== "applied" || kind === undefined || d.amount === undefined) return undefined
  return {
    ...whereOf(event.recorded),
    transactionReference: d.transactionReference,
    original: nonEmpty(d.originalTransactionId) ?? nonEmpty(d.guid),
    terminal: nonEmpty(d.serialNumber) ?? "-",
    merchant: nonEmpty(d.merchant) ?? "-",
    at: d.at.epochMillis,
    day: dayOf(d.at.epochMillis),
    kind,
    operation: d.operation,
    amount: d.amount,
    finStatus: "AUTHORISED",
    reconciled: false
  }
}

/**
 * The entries of one event of a transaction's history: what it moved, read off the
 * transaction's state before and after it (`LedgerFold`), booked on the terminal and
 * merchant the event names, else the transaction's; whose it is: its history's `tenant`.
 */
const entriesOfHistory = (
  before: Option.Option<TransactionHistory.State>,
  after: TransactionHistory.State,
  event: LifecycleEvent.Decoded,
  tenant: string | undefined
): ReadonlyArray<Entry> => {
  const moved = LedgerFold.deltas(before, after, event)
  if (moved.length === 0) return []
  const data = event.data as {
    readonly at?: DateTime.Utc | undefined
    readonly serialNumber?: string | undefined
    readonly merchant?: string | undefined
    readonly reconciled?: boolean | undefined
  }
  const at = data.at?.epochMillis ?? event.recorded.recordedAt.epochMillis
  const base = {
    ...whereOf(event.recorded),
    original: after.guid,
    terminal: nonEmpty(data.serialNumber) ?? nonEmpty(after.serialNumber) ?? "-",
    merchant: nonEmpty(data.merchant) ?? nonEmpty(after.merchant) ?? "-",
    tenant,
    at,
    day: dayOf(at),
    reconciled: data.reconciled ?? false
  }
  return moved.map((delta) => ({ ...base, ...delta }))
}

/**
 * The fold of a transaction's history just before `recorded`: kept in `cache` when the
 * previous event of its stream was folded, else read from the store and folded (a read
 * that starts in the middle of the log). `Left` names what could not be read.
 */
const foldBefore = (
  recorded: EventStore.RecordedEvent,
  cache: LedgerFold.Cache
): Effect.Effect<
  Either.Either<LedgerFold.Folded, string>,
  EventStore.EventStoreError,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    const kept = cache.get(recorded.streamId)
    if (kept !== undefined && kept.version === recorded.version - 1) return Either.right(kept)
    let folded: LedgerFold.Folded = { version: 0, state: Option.none() }
    if (recorded.version <= 1) return Either.right(folded)
    const store = yield* EventStore.EventStore
    const earlier = yield* store.readStream(recorded.streamId, {
      fromVersion: 1,
      maxCount: recorded.version - 1
    })
    for (const event of earlier) {
      const tenant = folded.tenant ?? Tenant.ofMetadata(event.metadata)
      if (!LifecycleEvent.registry.has(event.type)) {
        folded = { version: event.version, state: folded.state, tenant }
        continue
      }
      const decoded = yield* Effect.either(LifecycleEvent.registry.decode(event))
      if (Either.isLeft(decoded)) {
        return Either.left(
          `its history's event ${event.streamId}@${event.version} does not read: ${decoded.left.message}`
        )
      }
      folded = { version: event.version, state: LedgerFold.step(folded.state, decoded.right), tenant }
    }
    return Either.right(folded)
  })

/**
 * The entries of one tenant (`Entry.tenant`: a merchant of the deployment) when `only` names
 * one, every entry otherwise. Deny by default: an entry naming no tenant is no merchant's.
 */
export const ofTenant = (entries: ReadonlyArray<Entry>, only: string | undefined): ReadonlyArray<Entry> =>
  only === undefined ? entries : entries.filter((entry) => entry.tenant === only)

/**
 * The entries of recorded events, in order. Events the ledger does not count are skipped;
 * a fact that does not decode, or whose transaction's history was never opened or cannot
 * be read, is reported in `undecodable` (never dropped silently: the audit must say it
 * could not read a fact). Events of transactions' histories are folded into `cache`, which
 * a caller reading the log in pages passes from page to page; an event whose stream's
 * earlier part is not in it has that part read from the store. With `only`, one tenant's
 * ({@link ofTenant}): its entries, and the facts it could not read whose event names it.
 */
export const entriesOf = (
  events: ReadonlyArray<EventStore.RecordedEvent>,
  cache: LedgerFold.Cache = new LedgerFold.Cache(),
  only?: string
): Effect.Effect<
  { readonly entries: ReadonlyArray<Entry>; readonly undecodable: ReadonlyArray<string> },
  EventStore.EventStoreError,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    const entries: Array<Entry> = []
    const undecodable: Array<string> = []
    const unreadable = (recorded: EventStore.RecordedEvent, why: string) => {
      if (only === undefined || Tenant.ofMetadata(recorded.metadata) === only) {
        undecodable.push(`${recorded.streamId}@${recorded.version}: ${why}`)
      }
    }
    for (const recorded of events) {
      if (isLedgerType(recorded.type)) {
        const decoded = yield* Effect.either(
          Effect.map(PaymentEvents.events.decode(recorded), (e) => entryOf(e as OutcomeEvent))
        )
        if (Either.isLeft(decoded)) unreadable(recorded, decoded.left.message)
        else if (decoded.right !== undefined) entries.push(decoded.right)
        continue
      }
      if (recorded.streamId.startsWith(LifecycleEvent.transactionStreamPrefix)) {
        if (!LifecycleEvent.registry.has(recorded.type)) continue
        const before = yield* foldBefore(recorded, cache)
        if (Either.isLeft(before)) {
          cache.delete(recorded.streamId)
          if (lifecycleFactTypes.has(recorded.type)) unreadable(recorded, before.left)
          continue
        }
        const decoded = yield* Effect.either(LifecycleEvent.registry.decode(recorded))
        if (Either.isLeft(decoded)) {
          cache.delete(recorded.streamId)
          unreadable(recorded, decoded.left.message)
          continue
        }
        const after = LedgerFold.step(before.right.state, decoded.right)
        const tenant = before.right.tenant ?? Tenant.ofMetadata(recorded.metadata)
        cache.set(recorded.streamId, { version: recorded.version, state: after, tenant })
        if (Option.isNone(after)) {
          if (lifecycleFactTypes.has(recorded.type)) {
            unreadable(recorded, "a fact in a transaction's history that was never opened: not booked")
          }
          continue
        }
        entries.push(...entriesOfHistory(before.right.state, after.value, decoded.right, tenant))
        continue
      }
      if (!motoSaleFactTypes.has(recorded.type) && recorded.type !== "TerminalOutcomeResolved") continue
      const decoded = yield* Effect.either(
        Effect.map(LifecycleEvent.registry.decode(recorded), (event) =>
          event.type === "TerminalOutcomeResolved" ? entryOfTerminalResolution(event) : entryOfMotoSale(event)
        )
      )
      if (Either.isLeft(decoded)) unreadable(recorded, decoded.left.message)
      else if (decoded.right !== undefined) entries.push(decoded.right)
    }
    return { entries: ofTenant(entries, only), undecodable }
  })

// ---------------------------------------------------------------------------------------
// The ledger

/** Count and total of one kind in one row. */
export interface Tally {
  readonly count: number
  /** Minor units of the row's currency. */
  readonly amount: bigint
}

/** One row: a day, a terminal, a merchant, a currency. */
export interface Row {
  readonly day: string
  readonly terminal: string
  readonly merchant: string
  readonly currency: string
  readonly tallies: Readonly<Record<Kind, Tally>>
}

/** The ledger: its rows and how far into the log it has read. */
export interface Ledger {
  /** The position after the last event folded (resume from it). */
  readonly checkpoint: EventStore.Checkpoint
  /** Events folded (all types). */
  readonly eventsRead: number
  /** Entries counted. */
  readonly entries: number
  /** Outcome events that could not be read. */
  readonly undecodable: ReadonlyArray<string>
  readonly rows: ReadonlyMap<string, Row>
}

/** The ledger before the first event. */
export const empty: Ledger = {
  checkpoint: EventStore.Checkpoint.start,
  eventsRead: 0,
  entries: 0,
  undecodable: [],
  rows: new Map()
}

const zeroTallies = (): Record<Kind, Tally> =>
  Object.fromEntries(kinds.map((kind) => [kind, { count: 0, amount: 0n }])) as Record<Kind, Tally>

const rowKey = (day: string, terminal: string, merchant: string, currency: string) =>
  JSON.stringify([day, terminal, merchant, currency])

/** The currency an entry is booked in ("-" when its amount is unknown). */
const currencyOf = (entry: Entry): string => entry.amount?.currency ?? "-"

/** Adds entries to a ledger (a new ledger; the given one is not changed). */
export const addEntries = (ledger: Ledger, entries: ReadonlyArray<Entry>): Ledger => {
  if (entries.length === 0) return ledger
  const rows = new Map(ledger.rows)
  for (const entry of entries) {
    const key = rowKey(entry.day, entry.terminal, entry.merchant, currencyOf(entry))
    const row = rows.get(key) ?? {
      day: entry.day,
      terminal: entry.terminal,
      merchant: entry.merchant,
      currency: currencyOf(entry),
      tallies: zeroTallies()
    }
    const tally = row.tallies[entry.kind]
    rows.set(key, {
      ...row,
      tallies: {
        ...row.tallies,
        [entry.kind]: { count: tally.count + 1, amount: tally.amount + (entry.amount?.minorUnits ?? 0n) }
      }
    })
  }
  return { ...ledger, rows, entries: ledger.entries + entries.length }
}

/**
 * Folds recorded events (in log order) into a ledger: the pure heart of the audit. The
 * checkpoint moves to the last event's. With `only`, the entries of that tenant only
 * (`ofTenant`: a merchant's ledger); every event is still read.
 */
export const foldRecorded = (
  ledger: Ledger,
  events: ReadonlyArray<EventStore.RecordedEvent>,
  cache?: LedgerFold.Cache,
  only?: string
): Effect.Effect<Ledger, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.map(entriesOf(events, cache, only), ({ entries, undecodable }) => {
    const last = events[events.length - 1]
    const added = addEntries(ledger, entries)
    return {
      ...added,
      checkpoint: last === undefined ? ledger.checkpoint : last.checkpoint,
      eventsRead: ledger.eventsRead + events.length,
      undecodable: undecodable.length === 0 ? ledger.undecodable : [...ledger.undecodable, ...undecodable]
    }
  })

// ---------------------------------------------------------------------------------------
// Reading it

/** The dimensions a summary groups by (always per currency). */
export const Dimension = Schema.Literal("day", "terminal", "merchant")
/** @see Dimension */
export type Dimension = typeof Dimension.Type

/** A row of a summary: the chosen dimensions ("*" for the others), a currency, tallies, net. */
export interface SummaryRow {
  readonly day: string
  readonly terminal: string
  readonly merchant: string
  readonly currency: string
  readonly tallies: Readonly<Record<Kind, Tally>>
  /** Sales + captures + refund reversals − refunds − reversals, in minor units. */
  readonly net: bigint
}

const netOf = (tallies: Readonly<Record<Kind, Tally>>): bigint =>
  kinds.reduce((sum, kind) => sum + netSign[kind] * tallies[kind].amount, 0n)

/** The ledger grouped by the given dimensions and currency, sorted. `[]` is one row per currency. */
export const summarize = (ledger: Ledger, by: ReadonlyArray<Dimension>): ReadonlyArray<SummaryRow> => {
  const groups = new Map<string, { key: Omit<SummaryRow, "tallies" | "net">; tallies: Record<Kind, Tally> }>()
  for (const row of ledger.rows.values()) {
    const key = {
      day: by.includes("day") ? row.day : "*",
      terminal: by.includes("terminal") ? row.terminal : "*",
      merchant: by.includes("merchant") ? row.merchant : "*",
      currency: row.currency
    }
    const id = rowKey(key.day, key.terminal, key.merchant, key.currency)
    const group = groups.get(id) ?? { key, tallies: zeroTallies() }
    for (const kind of kinds) {
      const a = group.tallies[kind]
      const b = row.tallies[kind]
      group.tallies[kind] = { count: a.count + b.count, amount: a.amount + b.amount }
    }
    groups.set(id, group)
  }
  return Array.from(groups.values())
    .map(({ key, tallies }) => ({ ...key, tallies, net: netOf(tallies) }))
    .sort(
      (a, b) =>
        a.day.localeCompare(b.day) ||
        a.merchant.localeCompare(b.merchant) ||
        a.terminal.localeCompare(b.terminal) ||
        a.currency.localeCompare(b.currency)
    )
}

/** An amount of a row's currency as a decimal string ("10.50"), or minor units when unknown. */
export const formatAmount = (minorUnits: bigint, currency: string): string =>
  Currency.isCurrency(currency)
    ? Money.toMajorUnitsString(Money.make(minorUnits, currency))
    : minorUnits.toString()

const csvField = (value: string): string =>
  /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value

/** CSV of summary rows: one column pair (count, amount in major units) per kind, then net. */
export const toCsv = (rows: ReadonlyArray<SummaryRow>): string => {
  const header = [
    "day",
    "terminal",
    "merchant",
    "currency",
    ...kinds.flatMap((kind) => [`${kind}_count`, `${kind}_amount`]),
    "net"
  ]
  const lines = rows.map((row) =>
    [
      row.day,
      row.terminal,
      row.merchant,
      row.currency,
      ...kinds.flatMap((kind) => [
        String(row.tallies[kind].count),
        formatAmount(row.tallies[kind].amount, row.currency)
      ]),
      formatAmount(row.net, row.currency)
    ]
      .map(csvField)
      .join(",")
  )
  return [header.join(","), ...lines].join("\n") + "\n"
}

/** JSON of summary rows: amounts as decimal strings of their currency, never numbers. */
export const toJson = (rows: ReadonlyArray<SummaryRow>): ReadonlyArray<EventStore.JsonObject> =>
  rows.map((row) => ({
    day: row.day,
    terminal: row.terminal,
    merchant: row.merchant,
    currency: row.currency,
    ...Object.fromEntries(
      kinds.map((kind) => [
        kind,
        { count: row.tallies[kind].count, amount: formatAmount(row.tallies[kind].amount, row.currency) }
      ])
    ),
    net: formatAmount(row.net, row.currency)
  }))

/** CSV of entries, one line per business fact. */
export const entriesToCsv = (entries: ReadonlyArray<Entry>): string => {
  const header = [
    "position",
    "at",
    "day",
    "kind",
    "operation",
    "finStatus",
    "amount",
    "currency",
    "terminal",
    "merchant",
    "transactionReference",
    "reconciled",
    "stream"
  ]
  const lines = entries.map((e) =>
    [
      e.position,
      new Date(e.at).toISOString(),
      e.day,
      e.kind,
      e.operation,
      e.finStatus,
      e.amount === undefined ? "" : Money.toMajorUnitsString(e.amount),
      e.amount?.currency ?? "",
      e.terminal,
      e.merchant,
      e.transactionReference ?? "",
      String(e.reconciled),
      e.streamId
    ]
      .map(csvField)
      .join(",")
  )
  return [header.join(","), ...lines].join("\n") + "\n"
}

// ---------------------------------------------------------------------------------------
// Snapshots and comparison

const TallyJson = Schema.Struct({ count: Schema.Int, amount: Schema.BigInt })

const RowJson = Schema.Struct({
  day: Schema.String,
  terminal: Schema.String,
  merchant: Schema.String,
  currency: Schema.String,
  tallies: Schema.Record({ key: Kind, value: TallyJson })
})

/** A ledger as JSON (amounts as integer strings of minor units), for snapshots. */
export const LedgerJson = Schema.Struct({
  checkpoint: Schema.Struct({ transactionId: Schema.BigInt, globalPosition: Schema.BigInt }),
  eventsRead: Schema.Int,
  entries: Schema.Int,
  undecodable: Schema.Array(Schema.String),
  rows: Schema.Array(RowJson)
})

/** Encodes a ledger for storage. */
export const encode = (ledger: Ledger): EventStore.JsonObject =>
  Schema.encodeSync(LedgerJson)({
    checkpoint: {
      transactionId: ledger.checkpoint.transactionId,
      globalPosition: ledger.checkpoint.globalPosition
    },
    eventsRead: ledger.eventsRead,
    entries: ledger.entries,
    undecodable: ledger.undecodable,
    rows: sortedRows(ledger)
  }) as unknown as EventStore.JsonObject

/** Decodes a stored ledger. */
export const decode = (json: unknown): Option.Option<Ledger> =>
  Option.map(Schema.decodeUnknownOption(LedgerJson)(json), (decoded) => ({
    checkpoint: new EventStore.Checkpoint(decoded.checkpoint),
    eventsRead: decoded.eventsRead,
    entries: decoded.entries,
    undecodable: decoded.undecodable,
    rows: new Map(
      decoded.rows.map((row) => [rowKey(row.day, row.terminal, row.merchant, row.currency), row as Row])
    )
  }))

const sortedRows = (ledger: Ledger): ReadonlyArray<Row> =>
  Array.from(ledger.rows.entries())
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row)

/** A difference between two ledgers: a row (by its key) whose tallies differ. */
export interface Difference {
  readonly row: string
  readonly left: string
  readonly right: string
}

const rowText = (row: Row | undefined): string =>
  row === undefined
    ? "absent"
    : kinds
        .filter((kind) => row.tallies[kind].count > 0)
        .map(
          (kind) =>
            `${kind} ${row.tallies[kind].count}×${formatAmount(row.tallies[kind].amount, row.currency)}`
        )
        .join(", ") || "empty"

/** The rows in which two ledgers differ (empty: they agree on every row). */
export const differences = (left: Ledger, right: Ledger): ReadonlyArray<Difference> => {
  const keys = new Set([...left.rows.keys(), ...right.rows.keys()])
  const out: Array<Difference> = []
  for (const key of Array.from(keys).sort()) {
    const a = left.rows.get(key)
    const b = right.rows.get(key)
    const same =
      a !== undefined &&
      b !== undefined &&
      kinds.every(
        (k) => a.tallies[k].count === b.tallies[k].count && a.tallies[k].amount === b.tallies[k].amount
      )
    if (!same)
      out.push({
        row: (JSON.parse(key) as ReadonlyArray<string>).join(" / "),
        left: rowText(a),
        right: rowText(b)
      })
  }
  return out
}

/** A digest of a ledger's rows (SHA-256 of their canonical JSON): equal ledgers, equal digests. */
export const digest = (ledger: Ledger): Effect.Effect<string> => {
  const json = encode(ledger)
  const canonical = HashChain.canonicalJson(json["rows"])
  return HashChain.sha256Hex(canonical._tag === "Right" ? canonical.right : "")
}

/** A ledger of the given rows (e.g. received from a worker), to summarize or export. */
export const fromRows = (
  rows: ReadonlyArray<Row>,
  checkpoint: EventStore.Checkpoint = EventStore.Checkpoint.start
): Ledger => ({
  ...empty,
  checkpoint,
  entries: rows.reduce((n, row) => n + kinds.reduce((m, kind) => m + row.tallies[kind].count, 0), 0),
  rows: new Map(rows.map((row) => [rowKey(row.day, row.terminal, row.merchant, row.currency), row]))
})
