import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Harness } from "./support.js"
import { reference, withSimulator } from "./support.js"

const DAY = 86_400_000

const paidSale = (h: Harness, amount = "5000", extra: Record<string, unknown> = {}) =>
  Effect.map(
    h.run({
      operation: "sale",
      amount,
      currency: "EUR",
      transactionReference: reference(),
      duplicate_check: false,
      ...extra
    }),
    (r) => r.json as { efttransactionID: string; transactionReference: string; cardToken?: string }
  )

const closeBatch = (h: Harness) =>
  h.main("/batch/close", { serialNumber: h.serial, deviceType: h.type, batchNumber: "1" })

describe("tip adjustment", () => {
  it.live("adjusts a sale's tip from a decimal string or a number; the last adjustment wins", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const sale = yield* paidSale(h)
        const first = yield* h.main(`/transactions/${sale.efttransactionID}/tip-adjustment`, {
          amount: "5.25"
        })
        expect(first.status).toBe(200)
        expect(first.json.statusMessage).toBeTypeOf("string")
        const path = `/transactions/${sale.transactionReference}/status`
        expect((yield* h.status(path)).json.tipAmount).toBe(525)
        const second = yield* h.main(`/transactions/${sale.efttransactionID}/tip-adjustment`, { amount: 3 })
        expect(second.status).toBe(200)
        const status = (yield* h.status(path)).json
        expect(status.tipAmount).toBe(300)
        expect(status.totalAmount).toBe(5300)
      })
    )
  )

  it.live("refuses a non-sale, a batched sale and an invalid guid with 400", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const sale = yield* paidSale(h)
        const refund = yield* h.run({
          operation: "refund",
          amount: "100",
          currency: "EUR",
          originalTransactionId: sale.efttransactionID
        })
        const onRefund = yield* h.main(`/transactions/${refund.json.efttransactionID}/tip-adjustment`, {
          amount: "1.00"
        })
        expect(onRefund.status).toBe(400)
        expect(onRefund.json.error.code).toBe("NOT_A_SALE")
        const bad = yield* h.main(`/transactions/nonsense/tip-adjustment`, { amount: "1.00" })
        expect(bad.status).toBe(400)
        expect(bad.json).toEqual({
          error: { statusCode: 400, name: "BadRequestError", message: "Invalid guid [nonsense]" }
        })
        const badAmount = yield* h.main(`/transactions/${sale.efttransactionID}/tip-adjustment`, {
          amount: "1.234"
        })
        expect(badAmount.status).toBe(400)
        yield* closeBatch(h)
        const batched = yield* h.main(`/transactions/${sale.efttransactionID}/tip-adjustment`, {
          amount: "1.00"
        })
        expect(batched.status).toBe(400)
        expect(batched.json.error.code).toBe("ALREADY_BATCHED")
      })
    )
  )
})

describe("deferred tokenization", () => {
  it.live(
    "tokenizes an eligible transaction within 12 months, refuses an ineligible one and one older than 12 months",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const sale = yield* paidSale(h)
          const token = yield* h.main(`/transactions/${sale.efttransactionID}/token`)
          expect(token.status).toBe(200)
          expect(token.json.cardToken).toMatch(/^tok_/)
          expect(token.json.transactionReference).toBe(sale.efttransactionID)
          expect(token.json.serverDateTime).toMatch(/^\d{17}$/)
          const preauth = yield* h.run({
            operation: "preAuthorization",
            amount: "100",
            currency: "EUR",
            transactionReference: reference()
          })
          const ineligible = yield* h.main(`/transactions/${preauth.json.efttransactionID}/token`)
          expect(ineligible.status).toBe(400)
          expect(ineligible.json.error.code).toBe("NOT_TOKENIZABLE")
          yield* h.advance(364 * DAY)
          expect((yield* h.main(`/transactions/${sale.efttransactionID}/token`)).status).toBe(200)
          yield* h.advance(2 * DAY)
          const late = yield* h.main(`/transactions/${sale.efttransactionID}/token`)
          expect(late.status).toBe(400)
          expect(late.json.error.code).toBe("TOKENIZATION_WINDOW_CLOSED")
        })
      )
  )
})

