/**
 * The worker's periodic archive run (issue 31), on the test clock: `EventArchive.periodic`
 * runs one interval after it starts and every interval after, with the cut-off `now −
 * hotDays`, logging what it moved; a run that fails (an error or a defect) is logged with
 * its reason and the next interval runs again. `TILLFLOW_RETENTION_INTERVAL` is read as a
 * duration, default 1 hour, `0`/`off` for none. Then the same layer over a real store
 * (PGlite, or PostgreSQL from DATABASE_URL) archives an idle stream.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@tillflow/engine"
import { freshStream } from "@tillflow/engine/testing"
import { EventArchive, TestDatabase } from "@tillflow/store-sql"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"

interface Line {
  readonly level: string
  readonly message: string
}

/** Every log line of the effect's fibers (its forks too), as they are written. */
const capturingLogs = (lines: Queue.Queue<Line>) =>
  Logger.add(
    Logger.make(({ logLevel, message }) => {
      Queue.unsafeOffer(lines, {
        level: logLevel.label,
        message: String(Array.isArray(message) ? message[0] : message)
      })
    })
  )

const start = Date.parse("2026-11-28T00:00:00.000Z")
const hours = (n: number) => n * 3_600_000
const days = (n: number) => n * 86_400_000

/** An archiver that answers each run with the next of `answers`, recording its options. */
const scripted = (
  calls: Queue.Queue<EventArchive.Options>,
  answers: ReadonlyArray<"ok" | "fail" | "die">,
  /** The cut-offs of the personal-data removals asked for; none expected when absent. */
  erasures?: Queue.Queue<EventArchive.ErasureOptions>
): EventArchive.Service => {
  let n = 0
  return {
    run: (options) =>
      Effect.gen(function* () {
        yield* Queue.offer(calls, options)
        const answer = answers[Math.min(n++, answers.length - 1)]
        if (answer === "fail") {
          return yield* new EventStore.EventStoreError({ operation: "archive", detail: "connection refused" })
        }
        if (answer === "die") return yield* Effect.dieMessage("archive statement crashed")
        return new EventArchive.ArchiveReport({
          before: options.before,
          dryRun: false,
          streams: 2,
          events: 7,
          executions: 5
        })
      }),
    erasePersonal: (options) =>
      erasures === undefined
        ? Effect.dieMessage("no personal-data removal expected")
        : Queue.offer(erasures, options).pipe(
            Effect.as(
              new EventArchive.ErasureReport({
                ...(options.before === undefined ? {} : { before: options.before }),
                fields: options.fields ?? {},
                events: 3
              })
            )
          )
  }
}

/** `EventArchive.periodic` started over `archiver`, in the test's scope. */
const startPeriodic = (archiver: EventArchive.Service, options: EventArchive.PeriodicOptions) =>
  Layer.build(
    EventArchive.periodic(options).pipe(Layer.provide(Layer.succeed(EventArchive.Archiver, archiver)))
  )

describe("EventArchive.periodic", () => {
  it.scoped(
    "nothing runs before the interval; then a run with the cut-off now − hotDays, its counts logged",
    () =>
      Effect.gen(function* () {
        const calls = yield* Queue.unbounded<EventArchive.Options>()
        const lines = yield* Queue.unbounded<Line>()
        yield* TestClock.setTime(start)
        yield* startPeriodic(scripted(calls, ["ok"]), { interval: "1 hour", hotDays: 30 }).pipe(
          Effect.provide(capturingLogs(lines))
        )

        yield* TestClock.adjust("59 minutes")
        expect(yield* Queue.size(calls)).toBe(0)
        yield* TestClock.adjust("1 minute")
        expect((yield* Queue.take(calls)).before).toEqual(new Date(start + hours(1) - days(30)))
        const line = yield* Queue.take(lines)
        expect(line.level).toBe("INFO")
        expect(line.message).toContain("archived 2 streams, 7 events")
        expect(line.message).toContain("5 execution rows finished before it")

        yield* TestClock.adjust("1 hour")
        expect((yield* Queue.take(calls)).before).toEqual(new Date(start + hours(2) - days(30)))
      })
  )

  it.scoped(
    "with personalDays, each run also removes the personal data recorded before now − personalDays",
    () =>
      Effect.gen(function* () {
        const calls = yield* Queue.unbounded<EventArchive.Options>()
        const erasures = yield* Queue.unbounded<EventArchive.ErasureOptions>()
        const lines = yield* Queue.unbounded<Line>()
        yield* TestClock.setTime(start)
        yield* startPeriodic(scripted(calls, ["ok"], erasures), {
          interval: "1 hour",
          hotDays: 30,
          personalDays: 180
        }).pipe(Effect.provide(capturingLogs(lines)))
        yield* TestClock.adjust("1 hour")
        yield* Queue.take(calls)
        expect((yield* Queue.take(erasures)).before).toEqual(new Date(start + hours(1) - days(180)))
        yield* Queue.take(lines)
        expect((yield* Queue.take(lines)).message).toContain("removed the personal data of 3 events")
      })
  )

  it.scoped(
    "with personalFields, a listed field is removed at its own cut-off, the others at personalDays",
    () =>
      Effect.gen(function* () {
        const calls = yield* Queue.unbounded<EventArchive.Options>()
        const erasures = yield* Queue.unbounded<EventArchive.ErasureOptions>()
        const lines = yield* Queue.unbounded<Line>()
        yield* TestClock.setTime(start)
        yield* startPeriodic(scripted(calls, ["ok"], erasures), {
          interval: "1 hour",
          hotDays: 30,
          personalDays: 180,
          personalFields: { cardHolderName: 30, billing: 365 }
        }).pipe(Effect.provide(capturingLogs(lines)))
        yield* TestClock.adjust("1 hour")
        yield* Queue.take(calls)
        const now = start + hours(1)
        expect(yield* Queue.take(erasures)).toEqual({
          before: new Date(now - days(180)),
          fields: { cardHolderName: new Date(now - days(30)), billing: new Date(now - days(365)) }
        })
        yield* Queue.take(lines)
        expect((yield* Queue.take(lines)).message).toContain(
          `cardHolderName before ${new Date(now - days(30)).toISOString()}`
        )
      })
  )

  it.scoped("a run that fails is logged with its reason and does not stop the next one", () =>
    Effect.gen(function* () {
      const calls = yield* Queue.unbounded<EventArchive.Options>()
      const lines = yield* Queue.unbounded<Line>()
      yield* TestClock.setTime(start)
      yield* startPeriodic(scripted(calls, ["fail", "die", "ok"]), {
        interval: "15 minutes",
        hotDays: 90
      }).pipe(Effect.provide(capturingLogs(lines)))

      yield* TestClock.adjust("15 minutes")
      yield* Queue.take(calls)
      const failed = yield* Queue.take(lines)
      expect(failed.level).toBe("ERROR")
      expect(failed.message).toContain("retention: the archive run failed")
      expect(failed.message).toContain("connection refused")
      expect(failed.message).toContain("next try in 15m")

      yield* TestClock.adjust("15 minutes")
      yield* Queue.take(calls)
      const died = yield* Queue.take(lines)
      expect(died.level).toBe("ERROR")
      expect(died.message).toContain("archive statement crashed")

      yield* TestClock.adjust("15 minutes")
      expect((yield* Queue.take(calls)).before).toEqual(new Date(start + 3 * hours(0.25) - days(90)))
      expect((yield* Queue.take(lines)).message).toContain("archived 2 streams, 7 events")
    })
  )

  it.scoped("released (the worker stopping), it runs no more", () =>
    Effect.gen(function* () {
      const calls = yield* Queue.unbounded<EventArchive.Options>()
      yield* TestClock.setTime(start)
      yield* Effect.scoped(startPeriodic(scripted(calls, ["ok"]), { interval: "1 hour", hotDays: 30 }))
      yield* TestClock.adjust("3 hours")
      expect(yield* Queue.size(calls)).toBe(0)
    })
  )
})

