/**
 * The event store's appends beside the raw driver: one event per transaction with an
 * expected version (the engine's pattern) against `BEGIN; INSERT one row; COMMIT`, and
 * 100-event batches against one 100-row multi-row `INSERT` (COPY shown for reference), on
 * PostgreSQL (`@effect/sql-pg` against `pg`) and on PGlite (`PgliteClient` against
 * `PGlite.query`); plus the CPU an append spends per event before any SQL. Reading the
 * global log is the replay section's.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { PGlite } from "@electric-sql/pglite"
import { EventStore, HashChain } from "@tillflow/engine"
import { PgEventStore, PgliteEventStore } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import { performance } from "node:perf_hooks"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import * as Measure from "./internal/Measure.js"
import * as Raw from "./internal/Raw.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

const batchSize = 100

/**
 * Unkept rounds before the PostgreSQL rounds: 4 of the full run's 500 single appends (2,000,
 * with 400 batches). The targets are steady-state rates, and V8 takes that long to settle the
 * store's code: Node CPU per single append, in rounds of 500 from a fresh process (two runs,
 * load 5): 1.77, 1.40, 1.19, 1.04, 0.76, 0.73, 0.64, 0.68 ms and 1.64, 1.15, 0.87, 0.56, 0.60,
 * 0.47, 0.44, 0.46 ms; the raw side (less code) 0.79, 0.58, 0.38, 0.29, 0.30 … settles after
 * ~1,500. One warm-up round (session 3) left the first measured rounds on the slope.
 */
const storeWarmupRounds = (quick: boolean) => (quick ? 2 : 4)

interface Sizes {
  readonly singles: number
  readonly batches: number
}

/** Node CPU (user + system) per event of each case, per round: the load-independent view. */
const cpuPerEvent = new Map<string, Array<number>>()

/** The rounds kept by the section running (warm-up rounds are numbered from it on). */
let measuredRounds = Number.POSITIVE_INFINITY

/**
 * `Measure.rate`, also recording this process's CPU time per event under `name`, unless
 * `round` is a warm-up round.
 */
const rateWithCpu = async (name: string, round: number, body: () => Promise<number>): Promise<number> => {
  const before = process.cpuUsage()
  let count = 0
  const value = await Measure.rate(async () => (count = await body()))
  const used = process.cpuUsage(before)
  if (round >= measuredRounds) return value
  const list = cpuPerEvent.get(name) ?? []
  list.push((used.user + used.system) / 1000 / Math.max(1, count))
  cpuPerEvent.set(name, list)
  return value
}

type StoreRuntime = ManagedRuntime.ManagedRuntime<EventStore.EventStore | SqlClient.SqlClient, unknown>

const storeRuntime = (
  layer: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient, unknown>
): StoreRuntime => ManagedRuntime.make(Layer.provide(layer, Logger.minimumLogLevel(LogLevel.Error)))

/** The store's two append cases, through the `EventStore` port. */
const storeCases = async (runtime: StoreRuntime, label: string, sizes: Sizes, run: string) => {
  const store = await runtime.runPromise(EventStore.EventStore)
  const singleName = `${label} store: append 1 event per transaction (exact version)`
  const single: Measure.Case = {
    name: singleName,
    run: (round) =>
      rateWithCpu(singleName, round, () =>
        runtime.runPromise(
          Effect.gen(function* () {
            const stream = `single-${run}-${round}`
            for (let i = 0; i < sizes.singles; i++) {
              yield* store.append(stream, EventStore.exactVersion(i), [
                { type: "PaymentAuthorised", data: Raw.payload(i) }
              ])
            }
            return sizes.singles
          })
        )
      )
  }
  const batchName = `${label} store: append ${batchSize}-event batches`
  const batch: Measure.Case = {
    name: batchName,
    run: (round) =>
      rateWithCpu(batchName, round, () =>
        runtime.runPromise(
          Effect.gen(function* () {
            const stream = `batch-${run}-${round}`
            for (let b = 0; b < sizes.batches; b++) {
              const events = Array.from({ length: batchSize }, (_, i) => ({
                type: "PaymentAuthorised",
                data: Raw.payload(b * batchSize + i)
              }))
              yield* store.append(stream, EventStore.exactVersion(b * batchSize), events)
            }
            return sizes.batches * batchSize
          })
        )
      )
  }
  return { single, batch }
}

