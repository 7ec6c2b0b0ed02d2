/**
 * Bypass options of a sale or refund (spec 2.4): skip PIN entry or signature capture.
 */
import * as Schema from "effect/Schema"

/** Bypass options as we send them. */
export class BypassOptions extends Schema.Class<BypassOptions>("BypassOptions")({
  pinBypass: Schema.optional(Schema.Boolean),
  signatureBypass: Schema.optional(Schema.Boolean)
}) {}