describe("reversal", () => {
  it.live(
    "reverses a sale in full (the sale then reads CANCELLED); refuses partial reversal unless the acquirer allows it",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const sale = yield* paidSale(h)
          const partial = yield* h.main("/reversal", {
            originalGuid: sale.efttransactionID,
            amount: "10.00",
            currency: "EUR"
          })
          expect(partial.status).toBe(400)
          expect(partial.json.error.code).toBe("PARTIAL_REVERSAL_NOT_SUPPORTED")
          yield* h.admin("PATCH", `/merchants/${h.info.merchantId}`, {
            flags: { partialReversalAllowed: true }
          })
          const allowed = yield* h.main("/reversal", {
            originalGuid: sale.efttransactionID,
            amount: "10.00",
            currency: "EUR"
          })
          expect(allowed.status).toBe(200)
          expect(allowed.json.transactionReference).toBe(sale.efttransactionID)
          const full = yield* h.main("/reversal", { originalGuid: sale.efttransactionID })
          expect(full.status).toBe(200)
          expect((yield* h.status(`/transactions/${sale.transactionReference}/status`)).json.finStatus).toBe(
            "CANCELLED"
          )
          const again = yield* h.main("/reversal", { originalGuid: sale.efttransactionID })
          expect(again.status).toBe(400)
          expect((yield* h.main("/reversal", {})).status).toBe(422)
          expect((yield* h.counters()).reversals).toBe(2)
        })
      )
  )

  it.live("refuses a reversal after 24 h or after the batch is closed", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const old = yield* paidSale(h, "1000")
        yield* h.advance(DAY + 1)
        const late = yield* h.main("/reversal", { originalGuid: old.efttransactionID })
        expect(late.status).toBe(400)
        expect(late.json.error.code).toBe("REVERSAL_WINDOW_CLOSED")
        const fresh = yield* paidSale(h, "2000")
        yield* closeBatch(h)
        const batched = yield* h.main("/reversal", { originalGuid: fresh.efttransactionID })
        expect(batched.status).toBe(400)
        expect(batched.json.error.code).toBe("BATCH_CLOSED")
      })
    )
  )
})

describe("pre-authorization without a terminal", () => {
  it.live("a capture can be reversed before its batch closes (back to AUTHORISED), not after", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const ref = reference()
        const preauth = yield* h.run({
          operation: "preAuthorization",
          amount: "10000",
          currency: "EUR",
          transactionReference: ref
        })
        const guid = preauth.json.efttransactionID
        yield* h.main("/preauthorization/capture", { originalGuid: guid, capturedAmount: "50.00" })
        const undone = yield* h.main("/reversal", { originalGuid: guid })
        expect(undone.status).toBe(200)
        expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("AUTHORISED")
        yield* h.main("/preauthorization/capture", { originalGuid: guid, capturedAmount: "60.00" })
        yield* closeBatch(h)
        const settled = yield* h.main("/reversal", { originalGuid: guid })
        expect(settled.status).toBe(400)
        expect(settled.json.error.code).toBe("BATCH_CLOSED")
        expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("CAPTURED")
      })
    )
  )

  it.live("increases and decreases the hold, captures once within tolerance, refuses above it", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const ref = reference()
        const preauth = yield* h.run({
          operation: "preAuthorization",
          amount: "10000",
          currency: "EUR",
          transactionReference: ref
        })
        const guid = preauth.json.efttransactionID
        const up = yield* h.main("/preauthorization/increase", {
          originalGuid: guid,
          increaseAmount: "20.00"
        })
        expect(up.status).toBe(200)
        expect(up.json.holdAmount).toBe("120.00")
        expect(up.json.preAuthorizationIncreaseGuid).toBeTypeOf("string")
        const down = yield* h.main("/preauthorization/increase", {
          originalGuid: guid,
          increaseAmount: "10.00",
          subtract: "1"
        })
        expect(down.json.holdAmount).toBe("110.00")
        expect((yield* h.status(`/transactions/${ref}/status`)).json.holdAmount).toBe(11000)
        // Visa, MCC 7011 (lodging): 15 % tolerance over 110.00 is 126.50.
        const over = yield* h.main("/preauthorization/capture", {
          originalGuid: guid,
          capturedAmount: "126.51"
        })
        expect(over.status).toBe(400)
        expect(over.json.error.code).toBe("CAPTURE_ABOVE_TOLERANCE")
        const ok = yield* h.main("/preauthorization/capture", {
          originalGuid: guid,
          capturedAmount: "120.00",
          tipAmount: "6.50"
        })
        expect(ok.status).toBe(200)
        expect(ok.json.capturedAmount).toBe("126.50")
        expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("CAPTURED")
        const twice = yield* h.main("/preauthorization/capture", {
          originalGuid: guid,
          capturedAmount: "1.00"
        })
        expect(twice.status).toBe(400)
        expect(twice.json.error.code).toBe("ALREADY_CAPTURED")
        const unknown = yield* h.main("/preauthorization/capture", {
          originalGuid: "nope",
          capturedAmount: "1.00"
        })
        expect(unknown.status).toBe(400)
      })
    )
  )

  it.live("answers 422 VALIDATION_FAILED for a missing field and 403 to a partner key", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const preauth = yield* h.run({
          operation: "preAuthorization",
          amount: "10000",
          currency: "EUR",
          transactionReference: reference()
        })
        const guid = preauth.json.efttransactionID
        const missing = yield* h.main("/preauthorization/capture", { originalGuid: guid })
        expect(missing.status).toBe(422)
        expect(missing.json.error.code).toBe("VALIDATION_FAILED")
        expect((yield* h.main("/preauthorization/increase", { originalGuid: guid })).status).toBe(422)
        const partner = (yield* h.admin("POST", `/merchants/${h.info.merchantId}/keys`, { kind: "partner" }))
          .json.key
        expect((yield* h.main("/devices", undefined, partner)).status).toBe(200)
        const refused = yield* h.main(
          "/preauthorization/capture",
          { originalGuid: guid, capturedAmount: "10.00" },
          partner
        )
        expect(refused.status).toBe(403)
        expect(
          (yield* h.main(
            "/preauthorization/increase",
            { originalGuid: guid, increaseAmount: "1.00" },
            partner
          )).status
        ).toBe(403)
      })
    )
  )

  it.live("refuses a capture after the scheme's window (Mastercard: 30 days)", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        yield* h.admin("PATCH", `/terminals/${h.serial}`, {
          card: { pan: "5500000000000004", scheme: "MASTERCARD" }
        })
        const preauth = yield* h.run({
          operation: "preAuthorization",
          amount: "10000",
          currency: "EUR",
          transactionReference: reference()
        })
        yield* h.advance(31 * DAY)
        const late = yield* h.main("/preauthorization/capture", {
          originalGuid: preauth.json.efttransactionID,
          capturedAmount: "100.00"
        })
        expect(late.status).toBe(400)
        expect(late.json.error.code).toBe("PREAUTH_EXPIRED")
      })
    )
  )
})

