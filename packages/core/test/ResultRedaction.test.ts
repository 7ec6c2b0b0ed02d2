import { describe, expect, it } from "@effect/vitest"
import { CallbackRegistration, ResultRedaction, TransactionResult } from "@tillflow/core"
import { Redaction } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

describe("ResultRedaction", () => {
  it("removes fields the store refuses by name and says which", () => {
    const { value, redactedFields } = ResultRedaction.sanitise({
      finStatus: "PROCESSED",
      unMaskedPan: "6011000990139424",
      nested: { token: "abc", cardToken: "keep" }
    })
    expect(value).toEqual({ finStatus: "PROCESSED", nested: { cardToken: "keep" } })
    expect(redactedFields).toEqual(["$.unMaskedPan", "$.nested.token"])
    expect(Redaction.scan(value, "data")).toEqual(Option.none())
  })

  it("masks full card numbers in text and numbers, keeping six and four digits", () => {
    expect(ResultRedaction.maskCardNumbers("card 4111 1111 1111 1111 ok")).toBe("card 411111******1111 ok")
    const { value } = ResultRedaction.sanitise({
      note: "4111111111111111",
      n: 4111111111111111,
      ts: 1615374961000
    })
    expect(value).toEqual({ note: "411111******1111", n: "411111******1111", ts: 1615374961000 })
  })

  it("a decoded result made storable keeps its facts and loses its unmasked PAN", () => {
    const result = Schema.decodeUnknownSync(TransactionResult.TransactionResult)({
      finStatus: "PROCESSED",
      maskedCardNumber: "601100******9424",
      unMaskedPan: "6011000990139424"
    })
    expect(Redacted.isRedacted(result.unMaskedPan)).toBe(true)
    const clean = ResultRedaction.sanitiseResult(result)
    expect(clean.unMaskedPan).toBeUndefined()
    expect(clean.maskedCardNumber).toBe("601100******9424")
  })
})

describe("CallbackRegistration tokens", () => {
  it.effect("a token matches its own hash only, and the hash is not the token", () =>
    Effect.gen(function* () {
      const token = yield* CallbackRegistration.makeToken
      const other = yield* CallbackRegistration.makeToken
      const hash = yield* CallbackRegistration.hashToken(token)
      expect(hash).toMatch(/^[0-9a-f]{64}$/)
      expect(hash).not.toContain(Redacted.value(token))
      expect(yield* CallbackRegistration.verifyToken(Redacted.value(token), hash)).toBe(true)
      expect(yield* CallbackRegistration.verifyToken(Redacted.value(other), hash)).toBe(false)
      expect(yield* CallbackRegistration.verifyToken("", hash)).toBe(false)
    })
  )

  it("constant-time comparison is plain equality", () => {
    expect(CallbackRegistration.constantTimeEqual("abc", "abc")).toBe(true)
    expect(CallbackRegistration.constantTimeEqual("abc", "abd")).toBe(false)
    expect(CallbackRegistration.constantTimeEqual("abc", "abcd")).toBe(false)
    expect(CallbackRegistration.constantTimeEqual("", "")).toBe(true)
  })

  it.effect("a recovered resend has the same result hash", () =>
    Effect.gen(function* () {
      const a = yield* CallbackRegistration.resultHash({ finStatus: "AUTHORISED", b: 1, a: 2 })
      const b = yield* CallbackRegistration.resultHash({
        a: 2,
        recoveredTransaction: true,
        b: 1,
        finStatus: "AUTHORISED"
      })
      const c = yield* CallbackRegistration.resultHash({ finStatus: "DECLINED", b: 1, a: 2 })
      expect(a).toBe(b)
      expect(a).not.toBe(c)
    })
  )
})
