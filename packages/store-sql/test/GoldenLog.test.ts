/**
 * An old log still decodes and verifies: the golden files of every stored event type
 * (engine and core, `npm run goldens:update`) and the golden hash chain are inserted as
 * rows, as a previous release would have left them, into a fresh database (PostgreSQL from
 * DATABASE_URL, else PGlite); the store verifies every chain and the registries at hand
 * decode every event. Then a schema change made the documented way (a new schema version
 * and an upcaster) reads the old rows, and the stream goes on at the new version, still
 * verifying.
 */
import { layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventCatalog, LifecycleEvent } from "@tillflow/core"
import { EngineEvent, EventRegistry, EventStore, HashChain } from "@tillflow/engine"
import { EventGoldens, HashChainSamples } from "@tillflow/engine/testing"
import { TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { expect } from "vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const packages = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")

const goldenFiles = (dir: string): ReadonlyArray<EventGoldens.Golden> =>
  Fs.readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => Either.getOrThrow(EventGoldens.parse(name, Fs.readFileSync(Path.join(dir, name), "utf8"))))

const engineGoldens = goldenFiles(Path.join(packages, "engine/test/goldens/engine"))
const coreGoldens = EventCatalog.registries.flatMap((entry) =>
  goldenFiles(Path.join(packages, "core/test/goldens", entry.name))
)
const chain = Schema.decodeUnknownSync(HashChainSamples.GoldenChain)(
  JSON.parse(Fs.readFileSync(Path.join(packages, "engine/test/goldens/hash-chain.json"), "utf8"))
)

/** Inserts rows as they were stored, hashes included: nothing recomputed by the store. */
const insertRaw = (
  sql: SqlClient.SqlClient,
  streamId: string,
  rows: ReadonlyArray<{
    readonly type: string
    readonly schemaVersion: number
    readonly dataJson: string
    readonly metadataJson: string
    readonly hash: string
  }>
) =>
  Effect.gen(function* () {
    const last = rows[rows.length - 1]
    if (last === undefined) return
    yield* sql`INSERT INTO streams (stream_id, version, last_hash) VALUES (${streamId}, ${rows.length}, ${last.hash})`
    for (const [index, row] of rows.entries()) {
      yield* sql`
        INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, hash)
        VALUES (${streamId}, ${index + 1}, ${globalThis.crypto.randomUUID()}, ${row.type}, ${row.schemaVersion},
                ${row.dataJson}::text::jsonb, ${row.metadataJson}::text::jsonb, ${row.hash})`
    }
  })

const canonical = (value: unknown) => Either.getOrThrow(HashChain.canonicalJson(value))

const registryOf = (name: string) => {
  const entry = EventCatalog.registries.find((e) => e.name === name)
  if (entry === undefined) throw new Error(`no registry ${name}`)
  return entry.registry
}