const copyLine = (values: ReadonlyArray<unknown>) =>
  values.map((v) => String(v).replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n")).join("\t") +
  "\n"

const insertBatch = Raw.multiRowInsert(batchSize)

/** The raw cases on one `pg` connection. */
const rawPgCases = (client: pg.Client, sizes: Sizes) => ({
  single: {
    name: "pg raw: single-row INSERT per transaction",
    run: (round: number) =>
      rateWithCpu("pg raw: single-row INSERT per transaction", round, () =>
        Raw.singleInserts(client, `raw-single-${round}`, sizes.singles)
      )
  },
  multi: {
    name: `pg raw: ${batchSize}-row multi-row INSERT per transaction`,
    run: (round: number) =>
      rateWithCpu(`pg raw: ${batchSize}-row multi-row INSERT per transaction`, round, async () => {
        for (let b = 0; b < sizes.batches; b++) {
          const values = Array.from({ length: batchSize }, (_, i) =>
            Raw.rowValues(`raw-batch-${round}`, b * batchSize + i + 1)
          ).flat()
          await client.query(insertBatch, values)
        }
        return sizes.batches * batchSize
      })
  },
  copy: {
    name: `pg raw: COPY ${batchSize} rows per transaction`,
    run: (round: number) =>
      Measure.rate(async () => {
        for (let b = 0; b < sizes.batches; b++) {
          const lines = Array.from({ length: batchSize }, (_, i) =>
            copyLine(Raw.rowValues(`raw-copy-${round}`, b * batchSize + i + 1))
          )
          const stream = client.query(
            copyFrom(
              "COPY raw_events (stream_id, version, event_id, type, schema_version, data, metadata, hash) FROM STDIN"
            )
          )
          await pipeline(Readable.from(lines), stream)
        }
        return sizes.batches * batchSize
      })
  }
})

/** The raw cases on PGlite's own `query`. */
const rawPgliteCases = (db: PGlite, sizes: Sizes) => ({
  single: {
    name: "PGlite raw: single-row INSERT per transaction",
    run: (round: number) =>
      Measure.rate(async () => {
        for (let i = 0; i < sizes.singles; i++) {
          await db.query("BEGIN")
          await db.query(Raw.multiRowInsert(1), Raw.rowValues(`raw-single-${round}`, i + 1) as Array<unknown>)
          await db.query("COMMIT")
        }
        return sizes.singles
      })
  },
  multi: {
    name: `PGlite raw: ${batchSize}-row multi-row INSERT per transaction`,
    run: (round: number) =>
      Measure.rate(async () => {
        for (let b = 0; b < sizes.batches; b++) {
          const values = Array.from({ length: batchSize }, (_, i) =>
            Raw.rowValues(`raw-batch-${round}`, b * batchSize + i + 1)
          ).flat()
          await db.query(insertBatch, values)
        }
        return sizes.batches * batchSize
      })
  }
})

const nodeSha256: HashChain.Sha256 = (text) =>
  Effect.sync(() => createHash("sha256").update(text, "utf8").digest("hex"))

/** Microseconds per event of the work an append does before SQL. */
const cpuCosts = async (rounds: number) => {
  const events = Array.from({ length: batchSize }, (_, i) => ({
    type: "PaymentAuthorised",
    data: Raw.payload(i)
  }))
  const perEvent = async (body: () => Promise<unknown>) => {
    const values: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const started = performance.now()
      for (let r = 0; r < 20; r++) await body()
      values.push(((performance.now() - started) * 1000) / (20 * batchSize))
    }
    return Measure.median(values)
  }
  const prepared = await Effect.runPromise(EventStore.prepareBatch("s", events))
  return [
    {
      what: "validate + redaction scan + canonical JSON (`prepareBatch`)",
      micros: await perEvent(() => Effect.runPromise(EventStore.prepareBatch("s", events)))
    },
    {
      what: "hash chain, `node:crypto` (SQL stores)",
      micros: await perEvent(() =>
        Effect.runPromise(HashChain.chain(HashChain.genesis, "s", 1, prepared, nodeSha256))
      )
    },
    {
      what: "hash chain, TypeScript SHA-256 (core default, memory store)",
      micros: await perEvent(() => Effect.runPromise(HashChain.chain(HashChain.genesis, "s", 1, prepared)))
    },
    {
      what: "hash chain, Web Crypto (for comparison)",
      micros: await perEvent(() =>
        Effect.runPromise(HashChain.chain(HashChain.genesis, "s", 1, prepared, HashChain.webCryptoSha256Hex))
      )
    }
  ]
}

const figure = (
  values: ReadonlyMap<string, ReadonlyArray<number>>,
  name: string,
  caseName: string,
  baselineName: string,
  target: Measure.Target | undefined,
  baselineLabel: string
): Measure.Figure => ({
  section: "store",
  name,
  unit: "events/s",
  rounds: values.get(caseName) ?? [],
  baseline: { name: baselineLabel, rounds: values.get(baselineName) ?? [] },
  target
})

