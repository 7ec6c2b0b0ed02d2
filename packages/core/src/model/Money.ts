/**
 * Money: an integer number of minor units (bigint) and a currency. Terminal operations
 * carry amounts as integer strings in minor units ("1050"), terminal-less endpoints as
 * decimal strings in major units ("10.50"); this module converts between the two with the
 * ISO 4217 exponent of the currency and never touches floating point.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ParseResult from "effect/ParseResult"
import * as Currency from "./Currency.js"
import * as SchemaCache from "@tillflow/engine/SchemaCache"

/**
 * An amount of money in one currency, held as integer minor units.
 *
 * @example
 * const price = Money.make(1050n, "EUR") // 10.50 EUR
 */
export class Money extends Schema.Class<Money>("Money")({
  minorUnits: Schema.BigIntFromSelf,
  currency: Currency.Currency
}) {
  override toString(): string {
    return `${toMajorUnitsString(this)} ${this.currency}`
  }
}

/** Why a string could not be read as an amount of a currency. */
export class InvalidAmount extends Schema.TaggedError<InvalidAmount>()("InvalidAmount", {
  input: Schema.String,
  currency: Schema.String,
  message: Schema.String
}) {}

/** Two amounts of different currencies were combined. */
export class CurrencyMismatch extends Schema.TaggedError<CurrencyMismatch>()("CurrencyMismatch", {
  left: Schema.String,
  right: Schema.String,
  message: Schema.String
}) {}

// `new Money(…)` derives the type side of its fields at every call (the currency is a
// union of ~180 literals): the same constructor with its validation compiled once.
const construct = SchemaCache.construct(Money)

/** Builds a Money from a bigint number of minor units (validated: a bigint and a listed currency). */
export const make = (minorUnits: bigint, currency: Currency.Currency): Money =>
  construct({ minorUnits, currency })

/** Zero in a currency. */
export const zero = (currency: Currency.Currency): Money => make(0n, currency)

const minorPattern = /^-?(0|[1-9][0-9]*)$/
const majorPattern = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/

const describeMinor = 'an integer number of minor units written with digits only (e.g. "1050")'
const describeMajor = (currency: Currency.Currency): string => {
  const e = Currency.exponent(currency)
  return e === 0
    ? `a whole number of ${currency} written with digits only (e.g. "100"): ${currency} has no decimals`
    : `a decimal number of ${currency} with at most ${e} decimals and a dot separator (e.g. "10.${"5".padEnd(e, "0")}")`
}

/**
 * Reads an integer string of minor units, the form of terminal operations ("1050" is
 * 10.50 EUR). Signs are allowed ("-5") except "-0"; no spaces, exponents, leading zeros,
 * decimals or empty strings.
 */
export const fromMinorUnitsString = (
  input: string,
  currency: Currency.Currency
): Either.Either<Money, InvalidAmount> =>
  minorPattern.test(input) && input !== "-0"
    ? Either.right(make(BigInt(input), currency))
    : Either.left(
        new InvalidAmount({
          input,
          currency,
          message: `${JSON.stringify(input)} is not a valid amount: expected ${describeMinor}`
        })
      )

/**
 * Reads a decimal string of major units, the form of terminal-less endpoints ("10.50"
 * EUR, "100" JPY, "1.234" BHD). At most the currency's exponent of decimals; the dot is
 * the only separator; no spaces, exponents, leading zeros, "-0", or a dot without digits.
 */
export const fromMajorUnitsString = (
  input: string,
  currency: Currency.Currency
): Either.Either<Money, InvalidAmount> => {
  const e = Currency.exponent(currency)
  const fail = (why: string) =>
    Either.left(
      new InvalidAmount({
        input,
        currency,
        message: `${JSON.stringify(input)} is not a valid ${currency} amount: ${why}; expected ${describeMajor(currency)}`
      })
    )
  if (!majorPattern.test(input)) return fail("malformed")
  const negative = input.startsWith("-")
  const unsigned = negative ? input.slice(1) : input
  const [whole, fraction = ""] = unsigned.split(".")
  if (fraction.length > e) return fail(`too many decimals (${fraction.length})`)
  const digits = BigInt((whole ?? "0") + fraction.padEnd(e, "0"))
  if (negative && digits === 0n) return fail("negative zero")
  return Either.right(make(negative ? -digits : digits, currency))
}

/** The integer minor-unit string of terminal operations: 10.50 EUR → "1050". */
export const toMinorUnitsString = (money: Money): string => money.minorUnits.toString()

/**
 * The decimal major-unit string of terminal-less endpoints, always with exactly the
 * currency's number of decimals: 1050 EUR → "10.50", 100 JPY → "100", 1234 BHD → "1.234".
 */
