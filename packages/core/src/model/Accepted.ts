/**
 * The 202 body of `POST /transactions`: the operation reached the terminal. Without a
 * callbackUrl it names the `transactionResultId` to poll. The echoed reference is the nil
 * UUID when the request carried none.
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Identifiers from "./Identifiers.js"
import * as Lenient from "./internal/Lenient.js"

/** The 202 body, read leniently. */
export const Accepted = Schema.Struct(
  {
    transactionResultId: Lenient.optional(Identifiers.TransactionResultId),
    statusMessage: Lenient.optional(Schema.String),
    transactionReference: Lenient.optional(Schema.String)
  },
  Lenient.Extra
).annotations({ identifier: "Accepted" })
/** @see Accepted */
export type Accepted = typeof Accepted.Type

/** The echoed reference, unless absent, the nil UUID, or not a UUID v4. */
export const transactionReference = (accepted: Accepted): Option.Option<Identifiers.TransactionReference> =>
  accepted.transactionReference === undefined || accepted.transactionReference === Identifiers.NIL_UUID
    ? Option.none()
    : Option.getRight(Schema.decodeEither(Identifiers.TransactionReference)(accepted.transactionReference))
