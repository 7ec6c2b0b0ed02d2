/**
 * The gateway's business rules, shared by the terminal operations and the terminal-less
 * endpoints: authorizations with the trigger amounts, refunds, reversals, pre-authorization
 * increase and capture, tip adjustment, deferred tokenization, MOTO, batches. Each rule is
 * a synchronous function over the store that either applies the change and returns the new
 * record, or returns the business error without changing anything.
 */
import * as Either from "effect/Either"
import { type BusinessRule, rule } from "../SimulatorError.js"
import * as Triggers from "../Triggers.js"
import * as CaptureRules from "./captureRules.js"
import { type Card, cardKey, type Merchant, type Store, type Terminal, type Txn } from "./model.js"
import { statusRow } from "./results.js"

export type Outcome<A> = Either.Either<A, BusinessRule>

const dayMs = 86_400_000
const DUPLICATE_WINDOW_MS = 5 * 60_000

/** Operations whose transaction is a charge that can be refunded, reversed, tipped. */
export const saleLike: ReadonlySet<string> = new Set(["sale", "saleAndTokenizeCard", "moToSale"])
export const preAuthLike: ReadonlySet<string> = new Set(["preAuthorization", "moToPreAuthorization"])
const refundLike: ReadonlySet<string> = new Set(["refund", "moToRefund"])
/** Transaction kinds eligible for deferred tokenization (spec 4.7). */
const tokenizable: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "refund",
  "preAuthorizationCapture",
  "moToSale",
  "moToRefund"
])

export interface NewTxn {
  readonly terminal: Terminal
  readonly operation: string
  readonly type: string
  readonly reference: string | undefined
  readonly amount: bigint
  readonly currency: string
  readonly exponent: number
  readonly card: Card | undefined
  readonly cardPresent: boolean
  readonly now: number
  readonly originalGuid?: string | undefined
  readonly customerReference?: unknown
  readonly finStatus: string
  readonly approved: bigint
  readonly guid?: string | undefined
}

/** Records a transaction at the gateway and freezes its row in the status log. */
export const record = (store: Store, input: NewTxn): Txn => {
  const txn: Txn = {
    guid: input.guid ?? store.ids.uuidV1(),
    merchantId: input.terminal.merchantId,
    terminalSerial: input.terminal.serial,
    batch: input.terminal.batch,
    operation: input.operation,
    type: input.type,
    reference: input.reference,
    amount: input.amount,
    currency: input.currency,
    exponent: input.exponent,
    card: input.card,
    cardPresent: input.cardPresent,
    createdAt: input.now,
    originalGuid: input.originalGuid,
    customerReference: input.customerReference,
    approvalCode: input.approved > 0n ? store.ids.digits(6) : "",
    rrn: store.ids.digits(12),
    issuerResponseCode: input.approved > 0n ? "00" : "",
    issuerResponseText: input.approved > 0n ? "Approved" : "",
    finStatus: input.finStatus,
    approved: input.approved,
    dueAmount: 0n,
    tipAmount: 0n,
    refunded: 0n,
    reversedAmount: 0n,
    reversed: false,
    cardToken: undefined,
    billing: undefined,
    hold: 0n,
    increased: 0n,
    captured: undefined,
    released: false
  }
  store.txns.set(txn.guid, txn)
  if (txn.card !== undefined) {
    const key = cardKey(txn.merchantId, txn.card.pan)
    const last = store.lastOfCard.get(key)
    if (last === undefined || txn.createdAt >= last.createdAt) store.lastOfCard.set(key, txn)
  }
  return txn
}

/** Freezes the status row of a processed transaction (row 0 stays live). */
export const freeze = (store: Store, txn: Txn): void => {
  if (txn.reference === undefined) return
  const entries = store.statusLog.get(txn.reference) ?? []
  let entry = entries.find((e) => e.guid === txn.guid)
  if (entry === undefined) {
    entry = { guid: txn.guid, merchantId: txn.merchantId, snapshot: undefined }
    entries.push(entry)
    store.statusLog.set(txn.reference, entries)
  }
  entry.snapshot = statusRow(txn)
}

/** A token for a card, the same for the same card and merchant. */
export const tokenFor = (store: Store, merchantId: string, card: Card): string => {
  for (const [token, entry] of store.tokens) {
    if (entry.merchantId === merchantId && entry.card.pan === card.pan) return token
  }
  const token = `tok_${store.ids.hex(24)}`
  store.tokens.set(token, { merchantId, card: { ...card } })
  return token
}

