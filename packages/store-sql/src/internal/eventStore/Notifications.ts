/**
 * The event store's wake-ups: appends are announced on its LISTEN/NOTIFY channel after
 * they commit (`notifyAppended`), and subscriptions are woken through one PubSub
 * (`wakeups`) by the notifications every process sends, and at once by this store's own
 * appends.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as EventStoreMigrations from "../../EventStoreMigrations.js"
import * as Channel from "../Channel.js"
import * as Statements from "./Statements.js"

/** The wake-ups of one store. */
export interface Notifications {
  /** Published on every notification and every append of this store; subscriptions take from it. */
  readonly wakeups: PubSub.PubSub<void>
  /** Announces an append once it commits: with the caller's transaction, or after it. */
  readonly notifyAppended: (inTransaction: boolean) => Effect.Effect<unknown, SqlError>
}

/** The wake-ups of a store over `sql`, sending at most one notification per `notifyInterval`. */
export const make = (
  sql: SqlClient.SqlClient,
  notifyInterval: Duration.Duration
): Effect.Effect<Notifications, never, Scope.Scope> =>
  Effect.gen(function* () {
    // One LISTEN per store (PgClient shares one connection for all listeners, and an
    // UNLISTEN by one subscription would silence the others), fanned out through a PubSub.
    // Local appends publish too, without waiting for the round trip.
    const wakeups = yield* PubSub.sliding<void>(1)
    const listen = yield* Channel.listenOption
    // On PGlite, notifications of appends made outside a transaction go in process, without
    // a statement on its one session; this store's own are left out (its appends publish
    // `wakeups` already).
    const local = yield* Channel.localOption
    const self = {}
    if (Option.isSome(listen)) {
      const stream = Option.isSome(local)
        ? local.value.listen(EventStoreMigrations.channel, self)
        : listen.value(EventStoreMigrations.channel)
      yield* stream.pipe(
        Stream.runForEach(() => PubSub.publish(wakeups, undefined)),
        Effect.tapErrorCause((cause) =>
          Effect.logWarning("Event store LISTEN failed; subscriptions poll until it is back", cause)
        ),
        Effect.retry(Schedule.spaced("5 seconds")),
        Effect.forkScoped
      )
    }

    // Notifications of appends, sent after their commit by one fiber, at most one per
    // `notifyInterval`: the first append after a quiet spell notifies at once, the appends
    // made while a NOTIFY is in flight or within the interval after it share the next one.
    // A NOTIFY inside the appending transaction would take PostgreSQL's server-wide notify
    // lock from pre-commit until after the WAL flush, so concurrent appending commits could
    // not share a flush (measured: 8 concurrent writers halved, docs/performance.md). One
    // NOTIFY per append, even after the commit, cost a second statement on another
    // connection, a wake-up of every listening backend and of this process's LISTEN
    // connection: more Node CPU than the append's own statement (docs/performance.md). A
    // notification is only a wake-up: subscriptions poll anyway, so one delayed by the
    // interval or lost to a failure costs latency, not events.
    const notifications = yield* Queue.sliding<void>(1)
    yield* Channel.forkThrottled({
      next: Queue.take(notifications),
      send: () =>
        Option.isSome(local)
          ? local.value.publish(EventStoreMigrations.channel, ["append"], self)
          : Effect.uninterruptible(Statements.notify(sql)),
      interval: notifyInterval,
      failed: "Event store NOTIFY failed; subscriptions poll"
    })

    return {
      wakeups,
      // Inside a caller's transaction the NOTIFY goes with it (delivered at its commit):
      // sent from the notifier fiber, it would arrive before the events are visible.
      notifyAppended: (inTransaction) =>
        inTransaction ? Effect.asVoid(Statements.notify(sql)) : Queue.offer(notifications, undefined)
    }
  })
