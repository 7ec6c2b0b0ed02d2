/**
 * The ledger kept live: a subscription to the event log that folds every new event into
 * the `Ledger` and, from time to time, stores a snapshot of it (with the checkpoint it
 * reached) in the `projection-ledger` stream of the event store itself, so it survives
 * restarts and needs no table of its own. `rebuild` folds the log from the first event up
 * to a snapshot's checkpoint: an audit compares the two, and any difference means the
 * live fold missed, repeated or misread an event. Several processes may run it against
 * one store; a snapshot lost to a concurrent one is simply skipped.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Ledger from "./Ledger.js"
import * as LedgerFold from "./LedgerFold.js"

/** The stream holding the snapshots. */
export const snapshotStream = "projection-ledger"

/** The type of a snapshot event. */
export const snapshotType = "LedgerSnapshotted"

/** A snapshot of the ledger: the fold so far and the checkpoint it reached. */
export const LedgerSnapshotted = EventRegistry.define(snapshotType, Ledger.LedgerJson)

const retrySchedule = Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("10 seconds")))

/** The latest stored snapshot, if any. */
export const latest: Effect.Effect<
  Option.Option<Ledger.Ledger>,
  EventStore.EventStoreError,
  EventStore.EventStore
> = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const version = yield* store.streamVersion(snapshotStream)
  if (version === 0) return Option.none()
  const [last] = yield* store.readStream(snapshotStream, { fromVersion: version, maxCount: 1 })
  return last === undefined || last.type !== snapshotType ? Option.none() : Ledger.decode(last.data)
})

/**
 * Folds the log from `from` (default: the ledger's checkpoint) until it has read past
 * `until` or caught up, whichever comes first. With `only`, one tenant's ledger (a
 * merchant's: `Ledger.ofTenant`).
 */
export const replay = (options: {
  readonly from?: Ledger.Ledger | undefined
  readonly until?: EventStore.Checkpoint | undefined
  readonly pageSize?: number | undefined
  readonly only?: string | undefined
  /** A report's read: wait this long at most for the log to settle first (`ReadAllOptions.settle`). */
  readonly settle?: EventStore.ReadAllOptions["settle"]
}): Effect.Effect<Ledger.Ledger, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    let ledger = options.from ?? Ledger.empty
    const until = options.until
    // The transactions' histories folded so far, from page to page.
    const folds = new LedgerFold.Cache()
    let settle = options.settle
    while (true) {
      const page = yield* store.readAll(ledger.checkpoint, { maxCount: options.pageSize ?? 1000, settle })
      settle = undefined
      const events =
        until === undefined
          ? page.events
          : page.events.filter((e) => EventStore.checkpointOrder(e.checkpoint, until) <= 0)
      ledger = yield* Ledger.foldRecorded(ledger, events, folds, options.only)
      if (page.caughtUp || events.length < page.events.length) return ledger
    }
  }).pipe(Effect.withSpan("LedgerProjection.replay"))

/** Folds the whole log from its first event up to `until` (default: everything readable now). */
export const rebuild = (
  until?: EventStore.Checkpoint
): Effect.Effect<Ledger.Ledger, EventStore.EventStoreError, EventStore.EventStore> => replay({ until })

/** How a rebuild compares with the live projection's latest snapshot. */
export interface Comparison {
  readonly live: Ledger.Ledger
  readonly rebuilt: Ledger.Ledger
  readonly differences: ReadonlyArray<Ledger.Difference>
  readonly liveDigest: string
  readonly rebuiltDigest: string
}

/**
 * Rebuilds the ledger from scratch up to the latest snapshot's checkpoint and compares it
 * with that snapshot. `None` when no snapshot was stored yet.
 */
export const compareWithLive: Effect.Effect<
  Option.Option<Comparison>,
  EventStore.EventStoreError,
  EventStore.EventStore
> = Effect.gen(function* () {
  const live = yield* latest
  if (Option.isNone(live)) return Option.none()
  const rebuilt = yield* rebuild(live.value.checkpoint)
  return Option.some({
    live: live.value,
    rebuilt,
    differences: Ledger.differences(live.value, rebuilt),
    liveDigest: yield* Ledger.digest(live.value),
    rebuiltDigest: yield* Ledger.digest(rebuilt)
  })
}).pipe(Effect.withSpan("LedgerProjection.compareWithLive"))

