/**
 * Replaying the global log into a projection beside a raw cursor read of the same rows
 * with JSON parsed by the driver, and replay time as the log grows (10k, 100k, 1M events:
 * linear or not). The log is generated server-side (`INSERT … SELECT generate_series`)
 * into the store's own tables in a scratch database, in chunks of 100k events per
 * transaction: payment streams of ten events of about 300 bytes each. Replay does not
 * verify the hash chain (`verify` does), so the generated rows carry a placeholder hash.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@tillflow/engine"
import { PgEventStore } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { performance } from "node:perf_hooks"
import pg from "pg"
import * as Measure from "./internal/Measure.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

const page = 1000
const eventsPerStream = 10
const chunk = 100_000

const types = [
  "OperationRequested",
  "AttemptRecorded",
  "AttemptRegistered",
  "OperationAccepted",
  "ResultReceived",
  "PaymentAuthorised",
  "ReceiptStored",
  "OperationSettled",
  "LateResultRecorded",
  "PaymentClosed"
]

/** Appends streams `[from, to)` of ten events each, one transaction per 100k events. */
const generate = async (client: pg.Client, fromEvent: number, toEvent: number) => {
  for (let start = fromEvent; start < toEvent; start += chunk) {
    const first = start / eventsPerStream
    const last = Math.min(toEvent, start + chunk) / eventsPerStream - 1
    await client.query("BEGIN")
    await client.query(
      `INSERT INTO streams (stream_id, version, last_hash)
       SELECT 'payment-' || s, ${eventsPerStream}, repeat('0', 64) FROM generate_series($1::int, $2::int) s`,
      [first, last]
    )
    await client.query(
      `INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, hash)
       SELECT 'payment-' || s, v, gen_random_uuid(), ($3::text[])[v], 1,
         jsonb_build_object('amount', (1000 + s % 9000)::text, 'currency', 'EUR', 'serialNumber', '0821032398',
           'transactionReference', gen_random_uuid()::text, 'status', 'AUTHORISED',
           'maskedCardNumber', '476173******0119', 'authorisationCode', 'A1B2C3',
           'efttimestamp', 1615374961000 + s,
           'receipt', jsonb_build_object('merchant', 'https://receipts.example/merchant/abc',
                                         'customer', 'https://receipts.example/c/abc')),
         '{"correlationId": "bench"}'::jsonb, repeat('0', 64)
       FROM generate_series($1::int, $2::int) s, generate_series(1, ${eventsPerStream}) v
       ORDER BY s, v`,
      [first, last, types]
    )
    await client.query("COMMIT")
  }
  // Both readers then see a clean table (hint bits set, statistics fresh).
  await client.query("VACUUM (ANALYZE) events")
  await client.query("VACUUM (ANALYZE) streams")
  // `readAll` serves only transactions below the oldest one running on the whole server:
  // wait until a transaction of another job that started before ours has ended.
  for (let waited = 0; ; waited += 100) {
    const { rows } = await client.query(
      "SELECT (SELECT max(transaction_id) FROM events) < pg_snapshot_xmin(pg_current_snapshot()) AS visible"
    )
    if (rows[0]?.visible === true) return
    if (waited > 60_000)
      throw new Error("the generated events stayed below another transaction's snapshot for 60 s")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The projection both readers fold into: events per type, amounts, the last type per stream. */
class Projection {
  readonly byType = new Map<string, number>()
  readonly lastType = new Map<string, string>()
  amount = 0n
  events = 0

  add(streamId: string, type: string, data: unknown) {
    this.events++
    this.byType.set(type, (this.byType.get(type) ?? 0) + 1)
    this.lastType.set(streamId, type)
    if (typeof data === "object" && data !== null && "amount" in data && typeof data.amount === "string") {
      this.amount += BigInt(data.amount)
    }
  }
}

/** The raw side: a server-side cursor over the same rows, FETCH 1000, JSON parsed by `pg`. */
const rawReplay = async (client: pg.Client): Promise<Projection> => {
  const projection = new Projection()
  await client.query("BEGIN")
  await client.query(
    `DECLARE replay NO SCROLL CURSOR FOR SELECT stream_id, version, global_position, transaction_id::text,
       event_id, type, schema_version, data, metadata, recorded_at, hash
     FROM events ORDER BY transaction_id, global_position`
  )
  while (true) {
    const rows = (await client.query(`FETCH ${page} FROM replay`)).rows as ReadonlyArray<{
      readonly stream_id: string
      readonly type: string
      readonly data: unknown
    }>
    for (const row of rows) projection.add(row.stream_id, row.type, row.data)
    if (rows.length < page) break
  }
  await client.query("COMMIT")
  return projection
}

type Runtime = ManagedRuntime.ManagedRuntime<EventStore.EventStore | SqlClient.SqlClient, unknown>

/** The store's side: `readAll` in pages of 1000 from the start until caught up. */
const storeReplay = (runtime: Runtime): Promise<Projection> =>
  runtime.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const projection = new Projection()
      let checkpoint = EventStore.Checkpoint.start
      while (true) {
        const result = yield* store.readAll(checkpoint, { maxCount: page })
        for (const event of result.events) projection.add(event.streamId, event.type, event.data)
        checkpoint = result.next
        if (result.caughtUp) return projection
      }
    })
  )

