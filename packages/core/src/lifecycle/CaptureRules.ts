/**
 * Pre-authorization capture rules by card scheme and merchant category code, as data and
 * pure functions: how long a pre-authorization stays capturable (its authorization
 * window) and how far a capture may go above the amount held (its tolerance). The table
 * is FACTS.md's, row by row; where FACTS.md is silent the gap is filled with the
 * strictest reading the spec allows (spec §8: windows of 7 to 31 days) and the rule says
 * so (`source: "default"`), so an error message never pretends a default is a scheme rule.
 */
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Money from "../model/Money.js"

/** The card schemes the rules distinguish; every other name is `Other`. */
export type Scheme = "Mastercard" | "Visa" | "Maestro" | "Amex" | "Discover" | "Diners" | "JCB" | "Other"

/**
 * Reads a scheme name as results carry it (`MasterCard`, `VISA`, `American Express`,
 * `Diners Club` …), ignoring case, spaces and punctuation.
 */
export const schemeOf = (name: string): Scheme => {
  const key = name.toUpperCase().replace(/[^A-Z]/g, "")
  if (key === "MASTERCARD" || key === "MC") return "Mastercard"
  if (key === "VISA") return "Visa"
  if (key === "MAESTRO") return "Maestro"
  if (key === "AMEX" || key === "AMERICANEXPRESS") return "Amex"
  if (key === "DISCOVER") return "Discover"
  if (key === "DINERS" || key === "DINERSCLUB") return "Diners"
  if (key === "JCB") return "JCB"
  return "Other"
}

/** How long after the authorization a capture may be made. */
export type Window =
  /** Until `days` × 24 h after the authorization. */
  | { readonly _tag: "Days"; readonly days: number }
  /** Until the end of the authorization's calendar day (UTC: the merchant's zone is not known). */
  | { readonly _tag: "SameDay" }
  /** Until the end of the stay (JCB hotel and car rental): known only if the caller gave it. */
  | { readonly _tag: "TimeOfStay" }

/** How far a capture may exceed the amount held. */
export type Tolerance =
  | { readonly _tag: "Percent"; readonly percent: number }
  /** A fixed amount of a reference currency (Visa commuter transport: 25 USD). */
  | { readonly _tag: "Fixed"; readonly amount: Money.Money }
  /** No overage: the capture is at most the amount held. */
  | { readonly _tag: "None" }

/** One row of the table. */
export interface CaptureRule {
  /** A stable name, used in errors, events and docs (`visa-lodging-car-rental-cruise`). */
  readonly id: string
  readonly scheme: Scheme
  /** The row in words, with its MCCs, window and tolerance. */
  readonly description: string
  /** `facts`: a row of FACTS.md. `default`: FACTS.md is silent, the strictest reading is used. */
  readonly source: "facts" | "default"
  readonly window: Window
  readonly tolerance: Tolerance
  /** The scheme refuses pre-authorizations for this MCC (5542 for Mastercard, Visa, Amex). */
  readonly excluded: boolean
}

/** What the rule is looked up by: the pre-authorization's card and merchant. */
export interface RuleKey {
  readonly scheme: string
  /** The merchant category code, four digits. */
  readonly mcc: string
  /** `CREDIT` or `DEBIT` when the result said so (Diners distinguishes them). */
  readonly tenderType?: string | undefined
}

const lodging: ReadonlyArray<readonly [number, number]> = [
  [3501, 3999],
  [7011, 7011]
]
const carRental: ReadonlyArray<readonly [number, number]> = [
  [3351, 3500],
  [7512, 7512]
]
const inRanges = (mcc: number, ranges: ReadonlyArray<readonly [number, number]>): boolean =>
  ranges.some(([low, high]) => mcc >= low && mcc <= high)
const isLodgingOrCarRental = (mcc: number): boolean => inRanges(mcc, [...lodging, ...carRental])

const days = (n: number): Window => ({ _tag: "Days", days: n })
const percent = (n: number): Tolerance => ({ _tag: "Percent", percent: n })
const none: Tolerance = { _tag: "None" }

/** The fixed tolerance of Visa commuter transport, in its reference currency. */
export const commuterTolerance: Money.Money = Money.make(2500n, "USD")

const rule = (
  id: string,
  scheme: Scheme,
  description: string,
  window: Window,
  tolerance: Tolerance,
  options: { readonly source?: "facts" | "default"; readonly excluded?: boolean } = {}
): CaptureRule => ({
  id,
  scheme,
  description,
  source: options.source ?? "facts",
  window,
  tolerance,
  excluded: options.excluded ?? false
})

/** The MCC every main scheme excludes from pre-authorization (FACTS.md). */
export const EXCLUDED_MCC = "5542"

