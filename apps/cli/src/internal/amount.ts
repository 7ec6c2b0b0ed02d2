/**
 * Amounts as a person types them (major units with a dot, `10.50`) into the service's
 * minor-unit strings, refused with what the currency allows.
 */
import { Currency, Money } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Output from "../Output.js"

/** An amount in major units of a currency into the service's minor-unit string. */
export const parseAmount = (
  input: string,
  currencyCode: string,
  options: { readonly signed?: boolean; readonly flag?: string } = {}
): Effect.Effect<{ readonly amount: string; readonly currency: string }, Output.UsageError> => {
  const code = currencyCode.toUpperCase()
  const flag = options.flag ?? "--amount"
  if (!Currency.isCurrency(code)) {
    return Effect.fail(
      new Output.UsageError({
        message: `--currency ${currencyCode} is not an ISO 4217 currency code (e.g. EUR, USD, GBP, JPY)`
      })
    )
  }
  const parsed = Money.fromMajorUnitsString(input, code)
  if (Either.isLeft(parsed))
    return Effect.fail(new Output.UsageError({ message: `${flag}: ${parsed.left.message}` }))
  const money = parsed.right
  const bounded = Money.checkLimit(money)
  if (Either.isLeft(bounded))
    return Effect.fail(new Output.UsageError({ message: `--amount: ${bounded.left.message}` }))
  if (options.signed === true ? money.minorUnits === 0n : money.minorUnits <= 0n) {
    return Effect.fail(
      new Output.UsageError({
        message: `${flag} must be ${options.signed === true ? "non-zero (negative to decrease)" : "positive"}, got ${input}`
      })
    )
  }
  return Effect.succeed({ amount: Money.toMinorUnitsString(money), currency: code })
}
