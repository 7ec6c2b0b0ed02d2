/**
 * Balance available on a card, as a result reports it (spec 2.4).
 */
import * as Schema from "effect/Schema"
import * as Currency from "./Currency.js"
import * as Lenient from "./internal/Lenient.js"

/** Balance as received: every field optional; `amount` in minor units. */
export const Balance = Schema.Struct(
  {
    amount: Lenient.optional(Lenient.BigIntFromNumberOrString),
    currency: Lenient.optional(Lenient.enumeration(Currency.Currency)),
    positive: Lenient.optional(Lenient.BooleanLenient),
    negative: Lenient.optional(Lenient.BooleanLenient)
  },
  Lenient.Extra
).annotations({ identifier: "Balance" })
/** @see Balance */
export type Balance = typeof Balance.Type
