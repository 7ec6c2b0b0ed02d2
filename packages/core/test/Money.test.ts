import { describe, expect, it } from "@effect/vitest"
import { Currency, Money } from "@tillflow/core"
import { Either, FastCheck as fc, Schema } from "effect"

const ok = <A, E>(e: Either.Either<A, E>): A => {
  if (Either.isLeft(e)) throw new Error(`expected success, got ${String(e.left)}`)
  return e.right
}
const err = <A, E extends { readonly message: string }>(e: Either.Either<A, E>): string => {
  if (Either.isRight(e)) throw new Error(`expected failure, got ${String(e.right)}`)
  return e.left.message
}

describe("Money", () => {
  describe("reading major units (terminal-less endpoints)", () => {
    it.each([
      ["10.50", "EUR", 1050n],
      ["10.5", "EUR", 1050n],
      ["10", "EUR", 1000n],
      ["0.01", "EUR", 1n],
      ["0", "EUR", 0n],
      ["100", "JPY", 100n],
      ["1.234", "BHD", 1234n],
      ["0.001", "KWD", 1n],
      ["-5.25", "USD", -525n],
      ["123456789012345678901234567890.12", "EUR", 12345678901234567890123456789012n]
    ] as const)("%j %s is %s minor units", (input, currency, minor) => {
      expect(ok(Money.fromMajorUnitsString(input, currency)).minorUnits).toBe(minor)
    })

    it.each([
      ["12.345", "EUR", "too many decimals"],
      ["1.5", "JPY", "JPY has no decimals"],
      ["1.2345", "BHD", "at most 3 decimals"],
      ["1e3", "EUR", "malformed"],
      ["-0", "EUR", "negative zero"],
      ["-0.00", "EUR", "negative zero"],
      [" 1", "EUR", "malformed"],
      ["1 ", "EUR", "malformed"],
      ["", "EUR", "malformed"],
      ["1,50", "EUR", "dot separator"],
      ["10.", "EUR", "malformed"],
      [".5", "EUR", "malformed"],
      ["01.50", "EUR", "malformed"],
      ["+1", "EUR", "malformed"],
      ["NaN", "EUR", "malformed"],
      ["Infinity", "EUR", "malformed"],
      ["0x10", "EUR", "malformed"]
    ] as const)("%j %s is refused (%s)", (input, currency, why) => {
      const message = err(Money.fromMajorUnitsString(input, currency))
      expect(message).toContain(why)
      expect(message).toContain(JSON.stringify(input))
    })

    it("says what is allowed", () => {
      expect(err(Money.fromMajorUnitsString("12.345", "EUR"))).toContain("at most 2 decimals")
    })
  })

  describe("reading minor units (terminal operations)", () => {
    it.each([
      ["1050", 1050n],
      ["0", 0n],
      ["-5", -5n],
      ["99999999999999999999", 99999999999999999999n]
    ] as const)("%j is %s", (input, minor) => {
      expect(ok(Money.fromMinorUnitsString(input, "EUR")).minorUnits).toBe(minor)
    })

    it.each(["10.50", "1e3", "-0", " 1", "", "1.0", "0100", "+1", "1_000"])("%j is refused", (input) => {
      expect(err(Money.fromMinorUnitsString(input, "EUR"))).toContain("minor units")
    })
  })

  describe("writing", () => {
    it.each([
      [1050n, "EUR", "10.50", "1050"],
      [5n, "EUR", "0.05", "5"],
      [0n, "EUR", "0.00", "0"],
      [100n, "JPY", "100", "100"],
      [1234n, "BHD", "1.234", "1234"],
      [1n, "BHD", "0.001", "1"],
      [-525n, "USD", "-5.25", "-525"],
      [-5n, "USD", "-0.05", "-5"]
    ] as const)("%s %s → major %j, minor %j", (minor, currency, major, minorString) => {
      const m = Money.make(minor, currency)
      expect(Money.toMajorUnitsString(m)).toBe(major)
      expect(Money.toMinorUnitsString(m)).toBe(minorString)
    })
  })

  const arbMoney = fc
    .tuple(fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }), fc.constantFrom(...Currency.codes))
    .map(([minor, currency]) => Money.make(minor, currency))

  it("major-unit text reads back to the same money, for every currency", () => {
    fc.assert(
      fc.property(arbMoney, (m) => {
        const back = ok(Money.fromMajorUnitsString(Money.toMajorUnitsString(m), m.currency))
        expect(back.minorUnits).toBe(m.minorUnits)
      })
    )
  })

  it("minor-unit text reads back to the same money", () => {
    fc.assert(
      fc.property(arbMoney, (m) => {
        expect(ok(Money.fromMinorUnitsString(Money.toMinorUnitsString(m), m.currency)).minorUnits).toBe(
          m.minorUnits
        )
      })
    )
  })

  it("the major form always has exactly the currency's number of decimals", () => {
    fc.assert(
      fc.property(arbMoney, (m) => {
        const text = Money.toMajorUnitsString(m)
        const e = Currency.exponent(m.currency)
        const decimals = text.includes(".") ? (text.split(".")[1] ?? "").length : 0
        expect(decimals).toBe(e)
      })
    )
  })

  it("adds and subtracts within a currency and refuses to mix currencies", () => {
    const a = Money.make(1050n, "EUR")
    expect(ok(Money.add(a, Money.make(25n, "EUR"))).minorUnits).toBe(1075n)
    expect(ok(Money.subtract(a, Money.make(1100n, "EUR"))).minorUnits).toBe(-50n)
    expect(ok(Money.compare(a, Money.make(1051n, "EUR")))).toBe(-1)
    expect(err(Money.add(a, Money.make(1n, "USD")))).toBe("cannot combine EUR with USD")
    expect(Either.isLeft(Money.compare(a, Money.make(1n, "JPY")))).toBe(true)
  })

  describe("percentOf rounds on bigint as documented", () => {
    it.each([
      [1999n, 15, "down", 299n], // 299.85
      [1999n, 15, "up", 300n],
      [1999n, 15, "halfEven", 300n],
      [250n, 20, "down", 50n], // exact
      [250n, 20, "up", 50n],
      [1250n, 2, "halfEven", 25n], // 25.00
      [1025n, 2, "halfEven", 20n], // 20.50 → 20 (even)
      [1075n, 2, "halfEven", 22n], // 21.50 → 22 (even)
      [-1999n, 15, "down", -299n],
      [-1999n, 15, "up", -300n]
    ] as const)("%s × %i%% rounded %s is %s", (minor, pct, rounding, expected) => {
      expect(Money.percentOf(Money.make(minor, "EUR"), pct, rounding).minorUnits).toBe(expected)
    })

    it("refuses a fractional percentage instead of going through floating point", () => {
      expect(() => Money.percentOf(Money.make(100n, "EUR"), 12.5, "down")).toThrow(RangeError)
    })

    it("down never exceeds up, and they differ by at most one minor unit", () => {
      fc.assert(
        fc.property(arbMoney, fc.integer({ min: 0, max: 1000 }), (m, pct) => {
          const down = Money.percentOf(m, pct, "down").minorUnits
          const up = Money.percentOf(m, pct, "up").minorUnits
          const abs = (n: bigint) => (n < 0n ? -n : n)
          expect(abs(down) <= abs(up)).toBe(true)
          expect(abs(up) - abs(down) <= 1n).toBe(true)
        })
      )
    })
  })

  describe("wire-field schemas", () => {
    it("reads { amount, currency } in minor units and writes it back", () => {
      const m = Schema.decodeUnknownSync(Money.FromMinorUnitsFields)({ amount: "1050", currency: "EUR" })
      expect(m.minorUnits).toBe(1050n)
      expect(Schema.encodeSync(Money.FromMinorUnitsFields)(m)).toEqual({ amount: "1050", currency: "EUR" })
    })

    it("reads { amount, currency } in major units and names the amount when it does not fit", () => {
      const m = Schema.decodeUnknownSync(Money.FromMajorUnitsFields)({ amount: "1.234", currency: "BHD" })
      expect(m.minorUnits).toBe(1234n)
      const failure = Schema.decodeUnknownEither(Money.FromMajorUnitsFields)({
        amount: "12.345",
        currency: "EUR"
      })
      expect(Either.isLeft(failure) && failure.left.message).toContain('["amount"]')
    })

    it("refuses a decimal string with an exponent or a comma", () => {
      expect(Schema.is(Money.DecimalString)("5.25")).toBe(true)
      expect(Schema.is(Money.DecimalString)("5e2")).toBe(false)
      expect(Schema.is(Money.DecimalString)("5,25")).toBe(false)
    })
  })
})
