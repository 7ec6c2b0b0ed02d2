import { describe, expect, it } from "@effect/vitest"
import { Identifiers, TransactionResult } from "@tillflow/core"
import { Effect, Either, Option, Schema } from "effect"

describe("Identifiers", () => {
  it.effect("a generated transactionReference is a fresh lower-case UUID v4", () =>
    Effect.gen(function* () {
      const refs = yield* Effect.all(Array.from({ length: 100 }, () => Identifiers.makeTransactionReference))
      for (const ref of refs)
        expect(ref).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(new Set(refs).size).toBe(100)
    })
  )

  it.each(["", "x".repeat(0)])("refuses an empty serial number %j", (s) => {
    expect(Either.isLeft(Schema.decodeUnknownEither(Identifiers.SerialNumber)(s))).toBe(true)
  })

  it.effect("the constructors brand a valid string: a sale's guid becomes a linked refund's original", () =>
    Effect.gen(function* () {
      const facts: { efttransactionID?: string } = {
        efttransactionID: "01236fc0-8192-11eb-9aca-ad4b0e95f241"
      }
      const guid: Identifiers.Guid = yield* Identifiers.guid(facts.efttransactionID)
      expect(guid).toBe("01236fc0-8192-11eb-9aca-ad4b0e95f241")
      expect(yield* Identifiers.transactionReference("6F1D1C2E-3A4B-4C5D-8E6F-7A8B9C0D1E2F")).toBe(
        "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
      )
      expect(yield* Identifiers.serialNumber("0821032398")).toBe("0821032398")
    })
  )

  it.effect(
    "the constructors refuse what is missing or malformed, saying what was wrong and what is allowed",
    () =>
      Effect.gen(function* () {
        const missing = yield* Effect.flip(Identifiers.guid(undefined))
        expect(missing).toMatchObject({ _tag: "InvalidIdentifier", identifier: "Guid" })
        expect(missing.message).toBe("a transaction guid is missing")
        const empty = yield* Effect.flip(Identifiers.guid(""))
        expect(empty.message).toContain("must not be empty")
        const reference = yield* Effect.flip(Identifiers.transactionReference("order-12"))
        expect(reference.identifier).toBe("TransactionReference")
        expect(reference.message).toContain('"order-12"')
        expect(reference.message).toContain("a transactionReference must be a UUID v4")
      })
  )
})

describe("TransactionResult helpers", () => {
  const decode = Schema.decodeUnknownSync(TransactionResult.TransactionResult)

  it("reads the reference of a result, ignoring the nil UUID and non-v4 strings", () => {
    expect(
      Option.getOrUndefined(
        TransactionResult.reference(decode({ transactionReference: "6F1D1C2E-3A4B-4C5D-8E6F-7A8B9C0D1E2F" }))
      )
    ).toBe("6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f")
    expect(
      Option.isNone(TransactionResult.reference(decode({ transactionReference: Identifiers.NIL_UUID })))
    ).toBe(true)
    expect(Option.isNone(TransactionResult.reference(decode({ transactionReference: "order-12" })))).toBe(
      true
    )
    expect(Option.isNone(TransactionResult.reference(decode({})))).toBe(true)
  })

  it.each([
    ["AUTHORISED", true],
    ["DECLINED", true],
    ["CAPTURED", true],
    ["UNDEFINED", false],
    ["IN_PROGRESS", false],
    ["SOMETHING_NEW", false]
  ])("finStatus %s is final: %s", (finStatus, final) => {
    expect(TransactionResult.isFinal(decode({ finStatus }))).toBe(final)
  })

  it("a result without finStatus is not final", () => {
    expect(TransactionResult.isFinal(decode({}))).toBe(false)
  })
})

describe("Identifiers.Guid", () => {
  const decode = Schema.decodeUnknownEither(Identifiers.Guid)

  it.each(["01236fc0-8192-11eb-9aca-ad4b0e95f241", "6a4f1b0e9d7c4e2a", "g-1", "A_b.c-9"])(
    "the guid %s is a path segment: accepted",
    (guid) => {
      expect(Either.isRight(decode(guid))).toBe(true)
    }
  )

  it.each(["../../x", "abc/def", "..", ".hidden", "a b", "a?b=c", "a#b", "a%2Fb", "", "x".repeat(129)])(
    "the guid %j would not be one path segment of the service's URL: refused",
    (guid) => {
      expect(Either.isLeft(decode(guid))).toBe(true)
    }
  )
})