describe("EventArchive.interval (TILLFLOW_RETENTION_INTERVAL)", () => {
  const read = (value: string | undefined) =>
    EventArchive.interval.pipe(
      Effect.withConfigProvider(
        ConfigProvider.fromMap(new Map(value === undefined ? [] : [[EventArchive.intervalVariable, value]]))
      )
    )

  it.effect(
    "a duration; 1 hour when unset; 0 or off for none; anything else refused, naming the variable",
    () =>
      Effect.gen(function* () {
        expect(yield* read(undefined)).toEqual(Option.some(Duration.hours(1)))
        expect(yield* read("15 minutes")).toEqual(Option.some(Duration.minutes(15)))
        expect(yield* read(" 2 Hours ")).toEqual(Option.some(Duration.hours(2)))
        for (const off of ["0", "off", "OFF", "0 seconds"]) expect(yield* read(off)).toEqual(Option.none())
        for (const bad of ["1h", "soon", "-1 hours", ""]) {
          const error = yield* Effect.flip(read(bad))
          expect(String(error)).toContain(EventArchive.intervalVariable)
        }
      })
  )
})

/** Makes `streams` look idle for `n` days (their last append that long ago). */
const age = (streams: ReadonlyArray<string>, n: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE streams SET updated_at = now() - make_interval(days => ${n})
      WHERE ${sql.in("stream_id", streams)}`
  })

layer(Layer.provideMerge(EventArchive.layer, TestDatabase.layer), {
  excludeTestServices: true,
  timeout: 60_000
})("EventArchive.periodic over a store", (it) => {
  it.scoped(
    "after the interval, a stream idle for longer than hotDays is archived and one kept hot is not",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        const idle = freshStream("periodic-idle")
        const recent = freshStream("periodic-recent")
        yield* store.append(idle, EventStore.NoStream, [{ type: "Happened", data: { n: 1 } }])
        yield* store.append(recent, EventStore.NoStream, [{ type: "Happened", data: { n: 1 } }])
        yield* age([idle], 31)
        yield* age([recent], 29)

        // The periodic fiber alone on the test clock, set to the database's now.
        const lines = yield* Queue.unbounded<Line>()
        const archiver = yield* EventArchive.Archiver
        yield* Effect.gen(function* () {
          yield* TestClock.setTime(Date.now())
          yield* startPeriodic(archiver, { interval: "1 hour", hotDays: 30 }).pipe(
            Effect.provide(capturingLogs(lines))
          )
          yield* TestClock.adjust("1 hour")
        }).pipe(Effect.provide(TestContext.TestContext))
        expect((yield* Queue.take(lines)).message).toMatch(/archived [1-9]\d* streams/)

        const tableOf = (stream: string) =>
          sql<{ readonly hot: string; readonly archived: string }>`
            SELECT (SELECT count(*) FROM events WHERE stream_id = ${stream})::text AS hot,
              (SELECT count(*) FROM events_archive WHERE stream_id = ${stream})::text AS archived`
        expect(yield* tableOf(idle)).toEqual([{ hot: "0", archived: "1" }])
        expect(yield* tableOf(recent)).toEqual([{ hot: "1", archived: "0" }])
      })
  )
})
