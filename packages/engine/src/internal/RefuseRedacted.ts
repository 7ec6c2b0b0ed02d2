/**
 * The engine never writes a `Redacted` secret to the event store: a payload, an
 * activity's result or error, a workflow's result holding one is refused (a defect naming
 * where it was found) before it is encoded, since a schema may encode a secret to plain
 * text. The redaction rules of the store apply to the rest.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { decodeOrDie, encoderOf } from "./Codecs.js"

/**
 * A value about to be stored in an event holds a `Redacted` secret. The engine never
 * writes one: encode the secret out of the workflow's or activity's schema (keep a
 * reference, a hash or nothing), the redaction rules of the store apply to the rest.
 */
export class RedactedValueRefused extends Schema.TaggedError<RedactedValueRefused>()("RedactedValueRefused", {
  what: Schema.String,
  path: Schema.String
}) {
  override get message(): string {
    return `${this.what} holds a Redacted value at ${this.path}: secrets are never written to the event store`
  }
}

/** The path of the first `Redacted` inside a value, if any (paths built only for a find). */
const findRedacted = (value: unknown, seen: Set<object>): Array<string> | undefined => {
  if (Redacted.isRedacted(value)) return []
  if (typeof value !== "object" || value === null || seen.has(value)) return undefined
  seen.add(value)
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findRedacted(value[index], seen)
      if (found !== undefined) return [`[${index}]`, ...found]
    }
    return undefined
  }
  for (const key of Object.keys(value)) {
    const found = findRedacted((value as Record<string, unknown>)[key], seen)
    if (found !== undefined) return [`.${key}`, ...found]
  }
  return undefined
}

/** Dies with `RedactedValueRefused` when `value` holds a `Redacted`; `what` names the value. */
export const refuseRedacted = (value: unknown, what: string): Effect.Effect<void> => {
  // Most results are primitives: no walk, no set.
  if (typeof value !== "object" || value === null) return Effect.void
  const found = findRedacted(value, new Set())
  return found === undefined
    ? Effect.void
    : Effect.die(new RedactedValueRefused({ what, path: `$${found.join("")}` }))
}

/**
 * An activity's result or error encoded by its schema, after the check that it holds no
 * `Redacted` (a schema may encode a secret to plain text); either refusal is a defect.
 */
export const encodeRefusingRedacted = (
  schema: Schema.Schema.All,
  value: unknown,
  activityName: string,
  what: "result" | "error"
): Effect.Effect<unknown> => {
  if (typeof value === "object" && value !== null) {
    const found = findRedacted(value, new Set())
    if (found !== undefined) {
      return Effect.die(
        new RedactedValueRefused({
          what: `The ${what} of activity "${activityName}"`,
          path: `$${found.join("")}`
        })
      )
    }
  }
  return decodeOrDie(encoderOf(schema), value)
}
