/**
 * Bypass options of a sale or refund (spec 2.4): skip PIN entry or signature capture.
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"

/** Bypass options as we send them. */
export class BypassOptions extends Schema.Class<BypassOptions>("BypassOptions")({
  pinBypass: Strict.optional(Schema.Boolean),
  signatureBypass: Strict.optional(Schema.Boolean)
}) {}
