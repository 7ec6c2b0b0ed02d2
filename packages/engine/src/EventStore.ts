/**
 * The event store port: append-only streams of JSON events with optimistic concurrency, a
 * global log read by checkpoint that never skips a late-committing event, live
 * subscriptions, a per-stream hash chain for tamper evidence, and a redaction guard that
 * refuses secrets. Implementations: `MemoryEventStore` (core, for unit tests) and
 * `@tillflow/store-sql` (PostgreSQL and PGlite). They share the helpers at the end of this
 * module (batch preparation, the subscription loop), so they keep one contract.
 *
 * Versions count events in a stream: the first event has version 1 and a stream's version
 * is the version of its last event (0 when it has none). The global order is the pair
 * (transactionId, globalPosition), see {@link Checkpoint}.
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as HashChain from "./HashChain.js"
import * as Redaction from "./Redaction.js"

// ---------------------------------------------------------------------------------------
// Values

/** A JSON value as stored in `data` and `metadata`. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject

/** A JSON object. */
export interface JsonObject {
  readonly [key: string]: Json
}

/** Schema of {@link Json}. */
export const Json: Schema.Schema<Json> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Number,
  Schema.String,
  Schema.Array(Schema.suspend((): Schema.Schema<Json> => Json)),
  Schema.Record({ key: Schema.String, value: Schema.suspend((): Schema.Schema<Json> => Json) })
)

/** Schema of {@link JsonObject}. */
export const JsonObject: Schema.Schema<JsonObject> = Schema.Record({ key: Schema.String, value: Json })

/**
 * The version a writer expects a stream to be at: `Any` (no check), `NoStream` (the stream
 * has no event yet) or `Exact` (the stream's version is exactly this; `Exact(0)` is `NoStream`).
 */
export const ExpectedVersion = Schema.Union(
  Schema.TaggedStruct("Any", {}),
  Schema.TaggedStruct("NoStream", {}),
  Schema.TaggedStruct("Exact", { version: Schema.Int.pipe(Schema.nonNegative()) })
)
export type ExpectedVersion = typeof ExpectedVersion.Type

/** Append whatever the stream's version. */
export const AnyVersion: ExpectedVersion = { _tag: "Any" }
/** Append only if the stream has no event yet. */
export const NoStream: ExpectedVersion = { _tag: "NoStream" }
/** Append only if the stream is exactly at `version` (0: has no event yet). */
export const exactVersion = (version: number): ExpectedVersion => ({ _tag: "Exact", version })

/** Renders an expected version for messages: `any`, `no stream`, `version 3`. */
export const formatExpectedVersion = (expected: ExpectedVersion): string => {
  switch (expected._tag) {
    case "Any":
      return "any"
    case "NoStream":
      return "no stream"
    case "Exact":
      return expected.version === 0 ? "no stream" : `version ${expected.version}`
  }
}

/** True when a stream at `actual` satisfies `expected`. */
export const satisfies = (expected: ExpectedVersion, actual: number): boolean => {
  switch (expected._tag) {
    case "Any":
      return true
    case "NoStream":
      return actual === 0
    case "Exact":
      return actual === expected.version
  }
}

/** An event to append. `schemaVersion` defaults to 1, `metadata` to `{}`, `eventId` to a fresh UUID v4. */
export interface NewEvent {
  readonly type: string
  readonly schemaVersion?: number | undefined
  readonly data: Json
  readonly metadata?: JsonObject | undefined
  /** Supply one to make a retried append detectable: a second event with it is refused. */
  readonly eventId?: string | undefined
}

/**
 * A position in the global log: the PostgreSQL transaction id (`xid8`) of the appending
 * transaction and the global position of the event. Events are read in this pair's order,
 * and only once their transaction is below the oldest transaction still running, so an
 * event that commits late can never fall behind a checkpoint already handed out.
 */
export class Checkpoint extends Schema.Class<Checkpoint>("tillflow/EventStore/Checkpoint")({
  transactionId: Schema.BigInt,
  globalPosition: Schema.BigInt
}) {
  /** Before every event. */
  static readonly start: Checkpoint = new Checkpoint({ transactionId: 0n, globalPosition: 0n })
}

