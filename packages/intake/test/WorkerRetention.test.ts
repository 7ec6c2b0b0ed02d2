/**
 * The worker runs retention (issue 31): its layer schedules `EventArchive.periodic` on its
 * store every `TILLFLOW_RETENTION_INTERVAL` (a run is logged with what it moved), says so
 * when the variable turns it off, and refuses to start on a value that is not a duration,
 * naming the variable. On the embedded store (the worker's default, a SQL store like
 * PostgreSQL); the scheduling itself is tested on the test clock in store-sql
 * (`EventArchivePeriodic.test.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Worker, WorkerConfig } from "@tillflow/intake"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Queue from "effect/Queue"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** The worker of `retention` (the value of TILLFLOW_RETENTION_INTERVAL) built in this scope. */
const startWorker = (retention: string, lines: Queue.Queue<string>) =>
  Effect.gen(function* () {
    const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-retention-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(folder, { recursive: true, force: true })))
    const provider = ConfigProvider.fromMap(
      new Map([
        ["TILLFLOW_DATA_DIR", Path.join(folder, "data")],
        ["TILLFLOW_INTAKE_PORT", "0"],
        ["TILLFLOW_SIMULATOR_FAST", "true"],
        ["TILLFLOW_RETENTION_INTERVAL", retention]
      ])
    )
    const config = yield* Effect.withConfigProvider(WorkerConfig.load, provider)
    const capture = Logger.make(({ message }) => {
      const text = String(Array.isArray(message) ? message[0] : message)
      if (text.startsWith("retention:")) Queue.unsafeOffer(lines, text)
    })
    return yield* Layer.build(Worker.layer(config)).pipe(
      Effect.withConfigProvider(provider),
      Effect.provide(Logger.replace(Logger.defaultLogger, capture))
    )
  })

describe("the worker's retention", () => {
  it.scopedLive(
    "scheduled on the worker's store: announced at start, and each run logs what it moved",
    () =>
      Effect.gen(function* () {
        const lines = yield* Queue.unbounded<string>()
        yield* startWorker("1 seconds", lines)
        expect(yield* Queue.take(lines)).toContain("retention: archiving every 1s")
        expect(yield* Queue.take(lines)).toMatch(
          /^retention: archived \d+ streams, \d+ events idle since before /
        )
      }),
    120_000
  )

  it.scopedLive(
    "TILLFLOW_RETENTION_INTERVAL=off: the worker starts and says no run is scheduled",
    () =>
      Effect.gen(function* () {
        const lines = yield* Queue.unbounded<string>()
        yield* startWorker("off", lines)
        expect(Chunk.toReadonlyArray(yield* Queue.takeAll(lines))).toEqual([
          "retention: no periodic archive run (TILLFLOW_RETENTION_INTERVAL is off)"
        ])
      }),
    120_000
  )

  it.scopedLive(
    "a value that is not a duration stops the start with a configuration error naming the variable",
    () =>
      Effect.gen(function* () {
        const lines = yield* Queue.unbounded<string>()
        const error = yield* Effect.flip(startWorker("soon", lines))
        expect(error._tag).toBe("StartupError")
        expect(error.message).toContain("configuration:")
        expect(error.message).toContain("TILLFLOW_RETENTION_INTERVAL")
      }),
    120_000
  )
})
