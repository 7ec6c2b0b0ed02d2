import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { reference, withSimulator } from "./support.js"

describe("transaction status", () => {
  it.live(
    "selects first (default), last, all and a 1-based index; 404 for an unknown reference or selector",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          const sale = yield* h.run({
            operation: "sale",
            amount: "5000",
            currency: "EUR",
            transactionReference: ref
          })
          const guid = sale.json.efttransactionID
          const refund = yield* h.run({
            operation: "refund",
            amount: "2000",
            currency: "EUR",
            originalTransactionId: guid
          })
          expect(refund.json.finStatus).toBe("AUTHORISED")
          const path = `/transactions/${ref}/status`
          const first = yield* h.status(path)
          expect(first.json.type).toBe("SALE")
          expect(first.json.efttimestamp).toMatch(/^\d{17}$/)
          expect((yield* h.status(`${path}/first`)).json).toEqual(first.json)
          const last = yield* h.status(`${path}/last`)
          expect(last.json.type).toBe("REFUND")
          expect(last.json.requestedAmount).toBe(2000)
          const all = yield* h.status(`${path}/all`)
          expect(all.json.map((r: { type: string }) => r.type)).toEqual(["SALE", "REFUND"])
          expect((yield* h.status(`${path}/2`)).json).toEqual(last.json)
          expect((yield* h.status(`${path}/1`)).json).toEqual(first.json)
          for (const bad of ["3", "0", "-1", "newest"]) {
            const reply = yield* h.status(`${path}/${bad}`)
            expect(reply.status).toBe(404)
            expect(reply.json.error.statusCode).toBe(404)
          }
          expect((yield* h.status(`/transactions/${reference()}/status`)).status).toBe(404)
          expect((yield* h.status(`/transactions/not-a-uuid/status`)).status).toBe(404)
          expect((yield* h.status(path, "wrong-key")).status).toBe(403)
          yield* h.admin("POST", "/merchants", { id: "M2", apiKey: "k2" })
          expect((yield* h.status(path, "k2")).status).toBe(404)
        })
      )
  )

  it.live(
    "a transaction never presented to the gateway is NOT FOUND, and stays so after 90 s: not charged",
    () =>
      withSimulator({ timings: { WaitingForCard: 200_000 } }, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          const accepted = yield* h.send({
            operation: "sale",
            amount: "1000",
            currency: "EUR",
            transactionReference: ref
          })
          expect((yield* h.status(`/transactions/${ref}/status`)).status).toBe(404)
          yield* h.advance(60_000)
          expect((yield* h.status(`/transactions/${ref}/status`)).status).toBe(404)
          yield* h.advance(31_000)
          yield* h.settle
          expect((yield* h.status(`/transactions/${ref}/status`)).status).toBe(404)
          const result = yield* h.main(`/transaction-result/${accepted.json.transactionResultId}`)
          expect(result.json.finStatus).toBe("FAILED")
          expect((yield* h.counters()).charges).toBe(0)
          expect((yield* h.counters()).processed).toBe(0)
        })
      )
  )

  it.live(
    "a card presented within the window reaches the gateway: NOT FOUND before, IN_PROGRESS, then final",
    () =>
      withSimulator({ timings: { WaitingForCard: 30_000, WaitingHostReceive: 10_000 } }, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          yield* h.send({ operation: "sale", amount: "1000", currency: "EUR", transactionReference: ref })
          expect((yield* h.status(`/transactions/${ref}/status`)).status).toBe(404)
          yield* h.advance(30_000)
          const inProgress = (yield* h.statusEventually(`/transactions/${ref}/status`, 200)).json
          expect(inProgress.finStatus).toBe("IN_PROGRESS")
          yield* h.advance(10_000)
          yield* h.settle
          expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("AUTHORISED")
        })
      )
  )
})

describe("finStatus evolution", () => {
  it.live(
    "the first row is current (REFUNDED after a refund, AUTHORISED again after the refund's reversal); later rows are frozen",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          const sale = yield* h.run({
            operation: "sale",
            amount: "5000",
            currency: "EUR",
            transactionReference: ref
          })
          const refund = yield* h.run({
            operation: "refund",
            amount: "5000",
            currency: "EUR",
            originalTransactionId: sale.json.efttransactionID
          })
          const path = `/transactions/${ref}/status`
          expect((yield* h.status(path)).json.finStatus).toBe("REFUNDED")
          const reversal = yield* h.run({
            operation: "refundReversal",
            amount: "5000",
            currency: "EUR",
            originalTransactionId: refund.json.efttransactionID
          })
          expect(reversal.json.finStatus).toBe("AUTHORISED")
          const all = (yield* h.status(`${path}/all`)).json
          expect(all.map((r: { finStatus: string }) => r.finStatus)).toEqual([
            "AUTHORISED",
            "AUTHORISED",
            "AUTHORISED"
          ])
          expect(all.map((r: { type: string }) => r.type)).toEqual(["SALE", "REFUND", "VOID_REFUND"])
        })
      )
  )

  it.live(
    "a pre-authorization reads CAPTURED after capture and AUTHORISED again after the capture is reversed",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          const preauth = yield* h.run({
            operation: "preAuthorization",
            amount: "10000",
            currency: "EUR",
            transactionReference: ref
          })
          expect(preauth.json.finStatus).toBe("AUTHORISED")
          const guid = preauth.json.efttransactionID
          const path = `/transactions/${ref}/status`
          expect((yield* h.status(path)).json.holdAmount).toBe(10000)
          const capture = yield* h.run({
            operation: "preAuthorizationCapture",
            amount: "9000",
            currency: "EUR",
            originalTransactionId: guid
          })
          expect(capture.json.finStatus).toBe("AUTHORISED")
          const captured = yield* h.status(path)
          expect(captured.json.finStatus).toBe("CAPTURED")
          expect(captured.json.capturedAmount).toBe(9000)
          yield* h.run({ operation: "preAuthorizationReversal", originalTransactionId: guid })
          expect((yield* h.status(path)).json.finStatus).toBe("AUTHORISED")
          const all = (yield* h.status(`${path}/all`)).json
          // The spec's TransactionType has no pre-authorization values: SALE, SALE, VOID_SALE.
          expect(all.map((r: { type: string }) => r.type)).toEqual(["SALE", "SALE", "VOID_SALE"])
          expect(all[1].capturedAmount).toBe(9000)
          const again = yield* h.run({ operation: "preAuthorizationCapture", originalTransactionId: guid })
          expect(again.json.finStatus).toBe("AUTHORISED")
          expect((yield* h.status(path)).json.capturedAmount).toBe(10000)
          const twice = yield* h.run({ operation: "preAuthorizationCapture", originalTransactionId: guid })
          expect(twice.json.finStatus).toBe("DECLINED")
          expect(twice.json.errorMessage).toContain("already been captured")
        })
      )
  )
})
