/**
 * The contract between a workflow that sends an operation with a callback address and the
 * callback receiver that takes the result: one stream per attempt (`attempt-<attemptId>`)
 * opened by `AttemptRegistered` before the request leaves (with the SHA-256 hash of the
 * attempt's callback token, never the token), then `ResultReceived` for every distinct
 * result delivered. The receiver checks the `AUTH-TOKEN` of a delivery against the hash in
 * constant time, records the result, and resolves the attempt's `DurableDeferred`
 * ({@link resultDeferred}) on which the workflow waits.
 *
 * Opening the stream with "no stream yet" also makes the POST at most once: an activity
 * run again after a crash cannot register its attempt twice, so it knows the request may
 * have left and reconciles instead of sending it again.
 */
import * as Activity from "@effect/workflow/Activity"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as EventStore from "@tillflow/engine/EventStore"
import * as HashChain from "@tillflow/engine/HashChain"
import * as StoreRetry from "@tillflow/engine/StoreRetry"
import * as TransactionResult from "../model/TransactionResult.js"

/** The id of one attempt of an operation (a UUID v4), also the path segment of its callback address. */
export const AttemptId = Schema.UUID.pipe(Schema.brand("AttemptId")).annotations({ identifier: "AttemptId" })
/** @see AttemptId */
export type AttemptId = typeof AttemptId.Type

/** A fresh attempt id. */
export const makeAttemptId: Effect.Effect<AttemptId> = Effect.sync(() =>
  AttemptId.make(globalThis.crypto.randomUUID())
)

/** The stream of an attempt. */
export const attemptStream = (attemptId: string): string => `attempt-${attemptId}`

/** The stream of refused deliveries (unknown attempt, missing or wrong token). */
export const securityStream = "callback-security"

/** The callback address of an attempt under the receiver's base URL (`https://host/callbacks`). */
export const callbackUrl = (baseUrl: string, attemptId: string): string =>
  `${baseUrl.replace(/\/+$/, "")}/${attemptId}`

// ---------------------------------------------------------------------------------------
// Tokens

const base64Url = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return globalThis.btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

/** A fresh callback token: 32 random bytes, base64url. Lives in memory only, as `Redacted`. */
export const makeToken: Effect.Effect<Redacted.Redacted<string>> = Effect.sync(() => {
  const bytes = new Uint8Array(32)
  globalThis.crypto.getRandomValues(bytes)
  return Redacted.make(base64Url(bytes))
})

/**
 * The SHA-256 (hex) of a token: what is stored instead of the token. An adapter may pass a
 * faster SHA-256 than Web Crypto's (the callback receiver passes `node:crypto`'s).
 */
export const hashToken = (
  token: Redacted.Redacted<string> | string,
  sha256: HashChain.Sha256 = HashChain.sha256Hex
): Effect.Effect<string> => sha256(typeof token === "string" ? token : Redacted.value(token))

/**
 * Compares two strings in time that depends only on their lengths (both are SHA-256 hex
 * digests here, so on nothing secret).
 */
export const constantTimeEqual = (a: string, b: string): boolean => {
  const length = Math.max(a.length, b.length)
  let diff = a.length ^ b.length
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0)
  return diff === 0
}

/** Whether a presented token matches the stored hash (hashed first, compared in constant time). */
export const verifyToken = (
  presented: string,
  storedHash: string,
  sha256: HashChain.Sha256 = HashChain.sha256Hex
): Effect.Effect<boolean> =>
  Effect.map(hashToken(presented, sha256), (hash) => constantTimeEqual(hash, storedHash))

// ---------------------------------------------------------------------------------------
// The value a workflow awaits

/**
 * A result as delivered to the callback receiver, made storable (`ResultRedaction`), with
 * the hash that identifies it among duplicates. Stored with its personal members wrapped
 * (`TransactionResult.Stored`); its hash is of the plain result.
 */
export const DeliveredResult = Schema.Struct({
  result: TransactionResult.Stored,
  resultHash: Schema.String,
  receivedAt: Schema.Number
}).annotations({ identifier: "DeliveredResult" })
/** @see DeliveredResult */
export type DeliveredResult = typeof DeliveredResult.Type

const resultDeferredPrefix = "tillflow/result/"

// One deferred's schemas shared by every attempt: `DurableDeferred.make` builds a new exit
// schema per call, whose decoder and encoder would then be compiled again for every attempt.
const resultDeferredTemplate = DurableDeferred.make(resultDeferredPrefix, { success: DeliveredResult })

const deferredNamed = (name: string): typeof resultDeferredTemplate => ({
  ...resultDeferredTemplate,
  name,
  // As `DurableDeferred.make` does: the name with the activity's attempt appended.
  withActivityAttempt: Effect.map(Activity.CurrentAttempt, (attempt) => deferredNamed(`${name}/${attempt}`))
})

/** The deferred an attempt's workflow awaits and the receiver resolves. */
export const resultDeferred = (attemptId: string): typeof resultDeferredTemplate =>
  deferredNamed(`${resultDeferredPrefix}${attemptId}`)

