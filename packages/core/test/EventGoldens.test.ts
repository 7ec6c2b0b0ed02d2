/**
 * Core's stored encodings, pinned: every event type of every registry in `EventCatalog` has
 * a sample (`EventSamples`) whose stored form and hash-chain link are its golden file's
 * under `test/goldens/<registry>` (written by `npm run goldens:update`, never by a test),
 * and every golden file, of any schema version, still decodes with the registry at hand.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Core from "@tillflow/core"
import { EventCatalog, HashChain } from "@tillflow/core"
import { EventSamples } from "@tillflow/core/testing"
import type { EventRegistry } from "@tillflow/engine"
import { EventGoldens } from "@tillflow/engine/testing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const goldens = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "goldens")

const filesOf = (registry: string) => {
  const dir = Path.join(goldens, registry)
  return Fs.existsSync(dir)
    ? Fs.readdirSync(dir)
        .filter((name) => name.endsWith(".json"))
        .sort()
        .map((name) => ({ name, text: Fs.readFileSync(Path.join(dir, name), "utf8") }))
    : []
}

const decode = (entry: EventCatalog.Entry, golden: EventGoldens.Golden) =>
  Effect.either(entry.registry.decode(EventGoldens.recorded(golden, 1n)))

const isDefinition = (value: unknown): value is EventRegistry.Any =>
  typeof value === "object" &&
  value !== null &&
  "type" in value &&
  "schemaVersion" in value &&
  "schema" in value &&
  "upcasters" in value &&
  Schema.isSchema((value as { schema: unknown }).schema)

const isRegistry = (value: unknown): value is EventRegistry.Registry<EventRegistry.Any> =>
  typeof value === "object" &&
  value !== null &&
  "definitions" in value &&
  "decodeAll" in value &&
  "has" in value

describe("core's stored encodings (golden files)", () => {
  it("the catalogue holds every event definition and registry the package exports", () => {
    const catalogued = new Set(EventCatalog.registries.flatMap((entry) => entry.registry.definitions))
    const registries = new Set(EventCatalog.registries.map((entry) => entry.registry))
    const outside: Array<string> = []
    for (const [moduleName, module] of Object.entries(Core)) {
      for (const [name, value] of Object.entries(module as object)) {
        if (isDefinition(value) && !catalogued.has(value))
          outside.push(`${moduleName}.${name} (${value.type})`)
        if (isRegistry(value) && !registries.has(value)) outside.push(`${moduleName}.${name} (a registry)`)
      }
    }
    expect(outside).toEqual([])
    // The walk sees what it looks for.
    expect(catalogued.has(Core.PaymentEvents.PaymentAuthorised)).toBe(true)
  })

  it.effect(
    "every type has a sample, each sample's stored form and link are its golden file's, and every file still decodes",
    () =>
      Effect.gen(function* () {
        const samples = yield* Effect.flatMap(EventSamples.samples, (all) =>
          Effect.forEach(all, EventGoldens.fromSample)
        )
        const problems: Array<string> = []
        for (const entry of EventCatalog.registries) {
          problems.push(
            ...(yield* EventGoldens.check({
              registry: entry.name,
              types: new Set(entry.registry.definitions.map((d) => d.type)),
              samples: samples.filter((s) => s.registry === entry.name),
              files: filesOf(entry.name),
              read: (golden) =>
                Either.mapLeft(Effect.runSync(decode(entry, golden)), (error) => error.message)
            }))
          )
        }
        const unknown = samples.filter(
          (s) => !EventCatalog.registries.some((entry) => entry.name === s.registry)
        )
        expect(unknown.map((s) => s.registry)).toEqual([])
        const directories = Fs.readdirSync(goldens).sort()
        expect(directories).toEqual(EventCatalog.registries.map((entry) => entry.name).sort())
        expect(problems).toEqual([])
      })
  )

  it.effect("each file at its type's current version decodes and encodes again to the same bytes", () =>
    Effect.gen(function* () {
      for (const entry of EventCatalog.registries) {
        for (const file of filesOf(entry.name)) {
          const golden = Either.getOrThrow(EventGoldens.parse(file.name, file.text))
          const definition = entry.registry.definitions.find((d) => d.type === golden.type)
          if (definition === undefined || definition.schemaVersion !== golden.schemaVersion) continue
          const decoded = yield* entry.registry.decode(EventGoldens.recorded(golden, 1n))
          const again = yield* entry.registry.encode({ type: decoded.type, data: decoded.data })
          expect({ file: `${entry.name}/${file.name}`, data: HashChain.canonicalJson(again.data) }).toEqual({
            file: `${entry.name}/${file.name}`,
            data: HashChain.canonicalJson(golden.data)
          })
        }
      }
    })
  )
})
