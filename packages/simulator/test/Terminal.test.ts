import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { reference, withSimulator } from "./support.js"

const sale = (amount: string, extra: Record<string, unknown> = {}) => ({
  operation: "sale",
  amount,
  currency: "EUR",
  transactionReference: reference(),
  ...extra
})

describe("virtual terminals", () => {
  it.live("answers 1001 with the spec's error body while the terminal runs an operation", () =>
    withSimulator({ timings: { WaitingForCard: 60_000 } }, (h) =>
      Effect.gen(function* () {
        expect((yield* h.send(sale("1000"))).status).toBe(202)
        const terminal = yield* h.admin("GET", `/terminals/${h.serial}`)
        expect(terminal.json.busy).toBe(true)
        expect(terminal.json.step).toBe("WaitingForCard")
        const busy = yield* h.send(sale("2000"))
        expect(busy.status).toBe(400)
        expect(busy.json).toEqual({
          error: {
            statusCode: 400,
            name: "BadRequestError",
            message: { error: 1001, message: "Terminal is busy" }
          }
        })
        const other = h.info.terminals[1]
        const elsewhere = yield* h.main("/transactions", {
          ...sale("2000"),
          serial_number: other?.serial_number,
          terminal_type: other?.terminal_type
        })
        expect(elsewhere.status).toBe(202)
      })
    )
  )

  it.live("answers 1002 for an offline terminal and accepts again once it is back online", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        yield* h.admin("POST", `/terminals/${h.serial}/offline`)
        const offline = yield* h.send(sale("1000"))
        expect(offline.status).toBe(400)
        expect(offline.json.error.message.error).toBe(1002)
        expect((yield* h.counters()).accepted).toBe(0)
        yield* h.admin("POST", `/terminals/${h.serial}/online`)
        expect((yield* h.send(sale("1000"))).status).toBe(202)
      })
    )
  )

  it.live(
    "stops an operation waiting for the card: the stop is accepted and the result is CANCELLED, not charged",
    () =>
      withSimulator({ timings: { WaitingForCard: 60_000 } }, (h) =>
        Effect.gen(function* () {
          const accepted = yield* h.send(sale("1000"))
          const stop = yield* h.send({ operation: "stopCurrentTransaction" })
          expect(stop.status).toBe(202)
          yield* h.settle
          const result = yield* h.main(`/transaction-result/${accepted.json.transactionResultId}`)
          expect(result.json.finStatus).toBe("CANCELLED")
          const stopResult = yield* h.main(`/transaction-result/${stop.json.transactionResultId}`)
          expect(stopResult.json.type).toBe("CANCEL_TRX")
          expect((yield* h.counters()).charges).toBe(0)
        })
      )
  )

  it.live("refuses to stop at a host step with 1003, and when nothing runs", () =>
    withSimulator({ timings: { WaitingHostReceive: 60_000 } }, (h) =>
      Effect.gen(function* () {
        const idle = yield* h.send({ operation: "stopCurrentTransaction" })
        expect(idle.status).toBe(400)
        expect(idle.json.error.message.error).toBe(1003)
        const accepted = yield* h.send(sale("1000"))
        expect((yield* h.admin("GET", `/terminals/${h.serial}`)).json.step).toBe("WaitingHostReceive")
        const refused = yield* h.send({ operation: "stopCurrentTransaction" })
        expect(refused.status).toBe(400)
        expect(refused.json).toEqual({
          error: {
            statusCode: 400,
            name: "BadRequestError",
            message: { error: 1003, message: "stopCurrentTransaction is not possible at the present step" }
          }
        })
        const button = yield* h.admin("POST", `/terminals/${h.serial}/cancel`)
        expect(button.status).toBe(400)
        yield* h.advance(60_000)
        yield* h.settle
        const result = yield* h.main(`/transaction-result/${accepted.json.transactionResultId}`)
        expect(result.json.finStatus).toBe("AUTHORISED")
      })
    )
  )

  it.live("the terminal's cancel button at the PIN screen gives a CANCELLED result", () =>
    withSimulator({ timings: { PinInput: 60_000 } }, (h) =>
      Effect.gen(function* () {
        const accepted = yield* h.send(sale("1000"))
        expect((yield* h.admin("GET", `/terminals/${h.serial}`)).json.step).toBe("PinInput")
        expect((yield* h.admin("POST", `/terminals/${h.serial}/cancel`)).status).toBe(200)
        yield* h.settle
        const result = yield* h.main(`/transaction-result/${accepted.json.transactionResultId}`)
        expect(result.json.finStatus).toBe("CANCELLED")
      })
    )
  )
})

