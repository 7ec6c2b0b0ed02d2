import { describe, expect, it } from "@effect/vitest"
import { CaptureRules, Money } from "@tillflow/core"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const at = DateTime.unsafeMake("2025-03-01T10:00:00Z")

// Every row of FACTS.md: scheme, an MCC of the row, rule id, window, tolerance on 100.00 EUR.
const table: ReadonlyArray<readonly [string, string, string, string, string]> = [
  ["MasterCard", "5411", "mastercard", "30 days", "120.00 EUR"],
  ["Visa", "3501", "visa-lodging-car-rental-cruise", "31 days", "115.00 EUR"],
  ["Visa", "3999", "visa-lodging-car-rental-cruise", "31 days", "115.00 EUR"],
  ["Visa", "7011", "visa-lodging-car-rental-cruise", "31 days", "115.00 EUR"],
  ["Visa", "3351", "visa-lodging-car-rental-cruise", "31 days", "115.00 EUR"],
  ["Visa", "7512", "visa-lodging-car-rental-cruise", "31 days", "115.00 EUR"],
  ["Visa", "4411", "visa-lodging-car-rental-cruise", "31 days", "115.00 EUR"],
  ["Visa", "7513", "visa-truck-ev-parking", "7 days", "115.00 EUR"],
  ["Visa", "7033", "visa-truck-ev-parking", "7 days", "115.00 EUR"],
  ["Visa", "7519", "visa-truck-ev-parking", "7 days", "115.00 EUR"],
  ["Visa", "5552", "visa-truck-ev-parking", "7 days", "115.00 EUR"],
  ["Visa", "7523", "visa-truck-ev-parking", "7 days", "115.00 EUR"],
  ["Visa", "7394", "visa-rental-recreation", "7 days", "100.00 EUR"],
  ["Visa", "7999", "visa-rental-recreation", "7 days", "100.00 EUR"],
  ["Visa", "7996", "visa-rental-recreation", "7 days", "100.00 EUR"],
  ["Visa", "5599", "visa-rental-recreation", "7 days", "100.00 EUR"],
  ["Visa", "4457", "visa-rental-recreation", "7 days", "100.00 EUR"],
  ["Visa", "5571", "visa-rental-recreation", "7 days", "100.00 EUR"],
  ["Visa", "4111", "visa-commuter", "7 days", "100.00 EUR"],
  ["Visa", "4112", "visa-commuter", "7 days", "100.00 EUR"],
  ["Visa", "4131", "visa-commuter", "7 days", "100.00 EUR"],
  ["Visa", "5812", "visa-restaurants-bars-taxis", "same day (UTC)", "120.00 EUR"],
  ["Visa", "5813", "visa-restaurants-bars-taxis", "same day (UTC)", "120.00 EUR"],
  ["Visa", "4121", "visa-restaurants-bars-taxis", "same day (UTC)", "120.00 EUR"],
  ["Maestro", "5812", "maestro-restaurants", "7 days", "120.00 EUR"],
  ["Maestro", "5814", "maestro-restaurants", "7 days", "120.00 EUR"],
  ["American Express", "5411", "amex", "7 days", "100.00 EUR"],
  ["Discover", "7011", "discover-lodging-car-rental", "30 days", "100.00 EUR"],
  ["Discover", "7512", "discover-lodging-car-rental", "30 days", "100.00 EUR"],
  ["Discover", "5411", "discover-other", "10 days", "100.00 EUR"],
  ["Diners", "7011", "diners-lodging-car-rental", "30 days", "100.00 EUR"],
  ["JCB", "7011", "jcb-hotel-car-rental", "time of stay", "100.00 EUR"],
  ["JCB", "5411", "jcb-other", "365 days", "100.00 EUR"]
]

