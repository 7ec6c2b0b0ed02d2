/**
 * The engine's stored encodings, pinned: every engine event type's stored form and the hash
 * chain's links are compared with the golden files under `test/goldens` (written by
 * `npm run goldens:update`, never by a test), and every golden file still reads.
 */
import { describe, expect, it } from "@effect/vitest"
import { EngineEvent, HashChain } from "@tillflow/engine"
import { EngineEventSamples, EventGoldens, HashChainSamples } from "@tillflow/engine/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const goldens = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "goldens")

const filesOf = (dir: string) =>
  Fs.readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => ({ name, text: Fs.readFileSync(Path.join(dir, name), "utf8") }))

/** Reads a golden as the engine reads its stream: the stored event back to an engine event. */
const read = (golden: EventGoldens.Golden): Either.Either<unknown, string> =>
  Option.match(EngineEvent.fromStored(golden), {
    onNone: () => Either.left("not an engine event type"),
    onSome: (decoded) => Either.mapLeft(decoded, (error) => error.message)
  })

describe("the engine's stored encodings (golden files)", () => {
  it.effect(
    "every engine event type has a sample, each sample's stored form and link are the golden file's, and every file still reads",
    () =>
      Effect.gen(function* () {
        const samples = yield* Effect.forEach(EngineEventSamples.samples, EventGoldens.fromSample)
        const problems = yield* EventGoldens.check({
          registry: EngineEventSamples.registry,
          types: EngineEvent.engineEventTypes,
          samples,
          files: filesOf(Path.join(goldens, "engine")),
          read
        })
        expect(problems).toEqual([])
      })
  )

  it.effect("the files are what the engine decodes and encodes again, byte for byte", () =>
    Effect.gen(function* () {
      for (const file of filesOf(Path.join(goldens, "engine"))) {
        const golden = Either.getOrThrow(EventGoldens.parse(file.name, file.text))
        if (golden.schemaVersion !== EngineEvent.schemaVersion) continue
        const decoded = Option.getOrThrow(EngineEvent.fromStored(golden))
        const again = EngineEvent.toStored(Either.getOrThrow(decoded))
        expect({ file: file.name, data: HashChain.canonicalJson(again.data) }).toEqual({
          file: file.name,
          data: HashChain.canonicalJson(golden.data)
        })
      }
    })
  )

  it.effect("a golden file whose stored form changed, or a type without a sample, is reported", () =>
    Effect.gen(function* () {
      const samples = yield* Effect.forEach(EngineEventSamples.samples, EventGoldens.fromSample)
      const files = filesOf(Path.join(goldens, "engine"))
      // A field renamed in the code: the sample no longer matches the file.
      const renamed = samples.map((golden) =>
        golden.type === "ClockFired" ? { ...golden, data: { timer: "reconcile/1" } } : golden
      )
      const problems = yield* EventGoldens.check({
        registry: "engine",
        types: new Set([...EngineEvent.engineEventTypes, "WorkflowPatched"]),
        samples: renamed,
        files,
        read
      })
      expect(problems).toEqual([
        expect.stringContaining("engine/WorkflowPatched: the registry holds this type but no sample of it"),
        expect.stringContaining(
          'ClockFired.v1.json: the stored form changed: data: the file has {"name":"reconcile/1"}'
        )
      ])
    })
  )

  it.effect(
    "the hash chain's canonical JSON, link texts and hashes are the golden chain's, and it verifies",
    () =>
      Effect.gen(function* () {
        const file = Fs.readFileSync(Path.join(goldens, "hash-chain.json"), "utf8")
        const golden = Schema.decodeUnknownSync(HashChainSamples.GoldenChain)(JSON.parse(file))
        const now = yield* HashChainSamples.chain
        expect(now).toEqual(golden)
        // Any correct SHA-256 gives the same chain (store-sql hashes with node:crypto).
        const nodeSha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")
        expect(
          HashChain.chainSync(
            HashChain.genesis,
            golden.streamId,
            1,
            golden.links.map((link) => ({ ...link })),
            nodeSha
          )
        ).toEqual(golden.links.map((link) => link.hash))
        const verifiable = HashChainSamples.verifiable(golden)
        expect(yield* HashChain.verifyStream(golden.streamId, verifiable)).toEqual(Option.none())
        // The check is not vacuous: one changed byte breaks the chain at that link.
        const edited = verifiable.map((event, index) =>
          index === 2 ? { ...event, schemaVersion: 4 } : event
        )
        const broken = yield* HashChain.verifyStream(golden.streamId, edited)
        expect(Option.map(broken, (b) => [b.version, b.kind])).toEqual(Option.some([3, "HashMismatch"]))
      })
  )

  it("an engine event of an older schema version is read through its upcaster; without one it is refused", () => {
    // As if version 2 of ClockFired had renamed `name` to `timer` and lifted version 1 files.
    const golden = Either.getOrThrow(
      EventGoldens.parse(
        "ClockFired.v1.json",
        Fs.readFileSync(Path.join(goldens, "engine", "ClockFired.v1.json"), "utf8")
      )
    )
    const lifted = EngineEvent.reader(2, {
      ClockFired: { 1: (data) => ({ name: `lifted:${(data as { name: string }).name}` }) }
    })(golden)
    expect(Option.map(lifted, Either.getOrThrow)).toEqual(
      Option.some({ _tag: "ClockFired", name: "lifted:reconcile/1" })
    )
    const unlifted = EngineEvent.reader(2, {})(golden)
    expect(Option.map(unlifted, (e) => Either.isLeft(e) && e.left.message)).toEqual(
      Option.some('engine event "ClockFired" at schema version 1: no upcaster from schema version 1')
    )
  })
})