describe("trigger amounts", () => {
  const declines = [
    ["3779", "01"],
    ["3784", "05"],
    ["3793", "04"]
  ] as const
  for (const [amount, code] of declines) {
    it.live(`${amount} (37.${amount.slice(2)}) is declined with issuer response ${code}, not charged`, () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          const result = yield* h.run(sale(amount, { transactionReference: ref }))
          expect(result.json.finStatus).toBe("DECLINED")
          expect(result.json.issuerResponseCode).toBe(code)
          expect((yield* h.counters()).charges).toBe(0)
          expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("DECLINED")
        })
      )
    )
  }

  it.live("37.57 is partially approved: half authorised, the rest due", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const result = yield* h.run(sale("3757"))
        expect(result.json.finStatus).toBe("PARTIAL_APPROVAL")
        expect(result.json.requestedAmount).toBe(3757)
        expect(result.json.totalAmount).toBe(1878)
        expect(result.json.dueAmount).toBe(1879)
        expect((yield* h.counters()).charges).toBe(1)
      })
    )
  )

  it.live(
    "37.68 times out at the acquirer: IN_PROGRESS on the status host, then an UNDEFINED result and status",
    () =>
      withSimulator({ timings: { AcquirerTimeout: 30_000 } }, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          const accepted = yield* h.send(sale("3768", { transactionReference: ref }))
          const pending = yield* h.main(`/transaction-result/${accepted.json.transactionResultId}`)
          expect(pending.status).toBe(204)
          expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("IN_PROGRESS")
          yield* h.advance(30_000)
          yield* h.settle
          const result = yield* h.main(`/transaction-result/${accepted.json.transactionResultId}`)
          expect(result.json.finStatus).toBe("UNDEFINED")
          expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("UNDEFINED")
          expect((yield* h.counters()).charges).toBe(0)
        })
      )
  )

  it.live("any other amount is approved, and a currency without decimals has no trigger amounts", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        expect((yield* h.run(sale("1000"))).json.finStatus).toBe("AUTHORISED")
        expect((yield* h.run(sale("3779", { currency: "JPY", duplicate_check: false }))).json.finStatus).toBe(
          "AUTHORISED"
        )
        expect((yield* h.run(sale("37790", { currency: "BHD" }))).json.issuerResponseCode).toBe("01")
      })
    )
  )
})

describe("duplicate payment check", () => {
  it.live("cancels the same card paying the same amount again within 5 minutes", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        expect((yield* h.run(sale("2500"))).json.finStatus).toBe("AUTHORISED")
        const second = yield* h.run(sale("2500"))
        expect(second.json.finStatus).toBe("CANCELLED")
        expect(second.json.statusMessage).toBe("DuplicatePayment")
        expect((yield* h.counters()).charges).toBe(1)
        yield* h.advance(5 * 60_000 + 1)
        expect((yield* h.run(sale("2500"))).json.finStatus).toBe("AUTHORISED")
        expect((yield* h.counters()).charges).toBe(2)
      })
    )
  )

  it.live("compares with the same card's latest transaction, whatever other cards paid since", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        expect((yield* h.run(sale("2500"))).json.finStatus).toBe("AUTHORISED")
        const visa = { pan: "4761739001010010", scheme: "VISA" }
        yield* h.admin("PATCH", `/terminals/${h.serial}`, {
          card: { pan: "5500000000000004", scheme: "MASTERCARD" }
        })
        expect((yield* h.run(sale("2500"))).json.finStatus).toBe("AUTHORISED")
        expect((yield* h.run(sale("1200"))).json.finStatus).toBe("AUTHORISED")
        yield* h.admin("PATCH", `/terminals/${h.serial}`, { card: visa })
        const again = yield* h.run(sale("2500"))
        expect(again.json.finStatus).toBe("CANCELLED")
        expect(again.json.statusMessage).toBe("DuplicatePayment")
        // A cancelled duplicate charged nothing: the approved payment stays the card's latest.
        expect((yield* h.run(sale("2500"))).json.finStatus).toBe("CANCELLED")
        expect((yield* h.counters()).charges).toBe(3)
      })
    )
  )

  it.live("lets the duplicate through when duplicate_check is false, or when the cashier continues", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        yield* h.run(sale("2500"))
        expect((yield* h.run(sale("2500", { duplicate_check: false }))).json.finStatus).toBe("AUTHORISED")
        yield* h.admin("PATCH", `/terminals/${h.serial}`, { duplicateAnswer: "continue" })
        expect((yield* h.run(sale("2500"))).json.finStatus).toBe("AUTHORISED")
        expect((yield* h.counters()).charges).toBe(3)
        yield* h.admin("PATCH", `/terminals/${h.serial}`, {
          duplicateAnswer: "cancel",
          card: { pan: "5500000000000004", scheme: "MASTERCARD" }
        })
        expect((yield* h.run(sale("2500"))).json.finStatus).toBe("AUTHORISED")
      })
    )
  )
})