/** Orders checkpoints (and so events) in the global log. */
export const checkpointOrder: Order.Order<Checkpoint> = Order.combine(
  Order.mapInput(Order.bigint, (c: Checkpoint) => c.transactionId),
  Order.mapInput(Order.bigint, (c: Checkpoint) => c.globalPosition)
)

/** An event as stored. */
export class RecordedEvent extends Schema.Class<RecordedEvent>("tillflow/EventStore/RecordedEvent")({
  streamId: Schema.String,
  version: Schema.Int,
  globalPosition: Schema.BigInt,
  transactionId: Schema.BigInt,
  eventId: Schema.UUID,
  type: Schema.String,
  schemaVersion: Schema.Int,
  data: Json,
  metadata: JsonObject,
  recordedAt: Schema.DateTimeUtc,
  /** SHA-256 chained to the stream's previous event, see `HashChain`. */
  hash: Schema.String
}) {
  /** The checkpoint right after this event: resume a read or subscription from it. */
  get checkpoint(): Checkpoint {
    return new Checkpoint({ transactionId: this.transactionId, globalPosition: this.globalPosition })
  }
}

/** The outcome of an append: the stream's new version and the global positions of the batch. */
export interface AppendResult {
  readonly nextVersion: number
  readonly positions: ReadonlyArray<bigint>
}

/** One stream's part of a multi-stream append (`Service.appendStreams`). */
export interface StreamAppend {
  readonly streamId: string
  readonly expectedVersion: ExpectedVersion
  /** At least one event: a multi-stream append writes to every stream it names. */
  readonly events: ReadonlyArray<NewEvent>
}

/** Options of `readStream`: from which version (default 1) and how many at most (default all). */
export interface ReadStreamOptions {
  readonly fromVersion?: number | undefined
  readonly maxCount?: number | undefined
}

/** Options of `readAll`: the page size, and how long a report may wait for the log to settle. */
export interface ReadAllOptions {
  readonly maxCount: number
  /**
   * For a one-off report read right after a write (an audit, a ledger, the log): before
   * reading, wait up to this long for the transactions in flight at the call to end, so the
   * page holds every event committed before the call. A store whose readable horizon can
   * lag behind commits (PostgreSQL's, held back by any write transaction still running
   * anywhere in the cluster: docs/event-store.md) waits; one with no such lag ignores it.
   * Past the bound the page is read as it stands. Subscriptions never set it.
   */
  readonly settle?: Duration.DurationInput | undefined
}

/**
 * How long a report (an audit, a ledger, a page of the log) waits for the log to settle
 * before its first page (`ReadAllOptions.settle`): long enough for any short write
 * transaction, short enough that a stuck one delays a report only this much.
 */
export const reportSettle: Duration.Duration = Duration.seconds(5)

/** A page of the global log. */
export interface ReadAllPage {
  readonly events: ReadonlyArray<RecordedEvent>
  /** Where the next page starts: the last event's checkpoint, or the one given when empty. */
  readonly next: Checkpoint
  /** True when the page was not full: the reader has caught up with what is readable now. */
  readonly caughtUp: boolean
}

/** Options of `subscribe`. */
export interface SubscribeOptions {
  /** How often to poll when no notification wakes the subscription (the store's default otherwise). */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** Page size of each read (default 256). */
  readonly batchSize?: number | undefined
}

/** Verification results live in `HashChain`; re-exported here for the port's signature. */
export { BrokenLink, VerifyReport } from "./HashChain.js"

// ---------------------------------------------------------------------------------------
// Errors

/**
 * An append lost the optimistic concurrency check: the stream was not at the expected
 * version. Nothing was written and no global position was used.
 */
export class ConcurrencyConflict extends Schema.TaggedError<ConcurrencyConflict>()("ConcurrencyConflict", {
  streamId: Schema.String,
  expected: ExpectedVersion,
  /** The stream's version when the append was refused (0: no stream). */
  actual: Schema.Int
}) {
  override get message(): string {
    return `Stream "${this.streamId}" is at version ${this.actual}, expected ${formatExpectedVersion(this.expected)}`
  }
}

