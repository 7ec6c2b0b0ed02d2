/**
 * Tamper evidence for the event store: every event carries a SHA-256 hash chained to its
 * predecessor in the same stream, over a canonical JSON encoding of what the event says.
 * Every store implementation (memory, PostgreSQL, PGlite) computes and verifies hashes with
 * this one module, so their chains agree byte for byte. The default SHA-256 is a synchronous
 * one from @noble/hashes (the engine imports nothing of Node); store-sql passes `node:crypto`'s.
 * Both give the standard digest (a property test compares them with Web Crypto's).
 *
 * The link of event `n` of stream `s` is
 * `sha256(canonicalJson([previousHash, s, n, type, schemaVersion, data, metadata]))` in
 * lowercase hex, where `previousHash` is the hash of event `n - 1` of `s`, or
 * {@link genesis} for the first event. `eventId`, `recordedAt` and the global position are
 * not part of the link: they are assigned by the store, and the chain vouches for what
 * happened in a stream, in which order.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { sha256 as sha256Bytes } from "./internal/sha256.js"

/** The previous hash of the first event of every stream: 64 zeros. */
export const genesis: string = "0".repeat(64)

/** Why a value could not be encoded as canonical JSON, and where (a JSON path). */
export interface NotJson {
  readonly path: string
  readonly reason: string
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

// jsonb refuses unpaired surrogates too (JSON.stringify would escape them as \\udXXX).
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const pathOfKey = (path: string, key: string): string =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`

const encode = (value: unknown, path: string, out: Array<string>): NotJson | undefined => {
  switch (typeof value) {
    case "string":
      // PostgreSQL's jsonb refuses U+0000; refusing it here keeps the stores in agreement.
      if (value.includes("\u0000")) return { path, reason: "a string contains U+0000" }
      if (loneSurrogate.test(value)) return { path, reason: "a string contains a lone UTF-16 surrogate" }
      out.push(JSON.stringify(value))
      return undefined
    case "number":
      if (!Number.isFinite(value)) return { path, reason: "a number is not finite" }
      out.push(JSON.stringify(value))
      return undefined
    case "boolean":
      out.push(value ? "true" : "false")
      return undefined
    case "object": {
      if (value === null) {
        out.push("null")
        return undefined
      }
      if (Array.isArray(value)) {
        out.push("[")
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.push(",")
          const failure = encode(value[i], `${path}[${i}]`, out)
          if (failure !== undefined) return failure
        }
        out.push("]")
        return undefined
      }
      if (!isPlainObject(value)) {
        return { path, reason: `a ${value.constructor?.name ?? "non-plain"} object is not JSON` }
      }
      const record = value as Record<string, unknown>
      // UTF-16 code unit order, as RFC 8785 (JCS) sorts member names.
      const keys = Object.keys(record).sort()
      out.push("{")
      let first = true
      for (const key of keys) {
        const member = record[key]
        if (member === undefined) continue
        if (key.includes("\u0000") || loneSurrogate.test(key)) {
          return { path, reason: "a member name contains U+0000 or a lone UTF-16 surrogate" }
        }
        if (!first) out.push(",")
        first = false
        out.push(JSON.stringify(key), ":")
        const failure = encode(member, pathOfKey(path, key), out)
        if (failure !== undefined) return failure
      }
      out.push("}")
      return undefined
    }
    case "undefined":
      return { path, reason: "undefined is not JSON" }
    default:
      return { path, reason: `a ${typeof value} is not JSON` }
  }
}

// The fast path: the same encoding as `encode`, by string concatenation and without paths.
// It gives up (returns `undefined`) at the first value `encode` would refuse; `canonicalJson`
// then runs `encode` to find where and why. A string with nothing to escape (no quote,
// backslash or control character) and no surrogate is quoted as it is, which is what
// `JSON.stringify` writes for it; the others go through `JSON.stringify` after the checks.
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const plainString = /^[^"\\\u0000-\u001F\uD800-\uDFFF]*$/

const quote = (text: string): string | undefined => {
  if (plainString.test(text)) return '"' + text + '"'
  if (text.includes("\u0000") || loneSurrogate.test(text)) return undefined
  return JSON.stringify(text)
}

const encodeFast = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
      return quote(value)
    case "number":
      // For a finite number, `String` writes what `JSON.stringify` does (-0 as "0").
      return Number.isFinite(value) ? String(value) : undefined
    case "boolean":
      return value ? "true" : "false"
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) {
        let out = "["
        for (let i = 0; i < value.length; i++) {
          const item = encodeFast(value[i])
          if (item === undefined) return undefined
          out += i > 0 ? "," + item : item
        }
        return out + "]"
      }
      if (!isPlainObject(value)) return undefined
      const record = value as Record<string, unknown>
      // UTF-16 code unit order, as RFC 8785 (JCS) sorts member names.
      const keys = Object.keys(record).sort()
      let out = "{"
      let first = true
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]
        const member = record[key]
        if (member === undefined) continue
        const name = quote(key)
        if (name === undefined) return undefined
        const encoded = encodeFast(member)
        if (encoded === undefined) return undefined
        out += (first ? "" : ",") + name + ":" + encoded
        first = false
      }
      return out + "}"
    }
    default:
      return undefined
  }
}

/**
 * Encodes a JSON value canonically: object members sorted by UTF-16 code units, no
 * whitespace, numbers and strings as `JSON.stringify` writes them (the shape of RFC 8785).
 * Members whose value is `undefined` are left out, as `JSON.stringify` does. Fails on
 * anything PostgreSQL's `jsonb` would not round-trip: non-finite numbers, U+0000, bigints,
 * class instances, functions.
 *
 * @example
 * canonicalJson({ b: 1, a: [true, null] }) // Either.right('{"a":[true,null],"b":1}')
 */
export const canonicalJson = (value: unknown, rootPath = "$"): Either.Either<string, NotJson> => {
  const fast = encodeFast(value)
  if (fast !== undefined) return Either.right(fast)
  const out: Array<string> = []
  const failure = encode(value, rootPath, out)
  return failure === undefined ? Either.right(out.join("")) : Either.left(failure)
}

const hex = (buffer: ArrayBuffer | Uint8Array): string => {
  const bytes = buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer)
  let result = ""
  for (const byte of bytes) result += byte.toString(16).padStart(2, "0")
  return result
}

const encoder = new TextEncoder()

/**
 * A SHA-256 implementation: the UTF-8 bytes of `text` in, lowercase hex out. Every function
 * below takes one, defaulting to {@link sha256Hex} (synchronous, @noble/hashes). An adapter
 * may pass a faster one (store-sql uses `node:crypto`): any correct SHA-256 gives the same
 * chain, and the contract tests check the stores agree.
 */
export type Sha256 = (text: string) => Effect.Effect<string>

/**
 * SHA-256 of the UTF-8 bytes of `text`, in lowercase hex, computed synchronously in
 * JavaScript (@noble/hashes, `internal/sha256`): no promise, no hop to a thread pool, no
 * fiber suspension per digest. Slower per byte than a native digest, faster for the short texts hashed here
 * (tokens, ids, one event's link); adapters with `node:crypto` pass theirs.
 */
export const sha256HexSync = (text: string): string => hex(sha256Bytes(text))

/** {@link sha256HexSync} as an effect: the default SHA-256 of every function below. */
export const sha256Hex: Sha256 = (text: string): Effect.Effect<string> =>
  Effect.sync(() => sha256HexSync(text))

/** SHA-256 of the UTF-8 bytes of `text`, in lowercase hex, with Web Crypto (the same digest). */
export const webCryptoSha256Hex: Sha256 = (text: string): Effect.Effect<string> =>
  Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", encoder.encode(text))).pipe(Effect.map(hex))

/** What one link of the chain covers; `dataJson` and `metadataJson` are canonical JSON. */
export interface LinkInput {
  readonly previousHash: string
  readonly streamId: string
  readonly version: number
  readonly type: string
  readonly schemaVersion: number
  readonly dataJson: string
  readonly metadataJson: string
}

/** The exact text hashed for one link: the canonical JSON array of its seven parts. */
export const linkText = (input: LinkInput): string =>
  `[${JSON.stringify(input.previousHash)},${JSON.stringify(input.streamId)},${input.version},${JSON.stringify(
    input.type
  )},${input.schemaVersion},${input.dataJson},${input.metadataJson}]`

/** The hash of one event given the hash of its predecessor. */
export const link = (input: LinkInput, sha256: Sha256 = sha256Hex): Effect.Effect<string> =>
  sha256(linkText(input))

/** An event about to be appended, already encoded as canonical JSON. */
export interface Linkable {
  readonly type: string
  readonly schemaVersion: number
  readonly dataJson: string
  readonly metadataJson: string
  /**
   * Link version 2 only (personal data, see {@link personalKey}): the canonical JSON of
   * {@link committedData} of the data, which the link covers instead of `dataJson`.
   */
  readonly committedDataJson?: string | undefined
}

/** The link of `event` at `version` of `streamId`, chained to `previousHash`. */
const linkOf = (previousHash: string, streamId: string, version: number, event: Linkable): LinkInput => ({
  previousHash,
  streamId,
  version,
  type: event.type,
  schemaVersion: event.schemaVersion,
  dataJson: event.committedDataJson ?? event.dataJson,
  metadataJson: event.metadataJson
})

// ---------------------------------------------------------------------------------------
// Personal data: link version 2 (issue 31)

/**
 * The member that wraps a piece of personal data in an event's data:
 * `{ "$personal": { "salt": <uuid>, "value": <any JSON> } }` (see {@link personal}). An
 * event carrying one is appended with link version 2 ({@link linkVersionKey} = 2 in its
 * metadata): its link covers {@link committedData} — each wrapper replaced by the digest of
 * its salt and value — instead of the data itself. Removing the personal data later
 * ({@link erasePersonal}) stores that digest in place of the wrapper, so the link still
 * holds and the chain still verifies. The salt keeps the digest from confirming a guess
 * (an address, a name) by hashing it.
 *
 * Events without the wrapper are linked as before (version 1, no metadata member): every
 * stored log and golden chain is unchanged.
 */
export const personalKey = "$personal"
/** The member a wrapper becomes once its personal data is removed: `{ "$personalDigest": <hex> }`. */
export const personalDigestKey = "$personalDigest"
/** The metadata member naming the link version of an event, present only when it is 2. */
export const linkVersionKey = "chainLink"

/** Wraps `value` as personal data, with a fresh salt: removable later without breaking the chain. */
export const personal = <A>(
  value: A
): { readonly [personalKey]: { readonly salt: string; readonly value: A } } => ({
  [personalKey]: { salt: globalThis.crypto.randomUUID(), value }
})

const isWrapper = (value: object, key: string): boolean => {
  const keys = Object.keys(value)
  return keys.length === 1 && keys[0] === key
}

/**
 * `value` with each wrapper mapped by `wrapper`, given what it holds, the member name under
 * which it sits (the nearest object member, through arrays; none at the top) and itself.
 */
const mapPersonal = (
  value: unknown,
  wrapper: (inner: unknown, field: string | undefined, original: object) => unknown,
  field?: string
): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    let changed = false
    const out = value.map((item) => {
      const mapped = mapPersonal(item, wrapper, field)
      if (mapped !== item) changed = true
      return mapped
    })
    return changed ? out : value
  }
  const record = value as Record<string, unknown>
  if (isWrapper(record, personalKey)) return wrapper(record[personalKey], field, record)
  let out: Record<string, unknown> | undefined
  for (const key of Object.keys(record)) {
    const mapped = mapPersonal(record[key], wrapper, key)
    if (mapped !== record[key]) {
      out ??= { ...record }
      out[key] = mapped
    }
  }
  return out ?? value
}

const digestOf = (inner: unknown): Record<string, unknown> => {
  const json = canonicalJson(inner)
  return { [personalDigestKey]: sha256HexSync(Either.isRight(json) ? json.right : "not JSON") }
}

/**
 * What a link of version 2 covers: the data with every personal wrapper replaced by
 * `{ "$personalDigest": sha256(canonical JSON of { salt, value }) }`; a digest already
 * there (removed data) is kept. The same value, not a copy, when there is no wrapper.
 */
export const committedData = (data: unknown): unknown => mapPersonal(data, digestOf)

/** The data with its personal data removed: what {@link committedData} gives, to store in its place. */
export const erasePersonal = (data: unknown): unknown => committedData(data)

/**
 * The data with the personal data of the fields `due` names removed, the others kept: a
 * wrapper's field is the member name under which it sits (`billing` in `{ "billing": {
 * "$personal": … } }`, however deep; none for a wrapper at the top). What a link covers is
 * the same either way, so the chain verifies after each removal. The same value, not a copy,
 * when nothing is removed.
 *
 * @example
 * erasePersonalFields(data, (field) => field === "cardHolderName")
 */
export const erasePersonalFields = (data: unknown, due: (field: string | undefined) => boolean): unknown =>
  mapPersonal(data, (inner, field, original) => (due(field) ? digestOf(inner) : original))

/**
 * The data with every personal wrapper replaced by the value it holds (a removed one's
 * digest is kept): what two writes of the same data have in common, their salts aside.
 */
export const personalValues = (data: unknown): unknown =>
  mapPersonal(data, (inner) =>
    typeof inner === "object" && inner !== null && "value" in inner
      ? (inner as { readonly value: unknown }).value
      : inner
  )

/** True when `json` (canonical JSON of an event's data) may hold a personal wrapper. */
export const mayHoldPersonal = (json: string): boolean => json.includes(`"${personalKey}"`)

/** The link version an event's metadata names: 2 when it says so, otherwise 1. */
export const linkVersionOf = (metadata: unknown): 1 | 2 =>
  typeof metadata === "object" &&
  metadata !== null &&
  (metadata as Record<string, unknown>)[linkVersionKey] === 2
    ? 2
    : 1

/**
 * Hashes a batch appended to `streamId` right after the event whose hash is `previousHash`;
 * the first event of the batch gets `firstVersion`.
 */
export const chain = (
  previousHash: string,
  streamId: string,
  firstVersion: number,
  events: ReadonlyArray<Linkable>,
  sha256: Sha256 = sha256Hex
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function* () {
    const hashes: Array<string> = []
    let previous = previousHash
    for (let i = 0; i < events.length; i++) {
      previous = yield* link(linkOf(previous, streamId, firstVersion + i, events[i]), sha256)
      hashes.push(previous)
    }
    return hashes
  })

/**
 * A synchronous SHA-256 (the UTF-8 bytes of `text` in, lowercase hex out), for adapters that
 * have one (store-sql passes `node:crypto`'s): {@link chainSync} then hashes a batch without
 * an effect per link.
 */
export type Sha256Sync = (text: string) => string

/** {@link chain} with a synchronous SHA-256: the same hashes, computed in one call. */
export const chainSync = (
  previousHash: string,
  streamId: string,
  firstVersion: number,
  events: ReadonlyArray<Linkable>,
  sha256: Sha256Sync
): ReadonlyArray<string> => {
  const hashes: Array<string> = new Array(events.length)
  let previous = previousHash
  for (let i = 0; i < events.length; i++) {
    previous = sha256(linkText(linkOf(previous, streamId, firstVersion + i, events[i])))
    hashes[i] = previous
  }
  return hashes
}

/** What kind of break `verify` found. */
export const BreakKind = Schema.Literal(
  /** The stored hash is not the hash of the event's content chained to its predecessor. */
  "HashMismatch",
  /** Versions do not run 1, 2, 3 … without a gap (an event was removed or renumbered). */
  "VersionGap",
  /** The stream's head (its recorded version and last hash) does not match its last event. */
  "HeadMismatch"
)
export type BreakKind = typeof BreakKind.Type

/** The first broken link of a stream: where it is and what was expected against what was found. */
export class BrokenLink extends Schema.Class<BrokenLink>("tillflow/HashChain/BrokenLink")({
  streamId: Schema.String,
  version: Schema.Int,
  kind: BreakKind,
  expected: Schema.String,
  found: Schema.String
}) {}

/** The outcome of verifying one stream or the whole store. */
export class VerifyReport extends Schema.Class<VerifyReport>("tillflow/HashChain/VerifyReport")({
  streamsChecked: Schema.Int,
  eventsChecked: Schema.Int,
  /** The first broken link of every broken stream, in stream id order. */
  broken: Schema.Array(BrokenLink)
}) {
  /** True when every checked chain is intact. */
  get ok(): boolean {
    return this.broken.length === 0
  }
}

/** The parts of a recorded event that verification reads. */
export interface Verifiable {
  readonly streamId: string
  readonly version: number
  readonly type: string
  readonly schemaVersion: number
  readonly data: unknown
  readonly metadata: unknown
  readonly hash: string
}

/** The head a store keeps for a stream: its version and the hash of its last event. */
export interface StreamHead {
  readonly version: number
  readonly lastHash: string
}

const brokenLink = (
  streamId: string,
  version: number,
  kind: BreakKind,
  expected: string,
  found: string
): BrokenLink => new BrokenLink({ streamId, version, kind, expected, found })

/**
 * Verifies the events of one stream, given in version order, and the stream's head when the
 * store keeps one. Each event's hash is recomputed from its content and the *stored* hash of
 * its predecessor, so an edited event is reported itself, and an edited event whose hash was
 * recomputed is reported at its successor. Returns the first broken link, if any.
 */
export const verifyStream = (
  streamId: string,
  events: ReadonlyArray<Verifiable>,
  head: Option.Option<StreamHead> = Option.none(),
  sha256: Sha256 = sha256Hex
): Effect.Effect<Option.Option<BrokenLink>> =>
  Effect.gen(function* () {
    let previousHash = genesis
    for (let i = 0; i < events.length; i++) {
      const event = events[i]
      const expectedVersion = i + 1
      if (event.version !== expectedVersion) {
        return Option.some(
          brokenLink(
            streamId,
            expectedVersion,
            "VersionGap",
            `version ${expectedVersion}`,
            `version ${event.version}`
          )
        )
      }
      const dataJson = canonicalJson(
        linkVersionOf(event.metadata) === 2 ? committedData(event.data) : event.data
      )
      const metadataJson = canonicalJson(event.metadata)
      const expected =
        Either.isRight(dataJson) && Either.isRight(metadataJson)
          ? yield* link(
              {
                previousHash,
                streamId,
                version: event.version,
                type: event.type,
                schemaVersion: event.schemaVersion,
                dataJson: dataJson.right,
                metadataJson: metadataJson.right
              },
              sha256
            )
          : "content is not JSON"
      if (expected !== event.hash) {
        return Option.some(brokenLink(streamId, event.version, "HashMismatch", expected, event.hash))
      }
      previousHash = event.hash
    }
    if (Option.isSome(head)) {
      const last = events.length
      if (head.value.version !== last || head.value.lastHash !== previousHash) {
        return Option.some(
          brokenLink(
            streamId,
            Math.max(head.value.version, last),
            "HeadMismatch",
            `version ${head.value.version}, last hash ${head.value.lastHash}`,
            `version ${last}, last hash ${previousHash}`
          )
        )
      }
    }
    return Option.none()
  })
