/**
 * The LISTEN/NOTIFY plumbing the event store and the execution queue share: the `listen`
 * of the client in context (PostgreSQL's or PGlite's), and the fiber that sends a store's
 * notifications after their commit, at most one statement per interval.
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as PgliteClient from "../PgliteClient.js"

/** LISTEN on a channel: its payloads, as they arrive. */
export type Listen = (channel: string) => Stream.Stream<string, SqlError>

/** The `listen` of the PostgreSQL or PGlite client in context; none over any other client. */
export const listenOption: Effect.Effect<Option.Option<Listen>> = Effect.gen(function* () {
  const pg = yield* Effect.serviceOption(PgClient.PgClient)
  const pglite = yield* Effect.serviceOption(PgliteClient.PgliteClient)
  return Option.orElse(
    Option.map(pg, (client): Listen => client.listen),
    () => Option.map(pglite, (client): Listen => client.listen)
  )
})

/**
 * Notifications within this process, without a statement: PGlite's (`PgliteClient.publish`),
 * whose database has no other process. `listen` leaves out what `self` published.
 */
export interface Local {
  readonly listen: (channel: string, self: object) => Stream.Stream<string, SqlError>
  readonly publish: (channel: string, payloads: ReadonlyArray<string>, self: object) => Effect.Effect<void>
}

/** The in-process notifications of the PGlite client in context; none over PostgreSQL. */
export const localOption: Effect.Effect<Option.Option<Local>> = Effect.map(
  Effect.serviceOption(PgliteClient.PgliteClient),
  Option.map((client): Local => ({
    listen: (channel, self) => client.listen(channel, self),
    publish: (channel, payloads, self) =>
      Effect.forEach(payloads, (payload) => client.publish(channel, payload, self), { discard: true })
  }))
)

/**
 * Forks, in the scope, the fiber that sends notifications: it waits for `next` (what there
 * is to announce), sends it, then pauses `interval` before waiting again. The pause runs on
 * the live clock, so a test clock never holds notifications back. A failed send is only
 * logged (`failed`, at debug level): a notification is a wake-up, and listeners poll anyway.
 */
export const forkThrottled = <A, E>(options: {
  readonly next: Effect.Effect<A>
  readonly send: (value: A) => Effect.Effect<unknown, E>
  readonly interval: Duration.Duration
  readonly failed: string
}): Effect.Effect<void, never, Scope.Scope> => {
  const liveClock = Clock.make()
  return options.next.pipe(
    Effect.flatMap(options.send),
    Effect.catchAllCause((cause) => Effect.logDebug(options.failed, cause)),
    Effect.zipRight(Effect.withClock(Effect.sleep(options.interval), liveClock)),
    Effect.forever,
    Effect.forkScoped,
    Effect.asVoid
  )
}