/**
 * The duplicate payment check: the last transaction of this card at this merchant was the
 * same kind, same amount and currency, approved, within 5 minutes.
 */
export const isDuplicate = (
  store: Store,
  merchantId: string,
  card: Card,
  kind: "charge" | "refund",
  amount: bigint,
  currency: string,
  now: number
): boolean => {
  const last = store.lastOfCard.get(cardKey(merchantId, card.pan))
  if (last === undefined || last.approved <= 0n) return false
  const lastKind = saleLike.has(last.operation) || preAuthLike.has(last.operation) ? "charge" : "refund"
  return (
    lastKind === kind &&
    last.amount === amount &&
    last.currency === currency &&
    now - last.createdAt <= DUPLICATE_WINDOW_MS
  )
}

/** An authorization (sale, pre-authorization, MOTO sale) with the trigger amounts applied. */
export const authorize = (
  store: Store,
  merchant: Merchant,
  input: Omit<NewTxn, "finStatus" | "approved">
): Txn => {
  const preAuth = preAuthLike.has(input.operation)
  const schemeRefuses =
    preAuth &&
    input.card !== undefined &&
    !CaptureRules.allowed(CaptureRules.ruleFor(input.card, merchant.mcc))
  const outcome: Triggers.Outcome = schemeRefuses
    ? {
        _tag: "Declined",
        issuerResponseCode: "57",
        issuerResponseText: "Transaction not permitted to cardholder"
      }
    : Triggers.outcomeFor(input.amount, input.exponent)
  switch (outcome._tag) {
    case "Approved": {
      const txn = record(store, { ...input, finStatus: "AUTHORISED", approved: input.amount })
      if (preAuth) txn.hold = input.amount
      input.terminal.counters.charges++
      return txn
    }
    case "PartialApproval": {
      const approved = Triggers.partiallyApproved(input.amount)
      const txn = record(store, { ...input, finStatus: "PARTIAL_APPROVAL", approved })
      txn.dueAmount = input.amount - approved
      txn.issuerResponseCode = "10"
      txn.issuerResponseText = "Partial approval"
      if (preAuth) txn.hold = approved
      input.terminal.counters.charges++
      return txn
    }
    case "Declined": {
      const txn = record(store, { ...input, finStatus: "DECLINED", approved: 0n })
      txn.issuerResponseCode = outcome.issuerResponseCode
      txn.issuerResponseText = outcome.issuerResponseText
      input.terminal.counters.declined++
      return txn
    }
    case "AcquirerTimeout": {
      // No answer from the acquirer: the automatic cancellation leaves the card uncharged.
      const txn = record(store, { ...input, finStatus: "UNDEFINED", approved: 0n })
      txn.issuerResponseCode = ""
      txn.issuerResponseText = "Request timeout at the acquirer"
      input.terminal.counters.failed++
      return txn
    }
  }
}

/** Finds a transaction of a merchant by guid. */
export const find = (store: Store, merchantId: string, guid: string): Txn | undefined => {
  const txn = store.txns.get(guid)
  return txn !== undefined && txn.merchantId === merchantId ? txn : undefined
}

const unknownOriginal = (guid: string) =>
  rule("ORIGINAL_NOT_FOUND", `Original transaction ${guid} not found`, "1010")

const isApproved = (txn: Txn) =>
  txn.approved > 0n && txn.finStatus !== "DECLINED" && txn.finStatus !== "UNDEFINED"

/** A refund linked to an original charge: same currency, not above what is left. */
export const refundLinked = (
  store: Store,
  input: {
    readonly originalGuid: string
    readonly merchantId: string
    readonly terminal: Terminal
    readonly operation: "refund" | "moToRefund"
    readonly amount: bigint
    readonly currency: string
    readonly now: number
    readonly customerReference?: unknown
    readonly guid?: string | undefined
  }
): Outcome<Txn> => {
  const original = find(store, input.merchantId, input.originalGuid)
  if (original === undefined) return Either.left(unknownOriginal(input.originalGuid))
  const refundable =
    saleLike.has(original.operation) ||
    (preAuthLike.has(original.operation) && original.captured !== undefined)
  if (!refundable || !isApproved(original) || original.reversed)
    return Either.left(rule("NOT_REFUNDABLE", "The original transaction cannot be refunded", "1011"))
  if (original.currency !== input.currency)
    return Either.left(rule("CURRENCY_MISMATCH", "Refund currency differs from the original sale", "1012"))
  const ceiling = (original.captured ?? original.approved + original.tipAmount) - original.reversedAmount
  if (original.refunded + input.amount > ceiling)
    return Either.left(rule("AMOUNT_TOO_HIGH", "Refund amount exceeds the original sale", "1013"))
  const txn = record(store, {
    terminal: input.terminal,
    operation: input.operation,
    type: input.operation === "refund" ? "REFUND" : "MOTO_REFUND",
    reference: original.reference,
    amount: input.amount,
    currency: input.currency,
    exponent: original.exponent,
    card: original.card,
    cardPresent: input.operation === "refund",
    now: input.now,
    originalGuid: original.guid,
    customerReference: input.customerReference,
    finStatus: "AUTHORISED",
    approved: input.amount,
    guid: input.guid
  })
  original.refunded += input.amount
  original.finStatus = "REFUNDED"
  input.terminal.counters.refunds++
  freeze(store, txn)
  return Either.right(txn)
}

