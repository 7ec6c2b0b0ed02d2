/**
 * Benchmark of the event store (not a test): append throughput (one event per transaction
 * with an expected version; 100-event batches) and global-read throughput, on PostgreSQL
 * and PGlite, next to raw-driver baselines measured in the same run on the same machine:
 * `pg` directly (single-row insert per transaction on one connection, 100-row multi-row
 * insert, COPY of 100 rows, cursor read with JSON parse) and PGlite's own `query`.
 *
 * Run: `npm run bench:store` (DATABASE_URL defaults to postgres://postgres@127.0.0.1:5432/postgres;
 * ROUNDS=5 by default). Prints a Markdown section for docs/performance.md.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { PGlite } from "@electric-sql/pglite"
import { EventStore, HashChain } from "@tillflow/core"
import { PgEventStore, PgliteEventStore } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import * as os from "node:os"
import { performance } from "node:perf_hooks"
import { pipeline } from "node:stream/promises"
import { Readable } from "node:stream"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"

const rounds = Number(process.env.ROUNDS ?? 5)
const singles = Number(process.env.SINGLES ?? 500)
const batches = Number(process.env.BATCHES ?? 20)
const batchSize = 100
const readPage = 1000
const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

// A payment-shaped event, about 300 bytes of JSON.
const payload = (i: number) => ({
  amount: String(1000 + i),
  currency: "EUR",
  serialNumber: "0821032398",
  transactionReference: globalThis.crypto.randomUUID(),
  status: "AUTHORISED",
  maskedCardNumber: "476173******0119",
  authorisationCode: "A1B2C3",
  efttimestamp: 1615374961000 + i,
  receipt: { merchant: "https://receipts.example/merchant/abc", customer: "https://receipts.example/c/abc" }
})

interface Result {
  readonly target: string
  readonly operation: string
  readonly unit: string
  readonly perRound: ReadonlyArray<number>
}
const results: Array<Result> = []

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** One measured operation: `run` handles some events and says how many. */
interface Case {
  readonly target: string
  readonly operation: string
  readonly run: (round: number) => Promise<number>
}

/** A set of cases over resources held open until every round has run. */
interface Suite {
  readonly cases: ReadonlyArray<Case>
  readonly close: () => Promise<void>
}

/**
 * Runs the cases round by round, interleaved (round 1 of every case, then round 2 …), so a
 * store and its raw baseline see the same machine load; records events/s per round.
 */
const runInterleaved = async (cases: ReadonlyArray<Case>) => {
  const perCase = cases.map((): Array<number> => [])
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const started = performance.now()
      const count = await cases[i].run(round)
      perCase[i].push(count / ((performance.now() - started) / 1000))
    }
  }
  cases.forEach((c, i) => {
    results.push({ target: c.target, operation: c.operation, unit: "events/s", perRound: perCase[i] })
    process.stderr.write(
      `${c.target.padEnd(12)} ${c.operation.padEnd(48)} ${Math.round(median(perCase[i]))} events/s\n`
    )
  })
}

// ---------------------------------------------------------------------------------------
// The store, through the EventStore port

const benchStore = async (
  target: string,
  layer: Layer.Layer<EventStore.EventStore | SqlClient.SqlClient, unknown>
): Promise<Suite> => {
  const runtime = ManagedRuntime.make(Layer.provide(layer, Logger.minimumLogLevel(LogLevel.Error)))
  const run = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore | SqlClient.SqlClient>) =>
    runtime.runPromise(effect)
  const store = await run(EventStore.EventStore)
  const cases: Array<Case> = []
  cases.push({
    target,
    operation: "append: 1 event per transaction (exact version)",
    run: (round) =>
      run(
        Effect.gen(function* () {
          const stream = `single-${round}`
          for (let i = 0; i < singles; i++) {
            yield* store.append(stream, EventStore.exactVersion(i), [
              { type: "PaymentAuthorised", data: payload(i) }
            ])
          }
          return singles
        })
      )
  })
  cases.push({
    target,
    operation: `append: ${batchSize}-event batches`,
    run: (round) =>
      run(
        Effect.gen(function* () {
          const stream = `batch-${round}`
          for (let b = 0; b < batches; b++) {
            const events = Array.from({ length: batchSize }, (_, i) => ({
              type: "PaymentAuthorised",
              data: payload(b * batchSize + i)
            }))
            yield* store.append(stream, EventStore.exactVersion(b * batchSize), events)
          }
          return batches * batchSize
        })
      )
  })
  cases.push({
    target,
    operation: `readAll: pages of ${readPage}`,
    run: () =>
      run(
        Effect.gen(function* () {
          let checkpoint = EventStore.Checkpoint.start
          let count = 0
          while (true) {
            const page = yield* store.readAll(checkpoint, { maxCount: readPage })
            count += page.events.length
            checkpoint = page.next
            if (page.caughtUp) return count
          }
        })
      )
  })
  return { cases, close: () => runtime.dispose() }
}

