/**
 * Credentials (`merchantAuth`) that fund a sale or refund to another merchant account
 * (spec 2.4). `externalId` (a backend lookup, which replaces mid/tid/mcc at the service) or
 * explicit mid/tid/mcc overrides, or both, as the service's own examples send them;
 * `acquirer` is required on each credential when more than one is given.
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import * as Enumerations from "./Enumerations.js"

/** One credential. */
export class Credential extends Schema.Class<Credential>("Credential")(
  Schema.Struct({
    acquirer: Strict.optional(Enumerations.Acquirer),
    mid: Strict.optional(Schema.NonEmptyString),
    tid: Strict.optional(Schema.NonEmptyString),
    mcc: Strict.optional(
      Schema.String.pipe(
        Schema.pattern(/^[0-9]{4}$/, { message: () => "an mcc is a four-digit merchant category code" })
      )
    ),
    externalId: Strict.optional(Schema.NonEmptyString)
  }).pipe(
    Schema.filter((c) => {
      if (c.externalId === undefined && c.mid === undefined && c.tid === undefined && c.mcc === undefined) {
        return {
          path: ["externalId"],
          message: "a credential needs externalId or at least one of mid, tid, mcc"
        }
      }
      return true
    })
  )
) {}

/** `merchantAuth`: a non-empty list of credentials; with several, each names its acquirer. */
export const MerchantAuth = Schema.NonEmptyArray(Credential)
  .pipe(
    Schema.filter((credentials) => {
      if (credentials.length < 2) return true
      const index = credentials.findIndex((c) => c.acquirer === undefined)
      return index === -1
        ? true
        : {
            path: [index, "acquirer"],
            message: "acquirer is required on every credential when more than one is given"
          }
    })
  )
  .annotations({ identifier: "MerchantAuth" })
/** @see MerchantAuth */
export type MerchantAuth = typeof MerchantAuth.Type
