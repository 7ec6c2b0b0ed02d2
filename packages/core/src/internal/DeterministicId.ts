/**
 * Identifiers derived from text: the same text always gives the same UUID (name-based, from
 * SHA-256, version 5 layout). Events appended by workflow activities carry such ids, so an
 * activity run again after a crash appends nothing twice (the store refuses a known id).
 */
import * as Effect from "effect/Effect"

const encoder = new TextEncoder()

/** A UUID derived from `text`. */
export const uuidFrom = (text: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", encoder.encode(text))),
    (buffer) => {
      const bytes = new Uint8Array(buffer).slice(0, 16)
      bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50
      bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
      const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
    }
  )
