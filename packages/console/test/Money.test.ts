import { describe, expect, it } from "vitest"
import * as Money from "../web/money.js"

describe("the console's money", () => {
  it("shows minor units in major units with the currency's own exponent, without floating point", () => {
    expect(Money.fromMinor("1050", "EUR")).toBe("10.50 EUR")
    expect(Money.fromMinor("5", "EUR")).toBe("0.05 EUR")
    expect(Money.fromMinor("-1234567", "EUR")).toBe("-12,345.67 EUR")
    expect(Money.fromMinor("1050", "JPY")).toBe("1,050 JPY")
    expect(Money.fromMinor("1050", "BHD")).toBe("1.050 BHD")
    // Beyond 2^53: a float would round it.
    expect(Money.fromMinor(90071992547409934n, "EUR")).toBe("900,719,925,474,099.34 EUR")
  })

  it("reads an amount typed in major units, refusing more decimals than the currency has", () => {
    expect(Money.toMinor("10.5", "EUR")).toBe("1050")
    expect(Money.toMinor("10", "EUR")).toBe("1000")
    expect(Money.toMinor("0.07", "EUR")).toBe("7")
    expect(Money.toMinor("1050", "JPY")).toBe("1050")
    expect(Money.toMinor("10.5", "JPY")).toBeUndefined()
    expect(Money.toMinor("10.505", "EUR")).toBeUndefined()
    expect(Money.toMinor("-1", "EUR")).toBeUndefined()
    expect(Money.toMinor("1e3", "EUR")).toBeUndefined()
  })

  it("shows Money in its JSON form, and nothing for anything else", () => {
    expect(Money.ofJson({ amount: "2000", currency: "EUR" })).toBe("20.00 EUR")
    expect(Money.ofJson({ amount: 20, currency: "EUR" })).toBeUndefined()
    expect(Money.ofJson("20 EUR")).toBeUndefined()
  })
})
