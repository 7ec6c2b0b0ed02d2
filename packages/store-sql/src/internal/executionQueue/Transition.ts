/**
 * Completion and wake-ups: a worker's release of a claimed execution (suspended, retry,
 * stuck, finished: its concurrency key freed) and the wake of a waiting one. Made outside
 * a caller's transaction while `maxInFlight` of them are in flight, they wait and go
 * together as ONE statement (`Coalescer`, `transitionMany`); each changed row that other
 * processes care about is announced.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { ExecutionQueue } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Coalescer from "../Coalescer.js"
import * as HotPool from "../HotPool.js"
import type { Announce } from "./Announcements.js"
import { announced, decodeReleased, decodeTransitions, failure, type Released } from "./Rows.js"
import * as Statements from "./Statements.js"

/** A wake or a release: the calls coalesced into one statement (`transitionMany`). */
type Transition =
  | {
      readonly _tag: "Wake"
      readonly executionId: string
      readonly now: number
      readonly resumeStuck: boolean
    }
  | {
      readonly _tag: "Release"
      readonly executionId: string
      readonly workerId: string
      readonly release: ExecutionQueue.Release
      readonly now: number
    }

type Rows = Effect.Effect<ReadonlyArray<Released>, SqlError | ParseResult.ParseError>

// A wake or a release alone is one statement: its own transaction, or part of the caller's.
// A release outside a transaction, with a `pg` pool (PostgreSQL), goes through that pool
// as a named prepared statement (`HotPool`, STYLE.md "SQL").
const transitionOne = (
  sql: SqlClient.SqlClient,
  pool: HotPool.HotPool["Type"] | undefined,
  transition: Transition
): Rows => {
  if (transition._tag === "Wake") return Effect.flatMap(Statements.wake(sql, transition), decodeReleased)
  if (pool === undefined) return Effect.flatMap(Statements.release(sql, transition), decodeReleased)
  const hot = Statements.releaseHot(transition)
  return Effect.flatMap(HotPool.query(sql, pool, hot.name, hot.text, hot.values), decodeReleased)
}

/**
 * Wakes and releases of different executions as ONE statement and transaction, each
 * entry with exactly the rules of its statement alone (`Statements.wake`,
 * `Statements.release`, the same expressions, reading the row as it was before the
 * update), answering each entry's own row, by index. The rows are locked first, in
 * execution id order (`locked`), and the concurrency keys of finished executions are freed
 * only once all of them are (`freed` waits for the whole of `locked`): statements in
 * flight together, heartbeats (which lock in the same order) and claims (which take rows
 * with SKIP LOCKED, then keys) never wait on each other in a cycle. A row another
 * transaction changed while this one waited is checked again in its newest state, as a
 * statement alone would.
 */
const transitionMany = (sql: SqlClient.SqlClient, transitions: ReadonlyArray<Transition>) => {
  const entries = JSON.stringify(
    transitions.map((transition, entry) =>
      transition._tag === "Wake"
        ? {
            entry,
            execution_id: transition.executionId,
            op: "wake",
            now: transition.now,
            resume_stuck: transition.resumeStuck
          }
        : {
            entry,
            execution_id: transition.executionId,
            op: "release",
            now: transition.now,
            worker_id: transition.workerId,
            outcome: transition.release._tag,
            wake_at: transition.release._tag === "Suspended" ? (transition.release.wakeAt ?? null) : null,
            run_at: transition.release._tag === "Retry" ? transition.release.runAt : null,
            finished: transition.release._tag === "Finished" ? transition.release.status : null
          }
    )
  )
  return Statements.transitionMany(sql, entries).pipe(
    Effect.flatMap(decodeTransitions),
    Effect.map((rows) => {
      const byEntry: Array<Array<Released>> = transitions.map(() => [])
      for (const row of rows) byEntry[row.entry]?.push(row)
      return byEntry
    })
  )
}

/** The wakes and releases of one queue. */
export interface Transitions {
  readonly release: (
    options: Statements.ReleaseOptions
  ) => Effect.Effect<boolean, ExecutionQueue.ExecutionQueueError>
  readonly wake: (
    options: Parameters<ExecutionQueue.ExecutionQueue["Type"]["wake"]>[0]
  ) => Effect.Effect<void, ExecutionQueue.ExecutionQueueError>
}

/** The wakes and releases of a queue over `sql`, coalesced beyond `maxInFlight`. */
export const make = (options: {
  readonly sql: SqlClient.SqlClient
  /** The `pg` pool under `sql` (PostgreSQL): releases outside a transaction go through it. */
  readonly pool: HotPool.HotPool["Type"] | undefined
  readonly maxInFlight: number
  readonly maxCoalesced: number
  readonly announce: Announce
}): Transitions => {
  const { announce, maxCoalesced, maxInFlight, pool, sql } = options

  // Group commit of the wakes and releases made outside a caller's transaction: one
  // statement for the calls waiting while `maxInFlight` are in flight, one call per
  // execution in each.
  const coalescedTransition = Coalescer.make({
    maxInFlight,
    maxCoalesced,
    key: (transition: Transition) => transition.executionId,
    one: (transition: Transition) => transitionOne(sql, pool, transition),
    many: (transitions: ReadonlyArray<Transition>) => transitionMany(sql, transitions)
  })

  const transition = (transition: Transition) =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (connection) =>
      // In the caller's transaction, on its connection (@effect/sql's): never the pool.
      Option.isSome(connection) ? transitionOne(sql, undefined, transition) : coalescedTransition(transition)
    ).pipe(Effect.tap((rows) => announce(rows.filter(announced).map((row) => row.execution_id))))

  return {
    release: (options) =>
      transition({ _tag: "Release", ...options }).pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(failure("release"))
      ),
    wake: (options) =>
      transition({
        _tag: "Wake",
        executionId: options.executionId,
        now: options.now,
        resumeStuck: options.resumeStuck === true
      }).pipe(Effect.asVoid, Effect.mapError(failure("wake")))
  }
}
