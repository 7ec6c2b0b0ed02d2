/**
 * Retention (issue 31) on PostgreSQL (fresh database; PGlite when DATABASE_URL is unset) and
 * on PGlite: `EventArchive.run` moves the events of idle streams into `events_archive`, and
 * every read — a stream, the global log, verification — answers exactly as before; the chain
 * heads stay, so an archived chain still verifies, a tampered archived event is found, and an
 * append to an archived stream chains on; a run is idempotent, a dry run moves nothing, a
 * batch rolled back (a crash mid-run) leaves every event where it was; an open execution's
 * stream stays hot.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EngineEvent, EventStore, HashChain } from "@tillflow/engine"
import { endOfLog, freshStream } from "@tillflow/engine/testing"
import { EventArchive, ExecutionQueueMigrations, PgliteEventStore, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

const happened = (n: number, extra: EventStore.JsonObject = {}): EventStore.NewEvent => ({
  type: "Happened",
  data: { n, ...extra }
})

/** The whole global log, read in pages of `pageSize`. */
const wholeLog = (store: EventStore.Service, pageSize: number) =>
  Effect.gen(function* () {
    const events: Array<EventStore.RecordedEvent> = []
    let checkpoint = EventStore.Checkpoint.start
    while (true) {
      const page = yield* store.readAll(checkpoint, { maxCount: pageSize })
      events.push(...page.events)
      checkpoint = page.next
      if (page.caughtUp) return events
    }
  })

const countIn = (table: "events" | "events_archive", streams: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ readonly n: string }>`
      SELECT count(*)::text AS n FROM ${sql(table)} WHERE ${sql.in("stream_id", streams)}`
    return Number(row?.n ?? 0)
  })