// ---------------------------------------------------------------------------------------
// Raw baselines

const rawTable = `CREATE TABLE raw_events (
  global_position bigint GENERATED ALWAYS AS IDENTITY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id text NOT NULL, version bigint NOT NULL, event_id uuid NOT NULL UNIQUE,
  type text NOT NULL, schema_version integer NOT NULL, data jsonb NOT NULL, metadata jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(), hash text NOT NULL,
  PRIMARY KEY (stream_id, version), UNIQUE (global_position))`

const rowValues = (stream: string, version: number) => [
  stream,
  version,
  globalThis.crypto.randomUUID(),
  "PaymentAuthorised",
  1,
  JSON.stringify(payload(version)),
  "{}",
  "0".repeat(64)
]

const multiRowInsert = (rows: number) => {
  const tuples = Array.from({ length: rows }, (_, r) => {
    const base = r * 8
    return `($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}::jsonb, $${base + 7}::jsonb, $${base + 8})`
  })
  return `INSERT INTO raw_events (stream_id, version, event_id, type, schema_version, data, metadata, hash) VALUES ${tuples.join(", ")}`
}

const copyLine = (values: ReadonlyArray<unknown>) =>
  values.map((v) => String(v).replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n")).join("\t") +
  "\n"

const benchRawPg = async (url: string): Promise<Suite> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(rawTable)
  const target = "pg (raw)"
  const cases: Array<Case> = []
  cases.push({
    target,
    operation: "single-row INSERT per transaction",
    run: async (round) => {
      for (let i = 0; i < singles; i++) {
        await client.query("BEGIN")
        await client.query(multiRowInsert(1), rowValues(`raw-single-${round}`, i + 1))
        await client.query("COMMIT")
      }
      return singles
    }
  })
  const insert100 = multiRowInsert(batchSize)
  cases.push({
    target,
    operation: `${batchSize}-row multi-row INSERT per transaction`,
    run: async (round) => {
      for (let b = 0; b < batches; b++) {
        const values = Array.from({ length: batchSize }, (_, i) =>
          rowValues(`raw-batch-${round}`, b * batchSize + i + 1)
        ).flat()
        await client.query(insert100, values)
      }
      return batches * batchSize
    }
  })
  cases.push({
    target,
    operation: `COPY ${batchSize} rows per transaction`,
    run: async (round) => {
      for (let b = 0; b < batches; b++) {
        const lines = Array.from({ length: batchSize }, (_, i) =>
          copyLine(rowValues(`raw-copy-${round}`, b * batchSize + i + 1))
        )
        const stream = client.query(
          copyFrom(
            "COPY raw_events (stream_id, version, event_id, type, schema_version, data, metadata, hash) FROM STDIN"
          )
        )
        await pipeline(Readable.from(lines), stream)
      }
      return batches * batchSize
    }
  })
  cases.push({
    target,
    operation: `cursor read, FETCH ${readPage}, JSON parsed`,
    run: async () => {
      let count = 0
      await client.query("BEGIN")
      await client.query(
        `DECLARE c NO SCROLL CURSOR FOR SELECT stream_id, version, global_position, transaction_id::text, event_id,
           type, schema_version, data, metadata, recorded_at, hash FROM raw_events ORDER BY transaction_id, global_position`
      )
      while (true) {
        const page = await client.query(`FETCH ${readPage} FROM c`)
        count += page.rows.length
        if (page.rows.length < readPage) break
      }
      await client.query("COMMIT")
      return count
    }
  })
  return { cases, close: () => client.end() }
}

