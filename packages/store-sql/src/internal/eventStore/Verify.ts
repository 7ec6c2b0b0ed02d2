/**
 * The event store's audit: every stream's hash chain checked against its head, a page of
 * streams (and their events) at a time.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { HashChain } from "@tillflow/engine"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { sha256 } from "../sha256.js"
import { decodeEvents, decodeHeadRows, type Head, storeError } from "./Rows.js"
import * as Statements from "./Statements.js"

const verifyPageSize = 100

const verifyStreams = (sql: SqlClient.SqlClient, heads: ReadonlyArray<Head>) =>
  Effect.gen(function* () {
    if (heads.length === 0) return { eventsChecked: 0, broken: [] as Array<HashChain.BrokenLink> }
    const rows = yield* Statements.streamsEvents(
      sql,
      heads.map((head) => head.stream_id)
    ).pipe(Effect.mapError(storeError("verify")))
    const events = yield* decodeEvents("verify")(rows)
    const byStream = Arr.groupBy(events, (event) => event.streamId)
    const broken: Array<HashChain.BrokenLink> = []
    for (const head of heads) {
      const found = yield* HashChain.verifyStream(
        head.stream_id,
        byStream[head.stream_id] ?? [],
        Option.some({ version: head.version, lastHash: head.last_hash }),
        sha256
      )
      if (Option.isSome(found)) broken.push(found.value)
    }
    return { eventsChecked: events.length, broken }
  })

/** Verifies one stream, or every stream, of the store over `sql`. */
export const make = (sql: SqlClient.SqlClient) =>
  Effect.fn("EventStore.verify")(function* (streamId?: string) {
    let streamsChecked = 0
    let eventsChecked = 0
    const broken: Array<HashChain.BrokenLink> = []
    let after: Option.Option<string> = Option.none()
    while (true) {
      const rows = yield* Statements.streamHeads(sql, { streamId, after }, verifyPageSize).pipe(
        Effect.mapError(storeError("verify"))
      )
      const heads = (yield* decodeHeadRows(rows).pipe(Effect.mapError(storeError("verify")))).filter(
        // A row at version 0 is a stream created by an append still in flight (or rolled back).
        (head) => head.version > 0
      )
      const page = yield* verifyStreams(sql, heads)
      streamsChecked += heads.length
      eventsChecked += page.eventsChecked
      broken.push(...page.broken)
      if (streamId !== undefined || rows.length < verifyPageSize) break
      after = Option.some(String((rows[rows.length - 1] as { readonly stream_id: unknown }).stream_id))
    }
    // Code-unit order, as the memory store reports, whatever the database's collation.
    broken.sort((a, b) => (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0))
    return new HashChain.VerifyReport({ streamsChecked, eventsChecked, broken })
  })