/** Makes `streams` look idle for `days` days (their last append that long ago). */
const age = (streams: ReadonlyArray<string>, days: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE streams SET updated_at = now() - make_interval(days => ${days})
      WHERE ${sql.in("stream_id", streams)}`
  })

/** The error an effect failed with, or "appended" if it succeeded. */
const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.match(effect, { onFailure: (error): E | "appended" => error, onSuccess: () => "appended" as const })

const hotDays = 30
const cutoffNow = () => EventArchive.cutoff(new Date(), hotDays)

const archiveSuite = <E>(
  name: string,
  storeLayer: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient, E>
) =>
  layer(storeLayer, { excludeTestServices: true, timeout: 60_000 })(name, (it) => {
    // First in the suite: the store has never archived.
    it.effect(
      "a store that never archived pays nothing for the archived-id check: its trigger is installed by the first run",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const installed = Effect.map(
            sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM pg_trigger
              WHERE tgname = 'events_refuse_archived_ids' AND tgrelid = 'events'::regclass`,
            ([row]) => Number(row?.n ?? 0)
          )
          expect(yield* installed).toBe(0)
          yield* EventArchive.run({ before: cutoffNow(), dryRun: true })
          expect(yield* installed).toBe(0)
          yield* EventArchive.run({ before: cutoffNow() })
          expect(yield* installed).toBe(1)
          yield* EventArchive.run({ before: cutoffNow() })
          expect(yield* installed).toBe(1)
        })
    )

    it.effect(
      "archived streams read, list in the global log and verify exactly as before; recent streams stay hot",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const old = [freshStream("old-a"), freshStream("old-b")]
          const recent = freshStream("recent")
          // Interleaved, so archived and hot events alternate in the global log.
          for (let n = 1; n <= 3; n++) {
            for (const stream of [...old, recent]) {
              yield* store.append(stream, EventStore.AnyVersion, [happened(n, { billing: { city: "Lyon" } })])
            }
          }
          yield* age(old, hotDays + 1)
          const streams = [...old, recent]
          const beforeStreams = yield* Effect.forEach(streams, (stream) => store.readStream(stream))
          const beforeLog = (yield* wholeLog(store, 2)).filter((e) => streams.includes(e.streamId))
          const beforeVerify = yield* Effect.forEach(streams, (stream) => store.verify(stream))

          const dry = yield* EventArchive.run({ before: cutoffNow(), dryRun: true })
          expect(dry.dryRun).toBe(true)
          expect(dry.streams).toBeGreaterThanOrEqual(2)
          expect(yield* countIn("events_archive", old)).toBe(0)

          const report = yield* EventArchive.run({ before: cutoffNow(), batchSize: 1 })
          expect(report.streams).toBeGreaterThanOrEqual(2)
          expect(report.events).toBeGreaterThanOrEqual(6)
          expect(yield* countIn("events", old)).toBe(0)
          expect(yield* countIn("events_archive", old)).toBe(6)
          expect(yield* countIn("events", [recent])).toBe(3)
          expect(yield* countIn("events_archive", [recent])).toBe(0)

          expect(yield* Effect.forEach(streams, (stream) => store.readStream(stream))).toEqual(beforeStreams)
          expect(yield* store.readStream(old[0], { fromVersion: 2, maxCount: 1 })).toEqual([
            beforeStreams[0][1]
          ])
          expect((yield* wholeLog(store, 2)).filter((e) => streams.includes(e.streamId))).toEqual(beforeLog)
          const afterVerify = yield* Effect.forEach(streams, (stream) => store.verify(stream))
          expect(afterVerify).toEqual(beforeVerify)
          expect(afterVerify.every((r) => r.ok && r.eventsChecked === 3)).toBe(true)
          expect((yield* store.verify()).ok).toBe(true)

          // Idempotent: nothing left to move.
          const again = yield* EventArchive.run({ before: cutoffNow() })
          expect(again.streams).toBe(0)
          expect(yield* countIn("events_archive", old)).toBe(6)
        })
    )

    it.effect("an append to an archived stream chains onto its kept head, and the whole chain verifies", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const stream = freshStream("reopened")
        yield* store.append(stream, EventStore.NoStream, [happened(1), happened(2)])
        yield* age([stream], hotDays + 1)
        yield* EventArchive.run({ before: cutoffNow() })
        expect(yield* countIn("events_archive", [stream])).toBe(2)
        expect(yield* store.streamVersion(stream)).toBe(2)
        const { nextVersion } = yield* store.append(stream, EventStore.exactVersion(2), [happened(3)])
        expect(nextVersion).toBe(3)
        expect((yield* store.readStream(stream)).map((e) => e.version)).toEqual([1, 2, 3])
        const report = yield* store.verify(stream)
        expect(report.ok).toBe(true)
        expect(report.eventsChecked).toBe(3)
      })
    )

    it.effect(
      "an archived event's id is still taken: appending it again (one stream, its own stream, several streams) is DuplicateEventId and writes nothing",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const archived = freshStream("archived-ids")
          const eventId = globalThis.crypto.randomUUID()
          yield* store.append(archived, EventStore.NoStream, [{ ...happened(1), eventId }, happened(2)])
          yield* age([archived], hotDays + 1)
          yield* EventArchive.run({ before: cutoffNow() })
          expect(yield* countIn("events_archive", [archived])).toBe(2)
          expect(yield* countIn("events", [archived])).toBe(0)

          const other = freshStream("archived-ids-again")
          expect(
            yield* refusal(
              store.append(other, EventStore.NoStream, [happened(1), { ...happened(2), eventId }])
            )
          ).toEqual(new EventStore.DuplicateEventId({ streamId: other, eventId }))
          expect(yield* store.streamVersion(other)).toBe(0)

          // The retry of an append already made (the idempotent path): refused, the stream unchanged.
          expect(
            yield* refusal(
              store.append(archived, EventStore.exactVersion(2), [
                { ...happened(3), eventId: eventId.toUpperCase() }
              ])
            )
          ).toEqual(new EventStore.DuplicateEventId({ streamId: archived, eventId }))
          expect(yield* store.streamVersion(archived)).toBe(2)

          const first = freshStream("archived-ids-multi")
          const second = freshStream("archived-ids-multi")
          const multi = yield* refusal(
            store.appendStreams([
              { streamId: first, expectedVersion: EventStore.NoStream, events: [happened(1)] },
              {
                streamId: second,
                expectedVersion: EventStore.NoStream,
                events: [{ ...happened(1), eventId }]
              }
            ])
          )
          expect(multi).toMatchObject({ _tag: "DuplicateEventId", eventId })
          expect(yield* store.streamVersion(first)).toBe(0)
          expect(yield* store.streamVersion(second)).toBe(0)

          // The same append inside a caller's transaction (its own statement, not the pool's).
          const sql = yield* SqlClient.SqlClient
          expect(
            yield* refusal(
              store
                .append(other, EventStore.NoStream, [{ ...happened(1), eventId }])
                .pipe(sql.withTransaction)
            )
          ).toEqual(new EventStore.DuplicateEventId({ streamId: other, eventId }))
          expect(yield* store.streamVersion(other)).toBe(0)
          expect((yield* store.verify(archived)).ok).toBe(true)
        })
    )

    it.effect("verification reads the archive: an archived event altered is reported at its version", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        const stream = freshStream("tampered")
        yield* store.append(stream, EventStore.NoStream, [happened(1), happened(2)])
        yield* age([stream], hotDays + 1)
        yield* EventArchive.run({ before: cutoffNow() })
        yield* sql`UPDATE events_archive SET data = '{"n": 20}'::jsonb WHERE stream_id = ${stream} AND version = 2`
        const report = yield* store.verify(stream)
        expect(report.broken.map((b) => [b.version, b.kind])).toEqual([[2, "HashMismatch"]])
      })
    )

    it.effect(
      "a batch that does not commit (a crash mid-run) moves nothing; the next run moves it all once",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const sql = yield* SqlClient.SqlClient
          const stream = freshStream("crashed")
          yield* store.append(stream, EventStore.NoStream, [happened(1), happened(2), happened(3)])
          yield* age([stream], hotDays + 1)
          const crashed = yield* EventArchive.run({ before: cutoffNow() }).pipe(
            Effect.zipRight(Effect.fail("crash" as const)),
            sql.withTransaction,
            Effect.flip
          )
          expect(crashed).toBe("crash")
          expect(yield* countIn("events", [stream])).toBe(3)
          expect(yield* countIn("events_archive", [stream])).toBe(0)
          yield* EventArchive.run({ before: cutoffNow() })
          expect(yield* countIn("events", [stream])).toBe(0)
          expect(yield* countIn("events_archive", [stream])).toBe(3)
          expect((yield* store.verify(stream)).ok).toBe(true)
        })
    )

    it.effect(
      "personal data removed (hot and archived) without breaking the chain; its digest altered is caught",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const sql = yield* SqlClient.SqlClient
          const archived = freshStream("moto-archived")
          const hot = freshStream("moto-hot")
          const sale = (reference: string): EventStore.NewEvent => ({
            type: "MotoSaleRequested",
            data: {
              reference,
              amount: "1000",
              billing: HashChain.personal({ name: "Ada Lovelace", street: "12 St James's Square" })
            }
          })
          const plain: EventStore.NewEvent = { type: "Happened", data: { n: 1 } }
          yield* store.append(archived, EventStore.NoStream, [plain, sale("r-1")])
          yield* store.append(hot, EventStore.NoStream, [sale("r-2"), plain])
          const [stored] = yield* store.readStream(archived, { fromVersion: 2 })
          expect(stored.metadata).toEqual({ [HashChain.linkVersionKey]: 2 })
          expect((yield* store.readStream(archived))[0].metadata).toEqual({})
          // Before removal: the wrapper is stored, and the chain verifies over its digest.
          expect(JSON.stringify(stored.data)).toContain("Lovelace")
          expect((yield* store.verify(archived)).broken).toEqual([])
          expect((yield* store.verify(hot)).broken).toEqual([])
          yield* age([archived], hotDays + 1)
          yield* EventArchive.run({ before: cutoffNow() })
          expect(yield* countIn("events_archive", [archived])).toBe(2)

          const report = yield* EventArchive.erasePersonal({ before: new Date(Date.now() + 60_000) })
          expect(report.events).toBeGreaterThanOrEqual(2)
          for (const stream of [archived, hot]) {
            const events = yield* store.readStream(stream)
            expect(JSON.stringify(events.map((e) => e.data))).not.toContain("Lovelace")
            const verified = yield* store.verify(stream)
            expect(verified.broken).toEqual([])
            expect(verified.eventsChecked).toBe(2)
          }
          const [erased] = yield* store.readStream(archived, { fromVersion: 2 })
          expect(erased.data).toEqual({
            reference: "r-1",
            amount: "1000",
            billing: { [HashChain.personalDigestKey]: expect.stringMatching(/^[0-9a-f]{64}$/) }
          })
          expect(yield* EventArchive.erasePersonal({ before: new Date(Date.now() + 60_000) })).toMatchObject({
            events: 0
          })

          // The digest is what the link covers: altering it breaks the chain at that event.
          yield* sql`UPDATE events SET data = jsonb_set(data, '{billing,$personalDigest}', '"00"')
            WHERE stream_id = ${hot} AND version = 1`
          expect((yield* store.verify(hot)).broken.map((b) => [b.version, b.kind])).toEqual([
            [1, "HashMismatch"]
          ])
        })
    )

    it.effect(
      "a field kept for fewer days is removed at its own cut-off while another field of the same event stays; the chain verifies",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const sql = yield* SqlClient.SqlClient
          const stream = freshStream("per-field")
          const card = "SIM CARDHOLDER"
          const address = "12 St James's Square"
          yield* store.append(stream, EventStore.NoStream, [
            {
              type: "ResultRecorded",
              data: {
                billing: HashChain.personal({ zipCode: "SW1Y", address }),
                delivered: { result: { finStatus: "AUTHORISED", cardHolderName: HashChain.personal(card) } }
              }
            }
          ])
          // Recorded 40 days ago (what the link covers does not include the time).
          yield* sql`UPDATE events SET recorded_at = now() - make_interval(days => 40) WHERE stream_id = ${stream}`
          const text = Effect.map(store.readStream(stream), (events) => JSON.stringify(events[0]?.data))
          const now = new Date()
          const fields = {
            cardHolderName: EventArchive.cutoff(now, 30),
            billing: EventArchive.cutoff(now, 365)
          }

          // The default 180 days keep both; cardHolderName's 30 days remove it alone.
          const report = yield* EventArchive.erasePersonal({ before: EventArchive.cutoff(now, 180), fields })
          expect(report.events).toBe(1)
          expect(yield* text).not.toContain(card)
          expect(yield* text).toContain(address)
          expect((yield* store.verify(stream)).broken).toEqual([])
          const [erased] = yield* store.readStream(stream)
          expect(erased?.data).toMatchObject({
            billing: { [HashChain.personalKey]: { value: { address } } },
            delivered: {
              result: {
                cardHolderName: { [HashChain.personalDigestKey]: expect.stringMatching(/^[0-9a-f]{64}$/) }
              }
            }
          })
          // Again: nothing more is due (billing is kept 365 days even under a shorter default).
          expect(
            (yield* EventArchive.erasePersonal({ before: EventArchive.cutoff(now, 10), fields })).events
          ).toBe(0)
          expect(yield* text).toContain(address)
          // Only the field named (no default cut-off), once its own time has come.
          const billingOnly = { billing: EventArchive.cutoff(now, 20) }
          expect((yield* EventArchive.erasePersonal({ fields: billingOnly })).events).toBe(1)
          expect(yield* text).not.toContain(address)
          expect((yield* store.verify(stream)).broken).toEqual([])
        })
    )

    it.effect("the stream of an execution still pending, running or suspended stays hot", () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        yield* ExecutionQueueMigrations.run
        // An id with a long digit run: the engine's stream id breaks it with `_`.
        const open = `open-${Date.now()}1234567890123456`
        const done = `done-${Date.now()}1234567890123456`
        const openStream = EngineEvent.streamId(open)
        const doneStream = EngineEvent.streamId(done)
        expect(openStream).toContain("_")
        for (const [id, status] of [
          [open, "suspended"],
          [done, "succeeded"]
        ] as const) {
          yield* sql`INSERT INTO tillflow_executions (execution_id, workflow_name, status, created_at, updated_at)
            VALUES (${id}, 'test', ${status}, 0, 0)`
        }
        yield* store.append(openStream, EventStore.NoStream, [happened(1)])
        yield* store.append(doneStream, EventStore.NoStream, [happened(1)])
        yield* age([openStream, doneStream], hotDays + 1)
        yield* EventArchive.run({ before: cutoffNow() })
        expect(yield* countIn("events", [openStream])).toBe(1)
        expect(yield* countIn("events_archive", [doneStream])).toBe(1)
        yield* endOfLog(store)
      })
    )
  })

describe("EventArchive", () => {
  archiveSuite("on PostgreSQL (fresh database)", TestDatabase.layer)
  archiveSuite("on PGlite", PgliteEventStore.layer({ pollInterval: "50 millis" }))
})