describe("utility operations", () => {
  it.live("saleAndTokenizeCard returns a card token, the same for the same card", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const first = yield* h.run({ ...sale("1000"), operation: "saleAndTokenizeCard" })
        expect(first.json.finStatus).toBe("AUTHORISED")
        expect(first.json.cardToken).toMatch(/^tok_/)
        const tokenize = yield* h.run({ operation: "tokenizeCard" })
        expect(tokenize.json.cardToken).toBe(first.json.cardToken)
        expect((yield* h.counters()).charges).toBe(1)
      })
    )
  )

  it.live("cardPan returns the full number only for a whitelisted card", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const masked = yield* h.run({ operation: "cardPan" })
        expect(masked.json.type).toBe("CARD_PAN")
        expect(masked.json.maskedCardNumber).toBe("476173******0010")
        expect(masked.json.unMaskedPan).toBeUndefined()
        yield* h.admin("PATCH", `/terminals/${h.serial}`, {
          card: { pan: "6009123412341234", whitelisted: true }
        })
        expect((yield* h.run({ operation: "cardPan" })).json.unMaskedPan).toBe("6009123412341234")
      })
    )
  )

  it.live("printReceipt is PROCESSED and pingDevice returns device information when asked", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        expect((yield* h.run({ operation: "printReceipt", receipt: "<html>hi</html>" })).json.finStatus).toBe(
          "PROCESSED"
        )
        const bare = yield* h.run({ operation: "pingDevice" })
        expect(bare.json.finStatus).toBe("PROCESSED")
        const info = yield* h.run({ operation: "pingDevice", returnDeviceInfo: true })
        expect(info.json.deviceStatus.applicationVersion).toBeTypeOf("string")
        expect(info.json.deviceStatus.sdkVersion).toBeTypeOf("string")
        expect(info.json.deviceStatus.serialNumber).toBe(h.serial)
        const missing = yield* h.send({ operation: "printReceipt" })
        expect(missing.status).toBe(422)
      })
    )
  )

  it.live("receipt URLs in results serve the receipt HTML", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const result = yield* h.run(sale("1234"))
        expect(result.json.merchantReceipt).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/receipts\//)
        const page = yield* Effect.promise(() => fetch(result.json.customerReceipt).then((r) => r.text()))
        expect(page).toContain("CUSTOMER COPY")
        expect(page).toContain("12.34 EUR")
        yield* h.admin("PATCH", `/terminals/${h.serial}`, { receiptsInline: true })
        expect((yield* h.run(sale("1235"))).json.merchantReceipt).toContain("<html>")
      })
    )
  )
})

describe("result polling", () => {
  it.live("answers 204 until the result is delivered, 200 with the result after, 404 for an unknown id", () =>
    withSimulator({ timings: { WaitingForCard: 10_000 } }, (h) =>
      Effect.gen(function* () {
        const accepted = yield* h.send(sale("1000"))
        expect(accepted.status).toBe(202)
        expect(accepted.json.transactionResultId).toMatch(new RegExp(`^${h.serial}-\\d+$`))
        const id = accepted.json.transactionResultId
        const early = yield* h.main(`/transaction-result/${id}`)
        expect(early.status).toBe(204)
        expect(early.text).toBe("")
        yield* h.advance(10_000)
        yield* h.settle
        const done = yield* h.main(`/transaction-result/${id}`)
        expect(done.status).toBe(200)
        expect(done.json.finStatus).toBe("AUTHORISED")
        expect(typeof done.json.efttimestamp).toBe("number")
        expect((yield* h.main(`/transaction-result/${id}`)).status).toBe(200)
        expect((yield* h.main(`/transaction-result/${h.serial}-1`)).status).toBe(404)
        yield* h.admin("POST", "/merchants", { id: "M2", apiKey: "k2" })
        expect((yield* h.main(`/transaction-result/${id}`, undefined, "k2")).status).toBe(404)
      })
    )
  )

  it.live("echoes the nil UUID when a request carries no transactionReference", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const ping = yield* h.send({ operation: "pingDevice" })
        expect(ping.json.transactionReference).toBe("00000000-0000-0000-0000-000000000000")
      })
    )
  )
})
