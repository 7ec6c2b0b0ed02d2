/** Optional request fields that take more than one flag. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Output from "../Output.js"

/**
 * The `billing` object of a sale from `--billing-zip-code` and `--billing-address` (the
 * spec's Billing: zipCode required, address optional), or nothing when neither is given.
 */
export const billingField = (o: {
  readonly billingZipCode: Option.Option<string>
  readonly billingAddress: Option.Option<string>
}): Effect.Effect<
  { readonly billing?: { readonly zipCode: string; readonly address?: string } },
  Output.UsageError
> => {
  if (Option.isNone(o.billingZipCode)) {
    return Option.isSome(o.billingAddress)
      ? Effect.fail(
          new Output.UsageError({
            message: "--billing-address needs --billing-zip-code (the spec's billing.zipCode is required)"
          })
        )
      : Effect.succeed({})
  }
  if (o.billingZipCode.value.trim() === "") {
    return Effect.fail(new Output.UsageError({ message: "--billing-zip-code must not be empty" }))
  }
  return Effect.succeed({
    billing: {
      zipCode: o.billingZipCode.value,
      ...(Option.isSome(o.billingAddress) ? { address: o.billingAddress.value } : {})
    }
  })
}
