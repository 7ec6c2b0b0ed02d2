/**
 * A receipt or signature as a result carries it: a URL when the terminal could upload
 * it, otherwise the content itself (receipt HTML, base64 signature image). Both forms
 * arrive in the same string field; this module tells them apart.
 */
import * as Schema from "effect/Schema"

/** The content is stored elsewhere: fetch it from this address. */
export class Url extends Schema.TaggedClass<Url>()("Url", { url: Schema.String }) {}

/** The content is inline: receipt HTML or a base64 image. */
export class Inline extends Schema.TaggedClass<Inline>()("Inline", { content: Schema.String }) {}

/** A receipt or signature reference. */
export type ReceiptRef = Url | Inline

const urlLike = /^https?:\/\/[^\s<>"]+$/

/** Reads the field: an absolute http(s) URL without spaces is a `Url`, anything else `Inline`. */
export const fromString = (value: string): ReceiptRef =>
  urlLike.test(value.trim()) ? new Url({ url: value.trim() }) : new Inline({ content: value })

/** The string form of a reference, as the service sends it. */
export const toString = (ref: ReceiptRef): string => (ref._tag === "Url" ? ref.url : ref.content)

/** A receipt or signature field read into a `ReceiptRef`. */
export const ReceiptRef = Schema.transform(Schema.String, Schema.Union(Url, Inline), {
  strict: true,
  decode: (s) => {
    const ref = fromString(s)
    return ref._tag === "Url"
      ? { _tag: "Url" as const, url: ref.url }
      : { _tag: "Inline" as const, content: ref.content }
  },
  encode: (e) => (e._tag === "Url" ? e.url : e.content)
}).annotations({ identifier: "ReceiptRef" })
