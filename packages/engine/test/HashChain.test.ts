import { describe, expect, it } from "@effect/vitest"
import { HashChain } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
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

  it("writes strings and numbers exactly as JSON.stringify does, escapes and unicode included", () => {
    const values: ReadonlyArray<unknown> = [
      "",
      "plain",
      'quote " backslash \\ slash /',
      "\n\r\t\b\f\u0001\u001f\u007f",
      "\u2028\u2029",
      "é ü ñ 支払い 결제 دفع",
      "😀 👩‍👩‍👧 🇫🇷",
      0,
      -0,
      1,
      -1,
      0.1,
      1e21,
      1.5e-7,
      -123.456,
      Number.MAX_SAFE_INTEGER,
      Number.MIN_VALUE,
      true,
      false,
      null
    ]
    for (const value of values)
      expect(HashChain.canonicalJson(value)).toEqual(Either.right(JSON.stringify(value)))
    // Members already in code-unit order come out as JSON.stringify writes them.
    const sorted = { "": 1, '"q"': [values], A: { "a b": "😀", z: {} }, a: [[], [null]], é: "\n" }
    expect(HashChain.canonicalJson(sorted)).toEqual(Either.right(JSON.stringify(sorted)))
  })

  const refused: ReadonlyArray<readonly [string, unknown, string]> = [
    ["U+0000 in a member name", { ok: { "a\u0000": 1 } }, "$.ok"],
    ["a lone surrogate in a member name", { list: [{ "\udc00": 1 }] }, "$.list[0]"],
    ["a lone surrogate after escapes", { s: 'say "hi"\n\ud800' }, "$.s"],
    ["a function", { f: () => 1 }, "$.f"],
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

  it.effect(
    "the default SHA-256 (@noble/hashes, synchronous) is Web Crypto's digest, on any text and at every padding length",
    () =>
      Effect.gen(function* () {
        // Every length from 0 to 200 bytes crosses the 55/56/64-byte padding boundaries;
        // multi-byte characters and astral symbols check the UTF-8 encoding.
        const texts = [
          ...Array.from({ length: 201 }, (_, n) => "x".repeat(n)),
          "ü€𝄞",
          "a".repeat(55) + "é",
          JSON.stringify({ amount: "10.50", note: "ümlaut 🚀", nested: [1, 2, { deep: true }] }),
          ...FastCheck.sample(FastCheck.string({ unit: "binary", maxLength: 300 }), 300)
        ]
        for (const text of texts) {
          expect(yield* HashChain.sha256Hex(text), JSON.stringify(text)).toBe(
            yield* HashChain.webCryptoSha256Hex(text)
          )
        }
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

describe("HashChain.chainSync", () => {
  it.effect("computes the hashes chain computes (Web Crypto), given a synchronous SHA-256", () =>
    Effect.gen(function* () {
      const linkables = ["é", "😀", '"q"'].map((text, i) => ({
        type: `Type ${text}`,
        schemaVersion: i + 1,
        dataJson: JSON.stringify({ text }),
        metadataJson: "{}"
      }))
      const expected = yield* HashChain.chain(HashChain.genesis, "s-ü", 5, linkables)
      const seen: Array<string> = []
      // A synchronous SHA-256 made of the Web Crypto one, by hashing every text up front.
      const texts = linkables.map((_, i) =>
        HashChain.linkText({
          previousHash: i === 0 ? HashChain.genesis : expected[i - 1],
          streamId: "s-ü",
          version: 5 + i,
          ...linkables[i]
        })
      )
      const digests = new Map<string, string>()
      for (const text of texts) digests.set(text, yield* HashChain.sha256Hex(text))
      const hashes = HashChain.chainSync(HashChain.genesis, "s-ü", 5, linkables, (text) => {
        seen.push(text)
        return digests.get(text) ?? "not the expected text"
      })
      expect(hashes).toEqual(expected)
      expect(seen).toEqual(texts)
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

describe("HashChain personal data (link version 2)", () => {
  const data = {
    reference: "r-1",
    items: [{ holder: HashChain.personal("Ada Lovelace") }, { holder: null }],
    billing: HashChain.personal({ street: "12 St James's Square" })
  }

  it("commits each wrapper as the digest of its salt and value; removal stores that digest, idempotently", () => {
    const committed = HashChain.committedData(data) as Record<string, unknown>
    expect(JSON.stringify(committed)).not.toContain("Lovelace")
    expect(committed["reference"]).toBe("r-1")
    expect(committed["billing"]).toEqual({
      [HashChain.personalDigestKey]: expect.stringMatching(/^[0-9a-f]{64}$/)
    })
    const erased = HashChain.erasePersonal(data)
    expect(erased).toEqual(committed)
    expect(HashChain.committedData(erased)).toEqual(committed)
    expect(HashChain.erasePersonal(erased)).toBe(erased)
  })

  it("salts the digest: the same value wrapped twice commits differently", () => {
    expect(HashChain.committedData(HashChain.personal("Ada"))).not.toEqual(
      HashChain.committedData(HashChain.personal("Ada"))
    )
  })

  it("leaves data without a wrapper as it is (link version 1: stored chains unchanged)", () => {
    const plain = { a: 1, b: [{ c: "$personal" }], d: { $personal: 1, other: 2 } }
    expect(HashChain.committedData(plain)).toBe(plain)
    expect(HashChain.linkVersionOf({})).toBe(1)
    expect(HashChain.linkVersionOf({ [HashChain.linkVersionKey]: 2 })).toBe(2)
  })
})
