import { describe, expect, it } from "@effect/vitest"
import { EventStore } from "@tillflow/engine"
import { PgliteEventStore } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventStoreContract } from "@tillflow/engine/testing"
import { sqlTamper } from "./SqlTamper.js"

eventStoreContract(
  "PGlite (memory)",
  sqlTamper.pipe(Layer.provideMerge(PgliteEventStore.layer({ pollInterval: "50 millis" })))
)

describe("PgliteEventStore in a data directory", () => {
  it.live(
    "keeps its events across a restart and warns at start-up that PGlite does not fsync",
    () =>
      Effect.acquireUseRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "tillflow-pglite-"))),
        (dataDir) =>
          Effect.gen(function* () {
            const warnings: Array<string> = []
            const capture = Logger.replace(
              Logger.defaultLogger,
              Logger.make(({ message }) => {
                warnings.push(String(Array.isArray(message) ? message.join(" ") : message))
              })
            )
            const open = PgliteEventStore.layer({ dataDir }).pipe(Layer.provide(capture))
            yield* Effect.gen(function* () {
              const store = yield* EventStore.EventStore
              yield* store.append("kept", EventStore.NoStream, [{ type: "Written", data: { n: 1 } }])
            }).pipe(Effect.provide(open))
            const reopened = yield* Effect.gen(function* () {
              const store = yield* EventStore.EventStore
              return yield* store.readStream("kept")
            }).pipe(Effect.provide(open))
            expect(reopened.map((e) => e.data)).toEqual([{ n: 1 }])
            expect(warnings.some((w) => w.includes("no fsync") && w.includes(dataDir))).toBe(true)
          }),
        (dataDir) => Effect.promise(() => rm(dataDir, { recursive: true, force: true }))
      ),
    60_000
  )
})
