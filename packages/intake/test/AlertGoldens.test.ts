/**
 * The intake's own stored events, pinned: the alert steps' stored forms and hash-chain links
 * are their golden files' (`test/goldens/alert`, written by `npm run goldens:update`, never
 * by a test), and every golden file still reads back as the step it was.
 */
import { describe, expect, it } from "@effect/vitest"
import { HashChain } from "@tillflow/engine"
import * as EventGoldens from "@tillflow/engine/testing/EventGoldens"
import * as Monitor from "@tillflow/intake/Monitor"
import * as AlertEventSamples from "@tillflow/intake/testing/AlertEventSamples"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const dir = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "goldens", AlertEventSamples.registry)

const files = () =>
  Fs.readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => ({ name, text: Fs.readFileSync(Path.join(dir, name), "utf8") }))

const read = (golden: EventGoldens.Golden): Either.Either<Monitor.AlertEvent, string> => {
  const event = Monitor.readAlertEvent(golden.type, golden.data)
  return event === undefined
    ? Either.left(`not an alert step: ${JSON.stringify(golden.data)}`)
    : Either.right(event)
}

describe("the alert steps' stored encodings (golden files)", () => {
  it.effect("each step's stored form and link are its golden file's, and every file reads back", () =>
    Effect.gen(function* () {
      const samples = yield* Effect.forEach(AlertEventSamples.samples, EventGoldens.fromSample)
      const problems = yield* EventGoldens.check({
        registry: AlertEventSamples.registry,
        types: AlertEventSamples.types,
        samples,
        files: files(),
        read
      })
      expect(problems).toEqual([])
      expect(samples.map((s) => s.type).sort()).toEqual(["AlertAcknowledged", "AlertResolved"])
    })
  )

  it.effect("each file read back and stored again gives the same bytes", () =>
    Effect.gen(function* () {
      for (const file of files()) {
        const golden = Either.getOrThrow(EventGoldens.parse(file.name, file.text))
        const step = Either.getOrThrow(read(golden))
        const again = Monitor.storedAlertEvent(step)
        expect({ file: file.name, type: again.type, data: HashChain.canonicalJson(again.data) }).toEqual({
          file: file.name,
          type: golden.type,
          data: HashChain.canonicalJson(golden.data)
        })
      }
    })
  )
})
