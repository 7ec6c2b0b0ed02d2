/**
 * A request schema whose typed side holds one `amount: Money` while its wire side holds
 * two flat fields, `amount` (a string in the chosen form) and `currency`. Excess fields
 * are rejected: these schemas are for what we send.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Strict from "./Strict.js"
import * as Currency from "../Currency.js"
import * as Money from "../Money.js"

/** How the wire writes the amount. */
export type Form = "minor" | "major"

const read = (form: Form, amount: string, currency: Currency.Currency) =>
  form === "minor"
    ? Money.fromMinorUnitsString(amount, currency)
    : Money.fromMajorUnitsString(amount, currency)

const write = (form: Form, money: Money.Money) =>
  form === "minor" ? Money.toMinorUnitsString(money) : Money.toMajorUnitsString(money)

const build = <
  F extends Schema.Struct.Fields,
  MT extends Schema.Struct.Fields,
  MW extends Schema.Struct.Fields
>(
  identifier: string,
  fields: F,
  form: Form,
  typedMoney: MT,
  wireMoney: MW
) => {
  const wire = Schema.Struct({ ...fields, ...wireMoney })
    .annotations({ parseOptions: { onExcessProperty: "error" } })
    .pipe(
      Schema.filter((w) => {
        const m = w as { readonly amount?: string; readonly currency?: string }
        return (m.amount === undefined) === (m.currency === undefined)
          ? true
          : {
              path: [m.amount === undefined ? "amount" : "currency"],
              message: "amount and currency go together"
            }
      })
    )
  const typed = Schema.extend(Schema.typeSchema(Schema.Struct(fields)), Schema.Struct(typedMoney))
  return Schema.transformOrFail(wire, typed, {
    strict: false,
    decode: (input, _, ast) => {
      const { amount, currency, ...rest } = input as Record<string, unknown>
      if (typeof amount !== "string" || !Currency.isCurrency(currency)) return ParseResult.succeed(rest)
      const parsed = read(form, amount, currency)
      return Either.isLeft(parsed)
        ? ParseResult.fail(
            new ParseResult.Pointer("amount", input, new ParseResult.Type(ast, amount, parsed.left.message))
          )
        : ParseResult.succeed({ ...rest, amount: parsed.right })
    },
    encode: (value) => {
      const { amount, ...rest } = value as Record<string, unknown>
      return ParseResult.succeed(
        amount instanceof Money.Money
          ? { ...rest, amount: write(form, amount), currency: amount.currency }
          : rest
      )
    }
  }).annotations({ identifier })
}

/** Required `amount: Money` (above zero) over wire `amount` + `currency`. */
export const required = <F extends Schema.Struct.Fields>(identifier: string, fields: F, form: Form) =>
  build(
    identifier,
    fields,
    form,
    { amount: Money.Positive },
    { amount: Schema.String, currency: Currency.Currency }
  )

/** Optional `amount: Money` (above zero) over optional wire `amount` + `currency`. */
export const optional = <F extends Schema.Struct.Fields>(identifier: string, fields: F, form: Form) =>
  build(
    identifier,
    fields,
    form,
    { amount: Strict.optional(Money.Positive) },
    { amount: Strict.optional(Schema.String), currency: Strict.optional(Currency.Currency) }
  )