/**
 * The rule of a pre-authorization's scheme and MCC.
 *
 * @example
 * CaptureRules.ruleFor({ scheme: "Visa", mcc: "7011" }).id // "visa-lodging-car-rental-cruise"
 */
export const ruleFor = (key: RuleKey): CaptureRule => {
  const scheme = schemeOf(key.scheme)
  const mcc = Number.parseInt(key.mcc, 10)
  const excluded =
    key.mcc === EXCLUDED_MCC && (scheme === "Mastercard" || scheme === "Visa" || scheme === "Amex")
  const flags = { excluded }
  switch (scheme) {
    case "Mastercard":
      return rule("mastercard", scheme, "Mastercard, every MCC: 30 days, 20%", days(30), percent(20), flags)
    case "Visa": {
      if (isLodgingOrCarRental(mcc) || mcc === 4411)
        return rule(
          "visa-lodging-car-rental-cruise",
          scheme,
          "Visa lodging (MCC 3501-3999, 7011), car rental (3351-3500, 7512), cruise (4411): 31 days, 15%",
          days(31),
          percent(15),
          flags
        )
      if ([7513, 7033, 7519, 5552, 7523].includes(mcc))
        return rule(
          "visa-truck-ev-parking",
          scheme,
          "Visa truck/trailer/RV rental, EV charging, parking (MCC 7513, 7033, 7519, 5552, 7523): 7 days, 15%",
          days(7),
          percent(15),
          flags
        )
      if ([7394, 7999, 7996, 5599, 4457, 5571].includes(mcc))
        return rule(
          "visa-rental-recreation",
          scheme,
          "Visa equipment rental, recreation, amusement, misc. dealers, boat rental, motorcycle dealers " +
            "(MCC 7394, 7999, 7996, 5599, 4457, 5571): 7 days, no tolerance",
          days(7),
          none,
          flags
        )
      if ([4111, 4112, 4131].includes(mcc))
        return rule(
          "visa-commuter",
          scheme,
          "Visa commuter transport, railways, bus lines (MCC 4111, 4112, 4131): 7 days, 25 USD",
          days(7),
          { _tag: "Fixed", amount: commuterTolerance },
          flags
        )
      if ([5812, 5813, 4121].includes(mcc))
        return rule(
          "visa-restaurants-bars-taxis",
          scheme,
          "Visa restaurants, bars, taxis (MCC 5812, 5813, 4121): same day, 20%",
          { _tag: "SameDay" },
          percent(20),
          flags
        )
      return rule(
        "visa-other",
        scheme,
        "Visa, MCC not listed in FACTS.md: the spec's shortest window (7 days), no tolerance",
        days(7),
        none,
        { ...flags, source: "default" }
      )
    }
    case "Maestro":
      return [5812, 5814].includes(mcc)
        ? rule(
            "maestro-restaurants",
            scheme,
            "Maestro restaurants, fast food (MCC 5812, 5814): 7 days, 20%",
            days(7),
            percent(20)
          )
        : rule(
            "maestro-other",
            scheme,
            "Maestro, MCC not listed in FACTS.md: the spec's shortest window (7 days), no tolerance",
            days(7),
            none,
            { source: "default" }
          )
    case "Amex":
      return rule(
        "amex",
        scheme,
        "Amex: 7 days (stated for US/Canada); no tolerance stated, so none",
        days(7),
        none,
        flags
      )
    case "Discover":
      return isLodgingOrCarRental(mcc)
        ? rule(
            "discover-lodging-car-rental",
            scheme,
            "Discover car rental and lodging: 30 days; no tolerance stated, so none",
            days(30),
            none
          )
        : rule(
            "discover-other",
            scheme,
            "Discover, other MCCs: 10 days; no tolerance stated, so none",
            days(10),
            none
          )
    case "Diners": {
      if (isLodgingOrCarRental(mcc))
        return rule(
          "diners-lodging-car-rental",
          scheme,
          "Diners car rental and lodging: 30 days; no tolerance stated, so none",
          days(30),
          none
        )
      const tender = (key.tenderType ?? "").toUpperCase()
      if (tender === "CREDIT")
        return rule(
          "diners-other-credit",
          scheme,
          "Diners, other credit: 30 days; no tolerance stated, so none",
          days(30),
          none
        )
      if (tender === "DEBIT")
        return rule(
          "diners-other-debit",
          scheme,
          "Diners, other debit: 7 days; no tolerance stated, so none",
          days(7),
          none
        )
      return rule(
        "diners-other-unknown-tender",
        scheme,
        "Diners, other MCC, credit or debit unknown: the debit window (7 days), no tolerance",
        days(7),
        none,
        { source: "default" }
      )
    }
    case "JCB":
      return isLodgingOrCarRental(mcc)
        ? rule(
            "jcb-hotel-car-rental",
            scheme,
            "JCB hotel and car rental: for the time of stay; no tolerance stated, so none",
            { _tag: "TimeOfStay" },
            none
          )
        : rule(
            "jcb-other",
            scheme,
            "JCB, other MCCs: 1 year (365 days); no tolerance stated, so none",
            days(365),
            none
          )
    case "Other":
      return rule(
        "other-scheme",
        scheme,
        `${key.scheme || "unknown scheme"}: not in FACTS.md; the spec's shortest window (7 days), no tolerance`,
        days(7),
        none,
        { source: "default" }
      )
  }
}

