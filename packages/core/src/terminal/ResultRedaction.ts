/**
 * What we receive from terminals is stored, and a payment outcome is never dropped; but
 * a result may carry what must never be stored (`unMaskedPan` of a loyalty card read by
 * `cardPan`, a stray full card number in free text). This module makes a received body
 * storable: it removes every field the store's redaction rules refuse by name (naming it
 * in `redactedFields`), and masks every full card number found in a string or number
 * (first six and last four digits kept, as `maskedCardNumber` does). What remains passes
 * `Redaction.check`, so the result itself, not only a note about it, reaches the log.
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as EventStore from "@tillflow/engine/EventStore"
import * as Redaction from "@tillflow/engine/Redaction"
import {
  TransactionResult as TransactionResultSchema,
  type TransactionResult,
  TransactionStatusResult as TransactionStatusResultSchema,
  type TransactionStatusResult
} from "../model/TransactionResult.js"

/** A received JSON body made storable, and the paths of the fields removed from it. */
export interface Sanitised {
  readonly value: EventStore.Json
  readonly redactedFields: ReadonlyArray<string>
}

const digitRuns = /\d+(?:[ -]\d+)*/g

const maskDigits = (digits: string): string =>
  digits.length <= 10
    ? "*".repeat(digits.length)
    : digits.slice(0, 6) + "*".repeat(digits.length - 10) + digits.slice(-4)

/**
 * Masks every full card number in `text` (a run of digit groups that `Redaction` reads as
 * a card number): separators are dropped, the first six and last four digits kept.
 *
 * @example
 * maskCardNumbers("card 4111 1111 1111 1111 ok") // "card 411111******1111 ok"
 */
export const maskCardNumbers = (text: string): string =>
  Redaction.containsCardNumber(text)
    ? text.replace(digitRuns, (run) => {
        if (!Redaction.containsCardNumber(run)) return run
        return maskDigits(run.replace(/[ -]/g, ""))
      })
    : text

const keyPath = (path: string, key: string): string =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`

const sanitiseAt = (value: unknown, path: string, removed: Array<string>): EventStore.Json => {
  if (value === null || typeof value === "boolean") return value
  if (typeof value === "string") return maskCardNumbers(value)
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return null
    return Number.isSafeInteger(value) && value > 0 && Redaction.isCardNumber(String(value))
      ? maskDigits(String(value))
      : value
  }
  if (typeof value === "bigint") return value.toString()
  if (Array.isArray(value)) return value.map((item, i) => sanitiseAt(item, `${path}[${i}]`, removed))
  if (typeof value === "object") {
    const out: Record<string, EventStore.Json> = {}
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined) continue
      if (Option.isSome(Redaction.ruleForName(key))) {
        removed.push(keyPath(path, key))
        continue
      }
      out[key] = sanitiseAt(member, keyPath(path, key), removed)
    }
    return out
  }
  return null
}

/**
 * Makes any received JSON value storable (see the module comment). Paths are reported
 * from `$`.
 *
 * @example
 * sanitise({ finStatus: "PROCESSED", unMaskedPan: "6012…" })
 * // { value: { finStatus: "PROCESSED" }, redactedFields: ["$.unMaskedPan"] }
 */
export const sanitise = (value: unknown): Sanitised => {
  const removed: Array<string> = []
  const out = sanitiseAt(value, "$", removed)
  return { value: out, redactedFields: removed }
}

/** Masks card numbers in a raw body that is not JSON, and bounds its length. */
export const sanitiseText = (text: string, maxLength = 16_384): string => {
  const bounded = text.length > maxLength ? text.slice(0, maxLength) : text
  return maskCardNumbers(bounded)
}

const dropPan = <R extends { readonly unMaskedPan?: unknown }>(result: R): R => {
  const { unMaskedPan: _omitted, ...rest } = result
  return rest as R
}

/**
 * A decoded result made storable: encoded to its JSON form, sanitised, decoded again (if a
 * masked value no longer decodes, the result minus `unMaskedPan`). What an activity
 * returns and an engine records passes through here.
 */
export const sanitiseResult = (result: TransactionResult): TransactionResult =>
  Either.getOrElse(
    Schema.decodeUnknownEither(TransactionResultSchema)(
      sanitise(Schema.encodeSync(TransactionResultSchema)(result)).value
    ),
    () => dropPan(result)
  )

/** A status-endpoint result made storable (see {@link sanitiseResult}). */
export const sanitiseStatusResult = (result: TransactionStatusResult): TransactionStatusResult =>
  Either.getOrElse(
    Schema.decodeUnknownEither(TransactionStatusResultSchema)(
      sanitise(Schema.encodeSync(TransactionStatusResultSchema)(result)).value
    ),
    () => dropPan(result)
  )