const REVERSAL_WINDOW_MS = dayMs

/**
 * A reversal (void) of an earlier transaction: within 24 h and before its batch closes.
 * A sale reversed in full reads CANCELLED; a reversed refund gives the sale its amount
 * back (AUTHORISED when nothing stays refunded); reversing a pre-authorization releases
 * the hold, and reversing a captured one undoes the capture (CAPTURED → AUTHORISED).
 */
export const reverse = (
  store: Store,
  input: {
    readonly originalGuid: string
    readonly merchant: Merchant
    readonly terminal: Terminal
    readonly operation: string
    readonly type: string
    readonly amount: bigint | undefined
    readonly currency: string | undefined
    readonly now: number
    readonly expect?: "charge" | "refund" | "preAuthorization" | undefined
    readonly guid?: string | undefined
  }
): Outcome<Txn> => {
  const original = find(store, input.merchant.id, input.originalGuid)
  if (original === undefined) return Either.left(unknownOriginal(input.originalGuid))
  const isCharge = saleLike.has(original.operation)
  const isRefund = refundLike.has(original.operation)
  const isPreAuth = preAuthLike.has(original.operation)
  const kindOk =
    input.expect === undefined
      ? isCharge || isRefund || isPreAuth
      : input.expect === "charge"
        ? isCharge
        : input.expect === "refund"
          ? isRefund
          : isPreAuth
  if (!kindOk || !isApproved(original) || original.reversed || original.released)
    return Either.left(rule("NOT_REVERSIBLE", "The original transaction cannot be reversed", "1020"))
  // What settles with the batch: the transaction itself, or for a pre-authorization its
  // capture (an uncaptured hold is not in any batch and can be released at any time).
  const settling = isPreAuth
    ? Array.from(store.txns.values()).find(
        (t) => t.originalGuid === original.guid && t.type === "PRE_AUTHORIZATION_CAPTURE" && !t.reversed
      )
    : original
  if (settling !== undefined && !store.batchOpen(settling))
    return Either.left(rule("BATCH_CLOSED", "The batch of the original transaction is closed", "1021"))
  if (!isPreAuth && input.now - original.createdAt > REVERSAL_WINDOW_MS)
    return Either.left(rule("REVERSAL_WINDOW_CLOSED", "Reversal is possible within 24 hours only", "1022"))
  const remaining = original.approved + original.tipAmount - original.reversedAmount
  let amount = remaining
  if (input.amount !== undefined && input.amount !== remaining) {
    if (!input.merchant.flags.partialReversalAllowed)
      return Either.left(
        rule("PARTIAL_REVERSAL_NOT_SUPPORTED", "The acquirer does not support partial reversals", "1023")
      )
    if (input.currency !== undefined && input.currency !== original.currency)
      return Either.left(rule("CURRENCY_MISMATCH", "Reversal currency differs from the original", "1012"))
    if (input.amount <= 0n || input.amount > remaining)
      return Either.left(rule("AMOUNT_TOO_HIGH", "Reversal amount exceeds the original", "1013"))
    amount = input.amount
  }
  if (isPreAuth && original.captured !== undefined) {
    if (!input.merchant.flags.captureReversalAllowed)
      return Either.left(
        rule("CAPTURE_REVERSAL_NOT_SUPPORTED", "The acquirer cannot reverse a capture", "1024")
      )
    original.captured = undefined
    original.finStatus = "AUTHORISED"
    for (const t of store.txns.values()) {
      if (t.originalGuid === original.guid && t.type === "PRE_AUTHORIZATION_CAPTURE") t.reversed = true
    }
  } else if (isPreAuth) {
    original.hold = 0n
    original.released = true
    original.finStatus = "CANCELLED"
  } else if (amount === remaining) {
    original.reversed = true
    original.reversedAmount += amount
    if (isCharge) original.finStatus = "CANCELLED"
  } else {
    original.reversedAmount += amount
  }
  if (isRefund && original.originalGuid !== undefined) {
    const sale = store.txns.get(original.originalGuid)
    if (sale !== undefined) {
      sale.refunded -= original.amount
      if (sale.refunded <= 0n && sale.finStatus === "REFUNDED") sale.finStatus = "AUTHORISED"
    }
  }
  const txn = record(store, {
    terminal: input.terminal,
    operation: input.operation,
    type: input.type,
    reference: original.reference,
    amount,
    currency: original.currency,
    exponent: original.exponent,
    card: original.card,
    cardPresent: false,
    now: input.now,
    originalGuid: original.guid,
    finStatus: "AUTHORISED",
    approved: amount,
    guid: input.guid
  })
  input.terminal.counters.reversals++
  freeze(store, txn)
  return Either.right(txn)
}

