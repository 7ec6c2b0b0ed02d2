/**
 * Personal data in a stored payload (issue 31): a field declared with {@link optional} is
 * stored wrapped, `{ "$personal": { "salt": <uuid>, "value": … } }` (`HashChain.personal`),
 * so the event store links it by a digest (link version 2) and `tillflow archive
 * erase-personal` can remove it later without breaking the chain. It reads all three forms
 * a log holds:
 *
 * - the wrapper: its value;
 * - the digest a removal left (`{ "$personalDigest": … }`): absent, as if never given;
 * - the plain value, as logs written before the field was wrapped hold it.
 *
 * Only what is stored changes: the decoded value is the field's own type, and what is sent
 * on the wire is built from it as before.
 *
 * @example
 * const Payload = Schema.Struct({ billing: Personal.optional(Billing) })
 * Schema.encodeSync(Payload)({ billing }) // { billing: { $personal: { salt, value: {...} } } }
 */
import * as HashChain from "@tillflow/engine/HashChain"
import * as Option from "effect/Option"
import type * as AST from "effect/SchemaAST"
import * as Schema from "effect/Schema"

/**
 * Annotates the stored forms of a personal field with the plain form's AST: what an API
 * document shows and a caller sends (the wrapper is how it is stored, not an input).
 */
export const PlainAnnotationId: unique symbol = Symbol.for("tillflow/Personal/plain")

/** The plain form of a personal field's stored forms, if `ast` is one. */
export const plainOf = (ast: AST.AST): AST.AST | undefined => {
  const plain = ast.annotations[PlainAnnotationId]
  return plain === undefined ? undefined : (plain as AST.AST)
}

/** Whether a caller's JSON holds a member only storage writes (a wrapper, or a removal's digest). */
export const holdsStoredForm = (json: unknown): boolean => {
  const text = JSON.stringify(json) ?? ""
  return text.includes(`"${HashChain.personalKey}"`) || text.includes(`"${HashChain.personalDigestKey}"`)
}

/** The stored forms of a personal field whose plain encoded form is `I`. */
const storedForms = <I>(plain: Schema.Schema<I, I>) =>
  Schema.Union(
    Schema.Struct({ [HashChain.personalDigestKey]: Schema.String }),
    Schema.Struct({ [HashChain.personalKey]: Schema.Struct({ salt: Schema.String, value: plain }) }),
    plain
  ).annotations({ [PlainAnnotationId]: plain.ast })

type Stored<I> =
  | { readonly [HashChain.personalDigestKey]: string }
  | { readonly [HashChain.personalKey]: { readonly salt: string; readonly value: I } }
  | I

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The value a stored form holds: none once removed. */
const read = <I>(stored: Stored<I>): Option.Option<I> => {
  if (isRecord(stored) && HashChain.personalDigestKey in stored) return Option.none()
  if (isRecord(stored) && HashChain.personalKey in stored)
    return Option.some(
      (stored as { readonly [HashChain.personalKey]: { readonly value: I } })[HashChain.personalKey].value
    )
  return Option.some(stored as I)
}

/**
 * An optional field holding personal data: stored wrapped with a fresh salt, read from the
 * wrapper, the plain form, or as absent once removed.
 */
export const optional = <A, I>(schema: Schema.Schema<A, I, never>) =>
  Schema.optionalToOptional(
    storedForms(Schema.encodedSchema(schema)) as Schema.Schema<Stored<I>, Stored<I>>,
    schema,
    {
      decode: (stored) => Option.flatMap(stored, read),
      encode: (value) => Option.map(value, (plain) => HashChain.personal(plain) as Stored<I>)
    }
  )

/**
 * A JSON object with the members named by `keys` stored as personal data, for a value kept
 * as received JSON rather than encoded by a schema (a result delivered to the callback
 * receiver): each member holding something (not absent, `null` or `""`) wrapped with a fresh
 * salt; any other value, and an object without such a member, returned as it is, so that
 * what holds no personal data is stored exactly as before.
 */
export const wrapMembers = <J>(json: J, keys: ReadonlyArray<string>): J => {
  if (!isRecord(json) || Array.isArray(json)) return json
  const holds = (value: unknown) => value !== undefined && value !== null && value !== ""
  if (!keys.some((key) => holds(json[key]))) return json
  const stored: Record<string, unknown> = { ...json }
  for (const key of keys) if (holds(stored[key])) stored[key] = HashChain.personal(stored[key])
  return stored as J
}

/** The stored form of the personal members `K` of an encoded object `I`. */
export type WithStoredMembers<I, K extends string> = I extends unknown
  ? { readonly [P in keyof I]: P extends K ? Stored<Exclude<I[P], undefined>> : I[P] }
  : never

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * `schema`, its encoded form an object, with the members named by `keys` stored as personal
 * data: each present one is stored wrapped with a fresh salt, and read from the wrapper,
 * the plain form (logs written before), or as absent once removed (the member dropped, so
 * it must be optional in `schema`). For a schema whose encoded form is also what is sent
 * (the wire request of a terminal operation): `schema` itself still encodes the plain
 * value; only a payload field declared with this one stores the wrapper.
 *
 * @example
 * const Payload = Schema.Struct({ request: Personal.members(TransactionRequest, ["billing"]) })
 */
export const members = <A, I, R, const K extends string>(
  schema: Schema.Schema<A, I, R>,
  keys: ReadonlyArray<K>
): Schema.Schema<A, WithStoredMembers<I, K>, R> =>
  Schema.compose(
    Schema.transform(JsonObject, JsonObject, {
      strict: true,
      decode: (stored) => {
        const plain: Record<string, unknown> = { ...stored }
        for (const key of keys) {
          if (!(key in plain)) continue
          const value = read(plain[key])
          if (Option.isSome(value)) plain[key] = value.value
          else delete plain[key]
        }
        return plain
      },
      encode: (plain) => {
        const stored: Record<string, unknown> = { ...plain }
        for (const key of keys) {
          if (stored[key] !== undefined) stored[key] = HashChain.personal(stored[key])
        }
        return stored
      }
    }),
    schema as unknown as Schema.Schema<A, { readonly [x: string]: unknown }, R>,
    { strict: false }
  ) as unknown as Schema.Schema<A, WithStoredMembers<I, K>, R>
