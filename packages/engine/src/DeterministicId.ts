/**
 * Identifiers derived from text: the same text always gives the same UUID (name-based, from
 * SHA-256, version 5 layout). Events appended by workflow activities carry such ids, so an
 * activity run again after a crash appends nothing twice (the store refuses a known id).
 */
import * as Effect from "effect/Effect"
import { sha256 } from "./internal/sha256.js"

/** The UUID derived from `text`, computed synchronously. */
export const uuidFromSync = (text: string): string => {
  const bytes = sha256(text).slice(0, 16)
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * A UUID derived from `text` (the same as from Web Crypto's SHA-256 before: the digest is
 * computed synchronously with @noble/hashes, without a promise per id).
 */
export const uuidFrom = (text: string): Effect.Effect<string> => Effect.sync(() => uuidFromSync(text))
