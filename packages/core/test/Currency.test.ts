import { describe, expect, it } from "@effect/vitest"
import { Currency } from "@tillflow/core"
import { Either, Schema } from "effect"

/** The spec's list (2.5), copied verbatim. */
const SPEC_LIST =
  "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYR BZD CAD CDF CHF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EEK EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HRK HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LTL LVL LYD MAD MDL MKD MMK MNT MOP MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLL SOS SRD STD SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX VND VUV WST XAF XCD XOF XPF YER ZAR ZMK ZWL USD UZS VEF".split(
    " "
  )

/**
 * ISO 4217 minor units of every listed code (historic codes with the exponent ISO gave
 * them when they were current). Written out independently of the source table.
 */
const ISO: Record<string, number> = {
  ...Object.fromEntries(SPEC_LIST.map((c) => [c, 2])),
  // zero-decimal currencies
  BIF: 0,
  BYR: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  // three-decimal currencies
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3
}

describe("Currency", () => {
  it("lists exactly the spec's currencies", () => {
    expect([...Currency.codes].sort()).toEqual([...SPEC_LIST].sort())
    expect(Currency.codes).toHaveLength(SPEC_LIST.length)
  })

  describe("every currency has its ISO 4217 exponent", () => {
    it.each(SPEC_LIST.map((code) => [code, ISO[code]] as const))("%s has exponent %i", (code, exponent) => {
      expect(Currency.isCurrency(code)).toBe(true)
      if (Currency.isCurrency(code)) expect(Currency.exponent(code)).toBe(exponent)
    })
  })

  it.each(["CLF", "eur", "EURO", "", "XXX", "MRO", "MGA"])("the strict schema refuses %j", (code) => {
    expect(Either.isLeft(Schema.decodeUnknownEither(Currency.Currency)(code))).toBe(true)
    expect(Currency.isCurrency(code)).toBe(false)
  })
})
