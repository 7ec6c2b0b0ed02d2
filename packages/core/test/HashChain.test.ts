import { describe, expect, it } from "@effect/vitest"
import { HashChain } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

describe("HashChain.canonicalJson", () => {
  it("sorts members, drops whitespace and undefined members, keeps array order", () => {
    expect(HashChain.canonicalJson({ b: 1, a: [3, 1, { d: null, c: "x" }], u: undefined })).toEqual(
      Either.right('{"a":[3,1,{"c":"x","d":null}],"b":1}')
    )
  })

  it("encodes two objects with the same members in different order identically", () => {
    expect(HashChain.canonicalJson({ x: 1, y: { q: true, p: false } })).toEqual(
      HashChain.canonicalJson({ y: { p: false, q: true }, x: 1 })
    )
  })

  const refused: ReadonlyArray<readonly [string, unknown, string]> = [
    ["a bigint", { amount: 10n }, "$.amount"],
    ["a non-finite number", { n: [Number.NaN] }, "$.n[0]"],
    ["U+0000 in a string", { s: "a\u0000b" }, "$.s"],
    ["a lone surrogate", { s: "\ud800" }, "$.s"],
    ["a Date", { at: new Date(0) }, "$.at"],
    ["undefined at the root", undefined, "$"]
  ]
  for (const [name, value, path] of refused) {
    it(`refuses ${name} at ${path}`, () => {
      const result = HashChain.canonicalJson(value)
      expect(Either.isLeft(result) && result.left.path).toBe(path)
    })
  }
})

const input = (previousHash: string, version: number): HashChain.LinkInput => ({
  previousHash,
  streamId: "s-1",
  version,
  type: "Happened",
  schemaVersion: 1,
  dataJson: '{"n":1}',
  metadataJson: "{}"
})

describe("HashChain.link", () => {
  it.effect("is the SHA-256 of the canonical array of the seven parts", () =>
    Effect.gen(function* () {
      const text = HashChain.linkText(input(HashChain.genesis, 1))
      expect(text).toBe(`["${HashChain.genesis}","s-1",1,"Happened",1,{"n":1},{}]`)
      // Known answer: sha256 of "abc".
      expect(yield* HashChain.sha256Hex("abc")).toBe(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      )
      expect(yield* HashChain.link(input(HashChain.genesis, 1))).toBe(yield* HashChain.sha256Hex(text))
    })
  )

  it.effect("changes when any part changes", () =>
    Effect.gen(function* () {
      const base = yield* HashChain.link(input(HashChain.genesis, 1))
      const variants = [
        { ...input(HashChain.genesis, 1), previousHash: "1".repeat(64) },
        { ...input(HashChain.genesis, 1), streamId: "s-2" },
        { ...input(HashChain.genesis, 1), version: 2 },
        { ...input(HashChain.genesis, 1), type: "Other" },
        { ...input(HashChain.genesis, 1), schemaVersion: 2 },
        { ...input(HashChain.genesis, 1), dataJson: '{"n":2}' },
        { ...input(HashChain.genesis, 1), metadataJson: '{"m":1}' }
      ]
      for (const variant of variants) expect(yield* HashChain.link(variant)).not.toBe(base)
    })
  )
})

describe("HashChain.verifyStream", () => {
  const makeStream = Effect.gen(function* () {
    const linkables = [1, 2, 3].map((n) => ({
      type: "Happened",
      schemaVersion: 1,
      dataJson: `{"n":${n}}`,
      metadataJson: "{}"
    }))
    const hashes = yield* HashChain.chain(HashChain.genesis, "s-1", 1, linkables)
    return hashes.map((hash, i) => ({
      streamId: "s-1",
      version: i + 1,
      type: "Happened",
      schemaVersion: 1,
      data: { n: i + 1 },
      metadata: {},
      hash
    }))
  })

  it.effect("accepts an intact chain and its head", () =>
    Effect.gen(function* () {
      const events = yield* makeStream
      const head = { version: 3, lastHash: events[2].hash }
      expect(yield* HashChain.verifyStream("s-1", events, Option.some(head))).toEqual(Option.none())
    })
  )

  it.effect("reports an edited event at its own version", () =>
    Effect.gen(function* () {
      const events = yield* makeStream
      const tampered = events.map((e) => (e.version === 2 ? { ...e, data: { n: 20 } } : e))
      const broken = Option.getOrThrow(yield* HashChain.verifyStream("s-1", tampered))
      expect(broken.version).toBe(2)
      expect(broken.kind).toBe("HashMismatch")
      expect(broken.found).toBe(events[1].hash)
      expect(broken.expected).not.toBe(events[1].hash)
    })
  )

  it.effect("reports an edited event whose hash was recomputed at its successor", () =>
    Effect.gen(function* () {
      const events = yield* makeStream
      const rehashed = yield* HashChain.link({
        previousHash: events[0].hash,
        streamId: "s-1",
        version: 2,
        type: "Happened",
        schemaVersion: 1,
        dataJson: '{"n":20}',
        metadataJson: "{}"
      })
      const tampered = events.map((e) => (e.version === 2 ? { ...e, data: { n: 20 }, hash: rehashed } : e))
      const broken = Option.getOrThrow(yield* HashChain.verifyStream("s-1", tampered))
      expect(broken.version).toBe(3)
    })
  )

  it.effect("reports a removed event as a version gap and a removed last event at the head", () =>
    Effect.gen(function* () {
      const events = yield* makeStream
      const gap = Option.getOrThrow(yield* HashChain.verifyStream("s-1", [events[0], events[2]]))
      expect(gap.kind).toBe("VersionGap")
      expect(gap.version).toBe(2)
      const truncated = Option.getOrThrow(
        yield* HashChain.verifyStream(
          "s-1",
          events.slice(0, 2),
          Option.some({ version: 3, lastHash: events[2].hash })
        )
      )
      expect(truncated.kind).toBe("HeadMismatch")
      expect(truncated.version).toBe(3)
    })
  )
})
