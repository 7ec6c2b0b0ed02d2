/**
 * An in-memory event store with the same contract as the SQL stores, for unit tests of the
 * packages built on `EventStore`. Appends are serialised by a semaphore, so each append is
 * one "transaction": it gets the next transaction id and consecutive global positions, and
 * readers never see half of it. Subscriptions are woken on every append. Nothing survives
 * the process: never use it in production.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as EventStore from "./EventStore.js"
import * as HashChain from "./HashChain.js"

/** Options of the memory store. */
export interface Options {
  /** Poll interval of subscriptions (they are also woken by every append). */
  readonly pollInterval?: Duration.DurationInput | undefined
}

/**
 * Test-only hooks into the memory store's storage, to simulate what a direct SQL `UPDATE`
 * does to a database (the contract tests use it to show that `verify` catches tampering).
 */
export class Tampering extends Context.Tag("tillflow/MemoryEventStore/Tampering")<
  Tampering,
  {
    /** Replaces the stored event `version` of `streamId` with `f` of it, bypassing every check. */
    readonly rewrite: (
      streamId: string,
      version: number,
      f: (event: EventStore.RecordedEvent) => EventStore.RecordedEvent
    ) => Effect.Effect<boolean>
  }
>() {}

interface StreamState {
  readonly events: Array<EventStore.RecordedEvent>
  lastHash: string
}