layer(TestDatabase.layer, { excludeTestServices: true, timeout: 120_000 })("an old log", (it) => {
  it.effect(
    "rows of every golden event, as an earlier release stored them, verify and decode with the code at hand",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const store = yield* EventStore.EventStore
        const goldens = [...engineGoldens, ...coreGoldens]
        expect(goldens.length).toBeGreaterThan(60)
        for (const golden of goldens) {
          yield* insertRaw(sql, golden.link.streamId, [
            {
              type: golden.type,
              schemaVersion: golden.schemaVersion,
              dataJson: canonical(golden.data),
              metadataJson: canonical(golden.metadata),
              hash: golden.link.hash
            }
          ])
        }
        yield* insertRaw(sql, chain.streamId, chain.links)

        const report = yield* store.verify()
        expect(report.broken).toEqual([])
        expect(report.streamsChecked).toBe(goldens.length + 1)
        expect(report.eventsChecked).toBe(goldens.length + chain.links.length)

        for (const golden of goldens) {
          const [recorded] = yield* store.readStream(golden.link.streamId)
          // jsonb gives back what was stored: the same canonical bytes, so the same link.
          expect(canonical(recorded?.data)).toBe(canonical(golden.data))
          if (recorded === undefined) continue
          if (golden.registry === "engine") {
            const decoded = EngineEvent.fromStored(recorded)
            expect({
              file: EventGoldens.fileName(golden),
              ok: Option.exists(decoded, Either.isRight)
            }).toEqual({
              file: EventGoldens.fileName(golden),
              ok: true
            })
          } else {
            const decoded = yield* Effect.either(registryOf(golden.registry).decode(recorded))
            expect({
              file: `${golden.registry}/${EventGoldens.fileName(golden)}`,
              ok: Either.isRight(decoded)
            }).toEqual({
              file: `${golden.registry}/${EventGoldens.fileName(golden)}`,
              ok: true
            })
          }
        }
      })
  )

  it.effect("appended today, every golden event gets the link its file pins", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      for (const golden of [...engineGoldens, ...coreGoldens]) {
        const streamId = `again-${golden.link.streamId}`
        yield* store.append(streamId, EventStore.NoStream, [
          {
            type: golden.type,
            schemaVersion: golden.schemaVersion,
            data: golden.data,
            metadata: golden.metadata
          }
        ])
        const [recorded] = yield* store.readStream(streamId)
        const relinked = yield* EventGoldens.relink({ ...golden, link: { ...golden.link, streamId } })
        expect({ type: golden.type, hash: recorded?.hash }).toEqual({ type: golden.type, hash: relinked })
      }
    })
  )

  it.effect(
    "a schema changed with a new version and an upcaster reads the old rows, and the stream goes on verifying",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const old = coreGoldens.find((g) => g.registry === "lifecycle" && g.type === "TipAdjusted")
        if (old === undefined) throw new Error("no TipAdjusted golden")
        const streamId = "txn-upgraded"
        const sql = yield* SqlClient.SqlClient
        yield* insertRaw(sql, streamId, [
          {
            type: old.type,
            schemaVersion: old.schemaVersion,
            dataJson: canonical(old.data),
            metadataJson: canonical(old.metadata),
            // The file's link, recomputed for this stream: what an earlier release wrote here.
            hash: yield* EventGoldens.relink({ ...old, link: { ...old.link, streamId } })
          }
        ])
        // Version 2 of TipAdjusted (as a release might make it): `tip` becomes `gratuity`.
        const current = LifecycleEvent.TipAdjusted.schema.fields
        const { tip: _tip, ...rest } = current
        const TipAdjustedV2 = EventRegistry.define(
          "TipAdjusted",
          Schema.Struct({ ...rest, gratuity: current.tip }),
          {
            schemaVersion: 2,
            upcasters: {
              1: (data) => {
                const { tip, ...others } = data as { readonly tip: EventStore.Json }
                return { ...others, gratuity: tip }
              }
            }
          }
        )
        const upgraded = EventRegistry.make(TipAdjustedV2)
        const [v1] = yield* upgraded.decodeAll(yield* store.readStream(streamId))
        expect(v1?.recorded.schemaVersion).toBe(1)
        expect(v1?.data.gratuity.minorUnits).toBe(250n)

        // New events are written at version 2 after the old one; the chain runs across both.
        const next = yield* upgraded.encode(TipAdjustedV2.make({ ...v1!.data, requestId: "req-2" }))
        expect(next.schemaVersion).toBe(2)
        yield* store.append(streamId, EventStore.exactVersion(1), [next])
        const both = yield* upgraded.decodeAll(yield* store.readStream(streamId))
        expect(both.map((e) => [e.recorded.schemaVersion, e.data.gratuity.minorUnits])).toEqual([
          [1, 250n],
          [2, 250n]
        ])
        const report = yield* store.verify(streamId)
        expect(report.broken).toEqual([])
        expect(report.eventsChecked).toBe(2)

        // Without the upcaster, the old row is refused by name, never misread.
        const strict = EventRegistry.make(
          EventRegistry.define("TipAdjusted", TipAdjustedV2.schema, { schemaVersion: 2 })
        )
        const refused = yield* Effect.flip(strict.decodeAll(yield* store.readStream(streamId)))
        expect(refused.message).toContain("no upcaster from schema version 1")
      })
  )
})
