/**
 * Building blocks of the tolerant schemas used on what we receive: enumerations that
 * keep unknown values, optional fields where `null` and `""` mean absent, and numbers
 * that may arrive as strings.
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A value of an enumeration this version does not know, kept verbatim. */
export const Unknown = Schema.String.pipe(Schema.brand("UnknownEnumValue")).annotations({
  identifier: "UnknownEnumValue"
})
/** @see Unknown */
export type Unknown = typeof Unknown.Type

/** A known literal or any other string, kept as an `UnknownEnumValue`. */
export const enumeration = <const L extends readonly [string, ...Array<string>]>(
  strict: Schema.Literal<L>
): Schema.Union<[Schema.Literal<L>, typeof Unknown]> => Schema.Union(strict, Unknown)

/**
 * An optional field where `null` and `""` read as absent. Encoding writes the value or
 * leaves the key out.
 */
export const optional = <A, I>(schema: Schema.Schema<A, I, never>) =>
  Schema.optionalToOptional(
    Schema.Union(Schema.Null, Schema.Literal(""), schema),
    Schema.typeSchema(schema),
    {
      decode: (o) => Option.filter(o, (v): v is A => v !== null && v !== ""),
      encode: (o) => o
    }
  )

/** An integer given as a JSON number or a numeric string, read as bigint. */
export const BigIntFromNumberOrString = Schema.transformOrFail(
  Schema.Union(Schema.Number, Schema.String),
  Schema.BigIntFromSelf,
  {
    strict: true,
    decode: (input, _, ast) => {
      if (typeof input === "number") {
        return Number.isSafeInteger(input)
          ? ParseResult.succeed(BigInt(input))
          : ParseResult.fail(new ParseResult.Type(ast, input, "expected an integer amount in minor units"))
      }
      return /^-?[0-9]+$/.test(input.trim())
        ? ParseResult.succeed(BigInt(input.trim()))
        : ParseResult.fail(new ParseResult.Type(ast, input, "expected an integer amount in minor units"))
    },
    encode: (n) =>
      ParseResult.succeed(
        n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER)
          ? Number(n)
          : n.toString()
      )
  }
).annotations({ identifier: "IntegerAmount" })

/** A boolean, also read from "true" / "false" strings. */
export const BooleanLenient = Schema.transform(
  Schema.Union(Schema.Boolean, Schema.Literal("true", "false", "TRUE", "FALSE", "True", "False")),
  Schema.Boolean,
  {
    strict: true,
    decode: (b) => (typeof b === "boolean" ? b : b.toLowerCase() === "true"),
    encode: (b) => b
  }
)

/** A string, also read from a number or a boolean (kept as its JSON text). */
export const StringLenient = Schema.transform(
  Schema.Union(Schema.String, Schema.Number, Schema.Boolean),
  Schema.String,
  {
    strict: true,
    decode: (v) => String(v),
    encode: (s) => s
  }
)

/** Index signature that keeps every field a version of the service adds. */
export const Extra = Schema.Record({ key: Schema.String, value: Schema.Unknown })