describe("CaptureRules", () => {
  it.each(table)(
    "%s MCC %s: rule %s, window %s, limit %s on 100.00 EUR",
    (scheme, mcc, id, window, limit) => {
      const rule = CaptureRules.ruleFor({ scheme, mcc })
      expect(rule.id).toBe(id)
      expect(rule.source).toBe("facts")
      expect(CaptureRules.describeWindow(rule.window)).toBe(window)
      expect(CaptureRules.captureLimit(rule, eur(10000n)).limit.toString()).toBe(limit)
    }
  )

  it("Diners outside lodging and car rental: 30 days on credit, 7 days on debit, the debit window when unknown", () => {
    expect(CaptureRules.ruleFor({ scheme: "Diners", mcc: "5411", tenderType: "CREDIT" }).id).toBe(
      "diners-other-credit"
    )
    expect(CaptureRules.ruleFor({ scheme: "Diners", mcc: "5411", tenderType: "DEBIT" }).window).toEqual({
      _tag: "Days",
      days: 7
    })
    const unknown = CaptureRules.ruleFor({ scheme: "Diners", mcc: "5411" })
    expect(unknown.window).toEqual({ _tag: "Days", days: 7 })
    expect(unknown.source).toBe("default")
  })

  it("combinations FACTS.md does not list get the strictest reading and say so", () => {
    for (const [scheme, mcc] of [
      ["Visa", "5411"],
      ["Maestro", "5411"],
      ["UnionPay", "5411"],
      ["Interac", "5812"]
    ] as const) {
      const rule = CaptureRules.ruleFor({ scheme, mcc })
      expect(rule.source).toBe("default")
      expect(rule.window).toEqual({ _tag: "Days", days: 7 })
      expect(rule.tolerance).toEqual({ _tag: "None" })
    }
  })

  it("MCC 5542 is excluded for Mastercard, Visa and Amex only", () => {
    const excluded = ["MasterCard", "MASTERCARD", "Visa", "AMEX", "American Express"].map(
      (scheme) => CaptureRules.ruleFor({ scheme, mcc: "5542" }).excluded
    )
    expect(excluded).toEqual([true, true, true, true, true])
    expect(
      ["Discover", "JCB", "Diners", "Maestro"].map(
        (scheme) => CaptureRules.ruleFor({ scheme, mcc: "5542" }).excluded
      )
    ).toEqual([false, false, false, false])
  })

  it("percent tolerances round down to a whole minor unit, so the limit never exceeds the rule", () => {
    const rule = CaptureRules.ruleFor({ scheme: "Visa", mcc: "7011" })
    // 15% of 19.99 is 2.9985: the limit is 22.98, not 22.99
    expect(CaptureRules.captureLimit(rule, eur(1999n)).limit).toEqual(eur(2298n))
    expect(CaptureRules.captureLimit(rule, Money.make(1999n, "JPY")).limit).toEqual(Money.make(2298n, "JPY"))
  })

  it("the 25 USD commuter tolerance applies to USD holds; in another currency no overage, with the reason", () => {
    const rule = CaptureRules.ruleFor({ scheme: "Visa", mcc: "4111" })
    expect(CaptureRules.captureLimit(rule, Money.make(1000n, "USD")).limit).toEqual(Money.make(3500n, "USD"))
    const eurLimit = CaptureRules.captureLimit(rule, eur(1000n))
    expect(eurLimit.limit).toEqual(eur(1000n))
    expect(eurLimit.note).toContain("without an exchange rate")
  })

  it("windows: N days to the millisecond, same day to the end of the UTC day, time of stay only when known", () => {
    const visa = CaptureRules.ruleFor({ scheme: "Visa", mcc: "7011" })
    expect(CaptureRules.windowEnd(visa, at).pipe(Option.map(DateTime.formatIso))).toEqual(
      Option.some("2025-04-01T10:00:00.000Z")
    )
    const sameDay = CaptureRules.ruleFor({ scheme: "Visa", mcc: "5812" })
    expect(CaptureRules.windowEnd(sameDay, at).pipe(Option.map(DateTime.formatIso))).toEqual(
      Option.some("2025-03-01T23:59:59.999Z")
    )
    const jcb = CaptureRules.ruleFor({ scheme: "JCB", mcc: "7011" })
    expect(CaptureRules.windowEnd(jcb, at)).toEqual(Option.none())
    const stay = DateTime.unsafeMake("2025-03-04T11:00:00Z")
    expect(CaptureRules.windowEnd(jcb, at, stay)).toEqual(Option.some(stay))
  })

  it("check names every violation: over the limit and past the window", () => {
    const rule = CaptureRules.ruleFor({ scheme: "MasterCard", mcc: "5411" })
    const violations = CaptureRules.check({
      rule,
      hold: eur(10000n),
      total: eur(12001n),
      authorisedAt: at,
      now: DateTime.unsafeMake("2025-04-01T10:00:00Z")
    })
    expect(violations.map((v) => v._tag)).toEqual(["OverTolerance", "WindowClosed"])
    expect(
      CaptureRules.check({
        rule,
        hold: eur(10000n),
        total: eur(12000n),
        authorisedAt: at,
        now: DateTime.unsafeMake("2025-03-31T10:00:00Z")
      })
    ).toEqual([])
  })
})