/** Options of the live projection. */
export interface Options {
  /** The shortest time between two snapshots (default 5 s). */
  readonly snapshotEvery?: Duration.DurationInput | undefined
  /** Called with every event read, after it is folded (metrics). */
  readonly tap?: ((event: EventStore.RecordedEvent) => Effect.Effect<void>) | undefined
  /** Poll interval of the subscription (the store's default otherwise). */
  readonly pollInterval?: Duration.DurationInput | undefined
}

/** The live projection's current ledger, for readers in the same process. */
export interface Live {
  readonly current: Effect.Effect<Ledger.Ledger>
  /** Stores a snapshot now if the ledger moved since the last one. */
  readonly snapshot: Effect.Effect<void>
}

/**
 * Starts the live projection in the scope: resumes from the latest snapshot, follows the
 * log, snapshots when it has caught up and `snapshotEvery` has passed, and once more when
 * the scope closes. Store failures are retried; the projection never fails its scope.
 */
export const start = (
  options: Options = {}
): Effect.Effect<Live, EventStore.EventStoreError, EventStore.EventStore | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const initial = Option.getOrElse(yield* latest, () => Ledger.empty)
    const state = yield* Ref.make(initial)
    // Set when an event other than a snapshot was folded since the last snapshot.
    const dirty = yield* Ref.make(false)
    const lastSnapshotAt = yield* Ref.make(0)
    const every = Duration.toMillis(Duration.decode(options.snapshotEvery ?? "5 seconds"))
    // The transactions' histories folded so far, from batch to batch (bounded).
    const folds = new LedgerFold.Cache()

    const snapshot = Effect.gen(function* () {
      if (!(yield* Ref.get(dirty))) return
      const ledger = yield* Ref.get(state)
      const version = yield* store.streamVersion(snapshotStream)
      yield* store.append(snapshotStream, EventStore.exactVersion(version), [
        { type: snapshotType, data: Ledger.encode(ledger) }
      ])
      yield* Ref.set(dirty, false)
      yield* Ref.set(lastSnapshotAt, yield* Clock.currentTimeMillis)
    }).pipe(
      Effect.catchAll((error) =>
        error._tag === "ConcurrencyConflict"
          ? Effect.void
          : Effect.logWarning(`Ledger snapshot not stored: ${error.message}`)
      )
    )

    const follow = Effect.gen(function* () {
      const from = (yield* Ref.get(state)).checkpoint
      yield* store
        .subscribe(from, options.pollInterval === undefined ? {} : { pollInterval: options.pollInterval })
        .pipe(
          Stream.groupedWithin(256, "200 millis"),
          Stream.runForEach((chunk) =>
            Effect.gen(function* () {
              const events = Array.from(chunk)
              const next = yield* Ledger.foldRecorded(yield* Ref.get(state), events, folds)
              yield* Ref.set(state, next)
              if (events.some((e) => e.streamId !== snapshotStream)) yield* Ref.set(dirty, true)
              if (options.tap !== undefined) yield* Effect.forEach(events, options.tap, { discard: true })
              const now = yield* Clock.currentTimeMillis
              if (now - (yield* Ref.get(lastSnapshotAt)) >= every) yield* snapshot
            })
          )
        )
    }).pipe(
      Effect.tapError((error) =>
        Effect.logWarning(`Ledger projection interrupted by the store: ${error.message}`)
      ),
      Effect.retry({ schedule: retrySchedule }),
      Effect.orDie
    )
    // A quiet log still gets its snapshot once the projection caught up.
    const idleSnapshots = Effect.sleep(Duration.millis(every)).pipe(Effect.zipRight(snapshot), Effect.forever)

    yield* Effect.forkScoped(follow)
    yield* Effect.forkScoped(idleSnapshots)
    yield* Effect.addFinalizer(() => snapshot)
    return { current: Ref.get(state), snapshot }
  })
