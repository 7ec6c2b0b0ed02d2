/**
 * Pre-authorization capture rules as the service applies them: core's `CaptureRules`, the
 * one table of FACTS.md, read with the simulator's bigint amounts and millisecond clock.
 * The service knows what tillflow does not (the end of a JCB stay), so where core cannot
 * decide and would refuse locally, the simulator accepts.
 */
import { CaptureRules, Currency, Money } from "@tillflow/core"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import type { Card } from "./model.js"

export type Rule = CaptureRules.CaptureRule

/** The rule for the card of a pre-authorization (scheme name as the card spells it) and an MCC. */
export const ruleFor = (card: Card | undefined, mcc: string): Rule =>
  CaptureRules.ruleFor({ scheme: card?.scheme ?? "", mcc, tenderType: card?.tender })

/** Whether the scheme accepts a pre-authorization for the merchant's category (not MCC 5542). */
export const allowed = (rule: Rule): boolean => !rule.excluded

/** The most a capture may be for an amount held (minor units). */
export const maxCapture = (rule: Rule, hold: bigint, currency: string): bigint => {
  if (rule.tolerance._tag === "None" || !Currency.isCurrency(currency)) return hold
  return CaptureRules.captureLimit(rule, Money.make(hold, currency)).limit.minorUnits
}

/** Whether a capture at `now` is inside the window of an authorization made at `authorisedAt`. */
export const withinWindow = (rule: Rule, authorisedAt: number, now: number): boolean =>
  Option.match(CaptureRules.windowEnd(rule, DateTime.unsafeMake(authorisedAt)), {
    // The time of stay: the service knows when it ends, the simulator does not, so it never closes.
    onNone: () => true,
    onSome: (end) => now <= DateTime.toEpochMillis(end)
  })