/** The most a capture may be, and why. */
export interface Limit {
  readonly limit: Money.Money
  /** Set when the tolerance could not be applied as written (a reference currency). */
  readonly note?: string | undefined
}

/**
 * The largest capture (tip included) the rule allows over `hold`. Percentages round down
 * to a whole minor unit, so the limit never exceeds the rule. A fixed tolerance in a
 * reference currency applies only in that currency: tillflow holds no exchange rates, so
 * in any other currency it allows no overage at all, and says so in `note`.
 */
export const captureLimit = (rule: CaptureRule, hold: Money.Money): Limit => {
  switch (rule.tolerance._tag) {
    case "None":
      return { limit: hold }
    case "Percent":
      return {
        limit: Money.make(
          hold.minorUnits + Money.percentOf(hold, rule.tolerance.percent, "down").minorUnits,
          hold.currency
        )
      }
    case "Fixed": {
      const fixed = rule.tolerance.amount
      return fixed.currency === hold.currency
        ? { limit: Money.make(hold.minorUnits + fixed.minorUnits, hold.currency) }
        : {
            limit: hold,
            note: `the ${fixed} tolerance cannot be converted to ${hold.currency} without an exchange rate: no overage allowed`
          }
    }
  }
}

const dayMillis = 86_400_000

/**
 * When the window closes (the last instant a capture is inside it), or none when it cannot
 * be known (time of stay without `stayEndsAt`).
 */
export const windowEnd = (
  rule: CaptureRule,
  authorisedAt: DateTime.Utc,
  stayEndsAt?: DateTime.Utc | undefined
): Option.Option<DateTime.Utc> => {
  const start = DateTime.toEpochMillis(authorisedAt)
  switch (rule.window._tag) {
    case "Days":
      return Option.some(DateTime.unsafeMake(start + rule.window.days * dayMillis))
    case "SameDay":
      return Option.some(DateTime.unsafeMake(Math.floor(start / dayMillis) * dayMillis + dayMillis - 1))
    case "TimeOfStay":
      return Option.fromNullable(stayEndsAt)
  }
}

/** The window in words: `30 days`, `same day (UTC)`, `time of stay`. */
export const describeWindow = (window: Window): string => {
  switch (window._tag) {
    case "Days":
      return `${window.days} days`
    case "SameDay":
      return "same day (UTC)"
    case "TimeOfStay":
      return "time of stay"
  }
}

/** Why a capture breaks its rule. */
export type Violation =
  | { readonly _tag: "OverTolerance"; readonly limit: Money.Money; readonly note?: string | undefined }
  | { readonly _tag: "WindowClosed"; readonly closedAt: DateTime.Utc }
  | { readonly _tag: "WindowUnknown" }

/** What a capture is checked against. */
export interface CaptureCheck {
  readonly rule: CaptureRule
  /** The amount held now (the authorised amount after increases and decreases). */
  readonly hold: Money.Money
  /** The capture, tip included. */
  readonly total: Money.Money
  readonly authorisedAt: DateTime.Utc
  readonly now: DateTime.Utc
  readonly stayEndsAt?: DateTime.Utc | undefined
}

/**
 * Every way a capture breaks its rule's tolerance and window (none: it is within both).
 * The amounts must share a currency (the caller checks that first).
 */
export const check = (input: CaptureCheck): ReadonlyArray<Violation> => {
  const violations: Array<Violation> = []
  const { limit, note } = captureLimit(input.rule, input.hold)
  if (input.total.minorUnits > limit.minorUnits) violations.push({ _tag: "OverTolerance", limit, note })
  const end = windowEnd(input.rule, input.authorisedAt, input.stayEndsAt)
  if (Option.isNone(end)) violations.push({ _tag: "WindowUnknown" })
  else if (DateTime.toEpochMillis(input.now) > DateTime.toEpochMillis(end.value))
    violations.push({ _tag: "WindowClosed", closedAt: end.value })
  return violations
}
