/**
 * Personal data in a recorded result (issue 31): the `cardHolderName` a terminal reports and
 * the `moneyRemittanceOptions` the service echoes are stored wrapped
 * (`TransactionResult.Stored`, `StoredStatus`, `storedJson`), read back from all three forms
 * a log holds — the wrapper, the plain value older logs hold, the digest a removal leaves
 * (absent) — and a result without them is stored exactly as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { CallbackRegistration, TransactionResult } from "@tillflow/core"
import { HashChain } from "@tillflow/engine"
import * as Schema from "effect/Schema"

const remittance = { fullName: "Ada Lovelace", countryCode: "GBR" }
const wire = {
  finStatus: "AUTHORISED",
  transactionReference: "6f1c2a4e-9b8d-4c3e-a1f2-0b9c8d7e6f5a",
  totalAmount: 1050,
  currency: "EUR",
  maskedCardNumber: "476173******0119",
  cardHolderName: "ADA LOVELACE",
  moneyRemittanceOptions: remittance
}
const { cardHolderName: _name, moneyRemittanceOptions: _options, ...impersonal } = wire

describe("personal data in a recorded result", () => {
  const result = Schema.decodeUnknownSync(TransactionResult.TransactionResult)(wire)
  const stored = Schema.encodeSync(TransactionResult.Stored)
  const read = Schema.decodeUnknownSync(TransactionResult.Stored)

  it("stores the cardholder's name and the remittance options wrapped, and reads all three forms", () => {
    const form = stored(result) as Record<string, unknown>
    expect(form["cardHolderName"]).toEqual({
      [HashChain.personalKey]: { salt: expect.any(String), value: "ADA LOVELACE" }
    })
    expect(form["moneyRemittanceOptions"]).toEqual({
      [HashChain.personalKey]: { salt: expect.any(String), value: remittance }
    })
    // Everything else is stored as the plain result encodes it.
    const plain = Schema.encodeSync(TransactionResult.TransactionResult)(result)
    expect(HashChain.personalValues(form)).toEqual(plain)
    // The wrapper, and the plain form of logs written before: the same result.
    expect(read(form)).toEqual(result)
    expect(read(wire)).toEqual(result)
    // Removed: absent, the rest intact.
    const erased = HashChain.erasePersonal(form)
    expect(JSON.stringify(erased)).not.toMatch(/LOVELACE|Lovelace|GBR/)
    expect(read(erased)).toEqual(Schema.decodeUnknownSync(TransactionResult.TransactionResult)(impersonal))
  })

  it("stores a result without personal members exactly as before (no wrapper, link version 1)", () => {
    const plainResult = Schema.decodeUnknownSync(TransactionResult.TransactionResult)(impersonal)
    expect(stored(plainResult)).toEqual(Schema.encodeSync(TransactionResult.TransactionResult)(plainResult))
    // The terminal's empty name and the service's null options are not personal data.
    const empty = { ...impersonal, cardHolderName: "", moneyRemittanceOptions: null }
    expect(TransactionResult.storedJson(empty)).toBe(empty)
  })

  it("stores a status-endpoint entry and a delivered result the same way", () => {
    const entry = Schema.decodeUnknownSync(TransactionResult.TransactionStatusResult)(wire)
    const form = Schema.encodeSync(TransactionResult.StoredStatus)(entry) as Record<string, unknown>
    expect(HashChain.mayHoldPersonal(JSON.stringify(form))).toBe(true)
    expect(Schema.decodeUnknownSync(TransactionResult.StoredStatus)(form)).toEqual(entry)
    const erased = HashChain.erasePersonal(form)
    expect(Schema.decodeUnknownSync(TransactionResult.StoredStatus)(erased)).not.toHaveProperty(
      "cardHolderName"
    )

    const delivered = { result, resultHash: "h", receivedAt: 1 }
    const step = Schema.encodeSync(CallbackRegistration.DeliveredResult)(delivered)
    expect(JSON.stringify(step)).toContain(HashChain.personalKey)
    // What the callback receiver records and resolves the deferred with decodes the same.
    const received = { result: TransactionResult.storedJson(wire), resultHash: "h", receivedAt: 1 }
    expect((received.result as Record<string, unknown>)["cardHolderName"]).toEqual({
      [HashChain.personalKey]: { salt: expect.any(String), value: "ADA LOVELACE" }
    })
    expect(Schema.decodeUnknownSync(CallbackRegistration.DeliveredResult)(received)).toEqual(delivered)
    expect(Schema.decodeUnknownSync(CallbackRegistration.DeliveredResult)(step)).toEqual(delivered)
  })
})
