/**
 * The sandbox acquirer's trigger amounts (FACTS.md): a sale of one of these amounts, in
 * major units, gets a fixed outcome; every other amount is approved. The simulator
 * reproduces them so integrators can exercise declines, partial approval and an acquirer
 * timeout without a real card.
 */
import { pow10 } from "./internal/money.js"

/** What the acquirer answers for an amount. */
export type Outcome =
  | { readonly _tag: "Approved" }
  | { readonly _tag: "Declined"; readonly issuerResponseCode: string; readonly issuerResponseText: string }
  | { readonly _tag: "PartialApproval" }
  | { readonly _tag: "AcquirerTimeout" }

/** The trigger amounts in hundredths of the major unit (3779 is 37.79). */
export const triggers: ReadonlyArray<{ readonly hundredths: bigint; readonly outcome: Outcome }> = [
  {
    hundredths: 3779n,
    outcome: { _tag: "Declined", issuerResponseCode: "01", issuerResponseText: "Refer to card issuer" }
  },
  {
    hundredths: 3784n,
    outcome: { _tag: "Declined", issuerResponseCode: "05", issuerResponseText: "Do not honour" }
  },
  {
    hundredths: 3793n,
    outcome: { _tag: "Declined", issuerResponseCode: "04", issuerResponseText: "Pick up card" }
  },
  { hundredths: 3757n, outcome: { _tag: "PartialApproval" } },
  { hundredths: 3768n, outcome: { _tag: "AcquirerTimeout" } }
]

const approved: Outcome = { _tag: "Approved" }

/**
 * The outcome for an amount in minor units of a currency with `exponent` decimals.
 * A trigger is an exact major-unit amount, so currencies with fewer than two decimals
 * (JPY) have no trigger amounts.
 *
 * @example
 * outcomeFor(3779n, 2) // Declined "01" (37.79 EUR)
 * outcomeFor(37790n, 3) // Declined "01" (37.790 BHD)
 */
export const outcomeFor = (minor: bigint, exponent: number): Outcome => {
  if (exponent < 2) return approved
  const scale = pow10(exponent - 2)
  if (minor % scale !== 0n) return approved
  const hundredths = minor / scale
  return triggers.find((trigger) => trigger.hundredths === hundredths)?.outcome ?? approved
}

/** The part of a partially approved amount that is authorised: half, rounded down. */
export const partiallyApproved = (minor: bigint): bigint => minor / 2n