describe("MOTO without a terminal", () => {
  it.live("sells on a stored token, refunds up to the sale in its currency, and reverses within 24 h", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const tokenized = yield* h.run({
          operation: "saleAndTokenizeCard",
          amount: "100",
          currency: "EUR",
          transactionReference: reference()
        })
        const cardToken = tokenized.json.cardToken
        const ref = reference()
        const sale = yield* h.main("/moto/sale", {
          cardToken,
          amount: "50.00",
          currency: "EUR",
          transactionReference: ref
        })
        expect(sale.status).toBe(200)
        expect(sale.json.finStatus).toBe("AUTHORISED")
        const guid = sale.json.guid
        const tooMuch = yield* h.main("/moto/refund", {
          originalGuid: guid,
          amount: "50.01",
          currency: "EUR"
        })
        expect(tooMuch.status).toBe(400)
        expect(tooMuch.json.error.code).toBe("AMOUNT_TOO_HIGH")
        const otherCurrency = yield* h.main("/moto/refund", {
          originalGuid: guid,
          amount: "10.00",
          currency: "USD"
        })
        expect(otherCurrency.status).toBe(400)
        expect(otherCurrency.json.error.code).toBe("CURRENCY_MISMATCH")
        const refund = yield* h.main("/moto/refund", { originalGuid: guid, amount: "20.00", currency: "EUR" })
        expect(refund.status).toBe(200)
        expect(refund.json.originalGuid).toBe(guid)
        expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("REFUNDED")
        const second = yield* h.main("/moto/sale", { cardToken, amount: "30.00", currency: "EUR" })
        const reversal = yield* h.main("/moto/reversal", { originalGuid: second.json.guid })
        expect(reversal.status).toBe(200)
        expect(reversal.json.type).toBe("MOTO_REVERSAL")
        const third = yield* h.main("/moto/sale", { cardToken, amount: "31.00", currency: "EUR" })
        yield* h.advance(DAY + 1)
        const late = yield* h.main("/moto/reversal", { originalGuid: third.json.guid })
        expect(late.status).toBe(400)
        expect(late.json.error.code).toBe("REVERSAL_WINDOW_CLOSED")
        const counters = (yield* h.admin("GET", "/counters")).json.merchants[h.info.merchantId]
        expect(counters.charges).toBe(4)
      })
    )
  )

  it.live(
    "requires a token (422), refuses an unknown one (400), answers 3107 when the merchant requires a security code",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const missing = yield* h.main("/moto/sale", { amount: "50.00", currency: "EUR" })
          expect(missing.status).toBe(422)
          const unknown = yield* h.main("/moto/sale", {
            cardToken: "tok_unknown",
            amount: "50.00",
            currency: "EUR"
          })
          expect(unknown.status).toBe(400)
          const tokenized = yield* h.run({
            operation: "saleAndTokenizeCard",
            amount: "100",
            currency: "EUR",
            transactionReference: reference()
          })
          yield* h.admin("PATCH", `/merchants/${h.info.merchantId}`, {
            flags: { securityCodeRequired: true }
          })
          const needsCode = yield* h.main("/moto/sale", {
            cardToken: tokenized.json.cardToken,
            amount: "50.00",
            currency: "EUR"
          })
          expect(needsCode.status).toBe(400)
          expect(needsCode.json.error.code).toBe("SECURITY_CODE_REQUIRED")
          expect(needsCode.json.error.details.errorCode).toBe("3107")
          const declined = yield* h.admin("PATCH", `/merchants/${h.info.merchantId}`, {
            flags: { securityCodeRequired: false }
          })
          expect(declined.status).toBe(200)
          const trigger = yield* h.main("/moto/sale", {
            cardToken: tokenized.json.cardToken,
            amount: "37.79",
            currency: "EUR"
          })
          expect(trigger.json.finStatus).toBe("DECLINED")
          expect(trigger.json.issuerResponseCode).toBe("01")
        })
      )
  )

  it.live("refuses a MOTO reversal after the batch is closed", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const tokenized = yield* h.run({
          operation: "saleAndTokenizeCard",
          amount: "100",
          currency: "EUR",
          transactionReference: reference()
        })
        const sale = yield* h.main("/moto/sale", {
          cardToken: tokenized.json.cardToken,
          amount: "20.00",
          currency: "EUR"
        })
        const state = (yield* h.admin("GET", "/state")).json
        const vt = state.merchants[0].virtualTerminal
        const closed = yield* h.main("/batch/close", {
          serialNumber: vt,
          deviceType: "VIRTUAL",
          batchNumber: "1"
        })
        expect(closed.status).toBe(200)
        const refused = yield* h.main("/moto/reversal", { originalGuid: sale.json.guid })
        expect(refused.status).toBe(400)
        expect(refused.json.error.code).toBe("BATCH_CLOSED")
      })
    )
  )
})

