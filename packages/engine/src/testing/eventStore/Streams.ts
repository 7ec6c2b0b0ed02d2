/**
 * What the event store contract's tests share: the test-only services a store under test
 * provides (`Tamper`, `OtherInstance`), stream ids unique to a run, reading the global log
 * from where a test started, and the event most tests append.
 */
import type { Vitest } from "@effect/vitest"
import { EventStore } from "../../index.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** Overwrites a stored event's data behind the store's back (an SQL UPDATE, or the memory hook). */
export class Tamper extends Context.Tag("test/Tamper")<
  Tamper,
  { readonly setData: (streamId: string, version: number, data: EventStore.Json) => Effect.Effect<void> }
>() {}

/**
 * Another instance of the store over the same data, with caches of its own: for SQL a
 * second `SqlEventStore` on the same database; for memory the same store (it caches
 * nothing, so the cases below hold of it trivially).
 */
export class OtherInstance extends Context.Tag("test/OtherInstance")<
  OtherInstance,
  { readonly make: Effect.Effect<EventStore.Service, never, Scope.Scope> }
>() {}

let counter = 0
/** A stream id unique to this run. */
export const freshStream = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`

/** Reads the global log to its current end and returns the checkpoint there. */
export const endOfLog = (store: EventStore.Service) =>
  Effect.gen(function* () {
    let checkpoint = EventStore.Checkpoint.start
    while (true) {
      const page = yield* store.readAll(checkpoint, { maxCount: 1000 })
      checkpoint = page.next
      if (page.caughtUp) return checkpoint
    }
  })

/**
 * Reads everything after `from`, keeping only the events of `streams` when given.
 *
 * On PostgreSQL the readable end of the log is bounded by the cluster-wide snapshot xmin,
 * so while other databases' transactions are open (tests run in parallel) `endOfLog` can
 * stop short of events that earlier tests of this file appended. Those events then appear
 * after `from`: a test that asserts on the global log therefore looks only at its own
 * streams, where order and exactly-once still must hold.
 */
export const readAllFrom = (
  store: EventStore.Service,
  from: EventStore.Checkpoint,
  pageSize = 1000,
  streams?: ReadonlyArray<string>,
  expectCount?: number
) =>
  Effect.gen(function* () {
    const events: Array<EventStore.RecordedEvent> = []
    let checkpoint = from
    const deadline = Date.now() + 20_000
    while (true) {
      const page = yield* store.readAll(checkpoint, { maxCount: pageSize })
      events.push(...page.events.filter((e) => streams === undefined || streams.includes(e.streamId)))
      checkpoint = page.next
      if (page.caughtUp) {
        // Our events may still sit above the cluster's xmin horizon: wait for them.
        if (expectCount === undefined || events.length >= expectCount || Date.now() > deadline)
          return { events, next: checkpoint }
        yield* Effect.sleep("20 millis")
      }
    }
  })

/**
 * The test methods of the event store contract, over its shared layer (test services
 * excluded: subscriptions poll on the real clock).
 */
export type EventStoreTests = Vitest.MethodsNonLive<EventStore.EventStore | Tamper | OtherInstance, true>

/** An event of type `Happened`, numbered `n`. */
export const happened = (n: number, extra: Partial<EventStore.NewEvent> = {}): EventStore.NewEvent => ({
  type: "Happened",
  data: { n, note: `event ${n}` },
  ...extra
})
