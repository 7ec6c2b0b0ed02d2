/**
 * Building blocks of the strict schemas used on what we send.
 */
import * as Schema from "effect/Schema"

/**
 * An optional field that is either present with a value or absent — never present as
 * `undefined` — so that a request and its wire form map one to one.
 */
export const optional = <S extends Schema.Schema.All>(schema: S): Schema.optionalWith<S, { exact: true }> =>
  Schema.optionalWith(schema, { exact: true })
