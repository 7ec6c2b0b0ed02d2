/**
 * The gateway's endpoints that act on an earlier transaction without a terminal: tip
 * adjustment, deferred tokenization, reversal, and the pre-authorization increase and
 * capture (merchant keys only). Amounts are decimal strings in major units.
 */
import * as Effect from "effect/Effect"
import type { Caller, Json, SimulatorService } from "./service.js"
import { Forbidden, invalid, InvalidGuid, rule, type ValidationFailed } from "../SimulatorError.js"
import * as Gateway from "./gateway.js"
import { isGuid } from "./ids.js"
import { txnFor, virtualTerminal } from "./lookups.js"
import type { Txn } from "./model.js"
import { formatMajor } from "./money.js"
import * as Results from "./results.js"
import type { Shared } from "./shared.js"
import * as Validate from "./validate.js"
import { bodyObject, right } from "./validate.js"

const requireMerchantKey = (caller: Caller) =>
  caller.kind === "merchant"
    ? Effect.void
    : Effect.fail(new Forbidden({ message: "A merchant API key is required: partner keys are refused" }))

const gatewayObject = (shared: Shared, original: Txn, txn: Txn): Json => ({
  httpStatus: 200,
  customFields: {},
  acquirerTid: shared.store.terminals.get(original.terminalSerial)?.tid ?? "",
  actionCode: "000",
  agreementNumber: original.terminalSerial,
  approvalCode: original.approvalCode,
  batchNumber: String(original.batch),
  cardTypeName: original.card?.scheme ?? "",
  currency: original.currency,
  expiryDateMMYY: original.card?.expiryMMYY ?? "",
  holdAmount: formatMajor(original.hold, original.exponent),
  issuerResponseCode: "00",
  issuerResponseText: "Approved",
  maskedCardNumber: original.card === undefined ? "" : Results.maskPan(original.card.pan),
  nonce: shared.store.ids.hex(16),
  originalAmount: formatMajor(original.amount, original.exponent),
  preAuthorizationGuid: original.guid,
  serverDateTime: Results.compactTimestamp(shared.now()),
  terminalDateTime: Results.compactTimestamp(shared.now()),
  transNumber: txn.rrn
})

const tipAdjustment = (shared: Shared) =>
  Effect.fn("Simulator.tipAdjustment")(function* (caller: Caller, guid: string, body: unknown) {
    if (!isGuid(guid)) return yield* new InvalidGuid({ guid })
    const txn = Gateway.find(shared.store, caller.merchant.id, guid)
    if (txn === undefined) return yield* new InvalidGuid({ guid })
    // Every tip adjustment rejection is a 400 (spec 7), a malformed body or amount included.
    const asRule = (e: ValidationFailed) => rule("INVALID_AMOUNT", e.message, "1043")
    const b = yield* right(bodyObject(body)).pipe(Effect.mapError(asRule))
    const tip = yield* right(
      Validate.majorAmount(b, "amount", txn.exponent, { required: true, allowNumber: true })
    ).pipe(Effect.mapError(asRule))
    yield* right(Gateway.adjustTip(shared.store, txn, tip ?? 0n))
    return { statusMessage: "Tip adjusted" }
  })

const deferredToken = (shared: Shared) =>
  Effect.fn("Simulator.deferredToken")(function* (caller: Caller, guid: string) {
    const txn = yield* txnFor(shared, caller, guid)
    const token = yield* right(Gateway.deferredToken(shared.store, txn, shared.now()))
    return Results.tokenizationResponse(txn, token, shared.now(), shared.store.ids.uuidV4())
  })