export const toMajorUnitsString = (money: Money): string => {
  const e = Currency.exponent(money.currency)
  const negative = money.minorUnits < 0n
  const digits = (negative ? -money.minorUnits : money.minorUnits).toString()
  if (e === 0) return (negative ? "-" : "") + digits
  const padded = digits.padStart(e + 1, "0")
  return `${negative ? "-" : ""}${padded.slice(0, -e)}.${padded.slice(-e)}`
}

const sameCurrency = (a: Money, b: Money): Either.Either<Currency.Currency, CurrencyMismatch> =>
  a.currency === b.currency
    ? Either.right(a.currency)
    : Either.left(
        new CurrencyMismatch({
          left: a.currency,
          right: b.currency,
          message: `cannot combine ${a.currency} with ${b.currency}`
        })
      )

/** a + b, when both have the same currency. */
export const add = (a: Money, b: Money): Either.Either<Money, CurrencyMismatch> =>
  Either.map(sameCurrency(a, b), (c) => make(a.minorUnits + b.minorUnits, c))

/** a − b, when both have the same currency. */
export const subtract = (a: Money, b: Money): Either.Either<Money, CurrencyMismatch> =>
  Either.map(sameCurrency(a, b), (c) => make(a.minorUnits - b.minorUnits, c))

/** -1, 0 or 1 as a is below, equal to or above b, when both have the same currency. */
export const compare = (a: Money, b: Money): Either.Either<-1 | 0 | 1, CurrencyMismatch> =>
  Either.map(sameCurrency(a, b), () =>
    a.minorUnits < b.minorUnits ? -1 : a.minorUnits > b.minorUnits ? 1 : 0
  )

/** Whether the amount is above zero. */
export const isPositive = (money: Money): boolean => money.minorUnits > 0n

/** The amount with its sign flipped. */
export const negate = (money: Money): Money => make(-money.minorUnits, money.currency)

/**
 * How `percentOf` rounds a share that falls between two minor units:
 * - "down": toward zero (a tolerance computed this way never allows more than the rule);
 * - "up": away from zero;
 * - "halfEven": to the nearest, ties to the even neighbour (banker's rounding).
 */
export type Rounding = "down" | "up" | "halfEven"

/**
 * `percent` per cent of an amount, in whole minor units, computed on bigint:
 * `minorUnits × percent / 100`, rounded as asked. `percent` is a whole number (15, 20, 25)
 * given as a bigint or a safe integer.
 *
 * @example
 * percentOf(Money.make(1999n, "EUR"), 15, "down") // 299 minor units (2.9985 rounds down)
 */
export const percentOf = (money: Money, percent: bigint | number, rounding: Rounding): Money => {
  if (typeof percent === "number" && !Number.isSafeInteger(percent)) {
    throw new RangeError(`percentOf takes a whole percentage, got ${percent}`)
  }
  const product = money.minorUnits * BigInt(percent)
  const negative = product < 0n
  const abs = negative ? -product : product
  const quotient = abs / 100n
  const remainder = abs % 100n
  let rounded = quotient
  if (remainder !== 0n) {
    if (rounding === "up") rounded = quotient + 1n
    else if (rounding === "halfEven") {
      if (remainder > 50n || (remainder === 50n && quotient % 2n === 1n)) rounded = quotient + 1n
    }
  }
  return make(negative ? -rounded : rounded, money.currency)
}

/** The Money schema on its own (no wire form): for events and typed requests. */
export const MoneyFromSelf: Schema.Schema<Money, Money> = Schema.typeSchema(Money)

/**
 * The largest amount a request may carry, in minor units: twelve digits, the width of the
 * amount a card terminal authorises (EMV "Amount, Authorised", n12) — 9,999,999,999.99 EUR.
 * Beyond it a terminal cannot charge it, and past 2^53 the service's results, which carry
 * amounts as JSON numbers, could not even say it exactly. Results read are not bounded
 * (tolerant in what we receive); requests are, wherever they enter.
 */
export const MAX_MINOR_UNITS = 999_999_999_999n

/** Whether an amount (of either sign) is within `MAX_MINOR_UNITS`. */
export const withinLimit = (money: Money): boolean =>
  money.minorUnits <= MAX_MINOR_UNITS && money.minorUnits >= -MAX_MINOR_UNITS

/** What is wrong with an amount beyond `MAX_MINOR_UNITS`, naming the limit in both forms. */
export const limitMessage = (money: Money): string =>
  `the amount ${toMajorUnitsString(money)} ${money.currency} is above the limit: at most ${MAX_MINOR_UNITS} minor units (${toMajorUnitsString(make(MAX_MINOR_UNITS, money.currency))} ${money.currency}), the twelve digits a card terminal can charge`

/** Refuses an amount beyond `MAX_MINOR_UNITS` with `limitMessage`. */
export const checkLimit = (money: Money): Either.Either<Money, InvalidAmount> =>
  withinLimit(money)
    ? Either.right(money)
    : Either.left(
        new InvalidAmount({
          input: toMajorUnitsString(money),
          currency: money.currency,
          message: limitMessage(money)
        })
      )

