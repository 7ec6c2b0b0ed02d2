/**
 * Tip configuration of a sale (spec 2.4): the percentages the terminal offers and how the
 * tip screen behaves. Only sale and saleAndTokenizeCard accept it.
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import * as Money from "./Money.js"

/**
 * A tip percentage offered on the terminal (a rate, not an amount): above 0. The spec sets
 * no upper bound, so none is imposed (a 150 % tip is the merchant's choice to offer).
 */
export const TipPercentage = Schema.Number.pipe(
  Schema.finite({ message: () => "a tip percentage must be a finite number" }),
  Schema.greaterThan(0, { message: () => "a tip percentage must be above 0" })
).annotations({ identifier: "TipPercentage" })

/** Tip configuration as we send it. */
export class TipConfiguration extends Schema.Class<TipConfiguration>("TipConfiguration")({
  /** Base of the percentages in minor units; defaults to the transaction amount. */
  baseAmount: Strict.optional(Money.PositiveMinorUnitsString),
  /** Title of the tip screen; default "Tip". */
  headerName: Strict.optional(Schema.String),
  /** Percentages offered (required, at least one). */
  tipPercentages: Schema.NonEmptyArray(TipPercentage),
  /** Whether a custom amount may be typed; default true. */
  enterAmountEnabled: Strict.optional(Schema.Boolean),
  /** Whether the tip may be skipped; default true. */
  skipEnabled: Strict.optional(Schema.Boolean),
  /** Footer text; default empty. */
  footer: Strict.optional(Schema.String)
}) {}