/** An event with this id is already stored (a retried append, or a reused id). Nothing was written. */
export class DuplicateEventId extends Schema.TaggedError<DuplicateEventId>()("DuplicateEventId", {
  streamId: Schema.String,
  eventId: Schema.String
}) {
  override get message(): string {
    return `An event with id ${this.eventId} is already stored (appending to stream "${this.streamId}")`
  }
}

/** An event cannot be stored as given: not JSON, a bad type, version or id. */
export class InvalidEvent extends Schema.TaggedError<InvalidEvent>()("InvalidEvent", {
  eventType: Schema.String,
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Event "${this.eventType}" cannot be stored: ${this.path}: ${this.reason}`
  }
}

/** The store's infrastructure failed (connection, SQL, migration, decoding of a row). */
export class EventStoreError extends Schema.TaggedError<EventStoreError>()("EventStoreError", {
  operation: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `Event store ${this.operation} failed: ${this.detail}`
  }
}

/** Everything `append` can fail with. */
export type AppendError =
  ConcurrencyConflict | DuplicateEventId | InvalidEvent | Redaction.SensitiveDataRefused | EventStoreError

// ---------------------------------------------------------------------------------------
// The port

/** The operations of an event store. */
export interface Service {
  /**
   * Appends a batch to a stream, atomically, if the stream is at `expectedVersion`. A lost
   * race fails with `ConcurrencyConflict` before anything is written. Events carrying
   * secrets fail with `SensitiveDataRefused` (see `Redaction`). An empty batch only checks
   * the version.
   *
   * @example
   * const { nextVersion } = yield* store.append("order-42", EventStore.NoStream, [
   *   { type: "OrderPlaced", data: { amount: "1000", currency: "EUR" } }
   * ])
   */
  readonly append: (
    streamId: string,
    expectedVersion: ExpectedVersion,
    events: ReadonlyArray<NewEvent>
  ) => Effect.Effect<AppendResult, AppendError>

  /**
   * Appends a batch to each of several streams, all or none: every stream's expected
   * version is checked in the same atomic write, and when one is not met (or an event id is
   * already stored) nothing is written to any stream. The results are in the order given.
   * Each stream is named once and gets at least one event (`InvalidEvent` otherwise); a lost
   * race fails with `ConcurrencyConflict` naming the first stream, in the order given,
   * whose expected version was not met.
   *
   * @example
   * yield* store.appendStreams([
   *   { streamId: "payment-7", expectedVersion: EventStore.exactVersion(3), events: [result] },
   *   { streamId: "execution-7", expectedVersion: EventStore.AnyVersion, events: [resolved] }
   * ])
   */
  readonly appendStreams: (
    appends: ReadonlyArray<StreamAppend>
  ) => Effect.Effect<ReadonlyArray<AppendResult>, AppendError>

  /** Reads a stream in version order, from `fromVersion` (default 1), at most `maxCount` events. */
  readonly readStream: (
    streamId: string,
    options?: ReadStreamOptions
  ) => Effect.Effect<ReadonlyArray<RecordedEvent>, EventStoreError>

  /** The stream's version: the version of its last event, 0 when it has none. */
  readonly streamVersion: (streamId: string) => Effect.Effect<number, EventStoreError>

  /**
   * Reads a page of the global log after `checkpoint`, in (transactionId, globalPosition)
   * order, never skipping an event that commits later (see {@link Checkpoint}).
   */
  readonly readAll: (
    checkpoint: Checkpoint,
    options: ReadAllOptions
  ) => Effect.Effect<ReadAllPage, EventStoreError>

  /**
   * Every event after `checkpoint`, exactly once and in global order: first what is stored,
   * then live as appends commit (woken by notifications where the store has them, polling
   * always as the floor). The stream never ends by itself; on an infrastructure error it
   * fails, and the consumer resumes from the last event's `checkpoint`.
   */
  readonly subscribe: (
    checkpoint: Checkpoint,
    options?: SubscribeOptions
  ) => Stream.Stream<RecordedEvent, EventStoreError>

  /** Verifies the hash chain of one stream, or of every stream when none is given. */
  readonly verify: (streamId?: string) => Effect.Effect<HashChain.VerifyReport, EventStoreError>
}

/** The event store service. */
export class EventStore extends Context.Tag("tillflow/EventStore")<EventStore, Service>() {}

// ---------------------------------------------------------------------------------------
// Helpers for implementations

/** An event validated, scanned for secrets and encoded, ready to hash and store. */
export interface PreparedEvent extends HashChain.Linkable {
  readonly eventId: string
  readonly type: string
  readonly schemaVersion: number
  readonly data: Json
  readonly metadata: JsonObject
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const maxStreamIdLength = 512
const maxTypeLength = 256
const hasControlCharacter = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true
  return false
}
// A text column cannot hold an unpaired UTF-16 surrogate: the driver would store U+FFFD
// instead, and the stored text would no longer be the one the hash chain covers.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Validates a stream id and a batch before an append: ids, types and versions well formed,
 * data and metadata JSON that PostgreSQL's jsonb round-trips, no secrets (`Redaction`), no
 * event id twice in the batch. Pure: every implementation calls it first.
 */
export const prepareBatch = (
  streamId: string,
  events: ReadonlyArray<NewEvent>
): Effect.Effect<
  ReadonlyArray<PreparedEvent>,
  InvalidEvent | DuplicateEventId | Redaction.SensitiveDataRefused
> =>
  Effect.gen(function* () {
    const firstType = events[0]?.type ?? ""
    if (
      streamId.length === 0 ||
      streamId.length > maxStreamIdLength ||
      streamId.includes("\u0000") ||
      loneSurrogate.test(streamId)
    ) {
      return yield* new InvalidEvent({
        eventType: firstType,
        path: "streamId",
        reason: `a stream id is 1 to ${maxStreamIdLength} characters, without U+0000 or a lone UTF-16 surrogate`
      })
    }
    const prepared: Array<PreparedEvent> = []
    const seen = new Set<string>()
    for (const event of events) {
      const type = event.type
      if (
        typeof type !== "string" ||
        type.length === 0 ||
        type.length > maxTypeLength ||
        hasControlCharacter(type) ||
        loneSurrogate.test(type)
      ) {
        return yield* new InvalidEvent({
          eventType: String(type),
          path: "type",
          reason: `a type is 1 to ${maxTypeLength} printable characters, without a lone UTF-16 surrogate`
        })
      }
      const schemaVersion = event.schemaVersion ?? 1
      if (!Number.isSafeInteger(schemaVersion) || schemaVersion < 1 || schemaVersion > 2_147_483_647) {
        return yield* new InvalidEvent({
          eventType: type,
          path: "schemaVersion",
          reason: "a positive integer"
        })
      }
      let eventId: string
      if (event.eventId === undefined) {
        eventId = globalThis.crypto.randomUUID()
      } else if (uuidPattern.test(event.eventId)) {
        eventId = event.eventId.toLowerCase()
      } else {
        return yield* new InvalidEvent({ eventType: type, path: "eventId", reason: "not a UUID" })
      }
      if (seen.has(eventId)) return yield* new DuplicateEventId({ streamId, eventId })
      seen.add(eventId)
      const metadata = event.metadata ?? {}
      if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
        return yield* new InvalidEvent({
          eventType: type,
          path: "metadata",
          reason: "metadata is a JSON object"
        })
      }
      const refused = Redaction.check({ streamId, type, data: event.data, metadata })
      if (Option.isSome(refused)) return yield* refused.value
      const dataJson = HashChain.canonicalJson(event.data, "data")
      if (Either.isLeft(dataJson)) {
        return yield* new InvalidEvent({
          eventType: type,
          path: dataJson.left.path,
          reason: dataJson.left.reason
        })
      }
      // Personal data (link version 2, see `HashChain.personalKey`): the link covers the
      // data with each wrapper as its digest, and the metadata says so.
      const personal = HashChain.mayHoldPersonal(dataJson.right)
        ? HashChain.committedData(event.data)
        : event.data
      const linkedMetadata: JsonObject =
        personal === event.data ? metadata : { ...metadata, [HashChain.linkVersionKey]: 2 }
      const metadataJson = HashChain.canonicalJson(linkedMetadata, "metadata")
      if (Either.isLeft(metadataJson)) {
        return yield* new InvalidEvent({
          eventType: type,
          path: metadataJson.left.path,
          reason: metadataJson.left.reason
        })
      }
      prepared.push({
        eventId,
        type,
        schemaVersion,
        data: event.data,
        metadata: linkedMetadata,
        dataJson: dataJson.right,
        metadataJson: metadataJson.right,
        ...(personal === event.data
          ? {}
          : { committedDataJson: Either.getOrThrow(HashChain.canonicalJson(personal)) })
      })
    }
    return prepared
  })

/**
 * Validates a multi-stream append before it is written: at least one stream, each named
 * once with at least one event, each batch as `prepareBatch` wants it, and no event id
 * twice across the streams. Pure: every implementation of `appendStreams` calls it first.
 */
export const prepareStreams = (
  appends: ReadonlyArray<StreamAppend>
): Effect.Effect<
  ReadonlyArray<ReadonlyArray<PreparedEvent>>,
  InvalidEvent | DuplicateEventId | Redaction.SensitiveDataRefused
> =>
  Effect.gen(function* () {
    if (appends.length === 0) {
      return yield* new InvalidEvent({
        eventType: "",
        path: "appends",
        reason: "a multi-stream append names at least one stream"
      })
    }
    const streams = new Set<string>()
    const eventIds = new Set<string>()
    const prepared: Array<ReadonlyArray<PreparedEvent>> = []
    for (const [index, { events, streamId }] of appends.entries()) {
      if (streams.has(streamId)) {
        return yield* new InvalidEvent({
          eventType: events[0]?.type ?? "",
          path: `appends[${index}].streamId`,
          reason: `stream "${streamId}" is named twice: a multi-stream append names each stream once`
        })
      }
      streams.add(streamId)
      if (events.length === 0) {
        return yield* new InvalidEvent({
          eventType: "",
          path: `appends[${index}].events`,
          reason: `no event for stream "${streamId}": a multi-stream append gives each stream at least one`
        })
      }
      const batch = yield* prepareBatch(streamId, events)
      for (const event of batch) {
        if (eventIds.has(event.eventId))
          return yield* new DuplicateEventId({ streamId, eventId: event.eventId })
        eventIds.add(event.eventId)
      }
      prepared.push(batch)
    }
    return prepared
  })

/** The poll interval of subscriptions when neither the store nor the caller sets one. */
export const defaultPollInterval: Duration.Duration = Duration.millis(500)

/** The page size of subscriptions when the caller sets none. */
export const defaultBatchSize = 256

/**
 * The subscription loop every implementation uses: read a page after the checkpoint; when
 * caught up, wait for a wake-up or the poll interval, whichever comes first; repeat. The
 * checkpoint only moves forward, so each event is delivered once, in global order.
 *
 * `wakeups` is acquired once per subscription, before the first read (so no notification
 * is missed between catch-up and live), and yields the effect that waits for the next one.
 */
export const pollingSubscription = (options: {
  readonly from: Checkpoint
  readonly readAll: (
    checkpoint: Checkpoint,
    options: ReadAllOptions
  ) => Effect.Effect<ReadAllPage, EventStoreError>
  readonly wakeups: Effect.Effect<Effect.Effect<void>, never, Scope.Scope>
  readonly pollInterval: Duration.DurationInput
  readonly batchSize: number
}): Stream.Stream<RecordedEvent, EventStoreError> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const waitForWakeup = yield* options.wakeups
      const pause = Effect.raceFirst(waitForWakeup, Effect.sleep(options.pollInterval))
      const batchSize = Math.max(1, Math.floor(options.batchSize))
      interface State {
        readonly checkpoint: Checkpoint
        readonly pauseFirst: boolean
      }
      return Stream.paginateChunkEffect<State, RecordedEvent, EventStoreError, never>(
        { checkpoint: options.from, pauseFirst: false },
        (state) =>
          Effect.gen(function* () {
            if (state.pauseFirst) yield* pause
            const page = yield* options.readAll(state.checkpoint, { maxCount: batchSize })
            return [
              Chunk.unsafeFromArray(page.events),
              Option.some({ checkpoint: page.next, pauseFirst: page.caughtUp })
            ] as const
          })
      )
    })
  )