const openPreAuth = (store: Store, merchant: Merchant, guid: string, now: number): Outcome<Txn> => {
  const original = find(store, merchant.id, guid)
  if (original === undefined || !preAuthLike.has(original.operation))
    return Either.left(rule("ORIGINAL_NOT_FOUND", `Pre-authorization ${guid} not found`, "1030"))
  if (!isApproved(original) || original.released)
    return Either.left(rule("PREAUTH_NOT_OPEN", "The pre-authorization is no longer open", "1031"))
  if (original.captured !== undefined)
    return Either.left(rule("ALREADY_CAPTURED", "The pre-authorization has already been captured", "1032"))
  const capture = CaptureRules.ruleFor(original.card, merchant.mcc)
  if (!CaptureRules.withinWindow(capture, original.createdAt, now))
    return Either.left(
      rule("PREAUTH_EXPIRED", "The authorization timeframe of the pre-authorization has passed", "1033")
    )
  return Either.right(original)
}

/** Increases (or, with `delta` negative, decreases) the amount held. */
export const increase = (
  store: Store,
  input: {
    readonly merchant: Merchant
    readonly originalGuid: string
    readonly delta: bigint
    readonly tip: bigint
    readonly now: number
    readonly terminal?: Terminal | undefined
    readonly operation: string
    readonly guid?: string | undefined
  }
): Outcome<{ readonly original: Txn; readonly txn: Txn }> =>
  Either.flatMap(openPreAuth(store, input.merchant, input.originalGuid, input.now), (original) => {
    const hold = original.hold + input.delta + input.tip
    if (hold <= 0n)
      return Either.left(
        rule("AMOUNT_TOO_HIGH", "A decrease cannot release more than the amount held", "1034")
      )
    const terminal = input.terminal ?? store.terminals.get(original.terminalSerial)
    if (terminal === undefined) return Either.left(unknownOriginal(input.originalGuid))
    original.hold = hold
    original.increased += input.delta + input.tip
    const txn = record(store, {
      terminal,
      operation: input.operation,
      type: "PRE_AUTHORIZATION_INCREASE",
      reference: original.reference,
      amount: input.delta + input.tip,
      currency: original.currency,
      exponent: original.exponent,
      card: original.card,
      cardPresent: false,
      now: input.now,
      originalGuid: original.guid,
      finStatus: "AUTHORISED",
      approved: input.delta + input.tip,
      guid: input.guid
    })
    txn.hold = hold
    freeze(store, txn)
    return Either.right({ original, txn })
  })

/** Captures a pre-authorization: once, inside its window, not above the tolerance. */
export const capture = (
  store: Store,
  input: {
    readonly merchant: Merchant
    readonly originalGuid: string
    readonly amount: bigint
    readonly tip: bigint
    readonly now: number
    readonly terminal?: Terminal | undefined
    readonly operation: string
    readonly guid?: string | undefined
  }
): Outcome<{ readonly original: Txn; readonly txn: Txn }> =>
  Either.flatMap(openPreAuth(store, input.merchant, input.originalGuid, input.now), (original) => {
    const total = input.amount + input.tip
    const capture = CaptureRules.ruleFor(original.card, input.merchant.mcc)
    if (total <= 0n)
      return Either.left(rule("INVALID_AMOUNT", "The captured amount must be positive", "1035"))
    if (total > CaptureRules.maxCapture(capture, original.hold, original.currency))
      return Either.left(
        rule(
          "CAPTURE_ABOVE_TOLERANCE",
          "The captured amount is above the authorised amount beyond tolerance",
          "1036"
        )
      )
    const terminal = input.terminal ?? store.terminals.get(original.terminalSerial)
    if (terminal === undefined) return Either.left(unknownOriginal(input.originalGuid))
    original.captured = total
    original.finStatus = "CAPTURED"
    const txn = record(store, {
      terminal,
      operation: input.operation,
      type: "PRE_AUTHORIZATION_CAPTURE",
      reference: original.reference,
      amount: total,
      currency: original.currency,
      exponent: original.exponent,
      card: original.card,
      cardPresent: false,
      now: input.now,
      originalGuid: original.guid,
      finStatus: "AUTHORISED",
      approved: total,
      guid: input.guid
    })
    txn.tipAmount = input.tip
    txn.captured = total
    terminal.counters.captures++
    freeze(store, txn)
    return Either.right({ original, txn })
  })

