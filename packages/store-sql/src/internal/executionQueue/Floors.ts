/**
 * The scan floors (migration `7_scan_floors`): where the claim, `nextDueAt` and
 * `expireStartDeadlines` start reading their partial indexes, so that the dead entries
 * finished runs leave at old due times and deadlines (removed only by VACUUM, which the
 * queue never relies on) are walked once, by an advance, instead of by every scan.
 *
 * Safety: a floor never passes a live row. Writers move it down themselves (the
 * migration's statement triggers, in the writing statement). An advance moves it up to the
 * earliest live due time and deadline, read while it holds the table in SHARE ROW
 * EXCLUSIVE mode: no statement writing rows is in flight then, so its snapshot holds every
 * row written before, and every row written after is checked against the new floor by its
 * own trigger. It caps the floors `margin` below the claim's clock, so that writers whose
 * clocks lag a little rarely need to move them down.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Statements from "./Statements.js"

/** How the floors of a queue move up. */
export interface Options {
  /** The least time, by the callers' clock, between two advances of one queue. */
  readonly interval: number
  /** How far below the claim's `now` the floors stay at most. */
  readonly margin: number
  /** The longest wait for the table lock; past it, the advance is left to the next one. */
  readonly lockTimeoutMs: number
}

/** The default options: an advance a second per queue, 1 s below `now`, 50 ms of lock wait. */
export const defaults: Options = { interval: 1_000, margin: 1_000, lockTimeoutMs: 50 }

/**
 * The advance of one queue: `advance(now)` moves the floors up when `interval` has passed
 * since the last one (or the clock went back). Never fails, and does nothing inside a
 * caller's transaction (its lock would be held to the caller's commit): a missed advance
 * only leaves more entries to walk until the next.
 */
export const make = (sql: SqlClient.SqlClient, options: Options) => {
  let last: number | undefined
  const due = (now: number) => last === undefined || now >= last + options.interval || now < last
  const advanceNow = (now: number) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          yield* Statements.lockTimeout(sql, options.lockTimeoutMs)
          yield* Statements.lockForFloors(sql)
          yield* Statements.advanceFloors(sql, now - options.margin)
        })
      )
      .pipe(
        // A lock wait past `lockTimeoutMs` is expected under load; whatever failed, the
        // floors stay where they were (safe) until the next advance.
        Effect.catchAll((error) =>
          Effect.logDebug("SqlExecutionQueue: scan floors not advanced", error.message)
        )
      )
  return (now: number): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!due(now)) return Effect.void
      last = now
      return Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (connection) =>
        Option.isSome(connection) ? Effect.void : advanceNow(now)
      )
    })
}
