/**
 * The monitor's log follower after a failure of the store: it goes on from the last event
 * it handled, so every event is handled once — an alert of the log raised once, the live
 * feed never replaying the log. It once started again from the log's first event.
 */
import { describe, expect, it } from "@effect/vitest"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import { Monitor } from "@tillflow/intake"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

describe("the monitor's log follower", () => {
  it.live(
    "after the store fails mid-stream it goes on from the last event handled: each event once, in order, the stored ones not live and the new ones live",
    () =>
      Effect.gen(function* () {
        const { store } = yield* MemoryEventStore.make({ pollInterval: "10 millis" })
        const append = (streamId: string) =>
          store.append(streamId, EventStore.NoStream, [{ type: "Noted", data: { streamId } }])
        for (const id of ["s1", "s2", "s3"]) yield* append(id)

        // The store's subscription fails once, after delivering one event.
        let failures = 0
        const flaky: EventStore.Service = {
          ...store,
          subscribe: (checkpoint, options) =>
            failures > 0
              ? store.subscribe(checkpoint, options)
              : store.subscribe(checkpoint, options).pipe(
                  Stream.take(1),
                  Stream.concat(
                    Stream.fromEffect(
                      Effect.suspend(() => {
                        failures += 1
                        return Effect.fail(
                          new EventStore.EventStoreError({
                            operation: "subscribe",
                            detail: "connection lost"
                          })
                        )
                      })
                    )
                  )
                )
        }

        const handled: Array<readonly [string, boolean]> = []
        const caughtUp = yield* Deferred.make<void>()
        const done = yield* Deferred.make<void>()
        const follower = yield* Monitor.followLog(flaky, {
          handle: (event, live) =>
            Effect.suspend(() => {
              handled.push([event.streamId, live])
              return event.streamId === "s6" ? Deferred.succeed(done, undefined) : Effect.void
            }),
          caughtUp: Deferred.succeed(caughtUp, undefined),
          retry: Schedule.spaced("10 millis")
        }).pipe(Effect.fork)
        yield* Deferred.await(caughtUp)
        // s4 comes through the first subscription, which then fails; s5 and s6 after it.
        for (const id of ["s4", "s5", "s6"]) yield* append(id)
        yield* Deferred.await(done).pipe(Effect.timeout("10 seconds"))
        yield* Fiber.interrupt(follower)

        expect(failures).toBe(1)
        expect(handled).toEqual([
          ["s1", false],
          ["s2", false],
          ["s3", false],
          ["s4", true],
          ["s5", true],
          ["s6", true]
        ])
      })
  )
})