const reversal = (shared: Shared) =>
  Effect.fn("Simulator.reversal")(function* (caller: Caller, body: unknown) {
    const b = yield* right(bodyObject(body))
    const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
    const original = yield* txnFor(shared, caller, originalGuid)
    const amount = yield* right(Validate.majorAmount(b, "amount", original.exponent, { required: false }))
    let currency: string | undefined
    if (amount !== undefined) currency = (yield* right(Validate.currencyField(b, "currency"))).code
    const terminal =
      shared.store.terminals.get(original.terminalSerial) ?? (yield* virtualTerminal(shared, caller))
    const type = Gateway.preAuthLike.has(original.operation)
      ? "PRE_AUTHORIZATION_REVERSAL"
      : original.operation.startsWith("moTo")
        ? "MOTO_REVERSAL"
        : original.operation === "refund"
          ? "VOID_REFUND"
          : "CANCEL_SALE"
    const txn = yield* right(
      Gateway.reverse(shared.store, {
        originalGuid,
        merchant: caller.merchant,
        terminal,
        operation: "reversal",
        type,
        amount,
        currency,
        now: shared.now()
      })
    )
    const token =
      original.card === undefined ? "" : Gateway.tokenFor(shared.store, caller.merchant.id, original.card)
    return {
      ...Results.tokenizationResponse(original, token, shared.now(), txn.guid),
      reversalGuid: txn.guid
    }
  })

const preAuthIncrease = (shared: Shared) =>
  Effect.fn("Simulator.preAuthIncrease")(function* (caller: Caller, body: unknown) {
    yield* requireMerchantKey(caller)
    const b = yield* right(bodyObject(body))
    const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
    if (b.increaseAmount === undefined || b.increaseAmount === null || b.increaseAmount === "")
      return yield* invalid("increaseAmount", "increaseAmount is required")
    const original = yield* txnFor(shared, caller, originalGuid)
    const delta = yield* right(
      Validate.majorAmount(b, "increaseAmount", original.exponent, { required: true })
    )
    const tip = yield* right(Validate.majorAmount(b, "tipAmount", original.exponent, { required: false }))
    const subtract = b.subtract === "1" || b.subtract === 1
    const signed = subtract ? -(delta ?? 0n) : (delta ?? 0n)
    const { txn } = yield* right(
      Gateway.increase(shared.store, {
        merchant: caller.merchant,
        originalGuid,
        delta: signed,
        tip: tip ?? 0n,
        now: shared.now(),
        operation: "preAuthorizationIncrease"
      })
    )
    return {
      ...gatewayObject(shared, original, txn),
      ...(b.customerReference === undefined ? {} : { customerReference: b.customerReference }),
      increaseAmount: formatMajor(signed, original.exponent),
      preAuthorizationIncreaseGuid: txn.guid
    }
  })

const preAuthCapture = (shared: Shared) =>
  Effect.fn("Simulator.preAuthCapture")(function* (caller: Caller, body: unknown) {
    yield* requireMerchantKey(caller)
    const b = yield* right(bodyObject(body))
    const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
    if (b.capturedAmount === undefined || b.capturedAmount === null || b.capturedAmount === "")
      return yield* invalid("capturedAmount", "capturedAmount is required")
    const original = yield* txnFor(shared, caller, originalGuid)
    const amount = yield* right(
      Validate.majorAmount(b, "capturedAmount", original.exponent, { required: true })
    )
    const tip = yield* right(Validate.majorAmount(b, "tipAmount", original.exponent, { required: false }))
    const { txn } = yield* right(
      Gateway.capture(shared.store, {
        merchant: caller.merchant,
        originalGuid,
        amount: amount ?? 0n,
        tip: tip ?? 0n,
        now: shared.now(),
        operation: "preAuthorizationCapture"
      })
    )
    return {
      ...gatewayObject(shared, original, txn),
      ...(b.customerReference === undefined ? {} : { customerReference: b.customerReference }),
      capturedAmount: formatMajor(txn.approved, original.exponent),
      preAuthorizationCaptureGuid: txn.guid
    }
  })

/** The gateway's endpoints on an earlier transaction. */
export const make = (
  shared: Shared
): Pick<
  SimulatorService,
  "tipAdjustment" | "deferredToken" | "reversal" | "preAuthIncrease" | "preAuthCapture"
> => ({
  tipAdjustment: tipAdjustment(shared),
  deferredToken: deferredToken(shared),
  reversal: reversal(shared),
  preAuthIncrease: preAuthIncrease(shared),
  preAuthCapture: preAuthCapture(shared)
})
