/**
 * A stream whose events exercise every rule of the hash chain's canonical JSON (members
 * sorted by UTF-16 code units, numbers and strings as `JSON.stringify` writes them, members
 * holding `undefined` left out, nesting, unicode beyond the BMP, escapes) and the chaining
 * of links. `packages/engine/test/goldens/hash-chain.json` holds each link's exact text and
 * hash, written by `npm run goldens:update`: a change to `HashChain` that would make the
 * chains of logs already written stop verifying fails that test.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as EventStore from "../EventStore.js"
import * as HashChain from "../HashChain.js"

/** The stream the sample events are linked in. */
export const streamId = "golden-hash-chain"

/** The sample events, in stream order (the link of each is chained to the one before). */
export const events: ReadonlyArray<{
  readonly type: string
  readonly schemaVersion: number
  readonly data: unknown
  readonly metadata: unknown
}> = [
  { type: "Empty", schemaVersion: 1, data: {}, metadata: {} },
  {
    type: "Ordering",
    schemaVersion: 1,
    // Sorted by UTF-16 code units: "B" < "a" < "z" < "é" < "😀" (a surrogate pair) < "ｚ".
    data: { z: 1, a: 2, B: 3, é: 4, ｚ: 5, "😀": 6, nested: { y: [3, 2, 1], x: { b: null, a: true } } },
    metadata: { executionId: "3c1e0f4e2b7d4f0a", attempt: 2 }
  },
  {
    type: "Numbers",
    schemaVersion: 3,
    data: {
      integer: 1050,
      negative: -7,
      fraction: 0.1,
      large: 1e21,
      small: 1e-7,
      zero: -0,
      max: 9007199254740991
    },
    metadata: {}
  },
  {
    type: "Strings",
    schemaVersion: 1,
    data: {
      quote: 'say "hi"',
      backslash: "a\\b",
      controls: "tab\tline\ncr\rbell\u0007esc\u001b",
      separators: "\u2028\u2029",
      unicode: "Zürich 東京 😀",
      empty: ""
    },
    metadata: { note: "</script>" }
  },
  {
    type: "Undefined",
    schemaVersion: 1,
    // Left out as JSON.stringify leaves them out; kept in arrays as null would not be JSON's.
    data: { kept: 1, dropped: undefined, list: [1, "two", false, null, { deep: [[]] }] },
    metadata: {}
  },
  { type: "Array", schemaVersion: 1, data: [1, { b: 2, a: 1 }], metadata: {} },
  { type: "Scalar", schemaVersion: 2, data: "a bare string", metadata: {} }
]

/** One link of the golden chain. */
export const GoldenLink = Schema.Struct({
  version: Schema.Int,
  type: Schema.String,
  schemaVersion: Schema.Int,
  dataJson: Schema.String,
  metadataJson: Schema.String,
  previousHash: Schema.String,
  linkText: Schema.String,
  hash: Schema.String
})
/** @see GoldenLink */
export type GoldenLink = typeof GoldenLink.Type

/** The golden chain file. */
export const GoldenChain = Schema.Struct({ streamId: Schema.String, links: Schema.Array(GoldenLink) })
/** @see GoldenChain */
export type GoldenChain = typeof GoldenChain.Type

/** The chain of {@link events} as the code at hand links it. */
export const chain: Effect.Effect<GoldenChain, Error> = Effect.gen(function* () {
  const links: Array<GoldenLink> = []
  let previousHash = HashChain.genesis
  for (const [index, event] of events.entries()) {
    const json = (value: unknown) =>
      Either.match(HashChain.canonicalJson(value), {
        onLeft: (e) => Effect.fail(new Error(`${event.type}: ${e.reason} at ${e.path}`)),
        onRight: Effect.succeed
      })
    const input: HashChain.LinkInput = {
      previousHash,
      streamId,
      version: index + 1,
      type: event.type,
      schemaVersion: event.schemaVersion,
      dataJson: yield* json(event.data),
      metadataJson: yield* json(event.metadata)
    }
    const hash = yield* HashChain.link(input)
    links.push({
      version: input.version,
      type: input.type,
      schemaVersion: input.schemaVersion,
      dataJson: input.dataJson,
      metadataJson: input.metadataJson,
      previousHash,
      linkText: HashChain.linkText(input),
      hash
    })
    previousHash = hash
  }
  return { streamId, links }
})

/** The golden chain's links as the events a store would have recorded (for `verifyStream`). */
export const verifiable = (golden: GoldenChain): ReadonlyArray<HashChain.Verifiable> =>
  golden.links.map((link) => ({
    streamId: golden.streamId,
    version: link.version,
    type: link.type,
    schemaVersion: link.schemaVersion,
    data: JSON.parse(link.dataJson) as EventStore.Json,
    metadata: JSON.parse(link.metadataJson) as EventStore.Json,
    hash: link.hash
  }))

/** The golden chain file's text. */
export const render = (golden: GoldenChain): string => `${JSON.stringify(golden, null, 2)}\n`
