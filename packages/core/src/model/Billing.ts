/**
 * Billing data for the address verification check (spec 2.2 rule 3, from 2.30.0):
 * `zipCode` is required inside the object, `address` optional (its format is not shown).
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"

/** Billing as we send it. */
export class Billing extends Schema.Class<Billing>("Billing")({
  zipCode: Schema.String.pipe(Schema.minLength(1, { message: () => "billing.zipCode must not be empty" })),
  address: Strict.optional(Schema.String)
}) {}