const timed = async (body: () => Promise<Projection>, expected: number) => {
  const started = performance.now()
  const projection = await body()
  const seconds = (performance.now() - started) / 1000
  if (projection.events !== expected) {
    throw new Error(`replay read ${projection.events} events, expected ${expected}`)
  }
  return { seconds, rate: expected / seconds }
}

/** The section. */
export const section: Section.Section = {
  name: "replay",
  title: "Global read and replay",
  run: (context) =>
    Scratch.using("replay", async (scratch) => {
      const sizes = context.quick ? [10_000, 50_000] : [10_000, 100_000, 1_000_000]
      const ratioSize = context.quick ? 50_000 : 100_000
      const runtime: Runtime = ManagedRuntime.make(
        PgEventStore.layer({
          url: Redacted.make(scratch.url),
          maxConnections: 2,
          applicationName: "bench-replay"
        }).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Error)))
      )
      const client = new pg.Client({ connectionString: scratch.url, application_name: "bench-replay-raw" })
      try {
        await runtime.runPromise(EventStore.EventStore) // migrates
        await client.connect()
        const growth: Array<{
          readonly events: number
          readonly generateSeconds: number
          readonly store: ReadonlyArray<number>
          readonly raw: ReadonlyArray<number>
        }> = []
        let ratioFigure: Measure.Figure | undefined
        let have = 0
        for (const size of sizes) {
          context.log(`replay: generating the log up to ${size.toLocaleString("en-US")} events`)
          const genStarted = performance.now()
          await generate(client, have, size)
          have = size
          const generateSeconds = (performance.now() - genStarted) / 1000
          // Every size at least once per side; the ratio size in full interleaved rounds;
          // small sizes a few times (they are quick and noisier).
          const rounds = size === ratioSize ? Math.min(context.rounds, 3) : size <= 10_000 ? 3 : 1
          const values = await Measure.interleave(
            rounds,
            [
              {
                name: `raw cursor read ${size}`,
                run: async () => (await timed(() => rawReplay(client), size)).rate
              },
              {
                name: `store replay ${size}`,
                run: async () => (await timed(() => storeReplay(runtime), size)).rate
              }
            ],
            context.log
          )
          const raw = values.get(`raw cursor read ${size}`) ?? []
          const store = values.get(`store replay ${size}`) ?? []
          growth.push({ events: size, generateSeconds, store, raw })
          if (size === ratioSize) {
            ratioFigure = {
              section: "replay",
              name: `replay into a projection, readAll pages of ${page} (${size.toLocaleString("en-US")} events)`,
              unit: "events/s",
              rounds: store,
              baseline: { name: `pg: cursor FETCH ${page}, JSON parsed, same fold`, rounds: raw },
              target: { _tag: "RatioAtLeast", ratio: 0.5 }
            }
          }
        }
        const first = growth[0]
        const last = growth[growth.length - 1]
        const microsPerEvent = (rates: ReadonlyArray<number>) => 1e6 / Measure.median(rates)
        const figures: Array<Measure.Figure> = []
        if (ratioFigure !== undefined) figures.push(ratioFigure)
        if (first !== undefined && last !== undefined && last !== first) {
          figures.push({
            section: "replay",
            name: `replay cost per event at ${last.events.toLocaleString("en-US")} events (linearity)`,
            unit: "µs/event",
            rounds: [microsPerEvent(last.store)],
            baseline: {
              name: `replay cost per event at ${first.events.toLocaleString("en-US")} events`,
              rounds: [microsPerEvent(first.store)]
            },
            target: { _tag: "RatioAtMost", ratio: 1.25 },
            note: "linear means the same cost per event at every size; ≤ 1.25× taken as linear"
          })
        }
        const details = [
          `The log is generated in the store's own \`events\`/\`streams\` tables (streams of ${eventsPerStream} ` +
            `payment-shaped events, ~300 bytes of JSON each, one transaction per ${chunk.toLocaleString("en-US")} events, ` +
            "then `VACUUM ANALYZE`). Both readers fold every event into the same projection (count per type, " +
            "sum of amounts as bigint, last type per stream). Store: `readAll` from the start in pages of " +
            `${page} (rows decoded into \`RecordedEvent\`s) until caught up. Raw: one server-side cursor ` +
            `(\`DECLARE … ORDER BY transaction_id, global_position\`, \`FETCH ${page}\`), JSON parsed by \`pg\`.`,
          "",
          "| events in the log | generated in | store replay (median) | store events/s | raw cursor read (median) | raw events/s | store ÷ raw | store µs/event |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|",
          ...growth.map((g) => {
            const storeRate = Measure.median(g.store)
            const rawRate = Measure.median(g.raw)
            return `| ${g.events.toLocaleString("en-US")} | ${g.generateSeconds.toFixed(1)} s | ${(g.events / storeRate).toFixed(2)} s | ${Measure.formatNumber(storeRate)} | ${(g.events / rawRate).toFixed(2)} s | ${Measure.formatNumber(rawRate)} | ${Measure.ratioOfRounds(g.store, g.raw).toFixed(2)}× | ${(1e6 / storeRate).toFixed(1)} |`
          }),
          "",
          Measure.roundsTable(figures)
        ].join("\n")
        return { figures, details }
      } finally {
        await client.end().catch(() => {})
        await runtime.dispose()
      }
    })
}
