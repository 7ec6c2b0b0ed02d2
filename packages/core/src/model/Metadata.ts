/**
 * Metadata: up to five free fields (`metadata1` … `metadata5`) that a request carries and
 * the result echoes. Each is at most 250 characters of the spec's character set (2.4).
 */
import * as Schema from "effect/Schema"
import * as Strict from "./internal/Strict.js"
import * as Lenient from "./internal/Lenient.js"

/**
 * The characters a metadata field may hold: a-z A-Z 0-9 and - ( ) @ : % _ \ + . ~ # ? & / = { } " ' ,
 * (no space).
 */
export const ALLOWED_CHARACTERS = "a-z A-Z 0-9 - ( ) @ : % _ \\ + . ~ # ? & / = { } \" ' ,"

/** Maximum length of each metadata field. */
export const MAX_LENGTH = 250

const charset = /^[a-zA-Z0-9\-()@:%_\\+.~#?&/={}"',]*$/

/** One metadata field: at most 250 characters of the allowed set. */
export const MetadataValue = Schema.String.pipe(
  Schema.maxLength(MAX_LENGTH, {
    message: (issue) =>
      `a metadata field holds at most ${MAX_LENGTH} characters, got ${String(issue.actual).length}`
  }),
  Schema.pattern(charset, {
    message: () => `a metadata field may only contain ${ALLOWED_CHARACTERS}`
  })
).annotations({ identifier: "MetadataValue" })

/** Metadata as we send it. */
export class Metadata extends Schema.Class<Metadata>("Metadata")({
  metadata1: Strict.optional(MetadataValue),
  metadata2: Strict.optional(MetadataValue),
  metadata3: Strict.optional(MetadataValue),
  metadata4: Strict.optional(MetadataValue),
  metadata5: Strict.optional(MetadataValue)
}) {}

/** Metadata as echoed in a result: any strings, nulls and extra keys tolerated. */
export const MetadataReceived = Schema.Struct(
  {
    metadata1: Lenient.optional(Schema.String),
    metadata2: Lenient.optional(Schema.String),
    metadata3: Lenient.optional(Schema.String),
    metadata4: Lenient.optional(Schema.String),
    metadata5: Lenient.optional(Schema.String)
  },
  Lenient.Extra
).annotations({ identifier: "MetadataReceived" })
/** @see MetadataReceived */
export type MetadataReceived = typeof MetadataReceived.Type