/** Money a request may carry: within `MAX_MINOR_UNITS` (either sign, zero included). */
export const WithinLimit: Schema.Schema<Money, Money> = MoneyFromSelf.pipe(
  Schema.filter((m) => withinLimit(m) || limitMessage(m))
).annotations({ identifier: "MoneyWithinLimit" })

/** Money above zero and within `MAX_MINOR_UNITS`: what a payment request may carry. */
export const Positive: Schema.Schema<Money, Money> = MoneyFromSelf.pipe(
  Schema.filter((m) => m.minorUnits > 0n || "the amount must be above zero"),
  Schema.filter((m) => withinLimit(m) || limitMessage(m))
).annotations({ identifier: "PositiveMoney" })

/** Money of zero or more, within `MAX_MINOR_UNITS`: a tip a request may set (zero takes it away). */
export const NotNegative: Schema.Schema<Money, Money> = MoneyFromSelf.pipe(
  Schema.filter((m) => m.minorUnits >= 0n || "the amount must not be negative"),
  Schema.filter((m) => withinLimit(m) || limitMessage(m))
).annotations({ identifier: "NotNegativeMoney" })

/**
 * An amount written as integer minor units, without its currency (e.g. `baseAmount` of a
 * tip configuration): digits only, above zero.
 */
export const PositiveMinorUnitsString = Schema.String.pipe(
  Schema.pattern(/^[1-9][0-9]*$/, {
    message: () => `expected ${describeMinor}, above zero`
  }),
  Schema.brand("PositiveMinorUnitsString")
).annotations({ identifier: "PositiveMinorUnitsString" })
/** @see PositiveMinorUnitsString */
export type PositiveMinorUnitsString = typeof PositiveMinorUnitsString.Type

/**
 * An amount written as a decimal in major units without its currency, as the
 * terminal-less endpoints take it (the currency is the original transaction's): digits,
 * optionally a dot and decimals ("5.25", "20").
 */
export const DecimalString = Schema.String.pipe(
  Schema.pattern(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/, {
    message: () => 'expected a decimal amount in major units with a dot separator (e.g. "10.50")'
  }),
  Schema.brand("DecimalString")
).annotations({ identifier: "DecimalString" })
/** @see DecimalString */
export type DecimalString = typeof DecimalString.Type

/** The decimal major-unit string of a Money, for endpoints whose body has no currency. */
export const toDecimalString = (money: Money): DecimalString => DecimalString.make(toMajorUnitsString(money))

const wireFields = Schema.Struct({ amount: Schema.String, currency: Currency.Currency })

const fromFields = (form: "minor" | "major") =>
  Schema.transformOrFail(wireFields, MoneyFromSelf, {
    strict: true,
    decode: (wire, _, ast) =>
      Either.mapLeft(
        form === "minor"
          ? fromMinorUnitsString(wire.amount, wire.currency)
          : fromMajorUnitsString(wire.amount, wire.currency),
        (e) => new ParseResult.Pointer("amount", wire, new ParseResult.Type(ast, wire.amount, e.message))
      ),
    encode: (money) =>
      ParseResult.succeed({
        amount: form === "minor" ? toMinorUnitsString(money) : toMajorUnitsString(money),
        currency: money.currency
      })
  })

/** Money from/to `{ amount: "1050", currency: "EUR" }` (terminal operations). */
export const FromMinorUnitsFields = fromFields("minor").annotations({ identifier: "MoneyFromMinorUnits" })

/** Money from/to `{ amount: "10.50", currency: "EUR" }` (terminal-less endpoints). */
export const FromMajorUnitsFields = fromFields("major").annotations({ identifier: "MoneyFromMajorUnits" })

/**
 * `FromMinorUnitsFields` for what a request asks (a workflow's payload): within
 * `MAX_MINOR_UNITS`, refused with `limitMessage` beyond it. Recorded events keep the
 * unbounded form: what was recorded is always read back.
 */
export const RequestedFromMinorUnitsFields = Schema.compose(FromMinorUnitsFields, WithinLimit).annotations({
  identifier: "RequestedMoneyFromMinorUnits"
})

/** `FromMinorUnitsFields` for an amount a request charges, refunds or captures: above zero, within the limit. */
export const RequestedPositiveFromMinorUnitsFields = Schema.compose(
  FromMinorUnitsFields,
  Positive
).annotations({
  identifier: "RequestedPositiveMoneyFromMinorUnits"
})

/** `FromMinorUnitsFields` for a tip a request sets: zero or more, within the limit. */
export const RequestedNotNegativeFromMinorUnitsFields = Schema.compose(
  FromMinorUnitsFields,
  NotNegative
).annotations({ identifier: "RequestedNotNegativeMoneyFromMinorUnits" })
