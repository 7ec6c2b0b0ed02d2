/**
 * Money remittance options (spec 2.4): the sender's name and country, mandatory for the
 * first network's transactions under merchant categories 4829 and 6540.
 */
import * as Schema from "effect/Schema"
import * as Lenient from "./internal/Lenient.js"

/**
 * Full name of the remitter. The spec says "letters only" and its own examples send
 * "John Doe": letters of any alphabet, names separated by single spaces, no digits or
 * punctuation (strict in what we send; a received echo is not checked).
 */
export const FullName = Schema.String.pipe(
  Schema.pattern(/^\p{L}+( \p{L}+)*$/u, {
    message: () =>
      'fullName may only contain letters, names separated by single spaces (the spec says letters only; its examples send "John Doe"): no digits, punctuation, or leading, trailing or double spaces'
  })
).annotations({
  identifier: "FullName",
  arbitrary: () => (fc) => fc.stringMatching(/^[A-Za-zÀ-ÖØ-öø-ÿ]{1,12}( [A-Za-zÀ-ÖØ-öø-ÿ]{1,12}){0,2}$/)
})

/** ISO 3166-1 alpha-3 country code: three upper-case letters. */
export const CountryCode = Schema.String.pipe(
  Schema.pattern(/^[A-Z]{3}$/, {
    message: () => "countryCode must be an ISO 3166-1 alpha-3 code: three upper-case letters"
  })
).annotations({ identifier: "CountryCode" })

/** Money remittance options as we send them. */
export class MoneyRemittanceOptions extends Schema.Class<MoneyRemittanceOptions>("MoneyRemittanceOptions")({
  fullName: FullName,
  countryCode: CountryCode
}) {}

/** Money remittance options as echoed in a result. */
export const MoneyRemittanceOptionsReceived = Schema.Struct(
  {
    fullName: Lenient.optional(Schema.String),
    countryCode: Lenient.optional(Schema.String)
  },
  Lenient.Extra
).annotations({ identifier: "MoneyRemittanceOptionsReceived" })
/** @see MoneyRemittanceOptionsReceived */
export type MoneyRemittanceOptionsReceived = typeof MoneyRemittanceOptionsReceived.Type
