/**
 * Tip adjustment of a completed sale (`POST /transactions/{guid}/tip-adjustment`, spec
 * 4.6): the exact tip in major units; the currency is the original transaction's.
 * The current spec sends a decimal string; older clients sent a JSON number: both are
 * read, the string is written.
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Lenient from "./internal/Lenient.js"
import * as Money from "./Money.js"

/**
 * The tip amount: a decimal string on the wire; a JSON number is also read and turned
 * into its shortest decimal text (no arithmetic, so no rounding), exponent forms refused.
 */
export const TipAmount = Schema.transformOrFail(
  Schema.Union(Schema.String, Schema.Number),
  Money.DecimalString,
  {
    strict: true,
    decode: (input, _, ast) => {
      const text = typeof input === "number" ? String(input) : input
      return Schema.is(Money.DecimalString)(text)
        ? ParseResult.succeed(text)
        : ParseResult.fail(
            new ParseResult.Type(ast, input, 'the tip amount must be a decimal in major units, e.g. "5.25"')
          )
    },
    encode: (s) => ParseResult.succeed(s)
  }
).annotations({ identifier: "TipAmount" })

/** The request body `{ amount }`. */
export class TipAdjustment extends Schema.Class<TipAdjustment>("TipAdjustment")({ amount: TipAmount }) {}

/** The 200 body `{ statusMessage }`. */
export const TipAdjustmentResponse = Schema.Struct(
  { statusMessage: Lenient.optional(Schema.String) },
  Lenient.Extra
).annotations({ identifier: "TipAdjustmentResponse" })
/** @see TipAdjustmentResponse */
export type TipAdjustmentResponse = typeof TipAdjustmentResponse.Type