/**
 * A {@link DeliveredResult} whose result is still in its JSON form: the body the receiver
 * decoded, made storable. Its encoded form is itself (no transformation), and it is what
 * `DeliveredResult` decodes from.
 */
export const DeliveredResultJson = Schema.Struct({
  result: EventStore.Json,
  resultHash: Schema.String,
  receivedAt: Schema.Number
}).annotations({ identifier: "DeliveredResultJson" })
/** @see DeliveredResultJson */
export type DeliveredResultJson = typeof DeliveredResultJson.Type

const resultJsonDeferredTemplate = DurableDeferred.make(resultDeferredPrefix, {
  success: DeliveredResultJson
})

/**
 * The same deferred as {@link resultDeferred} (same name), for the one resolving it with a
 * result it holds as JSON (the callback receiver): the engine stores the exit in its
 * encoded form, and `DeliveredResultJson`'s is the JSON itself, where `DeliveredResult`'s
 * would encode back, field by field, a result decoded from that very JSON. The workflow
 * awaiting `resultDeferred` decodes what is stored with `DeliveredResult`: the result it
 * gets is the one the receiver decoded (the decode is deterministic). Only for a JSON
 * value that decodes as a `TransactionResult`, in its stored form
 * (`TransactionResult.storedJson`: its personal members wrapped).
 */
export const resultDeferredJson = (attemptId: string): typeof resultJsonDeferredTemplate => ({
  ...resultJsonDeferredTemplate,
  name: `${resultDeferredPrefix}${attemptId}`
})

/**
 * The identity of a delivered result: SHA-256 of its canonical JSON without
 * `recoveredTransaction` (a resend by the recovery loop is the same result). Of the plain
 * JSON, never the stored form: its salts would make every delivery another result.
 */
export const resultHash = (
  sanitised: EventStore.Json,
  sha256: HashChain.Sha256 = HashChain.sha256Hex
): Effect.Effect<string> => {
  const withoutFlag =
    typeof sanitised === "object" && sanitised !== null && !Array.isArray(sanitised)
      ? Object.fromEntries(Object.entries(sanitised).filter(([key]) => key !== "recoveredTransaction"))
      : sanitised
  const canonical = HashChain.canonicalJson(withoutFlag)
  return sha256(Either.isRight(canonical) ? canonical.right : JSON.stringify(withoutFlag))
}

// ---------------------------------------------------------------------------------------
// Events of an attempt's stream

/** How the result of an attempt is delivered. */
export const Delivery = Schema.Literal("callback", "polling")
/** @see Delivery */
export type Delivery = typeof Delivery.Type

/**
 * The attempt is about to be sent: who waits for its result (workflow, execution, the
 * deferred to resolve) and, in callback mode, the hash of its token.
 */
export const AttemptRegistered = EventRegistry.define(
  "AttemptRegistered",
  Schema.Struct({
    attemptId: Schema.String,
    attempt: Schema.Int,
    workflowName: Schema.String,
    executionId: Schema.String,
    paymentStream: Schema.String,
    deferredName: Schema.String,
    operation: Schema.String,
    serialNumber: Schema.String,
    transactionReference: Schema.optional(Schema.String),
    delivery: Delivery,
    tokenHash: Schema.optional(Schema.String),
    registeredAt: Schema.Number,
    /** The W3C traceparent of the step that registered it: its callback's receipt joins that trace. */
    traceparent: Schema.optional(Schema.String)
  })
)

/** A distinct result delivered for the attempt (a duplicate is not recorded again). */
export const ResultReceived = EventRegistry.define(
  "ResultReceived",
  Schema.Struct({
    attemptId: Schema.String,
    resultHash: Schema.String,
    finStatus: Schema.optional(Schema.String),
    recovered: Schema.Boolean,
    /**
     * The result as received, minus what may never be stored (`ResultRedaction`), its
     * personal members wrapped (`TransactionResult.storedJson`; plain in older logs).
     */
    result: EventStore.Json,
    redactedFields: Schema.Array(Schema.String),
    receivedAt: Schema.Number
  })
)

/**
 * A `ResultReceived` as the event to append: what `events.encode` makes of it, without the
 * encoding pass. The schema has no transformation, so the encoded data is the data itself;
 * the parameter is typed as the encoded form, so a caller holding the decoded type stops
 * compiling the day a field gains one. The callback receiver appends one per delivery.
 */
export const resultReceivedEvent = (
  data: Schema.Schema.Encoded<typeof ResultReceived.schema>
): EventStore.NewEvent => {
  // `finStatus` may be given as `undefined`, which JSON has no room for.
  const { finStatus, ...rest } = data
  return {
    type: ResultReceived.type,
    schemaVersion: ResultReceived.schemaVersion,
    data: finStatus === undefined ? rest : { ...rest, finStatus }
  }
}

