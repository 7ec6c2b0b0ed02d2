/**
 * The merchants' API keys sealed for the store (issue 32): envelope encryption under a
 * key-encryption key from the configuration. What is stored holds neither the key nor
 * anything that opens it; a sealed key opens only with its KEK and its context; a KEK is
 * rotated by rewrapping the data keys, the ciphertexts unchanged, while the old KEK is
 * still known as previous.
 */
import { describe, expect, it } from "@effect/vitest"
import { KeyWrapper } from "@tillflow/core"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"

const bytes = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))
const kek = (id: string, fill: number): KeyWrapper.Kek =>
  Either.getOrThrow(KeyWrapper.parseKek(`${id}:${bytes(fill)}`))
const apiKey = "sk_live_4f2a9c7e1b3d5a6f8e9c0d1b2a3f4e5d"

describe("KeyWrapper (envelope encryption of API keys)", () => {
  it.effect(
    "seals under the current KEK: the stored form holds no key, opens back, and only in its context",
    () =>
      Effect.gen(function* () {
        const wrapper = KeyWrapper.aesGcm(kek("kek-1", 7))
        const sealed = yield* wrapper.seal(Redacted.make(apiKey), "merchant-7/key-1")
        const stored = JSON.stringify(sealed)
        expect(stored).not.toContain(apiKey)
        expect(stored).not.toContain(btoa(apiKey).slice(0, 16))
        expect(sealed).toMatchObject({ v: 1, kek: "kek-1" })
        expect(Redacted.value(yield* wrapper.open(sealed, "merchant-7/key-1"))).toBe(apiKey)
        // Two seals of one key differ (a fresh data key and IVs each time).
        const again = yield* wrapper.seal(Redacted.make(apiKey), "merchant-7/key-1")
        expect(again.data).not.toBe(sealed.data)
        expect(again.dek).not.toBe(sealed.dek)
        // Copied onto another merchant's row, it does not open; nor does a tampered byte.
        const moved = yield* Effect.flip(wrapper.open(sealed, "merchant-8/key-1"))
        expect(moved.message).toContain("opening the key failed")
        expect(moved.message).not.toContain(apiKey)
        const flipped = sealed.data.slice(0, -4) + (sealed.data.slice(-4) === "AAAA" ? "BBBB" : "AAAA")
        expect(
          (yield* Effect.flip(wrapper.open({ ...sealed, data: flipped }, "merchant-7/key-1")))._tag
        ).toBe("KeyWrapperError")
        // Another KEK under the same id does not open it.
        const other = KeyWrapper.aesGcm(kek("kek-1", 8))
        expect((yield* Effect.flip(other.open(sealed, "merchant-7/key-1"))).message).toContain(
          "unwrapping the data key failed"
        )
      })
  )

  it.effect("rotates without downtime: the old KEK as previous opens, rewrap moves the data key only", () =>
    Effect.gen(function* () {
      const before = KeyWrapper.aesGcm(kek("kek-1", 7))
      const sealed = yield* before.seal(Redacted.make(apiKey), "merchant-7/key-1")
      const during = KeyWrapper.aesGcm(kek("kek-2", 9), [kek("kek-1", 7)])
      expect(Redacted.value(yield* during.open(sealed, "merchant-7/key-1"))).toBe(apiKey)
      const rewrapped = yield* during.rewrap(sealed)
      expect(rewrapped.kek).toBe("kek-2")
      expect(rewrapped.data).toBe(sealed.data)
      expect(yield* during.rewrap(rewrapped)).toBe(rewrapped)
      const after = KeyWrapper.aesGcm(kek("kek-2", 9))
      expect(Redacted.value(yield* after.open(rewrapped, "merchant-7/key-1"))).toBe(apiKey)
      // Not rewrapped, and the old KEK dropped: said by name.
      expect((yield* Effect.flip(after.open(sealed, "merchant-7/key-1"))).message).toContain(
        "the key-encryption key kek-1 is not configured (current kek-2)"
      )
    })
  )

  it.effect(
    "reads its KEKs from TILLFLOW_KEK and TILLFLOW_KEK_PREVIOUS, refusing a malformed one by name",
    () =>
      Effect.gen(function* () {
        const withEnv = (env: Record<string, string>) =>
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
        const read = yield* KeyWrapper.config.pipe(
          withEnv({ TILLFLOW_KEK: `kek-2:${bytes(9)}`, TILLFLOW_KEK_PREVIOUS: `kek-1:${bytes(7)}` })
        )
        expect([read.current.id, read.previous.map((p) => p.id)]).toEqual(["kek-2", ["kek-1"]])
        const short = yield* Effect.flip(
          KeyWrapper.config.pipe(withEnv({ TILLFLOW_KEK: `kek-2:${btoa("short")}` }))
        )
        expect(String(short)).toContain("5 bytes where 32 are needed")
        expect(String(short)).not.toContain(btoa("short"))
        const noId = yield* Effect.flip(KeyWrapper.config.pipe(withEnv({ TILLFLOW_KEK: bytes(9) })))
        expect(String(noId)).toContain("<id>:<base64 of 32 bytes>")
      })
  )
})
