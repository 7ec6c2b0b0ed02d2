import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { uuidFrom } from "../src/DeterministicId.js"
import { sha256 } from "../src/internal/sha256.js"

const hex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")

const webCryptoSha256 = (text: string) =>
  Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).pipe(
    Effect.map((buffer) => hex(new Uint8Array(buffer)))
  )

// Lengths around the block boundaries (55, 56, 64 bytes …) and multi-byte characters.
const texts = [
  "",
  "abc",
  "execution-0f3a9c/12/0",
  ...[54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200].map((length) => "x".repeat(length)),
  "é".repeat(40),
  "🙂 terminal/Ré-7",
  "execution-1234567890ab_cdef/3/1"
]

describe("Deterministic ids", () => {
  it("the engine's SHA-256 (@noble/hashes) gives Web Crypto's digests", () =>
    Effect.gen(function* () {
      for (const text of texts) expect(hex(sha256(text))).toBe(yield* webCryptoSha256(text))
      // The FIPS 180-4 example.
      expect(hex(sha256("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }).pipe(Effect.runPromise))

  it("ids are version 5 UUIDs from the first 16 bytes of the digest, as before", () =>
    Effect.gen(function* () {
      for (const text of texts) {
        const digest = (yield* webCryptoSha256(text)).slice(0, 32).split("")
        // Version 5 in the 13th hex digit, variant 10xx in the 17th.
        digest[12] = "5"
        digest[16] = ((parseInt(digest[16] ?? "0", 16) & 0x3) | 0x8).toString(16)
        const expected = digest.join("")
        const id = yield* uuidFrom(text)
        expect(id).toBe(
          `${expected.slice(0, 8)}-${expected.slice(8, 12)}-${expected.slice(12, 16)}-${expected.slice(16, 20)}-${expected.slice(20)}`
        )
        expect(yield* uuidFrom(text)).toBe(id)
      }
    }).pipe(Effect.runPromise))
})