const benchRawPglite = async (): Promise<Suite> => {
  const db = await PGlite.create("memory://")
  await db.exec(rawTable)
  const target = "PGlite (raw)"
  const cases: Array<Case> = []
  cases.push({
    target,
    operation: "single-row INSERT per transaction",
    run: async (round) => {
      for (let i = 0; i < singles; i++) {
        await db.query("BEGIN")
        await db.query(multiRowInsert(1), rowValues(`raw-single-${round}`, i + 1))
        await db.query("COMMIT")
      }
      return singles
    }
  })
  const insert100 = multiRowInsert(batchSize)
  cases.push({
    target,
    operation: `${batchSize}-row multi-row INSERT per transaction`,
    run: async (round) => {
      for (let b = 0; b < batches; b++) {
        const values = Array.from({ length: batchSize }, (_, i) =>
          rowValues(`raw-batch-${round}`, b * batchSize + i + 1)
        ).flat()
        await db.query(insert100, values)
      }
      return batches * batchSize
    }
  })
  cases.push({
    target,
    operation: `SELECT pages of ${readPage}, JSON parsed`,
    run: async () => {
      let count = 0
      let after = "0"
      while (true) {
        const page = await db.query<{ global_position: number }>(
          `SELECT stream_id, version, global_position, transaction_id::text, event_id, type, schema_version, data,
             metadata, recorded_at, hash FROM raw_events WHERE global_position > $1 ORDER BY global_position LIMIT ${readPage}`,
          [after]
        )
        count += page.rows.length
        if (page.rows.length < readPage) return count
        after = String(page.rows[page.rows.length - 1].global_position)
      }
    }
  })
  return { cases, close: () => db.close() }
}

// ---------------------------------------------------------------------------------------
// CPU cost per event of the work every append does before SQL

interface CpuCost {
  readonly what: string
  readonly microsPerEvent: number
}
const cpuCosts: Array<CpuCost> = []

const benchCpu = async () => {
  const events = Array.from({ length: batchSize }, (_, i) => ({
    type: "PaymentAuthorised",
    data: payload(i)
  }))
  const timePerEvent = async (what: string, body: () => Promise<unknown>) => {
    const perRound: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const started = performance.now()
      for (let r = 0; r < 20; r++) await body()
      perRound.push(((performance.now() - started) * 1000) / (20 * batchSize))
    }
    cpuCosts.push({ what, microsPerEvent: median(perRound) })
  }
  const prepared = await Effect.runPromise(EventStore.prepareBatch("s", events))
  await timePerEvent("validate + redaction scan + canonical JSON (`prepareBatch`)", () =>
    Effect.runPromise(EventStore.prepareBatch("s", events))
  )
  await timePerEvent("hash chain, `node:crypto` (SQL stores)", () =>
    Effect.runPromise(HashChain.chain(HashChain.genesis, "s", 1, prepared, nodeSha256))
  )
  await timePerEvent("hash chain, Web Crypto (core default, memory store)", () =>
    Effect.runPromise(HashChain.chain(HashChain.genesis, "s", 1, prepared))
  )
}

const nodeSha256: HashChain.Sha256 = (text) =>
  Effect.sync(() => createHash("sha256").update(text, "utf8").digest("hex"))

// ---------------------------------------------------------------------------------------

/** Pairs each store case with its baseline, so they run back to back in every round. */
const interleave = (raw: ReadonlyArray<Case>, store: ReadonlyArray<Case>): ReadonlyArray<Case> => {
  const [single, multi, ...rest] = raw
  const reads = rest.filter((c) => /read|SELECT/.test(c.operation))
  const others = rest.filter((c) => !reads.includes(c))
  return [single, store[0], multi, store[1], ...others, ...reads, store[2]].filter(
    (c): c is Case => c !== undefined
  )
}

const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

