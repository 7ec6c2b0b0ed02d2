/**
 * The gateway's MOTO endpoints (mail order / telephone order, no terminal): a sale with a
 * card token, a refund linked to an earlier charge, and a reversal, each recorded on the
 * merchant's virtual terminal.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Caller, Json, SimulatorService } from "./service.js"
import { invalid, rule } from "../SimulatorError.js"
import * as Gateway from "./gateway.js"
import { txnFor, virtualTerminal } from "./lookups.js"
import type { Txn } from "./model.js"
import { formatMajor } from "./money.js"
import * as Results from "./results.js"
import type { Shared } from "./shared.js"
import * as Validate from "./validate.js"
import { bodyObject, right } from "./validate.js"

const motoResponse = (shared: Shared, txn: Txn, original: Txn | undefined): Json => ({
  guid: txn.guid,
  ...(original === undefined ? {} : { originalGuid: original.guid }),
  transactionReference: txn.reference ?? "",
  type: txn.type,
  finStatus: txn.finStatus,
  authorisationResult: txn.finStatus === "DECLINED" ? "DECLINED" : "APPROVED",
  amount: formatMajor(txn.amount, txn.exponent),
  approvedAmount: formatMajor(txn.approved, txn.exponent),
  currency: txn.currency,
  maskedCardNumber: txn.card === undefined ? "" : Results.maskPan(txn.card.pan),
  cardSchemeName: txn.card?.scheme ?? "",
  approvalCode: txn.approvalCode,
  issuerResponseCode: txn.issuerResponseCode,
  issuerResponseText: txn.issuerResponseText,
  acquirerTid: shared.store.terminals.get(txn.terminalSerial)?.tid ?? "",
  batchNumber: String(txn.batch),
  serverDateTime: Results.compactTimestamp(txn.createdAt),
  customerReference: typeof txn.customerReference === "string" ? txn.customerReference : ""
})

const motoReference = (b: Record<string, unknown>) => {
  const reference = b.transactionReference
  if (reference === undefined || reference === null) return Either.right(undefined)
  return typeof reference === "string" && /^[0-9a-f-]{36}$/i.test(reference)
    ? Either.right(reference)
    : Either.left(invalid("transactionReference", "transactionReference must be a UUID"))
}

const motoSale = (shared: Shared) =>
  Effect.fn("Simulator.motoSale")(function* (caller: Caller, body: unknown) {
    const b = yield* right(bodyObject(body))
    const tokenValue = b.cardToken
    if (typeof tokenValue !== "string" || tokenValue === "")
      return yield* invalid("cardToken", "cardToken is required")
    const { code, exponent } = yield* right(Validate.currencyField(b, "currency"))
    const amount = yield* right(Validate.majorAmount(b, "amount", exponent, { required: true }))
    if (amount === undefined || amount <= 0n) return yield* invalid("amount", "amount must be positive")
    const reference = yield* right(motoReference(b))
    if (
      b.billing !== undefined &&
      b.billing !== null &&
      (!Validate.isObject(b.billing) || typeof b.billing.zipCode !== "string")
    )
      return yield* invalid("billing.zipCode", "billing.zipCode is required inside billing")
    const token = shared.store.tokens.get(tokenValue)
    if (token === undefined || token.merchantId !== caller.merchant.id)
      return yield* rule("UNKNOWN_TOKEN", "The card token is unknown", "3001")
    if (caller.merchant.flags.securityCodeRequired)
      return yield* rule(
        "SECURITY_CODE_REQUIRED",
        "Security code is required for card-not-present payments",
        "3107"
      )
    const terminal = yield* virtualTerminal(shared, caller)
    if (
      b.duplicate_check !== false &&
      Gateway.isDuplicate(shared.store, caller.merchant.id, token.card, "charge", amount, code, shared.now())
    )
      return yield* rule(
        "DUPLICATE_TRANSACTION",
        "Duplicate transaction: same card and amount within 5 minutes",
        "3002"
      )
    terminal.counters.processed++
    const txn = Gateway.authorize(shared.store, caller.merchant, {
      terminal,
      operation: "moToSale",
      type: "MOTO_SALE",
      reference,
      amount,
      currency: code,
      exponent,
      card: token.card,
      cardPresent: false,
      now: shared.now(),
      customerReference: b.customerReference
    })
    txn.cardToken = tokenValue
    txn.billing = b.billing
    Gateway.freeze(shared.store, txn)
    return motoResponse(shared, txn, undefined)
  })

const motoRefund = (shared: Shared) =>
  Effect.fn("Simulator.motoRefund")(function* (caller: Caller, body: unknown) {
    const b = yield* right(bodyObject(body))
    const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
    const { code, exponent } = yield* right(Validate.currencyField(b, "currency"))
    const amount = yield* right(Validate.majorAmount(b, "amount", exponent, { required: true }))
    if (amount === undefined || amount <= 0n) return yield* invalid("amount", "amount must be positive")
    yield* right(motoReference(b))
    const original = yield* txnFor(shared, caller, originalGuid)
    const terminal = yield* virtualTerminal(shared, caller)
    const txn = yield* right(
      Gateway.refundLinked(shared.store, {
        originalGuid,
        merchantId: caller.merchant.id,
        terminal,
        operation: "moToRefund",
        amount,
        currency: code,
        now: shared.now(),
        customerReference: b.customerReference
      })
    )
    return motoResponse(shared, txn, original)
  })

const motoReversal = (shared: Shared) =>
  Effect.fn("Simulator.motoReversal")(function* (caller: Caller, body: unknown) {
    const b = yield* right(bodyObject(body))
    const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
    const original = yield* txnFor(shared, caller, originalGuid)
    const terminal = yield* virtualTerminal(shared, caller)
    const txn = yield* right(
      Gateway.reverse(shared.store, {
        originalGuid,
        merchant: caller.merchant,
        terminal,
        operation: "moToReversal",
        type: "MOTO_REVERSAL",
        amount: undefined,
        currency: undefined,
        now: shared.now()
      })
    )
    return motoResponse(shared, txn, original)
  })

/** The MOTO endpoints. */
export const make = (shared: Shared): Pick<SimulatorService, "motoSale" | "motoRefund" | "motoReversal"> => ({
  motoSale: motoSale(shared),
  motoRefund: motoRefund(shared),
  motoReversal: motoReversal(shared)
})