/** The section (PostgreSQL, with the targets). */
export const section: Section.Section = {
  name: "store",
  title: "Event store: appends",
  run: async (context) => {
    measuredRounds = context.rounds
    cpuPerEvent.clear()
    // 100 batches (10,000 events) a round: 20 made rounds of ~0.1 s, in which one stall of
    // the disk halved a round's rate (session 5: per-round ratios 0.61–1.23 on an idle host).
    const sizes: Sizes = context.quick ? { singles: 200, batches: 10 } : { singles: 500, batches: 100 }
    const figures: Array<Measure.Figure> = []

    const pgValues = await Scratch.using("store", (storeDb) =>
      Scratch.using("store_raw", async (rawDb) => {
        const client = new pg.Client({ connectionString: rawDb.url })
        await client.connect()
        await client.query(Raw.rawTable)
        const runtime = storeRuntime(
          PgEventStore.layer({
            url: Redacted.make(storeDb.url),
            maxConnections: 4,
            applicationName: "bench-store"
          })
        )
        try {
          const raw = rawPgCases(client, sizes)
          const store = await storeCases(runtime, "PostgreSQL", sizes, "pg")
          context.log("store: PostgreSQL appends beside pg")
          return await Measure.interleave(
            context.rounds,
            [raw.single, store.single, raw.multi, store.batch, raw.copy],
            context.log,
            { warmup: storeWarmupRounds(context.quick) }
          )
        } finally {
          await runtime.dispose()
          await client.end()
        }
      })
    )
    figures.push(
      figure(
        pgValues,
        "append, 1 event/tx, expected version (PostgreSQL)",
        "PostgreSQL store: append 1 event per transaction (exact version)",
        "pg raw: single-row INSERT per transaction",
        { _tag: "RatioAtLeast", ratio: 0.8 },
        "pg: single-row INSERT per tx, 1 connection"
      ),
      figure(
        pgValues,
        "append, 100-event batches (PostgreSQL)",
        `PostgreSQL store: append ${batchSize}-event batches`,
        `pg raw: ${batchSize}-row multi-row INSERT per transaction`,
        { _tag: "RatioAtLeast", ratio: 0.7 },
        "pg: 100-row multi-row INSERT per tx"
      ),
      figure(
        pgValues,
        "raw COPY of 100 rows per tx (reference, no store)",
        `pg raw: COPY ${batchSize} rows per transaction`,
        `pg raw: ${batchSize}-row multi-row INSERT per transaction`,
        undefined,
        "pg: 100-row multi-row INSERT per tx"
      )
    )

    const costs = await cpuCosts(context.rounds)
    const cpu = (name: string) => Measure.median(cpuPerEvent.get(name) ?? [])
    const details = [
      `Per round: ${sizes.singles} single appends to one stream (each at \`exactVersion(n)\`), ${sizes.batches} ` +
        `batches of ${batchSize}; the store on a pool of 4 in its own fresh database, the raw side on one ` +
        "`pg` connection in another.",
      "",
      Measure.roundsTable(figures),
      "",
      "| Node CPU per event in this process (user + system, median of rounds) | store | raw `pg` |",
      "|---|---:|---:|",
      `| 1 event per transaction | ${cpu("PostgreSQL store: append 1 event per transaction (exact version)").toFixed(3)} ms | ${cpu(
        "pg raw: single-row INSERT per transaction"
      ).toFixed(3)} ms |`,
      `| ${batchSize}-event batches | ${cpu(`PostgreSQL store: append ${batchSize}-event batches`).toFixed(3)} ms | ${cpu(
        `pg raw: ${batchSize}-row multi-row INSERT per transaction`
      ).toFixed(3)} ms |`,
      "",
      "| CPU work per event, before any SQL (100-event batches) | median µs/event |",
      "|---|---:|",
      ...costs.map((c) => `| ${c.what} | ${c.micros.toFixed(1)} |`)
    ].join("\n")
    return { figures, details }
  }
}

/** The same appends on PGlite in memory (no target: the targets speak of PostgreSQL). */
export const pgliteSection: Section.Section = {
  name: "pglite",
  title: "Event store on PGlite",
  run: async (context) => {
    measuredRounds = context.rounds
    const sizes: Sizes = context.quick ? { singles: 150, batches: 8 } : { singles: 300, batches: 10 }
    const figures: Array<Measure.Figure> = []
    context.log("store: PGlite appends beside PGlite.query")
    const db = await PGlite.create("memory://")
    await db.exec(Raw.rawTable)
    const runtime = storeRuntime(PgliteEventStore.layer({}))
    let pgliteValues: ReadonlyMap<string, ReadonlyArray<number>>
    try {
      const raw = rawPgliteCases(db, sizes)
      const store = await storeCases(runtime, "PGlite", sizes, "pglite")
      pgliteValues = await Measure.interleave(
        context.rounds,
        [raw.single, store.single, raw.multi, store.batch],
        context.log,
        { warmup: 1 }
      )
    } finally {
      await runtime.dispose()
      await db.close()
    }
    figures.push(
      figure(
        pgliteValues,
        "append, 1 event/tx, expected version (PGlite, in memory)",
        "PGlite store: append 1 event per transaction (exact version)",
        "PGlite raw: single-row INSERT per transaction",
        undefined,
        "PGlite.query: single-row INSERT per tx"
      ),
      figure(
        pgliteValues,
        "append, 100-event batches (PGlite, in memory)",
        `PGlite store: append ${batchSize}-event batches`,
        `PGlite raw: ${batchSize}-row multi-row INSERT per transaction`,
        undefined,
        "PGlite.query: 100-row multi-row INSERT per tx"
      )
    )

    const details = [
      `Per round: ${sizes.singles} single appends, ${sizes.batches} batches of ${batchSize}; PGlite in memory on both ` +
        "sides (`PgliteEventStore` over `PgliteClient` against `PGlite.query`), each in its own instance.",
      "",
      Measure.roundsTable(figures)
    ].join("\n")
    return { figures: figures.map((f) => ({ ...f, section: "pglite" })), details }
  }
}