/** A delivery whose JSON is not a result: kept raw (sanitised), acknowledged, surfaced. */
export const ResultUndecodable = EventRegistry.define(
  "ResultUndecodable",
  Schema.Struct({
    attemptId: Schema.String,
    resultHash: Schema.String,
    reason: Schema.String,
    raw: EventStore.Json,
    redactedFields: Schema.Array(Schema.String),
    receivedAt: Schema.Number
  })
)

/** Why a delivery was refused. */
export const RefusalReason = Schema.Literal(
  "UnknownAttempt",
  "MissingToken",
  "WrongToken",
  "MalformedBody",
  "TooLarge"
)
/** @see RefusalReason */
export type RefusalReason = typeof RefusalReason.Type

/** A refused delivery: a security event (never with the token presented). */
export const CallbackRefused = EventRegistry.define(
  "CallbackRefused",
  Schema.Struct({
    attemptId: Schema.String,
    reason: RefusalReason,
    remoteAddress: Schema.optional(Schema.String),
    at: Schema.Number
  })
)

/** The events of attempt streams and of the security stream. */
export const events = EventRegistry.make(
  AttemptRegistered,
  ResultReceived,
  ResultUndecodable,
  CallbackRefused
)

// ---------------------------------------------------------------------------------------
// Attempts registered by this process

/** What an attempt's registration says. */
export type Registration = typeof AttemptRegistered.schema.Type

/** What this process knows of an attempt's stream (true when noted; the stream only grows). */
export interface KnownAttempt {
  readonly registration: Registration
  /** The stream's version when this was noted: the stream has at least that many events. */
  readonly version: number
  /** Hashes of results (and undecodable bodies) known to be in the stream. */
  readonly resultHashes: ReadonlyArray<string>
  /**
   * Whose payment it is: the tenant (a merchant of the deployment) its registration's
   * metadata names, which the receiver stamps on what it appends to the stream.
   */
  readonly tenant?: string | undefined
}

/**
 * The attempts this process registered or received for lately, bounded (the oldest noted
 * is forgotten first). The callback receiver checks a delivery's token against the hash
 * noted here and appends its result at the noted version without reading the attempt's
 * stream; an attempt not noted (another process registered it, or it was forgotten) is read
 * from the stream, and a stale version only costs a conflict and a read. Provide one
 * instance to both the workflows (which note what they register) and the receiver.
 */
export interface RegisteredAttemptsService {
  readonly get: (attemptId: string) => KnownAttempt | undefined
  readonly note: (known: KnownAttempt) => void
}

/** @see RegisteredAttemptsService */
export class RegisteredAttempts extends Context.Tag("tillflow/RegisteredAttempts")<
  RegisteredAttempts,
  RegisteredAttemptsService
>() {}

/** A bounded memory of attempts (10,000 by default: a few MB). */
export const makeRegisteredAttempts = (capacity = 10_000): RegisteredAttemptsService => {
  const known = new Map<string, KnownAttempt>()
  return {
    get: (attemptId) => known.get(attemptId),
    note: (entry) => {
      const id = entry.registration.attemptId
      const previous = known.get(id)
      // Never go back: a concurrent note of an older state keeps the newer one.
      if (previous !== undefined && previous.version > entry.version) return
      known.delete(id)
      known.set(id, entry)
      if (known.size > capacity) {
        const oldest = known.keys().next()
        if (oldest.done !== true) known.delete(oldest.value)
      }
    }
  }
}

/** {@link RegisteredAttempts} as a layer (one per process, shared by workflows and receiver). */
export const registeredAttemptsLayer = (capacity?: number): Layer.Layer<RegisteredAttempts> =>
  Layer.sync(RegisteredAttempts, () => makeRegisteredAttempts(capacity))

/**
 * The first result recorded in the attempt's stream, if any; "undecodable" when only
 * bodies that are not results were recorded. A store that cannot answer counts as none:
 * the wait goes on as without it.
 */
export const recordedResult = (
  store: EventStore.Service,
  attemptId: string
): Effect.Effect<DeliveredResult | "undecodable" | null> =>
  Effect.gen(function* () {
    const read = yield* store
      .readStream(attemptStream(attemptId))
      .pipe((effect) => StoreRetry.retry(effect, StoreRetry.patient), Effect.option)
    if (Option.isNone(read)) return null
    const stored = read.value
    let undecodable = false
    for (const recorded of stored) {
      if (recorded.type === ResultUndecodable.type) undecodable = true
      if (recorded.type !== ResultReceived.type) continue
      const decoded = yield* Effect.option(events.decode(recorded))
      if (Option.isNone(decoded) || decoded.value.type !== "ResultReceived") continue
      const received = decoded.value.data as typeof ResultReceived.schema.Type
      const result = Schema.decodeUnknownOption(DeliveredResult.fields.result)(received.result)
      if (Option.isNone(result)) continue
      return { result: result.value, resultHash: received.resultHash, receivedAt: received.receivedAt }
    }
    return undecodable ? "undecodable" : null
  })
