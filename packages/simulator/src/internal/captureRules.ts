/**
 * Pre-authorization capture rules by card scheme and merchant category code (FACTS.md):
 * how long a pre-authorization stays capturable and how far above the authorised amount
 * a capture may go. Cases the facts leave open are filled with the strictest reading and
 * documented in docs/simulator.md.
 */
import { pow10 } from "./money.js"

/** How long after the authorization a capture is accepted. */
export type Window = { readonly _tag: "Days"; readonly days: number } | { readonly _tag: "SameDay" }

/** How far a capture may exceed the authorised amount. */
export type Tolerance =
  | { readonly _tag: "None" }
  | { readonly _tag: "Percent"; readonly percent: bigint }
  | { readonly _tag: "Fixed"; readonly major: bigint }

export interface Rule {
  readonly window: Window
  readonly tolerance: Tolerance
  /** False when the scheme refuses pre-authorizations for the category (MCC 5542). */
  readonly allowed: boolean
}

const inRanges = (mcc: number, ranges: ReadonlyArray<readonly [number, number]>) =>
  ranges.some(([low, high]) => mcc >= low && mcc <= high)

const days = (n: number): Window => ({ _tag: "Days", days: n })
const percent = (n: bigint): Tolerance => ({ _tag: "Percent", percent: n })
const none: Tolerance = { _tag: "None" }

const lodging: ReadonlyArray<readonly [number, number]> = [
  [3501, 3999],
  [7011, 7011]
]
const carRental: ReadonlyArray<readonly [number, number]> = [
  [3351, 3500],
  [7512, 7512]
]

/** The rule for a scheme name (upper case) and a four-digit MCC. */
export const ruleFor = (scheme: string, mccText: string): Rule => {
  const mcc = Number.parseInt(mccText, 10)
  const excluded = mcc === 5542
  switch (scheme) {
    case "MASTERCARD":
      return { window: days(30), tolerance: percent(20n), allowed: !excluded }
    case "VISA": {
      if (inRanges(mcc, [...lodging, ...carRental, [4411, 4411]]))
        return { window: days(31), tolerance: percent(15n), allowed: !excluded }
      if ([7513, 7033, 7519, 5552, 7523].includes(mcc))
        return { window: days(7), tolerance: percent(15n), allowed: true }
      if ([7394, 7999, 7996, 5599, 4457, 5571].includes(mcc))
        return { window: days(7), tolerance: none, allowed: true }
      if ([4111, 4112, 4131].includes(mcc))
        return { window: days(7), tolerance: { _tag: "Fixed", major: 25n }, allowed: true }
      if ([5812, 5813, 4121].includes(mcc))
        return { window: { _tag: "SameDay" }, tolerance: percent(20n), allowed: true }
      return { window: days(7), tolerance: none, allowed: !excluded }
    }
    case "MAESTRO":
      return [5812, 5814].includes(mcc)
        ? { window: days(7), tolerance: percent(20n), allowed: true }
        : { window: days(7), tolerance: none, allowed: true }
    case "AMEX":
      return { window: days(7), tolerance: none, allowed: !excluded }
    case "DISCOVER":
      return {
        window: days(inRanges(mcc, [...lodging, ...carRental]) ? 30 : 10),
        tolerance: none,
        allowed: true
      }
    case "DINERS":
      return { window: days(30), tolerance: none, allowed: true }
    case "JCB":
      return {
        window: days(inRanges(mcc, [...lodging, ...carRental]) ? 30 : 365),
        tolerance: none,
        allowed: true
      }
    default:
      return { window: days(7), tolerance: none, allowed: true }
  }
}

/** The most a capture may be for an authorised amount (minor units). */
export const maxCapture = (rule: Rule, authorised: bigint, exponent: number): bigint => {
  switch (rule.tolerance._tag) {
    case "None":
      return authorised
    case "Percent":
      return authorised + (authorised * rule.tolerance.percent) / 100n
    case "Fixed":
      return authorised + rule.tolerance.major * pow10(exponent)
  }
}

const dayMs = 86_400_000

/** Whether a capture at `now` is inside the window of an authorization made at `authorisedAt`. */
export const withinWindow = (rule: Rule, authorisedAt: number, now: number): boolean => {
  switch (rule.window._tag) {
    case "SameDay":
      return Math.floor(authorisedAt / dayMs) === Math.floor(now / dayMs)
    case "Days":
      return now - authorisedAt <= rule.window.days * dayMs
  }
}