/** Sets the tip of a sale: sales only, before batch close; a later adjustment replaces it. */
export const adjustTip = (store: Store, txn: Txn, tip: bigint): Outcome<Txn> => {
  if (txn.operation !== "sale" && txn.operation !== "saleAndTokenizeCard")
    return Either.left(rule("NOT_A_SALE", "Tip adjustment is possible for sale transactions only", "1040"))
  if (!isApproved(txn) || txn.reversed)
    return Either.left(rule("NOT_ADJUSTABLE", "The transaction is not an approved sale", "1041"))
  if (!store.batchOpen(txn))
    return Either.left(rule("ALREADY_BATCHED", "The transaction has already been batched", "1042"))
  if (tip < 0n) return Either.left(rule("INVALID_AMOUNT", "The tip cannot be negative", "1043"))
  txn.tipAmount = tip
  return Either.right(txn)
}

/** Adds `months` calendar months to an instant (UTC). */
export const addMonths = (epochMillis: number, months: number): number => {
  const date = new Date(epochMillis)
  date.setUTCMonth(date.getUTCMonth() + months)
  return date.getTime()
}

/** Deferred tokenization: eligible kinds only, within 12 months of the transaction. */
export const deferredToken = (store: Store, txn: Txn, now: number): Outcome<string> => {
  if (!tokenizable.has(txn.operation) || !isApproved(txn) || txn.card === undefined)
    return Either.left(
      rule("NOT_TOKENIZABLE", "The transaction type is not eligible for tokenization", "1050")
    )
  if (now > addMonths(txn.createdAt, 12))
    return Either.left(
      rule("TOKENIZATION_WINDOW_CLOSED", "Tokenization is possible within 12 months only", "1051")
    )
  const token = tokenFor(store, txn.merchantId, txn.card)
  txn.cardToken = token
  return Either.right(token)
}

/** Closes the open batch of a terminal and opens the next. */
export const closeBatch = (store: Store, terminal: Terminal, now: number): number => {
  const closed = terminal.batch
  store.closedBatches.push({ terminalSerial: terminal.serial, number: closed, closedAt: now })
  terminal.batch = closed + 1
  return closed
}

/** The transactions of a terminal's batch. */
export const batchTxns = (store: Store, terminal: Terminal, batch: number): Array<Txn> =>
  Array.from(store.txns.values()).filter((t) => t.terminalSerial === terminal.serial && t.batch === batch)

/** Net amount of a batch in minor units: charges and captures less refunds and reversals. */
export const netAmount = (store: Store, txns: ReadonlyArray<Txn>): bigint => {
  let net = 0n
  for (const txn of txns) {
    if (!isApproved(txn)) continue
    if (saleLike.has(txn.operation)) net += txn.approved + txn.tipAmount
    else if (txn.type === "PRE_AUTHORIZATION_CAPTURE") net += txn.reversed ? 0n : txn.approved
    else if (refundLike.has(txn.operation) && txn.type !== "MOTO_REVERSAL") net -= txn.approved
    else if (txn.originalGuid !== undefined && isReversal(txn)) {
      const original = store.txns.get(txn.originalGuid)
      if (original === undefined) continue
      if (refundLike.has(original.operation)) net += txn.approved
      else if (saleLike.has(original.operation)) net -= txn.approved
    }
  }
  return net
}

/** Whether a transaction record is a reversal of another. */
export const isReversal = (txn: Txn): boolean =>
  txn.type === "VOID_SALE" ||
  txn.type === "VOID_REFUND" ||
  txn.type === "MOTO_REVERSAL" ||
  txn.type === "CANCEL_SALE" ||
  txn.type === "PRE_AUTHORIZATION_REVERSAL"
