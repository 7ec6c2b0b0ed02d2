/**
 * The event store's reads: a stream (`readStream`, coalesced as appends are), a stream's
 * version (`streamVersion`), and the global log after a checkpoint (`readAll`), read only
 * below the snapshot's xmin so that no event can still appear before a checkpoint handed
 * out; a report's read (`settle`) first waits, bounded, for the transactions in flight at
 * its call to end.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { EventStore } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Coalescer from "../Coalescer.js"
import { decodeEvents, storeError } from "./Rows.js"
import * as Statements from "./Statements.js"

/** The reads of one store. */
export interface Read {
  readonly readStream: EventStore.Service["readStream"]
  readonly readAll: EventStore.Service["readAll"]
  readonly streamVersion: EventStore.Service["streamVersion"]
}

/** The reads of a store over `sql`, whole-stream reads coalesced beyond `maxInFlight`. */
export const make = (options: {
  readonly sql: SqlClient.SqlClient
  readonly maxInFlight: number
  readonly maxCoalesced: number
}): Read => {
  const { maxCoalesced, maxInFlight, sql } = options

  const streamVersion = Effect.fn("EventStore.streamVersion")(function* (streamId: string) {
    const rows = yield* Statements.streamVersion(sql, streamId).pipe(
      Effect.mapError(storeError("streamVersion"))
    )
    return rows.length === 0 ? 0 : Number(rows[0].version)
  })

  // Reads of whole streams (from a version on, no `maxCount`) made outside a caller's
  // transaction are coalesced as appends are (`Coalescer`): concurrent reads of different
  // streams go as ONE statement, its rows split by stream.
  const readOne = (
    request: Statements.ReadRequest,
    maxCount?: number | undefined
  ): Effect.Effect<ReadonlyArray<unknown>, SqlError> => Statements.readStream(sql, request, maxCount)
  const readMany = (
    requests: ReadonlyArray<Statements.ReadRequest>
  ): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> =>
    Effect.map(Statements.readMany(sql, requests), (rows) => {
      const byStream = new Map<string, Array<unknown>>()
      for (const row of rows) {
        const streamId = (row as { readonly stream_id: string }).stream_id
        const found = byStream.get(streamId)
        if (found === undefined) byStream.set(streamId, [row])
        else found.push(row)
      }
      return requests.map((request) => byStream.get(request.streamId) ?? [])
    })
  const coalescedRead = Coalescer.make({
    maxInFlight,
    maxCoalesced,
    key: (request: Statements.ReadRequest) => request.streamId,
    one: (request) => readOne(request),
    many: readMany
  })

  const readStream = Effect.fn("EventStore.readStream")(function* (
    streamId: string,
    readOptions: EventStore.ReadStreamOptions = {}
  ) {
    const fromVersion = Math.max(1, Math.floor(readOptions.fromVersion ?? 1))
    const transaction = yield* Effect.serviceOption(SqlClient.TransactionConnection)
    const rows = yield* (
      readOptions.maxCount === undefined && Option.isNone(transaction)
        ? coalescedRead({ streamId, fromVersion })
        : readOne(
            { streamId, fromVersion },
            readOptions.maxCount === undefined ? undefined : Math.max(0, Math.floor(readOptions.maxCount))
          )
    ).pipe(Effect.mapError(storeError("readStream")))
    return yield* decodeEvents("readStream")(rows)
  })

  // A report's read right after a write (the write's transaction committed, but another
  // one, in any database of the cluster, still running and holding xmin below it): wait
  // until every transaction assigned before the call has ended, polling, at most `settle`.
  // Never inside a transaction of the caller's own that holds an id: it would wait for itself.
  const liveClock = Clock.make()
  const settle = (within: Duration.DurationInput) =>
    Effect.gen(function* () {
      if (Option.isSome(yield* Effect.serviceOption(SqlClient.TransactionConnection))) return
      const [{ horizon }] = yield* Statements.horizon(sql)
      const deadline = liveClock.unsafeCurrentTimeMillis() + Duration.toMillis(within)
      while (true) {
        const [{ settled }] = yield* Statements.settledBelow(sql, horizon)
        if (settled || liveClock.unsafeCurrentTimeMillis() >= deadline) return
        yield* Effect.withClock(Effect.sleep("20 millis"), liveClock)
      }
    })

  const readAll = Effect.fn("EventStore.readAll")(function* (
    checkpoint: EventStore.Checkpoint,
    readOptions: EventStore.ReadAllOptions
  ) {
    const maxCount = Math.max(1, Math.floor(readOptions.maxCount))
    if (readOptions.settle !== undefined) {
      yield* settle(readOptions.settle).pipe(Effect.mapError(storeError("readAll")))
    }
    // Only transactions below the snapshot's xmin: every one of them has committed or
    // aborted, so nothing can still appear before the checkpoint we hand out. A bare
    // `global_position > checkpoint` would skip an event whose transaction took its
    // position early and committed late (docs/event-store.md shows the race).
    const rows = yield* Statements.readAll(sql, checkpoint, maxCount).pipe(
      Effect.mapError(storeError("readAll"))
    )
    const events = yield* decodeEvents("readAll")(rows)
    const last = events[events.length - 1]
    return {
      events,
      next: last === undefined ? checkpoint : last.checkpoint,
      caughtUp: events.length < maxCount
    }
  })

  return { readStream, readAll, streamVersion }
}
