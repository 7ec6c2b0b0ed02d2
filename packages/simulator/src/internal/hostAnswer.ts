/**
 * The host's answer to a terminal operation: when the operation reaches WaitingHostReceive
 * (or has no host steps), the gateway's rules are applied for it — an authorization, a
 * refund, a reversal, a pre-authorization increase or capture, a card token — and the
 * outcome becomes the operation's `Ending`. A refused linked operation is recorded as a
 * declined transaction, as the gateway does.
 */
import * as Either from "effect/Either"
import type { Json } from "./service.js"
import type { BusinessRule } from "../SimulatorError.js"
import * as Gateway from "./gateway.js"
import type { Card, Merchant, Store, Terminal, Txn } from "./model.js"
import { typeOf } from "./operations.js"
import type { Shared } from "./shared.js"
import type * as Validate from "./validate.js"

/** How an operation on a terminal ended. */
export interface Ending {
  readonly finStatus: string
  readonly statusMessage: string
  readonly errorMessage: string
  readonly txn: Txn | undefined
  readonly card: Card | undefined
  readonly extra?: Json | undefined
}

/** An ending without a gateway record. */
export const ended = (finStatus: string, statusMessage: string, errorMessage = "", card?: Card): Ending => ({
  finStatus,
  statusMessage,
  errorMessage,
  txn: undefined,
  card
})

const fromTxn = (txn: Txn, card: Card | undefined, extra?: Json): Ending => ({
  finStatus: txn.finStatus,
  statusMessage:
    txn.finStatus === "AUTHORISED"
      ? "Transaction approved"
      : txn.finStatus === "PARTIAL_APPROVAL"
        ? "PartialApproval"
        : txn.finStatus === "DECLINED"
          ? "Transaction declined"
          : "No answer from the gateway",
  errorMessage: txn.finStatus === "DECLINED" || txn.finStatus === "UNDEFINED" ? txn.issuerResponseText : "",
  txn,
  card,
  extra
})

/** What the host knows of an operation when it answers. */
interface AtHost {
  readonly store: Store
  readonly terminal: Terminal
  readonly merchant: Merchant
  readonly req: Validate.TransactionRequest
  readonly card: Card
  readonly guid: string
  readonly reference: string | undefined
  readonly at: number
  readonly amount: bigint
  readonly currency: string
  readonly exponent: number
}

/** The gateway half of an operation, applied when the host answers. */
export const answer = (
  shared: Shared,
  terminal: Terminal,
  merchant: Merchant,
  req: Validate.TransactionRequest,
  card: Card,
  guid: string,
  reference: string | undefined
): Ending => {
  const host: AtHost = {
    store: shared.store,
    terminal,
    merchant,
    req,
    card,
    guid,
    reference,
    at: shared.now(),
    amount: req.amount ?? 0n,
    currency: req.currency ?? "",
    exponent: req.exponent ?? 2
  }
  const op = req.operation
  switch (op) {
    case "sale":
    case "saleAndTokenizeCard":
    case "preAuthorization":
    case "moToSale":
    case "moToPreAuthorization":
      return authorization(host, op)
    case "refund":
    case "moToRefund":
      return refund(host, op)
    case "saleReversal":
    case "refundReversal":
    case "moToReversal":
    case "preAuthorizationReversal":
      return reversal(host, op)
    case "preAuthorizationIncrease":
      return increase(host)
    case "preAuthorizationCapture":
      return capture(host)
    case "tokenizeCard": {
      const token = Gateway.tokenFor(host.store, merchant.id, card)
      return { ...ended("AUTHORISED", "Card tokenized", "", card), extra: { cardToken: token } }
    }
    default:
      return ended("PROCESSED", "Success", "", card)
  }
}

/** A refused operation, recorded as declined with the rule's message. */
const decline = (host: AtHost, error: BusinessRule): Ending => {
  const { store, terminal, req } = host
  const original =
    req.originalTransactionId === undefined ? undefined : store.txns.get(req.originalTransactionId)
  const txn = Gateway.record(store, {
    terminal,
    operation: req.operation,
    type: typeOf[req.operation],
    reference: host.reference,
    amount: host.amount < 0n ? -host.amount : host.amount,
    currency: host.currency === "" ? (original?.currency ?? "") : host.currency,
    exponent: original?.exponent ?? host.exponent,
    card: original?.card,
    cardPresent: false,
    now: host.at,
    originalGuid: req.originalTransactionId,
    finStatus: "DECLINED",
    approved: 0n,
    guid: host.guid
  })
  txn.issuerResponseText = error.message
  terminal.counters.declined++
  Gateway.freeze(store, txn)
  return { ...fromTxn(txn, txn.card), errorMessage: error.message }
}