describe("batches", () => {
  it.live("closes a batch, summarises and details it; a closed batch cannot be closed again", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const a = yield* paidSale(h, "5000")
        yield* paidSale(h, "2500")
        yield* h.run({
          operation: "refund",
          amount: "1000",
          currency: "EUR",
          originalTransactionId: a.efttransactionID
        })
        const open = yield* h.main("/batch/summary", {
          serialNumber: h.serial,
          deviceType: h.type,
          batchNumber: "1"
        })
        expect(open.json.batchStatus).toBe("OPEN")
        const closed = yield* closeBatch(h)
        expect(closed.status).toBe(200)
        expect(closed.json.batchStatus).toBe("CLOSED")
        const summary = yield* h.main("/batch/summary", {
          serialNumber: h.serial,
          deviceType: h.type,
          batchNumber: "1"
        })
        expect(summary.json.batchStatus).toBe("CLOSED")
        expect(summary.json.transactionCount).toBe("3")
        expect(summary.json.netAmount).toBe("65.00")
        const entries = Object.fromEntries(
          summary.json.customFields.entry.map((e: { key: string; value: string }) => [e.key, e.value])
        )
        expect(entries.saleCount).toBe("2")
        expect(entries.refundCount).toBe("1")
        const detail = yield* h.main("/batch/detail", {
          serialNumber: h.serial,
          deviceType: h.type,
          batchNumber: "1"
        })
        expect(detail.json.details.map((d: { amount: string }) => d.amount)).toEqual([
          "50.00",
          "25.00",
          "10.00"
        ])
        const again = yield* closeBatch(h)
        expect(again.status).toBe(400)
        const next = yield* paidSale(h, "700")
        expect((yield* h.status(`/transactions/${next.transactionReference}/status`)).json.batchNumber).toBe(
          "2"
        )
        expect((yield* h.main("/batch/close", { serialNumber: h.serial, deviceType: h.type })).status).toBe(
          422
        )
      })
    )
  )
})