/** Builds a memory store and its tampering hooks. */
export const make = (
  options: Options = {}
): Effect.Effect<{ readonly store: EventStore.Service; readonly tampering: Tampering["Type"] }> =>
  Effect.gen(function* () {
    const streams = new Map<string, StreamState>()
    const log: Array<EventStore.RecordedEvent> = []
    const eventIds = new Set<string>()
    let nextTransactionId = 1n
    let nextPosition = 1n
    const lock = yield* Effect.makeSemaphore(1)
    const appended = yield* PubSub.sliding<void>(1)
    const pollInterval = options.pollInterval ?? EventStore.defaultPollInterval

    const versionOf = (streamId: string): number => streams.get(streamId)?.events.length ?? 0

    // Writes a checked batch at `actual` + 1 on, as part of transaction `transactionId`.
    const write = (
      streamId: string,
      actual: number,
      prepared: ReadonlyArray<EventStore.PreparedEvent>,
      recordedAt: DateTime.Utc,
      transactionId: bigint
    ): EventStore.AppendResult => {
      const state = streams.get(streamId) ?? { events: [], lastHash: HashChain.genesis }
      const hashes = HashChain.chainSync(
        state.lastHash,
        streamId,
        actual + 1,
        prepared,
        HashChain.sha256HexSync
      )
      const positions: Array<bigint> = []
      prepared.forEach((event, i) => {
        const globalPosition = nextPosition++
        positions.push(globalPosition)
        const recorded = new EventStore.RecordedEvent(
          {
            streamId,
            version: actual + 1 + i,
            globalPosition,
            transactionId,
            eventId: event.eventId,
            type: event.type,
            schemaVersion: event.schemaVersion,
            // Stored as a database would: a copy that later mutation of the input cannot reach.
            data: JSON.parse(event.dataJson),
            metadata: JSON.parse(event.metadataJson),
            recordedAt,
            hash: hashes[i]
          },
          true
        )
        state.events.push(recorded)
        log.push(recorded)
        eventIds.add(event.eventId)
      })
      state.lastHash = hashes[hashes.length - 1]
      streams.set(streamId, state)
      return { nextVersion: actual + prepared.length, positions }
    }

    const append = Effect.fn("EventStore.append")(function* (
      streamId: string,
      expectedVersion: EventStore.ExpectedVersion,
      events: ReadonlyArray<EventStore.NewEvent>
    ) {
      const prepared = yield* EventStore.prepareBatch(streamId, events)
      const result = yield* lock.withPermits(1)(
        Effect.gen(function* () {
          const actual = versionOf(streamId)
          if (!EventStore.satisfies(expectedVersion, actual)) {
            return yield* new EventStore.ConcurrencyConflict({ streamId, expected: expectedVersion, actual })
          }
          if (prepared.length === 0) return { nextVersion: actual, positions: [] }
          for (const event of prepared) {
            if (eventIds.has(event.eventId)) {
              return yield* new EventStore.DuplicateEventId({ streamId, eventId: event.eventId })
            }
          }
          const recordedAt = DateTime.unsafeMake(yield* Clock.currentTimeMillis)
          return write(streamId, actual, prepared, recordedAt, nextTransactionId++)
        })
      )
      if (result.positions.length > 0) yield* PubSub.publish(appended, undefined)
      return result
    })

    // All or none: every stream is checked under the lock before anything is written, so the
    // writes that follow cannot fail half-way; one transaction id for all of them.
    const appendStreams = Effect.fn("EventStore.appendStreams")(function* (
      appends: ReadonlyArray<EventStore.StreamAppend>
    ) {
      const prepared = yield* EventStore.prepareStreams(appends)
      const results = yield* lock.withPermits(1)(
        Effect.gen(function* () {
          const actuals = appends.map(({ streamId }) => versionOf(streamId))
          for (const [i, { expectedVersion, streamId }] of appends.entries()) {
            if (!EventStore.satisfies(expectedVersion, actuals[i])) {
              return yield* new EventStore.ConcurrencyConflict({
                streamId,
                expected: expectedVersion,
                actual: actuals[i]
              })
            }
          }
          for (const [i, batch] of prepared.entries()) {
            for (const event of batch) {
              if (eventIds.has(event.eventId)) {
                return yield* new EventStore.DuplicateEventId({
                  streamId: appends[i].streamId,
                  eventId: event.eventId
                })
              }
            }
          }
          const recordedAt = DateTime.unsafeMake(yield* Clock.currentTimeMillis)
          const transactionId = nextTransactionId++
          return prepared.map((batch, i) =>
            write(appends[i].streamId, actuals[i], batch, recordedAt, transactionId)
          )
        })
      )
      yield* PubSub.publish(appended, undefined)
      return results
    })

    const readStream = Effect.fn("EventStore.readStream")(function* (
      streamId: string,
      options: EventStore.ReadStreamOptions = {}
    ) {
      const events = streams.get(streamId)?.events ?? []
      const from = Math.max(1, options.fromVersion ?? 1)
      const slice = events.slice(from - 1)
      return options.maxCount === undefined ? slice : slice.slice(0, Math.max(0, options.maxCount))
    })

    const streamVersion = (streamId: string) => Effect.sync(() => versionOf(streamId))

    // The log is appended in (transactionId, globalPosition) order, so a binary search
    // finds the first event after a checkpoint.
    const firstAfter = (checkpoint: EventStore.Checkpoint): number => {
      let low = 0
      let high = log.length
      while (low < high) {
        const mid = (low + high) >>> 1
        if (EventStore.checkpointOrder(log[mid].checkpoint, checkpoint) <= 0) low = mid + 1
        else high = mid
      }
      return low
    }

    const readAll = Effect.fn("EventStore.readAll")(function* (
      checkpoint: EventStore.Checkpoint,
      options: EventStore.ReadAllOptions
    ) {
      const maxCount = Math.max(1, Math.floor(options.maxCount))
      const start = firstAfter(checkpoint)
      const events = log.slice(start, start + maxCount)
      const last = events[events.length - 1]
      return {
        events,
        next: last === undefined ? checkpoint : last.checkpoint,
        caughtUp: events.length < maxCount
      }
    })

    const subscribe = (
      checkpoint: EventStore.Checkpoint,
      subscribeOptions: EventStore.SubscribeOptions = {}
    ) =>
      EventStore.pollingSubscription({
        from: checkpoint,
        readAll,
        wakeups: Effect.map(PubSub.subscribe(appended), (queue) => Queue.take(queue)),
        pollInterval: subscribeOptions.pollInterval ?? pollInterval,
        batchSize: subscribeOptions.batchSize ?? EventStore.defaultBatchSize
      })

    const verify = Effect.fn("EventStore.verify")(function* (streamId?: string) {
      const ids = streamId === undefined ? [...streams.keys()].sort() : [streamId]
      const broken: Array<HashChain.BrokenLink> = []
      let eventsChecked = 0
      let streamsChecked = 0
      for (const id of ids) {
        const state = streams.get(id)
        if (state === undefined) continue
        streamsChecked++
        eventsChecked += state.events.length
        const found = yield* HashChain.verifyStream(
          id,
          state.events,
          Option.some({ version: state.events.length, lastHash: state.lastHash })
        )
        if (Option.isSome(found)) broken.push(found.value)
      }
      return new HashChain.VerifyReport({ streamsChecked, eventsChecked, broken })
    })

    const tampering: Tampering["Type"] = {
      rewrite: (streamId, version, f) =>
        Effect.sync(() => {
          const state = streams.get(streamId)
          const index = version - 1
          const current = state?.events[index]
          if (state === undefined || current === undefined) return false
          const replaced = f(current)
          state.events[index] = replaced
          const inLog = log.indexOf(current)
          if (inLog >= 0) log[inLog] = replaced
          return true
        })
    }

    const store: EventStore.Service = {
      append,
      appendStreams,
      readStream,
      streamVersion,
      readAll,
      subscribe,
      verify
    }
    return { store, tampering }
  })

/** A fresh memory store, with its test-only {@link Tampering} hooks. */
export const layer = (options: Options = {}): Layer.Layer<EventStore.EventStore | Tampering> =>
  Layer.effectContext(
    Effect.map(make(options), ({ store, tampering }) =>
      Context.make(EventStore.EventStore, store).pipe(Context.add(Tampering, tampering))
    )
  )