const settle = (
  host: AtHost,
  outcome: Either.Either<Txn, BusinessRule>,
  usedCard: Card | undefined
): Ending =>
  Either.match(outcome, { onLeft: (error) => decline(host, error), onRight: (txn) => fromTxn(txn, usedCard) })

const authorization = (
  host: AtHost,
  op: "sale" | "saleAndTokenizeCard" | "preAuthorization" | "moToSale" | "moToPreAuthorization"
): Ending => {
  const { store, terminal, merchant, req, card } = host
  const txn = Gateway.authorize(store, merchant, {
    terminal,
    operation: op,
    type: typeOf[op],
    reference: host.reference,
    amount: host.amount,
    currency: host.currency,
    exponent: host.exponent,
    card,
    cardPresent: !op.startsWith("moTo"),
    now: host.at,
    customerReference: req.raw.customerReference,
    guid: host.guid
  })
  txn.billing = req.raw.billing
  if (req.tipConfiguration && txn.approved > 0n) txn.tipAmount = terminal.tipMinor
  if ((op === "saleAndTokenizeCard" || req.tokenize) && txn.approved > 0n)
    txn.cardToken = Gateway.tokenFor(store, merchant.id, card)
  Gateway.freeze(store, txn)
  return fromTxn(txn, card)
}

const refund = (host: AtHost, op: "refund" | "moToRefund"): Ending => {
  const { store, terminal, merchant, req, card } = host
  if (req.originalTransactionId !== undefined) {
    return settle(
      host,
      Gateway.refundLinked(store, {
        originalGuid: req.originalTransactionId,
        merchantId: merchant.id,
        terminal,
        operation: op,
        amount: host.amount,
        currency: host.currency,
        now: host.at,
        customerReference: req.raw.customerReference,
        guid: host.guid
      }),
      card
    )
  }
  const txn = Gateway.record(store, {
    terminal,
    operation: op,
    type: typeOf[op],
    reference: host.reference,
    amount: host.amount,
    currency: host.currency,
    exponent: host.exponent,
    card,
    cardPresent: op === "refund",
    now: host.at,
    customerReference: req.raw.customerReference,
    finStatus: "AUTHORISED",
    approved: host.amount,
    guid: host.guid
  })
  terminal.counters.refunds++
  Gateway.freeze(store, txn)
  return fromTxn(txn, card)
}

const reversal = (
  host: AtHost,
  op: "saleReversal" | "refundReversal" | "moToReversal" | "preAuthorizationReversal"
): Ending => {
  const { store, req } = host
  const expect =
    op === "saleReversal"
      ? "charge"
      : op === "refundReversal"
        ? "refund"
        : op === "preAuthorizationReversal"
          ? "preAuthorization"
          : undefined
  const original = store.txns.get(req.originalTransactionId ?? "")
  return settle(
    host,
    Gateway.reverse(store, {
      originalGuid: req.originalTransactionId ?? "",
      merchant: host.merchant,
      terminal: host.terminal,
      operation: op,
      type: typeOf[op],
      amount: req.amount,
      currency: req.currency,
      now: host.at,
      expect,
      guid: host.guid
    }),
    original?.card
  )
}

const increase = (host: AtHost): Ending =>
  settle(
    host,
    Either.map(
      Gateway.increase(host.store, {
        merchant: host.merchant,
        originalGuid: host.req.originalTransactionId ?? "",
        delta: host.amount,
        tip: 0n,
        now: host.at,
        terminal: host.terminal,
        operation: host.req.operation,
        guid: host.guid
      }),
      (r) => r.txn
    ),
    undefined
  )

const capture = (host: AtHost): Ending => {
  const { store, merchant, req } = host
  return settle(
    host,
    Either.map(
      Gateway.capture(store, {
        merchant,
        originalGuid: req.originalTransactionId ?? "",
        // Without an amount the whole hold is captured.
        amount: req.amount ?? Gateway.find(store, merchant.id, req.originalTransactionId ?? "")?.hold ?? 0n,
        tip: 0n,
        now: host.at,
        terminal: host.terminal,
        operation: req.operation,
        guid: host.guid
      }),
      (r) => r.txn
    ),
    undefined
  )
}