const main = async () => {
  const started = performance.now()
  const admin = new pg.Client({ connectionString: adminUrl })
  let postgres: { readonly version: string } | undefined
  try {
    await admin.connect()
    postgres = { version: (await admin.query("SHOW server_version")).rows[0].server_version }
  } catch (error) {
    process.stderr.write(
      `PostgreSQL unreachable at DATABASE_URL (${String(error)}): PostgreSQL rows skipped\n`
    )
  }

  if (postgres !== undefined) {
    const suffix = Math.random().toString(16).slice(2, 10)
    const storeDb = `tillflow_bench_store_${suffix}`
    const rawDb = `tillflow_bench_raw_${suffix}`
    await admin.query(`CREATE DATABASE ${storeDb}`)
    await admin.query(`CREATE DATABASE ${rawDb}`)
    try {
      const raw = await benchRawPg(withDatabase(adminUrl, rawDb))
      const store = await benchStore(
        "PostgreSQL",
        PgEventStore.layer({ url: Redacted.make(withDatabase(adminUrl, storeDb)), maxConnections: 4 })
      )
      try {
        await runInterleaved(interleave(raw.cases, store.cases))
      } finally {
        await store.close()
        await raw.close()
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${storeDb} WITH (FORCE)`)
      await admin.query(`DROP DATABASE IF EXISTS ${rawDb} WITH (FORCE)`)
      await admin.end()
    }
  }
  const raw = await benchRawPglite()
  const store = await benchStore("PGlite", PgliteEventStore.layer({}))
  try {
    await runInterleaved(interleave(raw.cases, store.cases))
  } finally {
    await store.close()
    await raw.close()
  }
  await benchCpu()

  const baseline = (target: string, operation: string) => {
    const rawTarget = target === "PostgreSQL" ? "pg (raw)" : "PGlite (raw)"
    const rawOperation = operation.startsWith("append: 1 event")
      ? "single-row INSERT per transaction"
      : operation.startsWith("append")
        ? `${batchSize}-row multi-row INSERT per transaction`
        : target === "PostgreSQL"
          ? `cursor read, FETCH ${readPage}, JSON parsed`
          : `SELECT pages of ${readPage}, JSON parsed`
    return results.find((r) => r.target === rawTarget && r.operation === rawOperation)
  }

  const cpus = os.cpus()
  const lines: Array<string> = []
  lines.push(
    `Machine: ${cpus.length} CPUs (nproc) × ${cpus[0]?.model ?? "unknown"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
      `Node ${process.version}, PostgreSQL ${postgres?.version ?? "not available"} (local, default settings), ` +
      `PGlite 0.5.16 in memory. ${rounds} rounds, each case once per round, a store case right after its baseline; median of the rounds, events per second.`
  )
  lines.push("")
  lines.push(
    "| target | operation | median events/s | rounds (events/s) | store ÷ raw baseline (median of per-round ratios) |"
  )
  lines.push("|---|---|---:|---|---:|")
  for (const result of results) {
    const base = result.target.includes("raw") ? undefined : baseline(result.target, result.operation)
    // Per round, the store case ran right after its baseline: the ratio of each pair, then
    // the median of those ratios, is steadier under a varying load than a ratio of medians.
    const ratio =
      base === undefined
        ? ""
        : median(result.perRound.map((value, round) => value / (base.perRound[round] ?? Number.NaN))).toFixed(
            2
          )
    lines.push(
      `| ${result.target} | ${result.operation} | ${Math.round(median(result.perRound))} | ${result.perRound
        .map((v) => Math.round(v))
        .join(", ")} | ${ratio} |`
    )
  }
  lines.push("")
  lines.push("| CPU work per event, before any SQL (100-event batches) | median µs/event |")
  lines.push("|---|---:|")
  for (const cost of cpuCosts) lines.push(`| ${cost.what} | ${cost.microsPerEvent.toFixed(1)} |`)
  lines.push("")
  lines.push(
    `Load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}.`
  )
  lines.push(`Total bench time: ${((performance.now() - started) / 1000).toFixed(0)} s.`)
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exitCode = 1
})
