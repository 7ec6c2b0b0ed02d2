/**
 * Issue 29, decision 6: the cost of a payment must stay flat as the store's history grows.
 * Two rigs of the end-to-end section (a simulator and a worker process each, 1,000
 * terminals), each on its own scratch database holding a history of completed payments
 * written in SQL beforehand: a small one and ten times as many (`--payments N`, default
 * 100,000; the small one N ÷ 10). Rounds alternate between the two (small, large, small …):
 * each round makes a fixed number of sales on every terminal (1,000 in flight) and is timed
 * to its last completion, so no payment of one round is still running in the other's.
 *
 * The history is what a completed payment leaves, copied from the 50 real sales of the
 * calibration (`EndToEndBench.calibrate`): their streams and events under new stream ids
 * and event ids, and their execution rows, each inserted running and then updated
 * suspended, pending, running and succeeded (four dead row versions and their index
 * entries, as a run leaves them), the concurrency keys taken and freed as often. Nothing is
 * vacuumed nor analysed (autovacuum is off on this server).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import * as EndToEndBench from "./EndToEndBench.js"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

/** Suffix of the stream and execution ids of the copies (`~h<copy>`). */
const copyMark = "~h"

/**
 * Writes `copies` copies of every completed payment in the store (the calibration's), as
 * described at the top; returns the seconds it took.
 */
export const seedHistory = async (client: pg.Client, copies: number): Promise<number> => {
  const started = performance.now()
  await client.query(`CREATE TEMP TABLE tpl_streams AS
    SELECT * FROM streams WHERE stream_id NOT LIKE 'projection-%' AND stream_id <> 'callback-security'`)
  await client.query(`CREATE TEMP TABLE tpl_events AS
    SELECT e.* FROM events e JOIN tpl_streams USING (stream_id) ORDER BY e.global_position`)
  await client.query(
    `CREATE TEMP TABLE tpl_exec AS SELECT * FROM tillflow_executions WHERE status = 'succeeded'`
  )
  // An hour back, so the copies' due times lie below the queue's scan floors as real history's do.
  const chunk = 100
  for (let from = 0; from < copies; from += chunk) {
    const to = Math.min(copies, from + chunk) - 1
    await client.query("BEGIN")
    await client.query(
      `INSERT INTO streams (stream_id, version, last_hash, created_at, updated_at)
       SELECT s.stream_id || '${copyMark}' || c, s.version, s.last_hash, s.created_at, s.updated_at
       FROM generate_series($1::int, $2::int) AS c, tpl_streams s`,
      [from, to]
    )
    await client.query(
      `INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata, recorded_at, hash)
       SELECT e.stream_id || '${copyMark}' || c, e.version, gen_random_uuid(), e.type, e.schema_version,
         e.data, e.metadata, e.recorded_at, e.hash
       FROM generate_series($1::int, $2::int) AS c, tpl_events e
       ORDER BY c, e.global_position`,
      [from, to]
    )
    await client.query("ALTER TABLE tillflow_executions DISABLE TRIGGER USER")
    await client.query(
      `INSERT INTO tillflow_executions (execution_id, workflow_name, status, due_at, lease_owner, claims,
         concurrency_key, parent_id, attributes, stream_id, start_by, created_at, updated_at)
       SELECT x.execution_id || '${copyMark}' || c, x.workflow_name, 'running', x.created_at - 3600000 + c,
         'seed', 1, x.concurrency_key, x.parent_id || '${copyMark}' || c, x.attributes,
         x.stream_id || '${copyMark}' || c, NULL, x.created_at - 3600000 + c, x.created_at - 3600000 + c
       FROM generate_series($1::int, $2::int) AS c, tpl_exec x`,
      [from, to]
    )
    const seeded = `lease_owner = 'seed'`
    await client.query(
      `UPDATE tillflow_executions SET status = 'suspended', updated_at = updated_at + 1 WHERE ${seeded}`
    )
    await client.query(
      `UPDATE tillflow_executions SET status = 'pending', due_at = due_at + 2, updated_at = updated_at + 2 WHERE ${seeded}`
    )
    await client.query(
      `UPDATE tillflow_executions SET status = 'running', claims = 2, due_at = due_at + 3, updated_at = updated_at + 3
       WHERE ${seeded}`
    )
    await client.query(
      `UPDATE tillflow_executions SET status = 'succeeded', due_at = NULL, lease_owner = NULL, updated_at = updated_at + 4
       WHERE ${seeded}`
    )
    await client.query("ALTER TABLE tillflow_executions ENABLE TRIGGER USER")
    // Each copy's payments took their terminal's key and freed it.
    await client.query(
      `DO $$ BEGIN
         FOR i IN ${from}..${to} LOOP
           INSERT INTO tillflow_concurrency_holders (concurrency_key, execution_id)
             SELECT DISTINCT concurrency_key, 'seed' FROM tpl_exec WHERE concurrency_key IS NOT NULL
             ON CONFLICT DO NOTHING;
           DELETE FROM tillflow_concurrency_holders WHERE execution_id = 'seed';
         END LOOP;
       END $$`
    )
    await client.query("COMMIT")
  }
  await client.query("DROP TABLE tpl_streams, tpl_events, tpl_exec")
  return (performance.now() - started) / 1000
}

/** One size: its simulator, worker and database. */
interface Rig {
  readonly label: string
  readonly payments: number
  readonly worker: Child.Child
  readonly count: pg.Client
  readonly calibration: EndToEndBench.Calibration
  readonly seedSeconds: number
  readonly sizes: string
  readonly stop: () => Promise<void>
}

const tableSizes = async (count: pg.Client): Promise<string> => {
  const rows = await count.query<{ name: string; total: string; dead: string; live: string }>(
    `SELECT c.relname AS name, pg_size_pretty(pg_total_relation_size(c.oid)) AS total,
       s.n_dead_tup::text AS dead, s.n_live_tup::text AS live
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE c.relname IN ('events', 'events_archive', 'streams', 'tillflow_executions', 'tillflow_executions_archive',
       'tillflow_concurrency_holders')
     ORDER BY c.relname`
  )
  return rows.rows.map((r) => `${r.name} ${r.total} (${r.live} live, ${r.dead} dead rows)`).join(", ")
}

/**
 * Issue 31: archives every stream idle now and every execution row finished before now
 * (`tillflow archive run --hot-days 0`, as an operator runs it) on the database at `url`;
 * returns the seconds it took and its report.
 */
const archiveAll = (url: string): { readonly seconds: number; readonly report: string } => {
  const started = performance.now()
  const run = spawnSync(
    process.execPath,
    [
      "--conditions=@tillflow/source",
      "--import",
      "tsx",
      "apps/cli/src/main.ts",
      "archive",
      "run",
      "--hot-days",
      "0",
      "--batch-size",
      "1000"
    ],
    { env: { ...process.env, DATABASE_URL: url }, encoding: "utf8", timeout: 3_600_000 }
  )
  if (run.status !== 0) throw new Error(`tillflow archive run: exit ${run.status}: ${run.stderr}`)
  return { seconds: (performance.now() - started) / 1000, report: run.stdout.trim() }
}

const startRig = async (
  context: Section.Context,
  label: string,
  payments: number,
  dir: string,
  archive = false
): Promise<Rig> => {
  const scratch = await Scratch.create(`growth_${label}`)
  const sim = Child.start("apps/bench/src/processes/SimulatorProcess.ts", {
    env: { TERMINALS: String(EndToEndBench.terminalsCount) },
    profileDir: context.profileDir,
    label: `simulator-${label}`
  })
  let worker: Child.Child | undefined
  let count: pg.Client | undefined
  const stop = async () => {
    await count?.end().catch(() => {})
    await worker?.stop()
    await sim.stop()
    if (process.env["BENCH_KEEP_DB"] === undefined) await scratch.drop()
    else context.log(`e2e-growth: kept ${scratch.url}`)
  }
  try {
    const info = await sim.next(Child.field<EndToEndBench.SimInfo>("sim"), 120_000)
    const terminalsFile = path.join(dir, `terminals-${label}.json`)
    fs.writeFileSync(terminalsFile, JSON.stringify(info.terminals))
    worker = EndToEndBench.startWorker(context, scratch.url, info, terminalsFile)
    await worker.next(Child.field("ready"), 120_000)
    count = new pg.Client({ connectionString: scratch.url })
    count.on("error", (error) => context.log(`e2e-growth: counting connection: ${error.message}`))
    await count.connect()
    const calibration = await EndToEndBench.calibrate(context, worker, count)
    const copies = Math.max(0, Math.round(payments / 50) - 1)
    context.log(`e2e-growth (${label}): writing a history of ${(copies + 1) * 50} completed payments`)
    let seedSeconds = await seedHistory(count, copies)
    if (archive) {
      const archived = archiveAll(scratch.url)
      context.log(`e2e-archive (${label}): ${archived.report} in ${archived.seconds.toFixed(0)} s`)
      seedSeconds += archived.seconds
    }
    // The bench's own count of a round's appends reads `events` after a position; on a table
    // never analysed it would be planned as a scan of every event (not timed, but a load).
    await count.query("SET enable_seqscan = off")
    const sizes = await tableSizes(count)
    context.log(`e2e-growth (${label}): ${seedSeconds.toFixed(0)} s; ${sizes}`)
    return { label, payments: (copies + 1) * 50, worker, count, calibration, seedSeconds, sizes, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** One round on a rig: `perTerminal` sales on every terminal; payments per second to the last completion. */
const round = async (
  rig: Rig,
  perTerminal: number,
  n: number
): Promise<{ rate: number; appends: number; report: EndToEndBench.Report }> => {
  const before = (
    await rig.count.query<{ p: string }>("SELECT COALESCE(max(global_position), 0)::text AS p FROM events")
  ).rows[0]?.p
  const report = await EndToEndBench.run(
    rig.worker,
    {
      inFlight: EndToEndBench.terminalsCount,
      paymentsPerTerminal: perTerminal,
      maxSeconds: 900,
      prefix: `growth-${n}`,
      checkpoints: [],
      giveUpSeconds: 800
    },
    1_000_000
  )
  if (report.completed < EndToEndBench.terminalsCount * perTerminal)
    throw new Error(
      `e2e-growth (${rig.label}): ${report.completed} completed (${JSON.stringify(report.statuses)})`
    )
  const appends = Number(
    (
      await rig.count.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM (SELECT DISTINCT transaction_id, stream_id FROM events WHERE global_position > $1) AS a",
        [before]
      )
    ).rows[0]?.n ?? 0
  )
  return { rate: report.completed / report.seconds, appends: appends / report.seconds, report }
}

/** The section (`--only e2e-growth [--payments N]`). */
export const section: Section.Section = {
  name: "e2e-growth",
  title: "Issue 29: cost flat as history grows",
  optIn: true,
  run: async (context) => {
    const large = context.payments ?? (context.quick ? 20_000 : 100_000)
    const small = Math.round(large / 10)
    const perTerminal = context.quick ? 1 : 2
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-growth-"))
    const loads: Array<number> = []
    const sampler = setInterval(() => loads.push(os.loadavg()[0] ?? 0), 2000)
    const rigs: Array<Rig> = []
    try {
      rigs.push(await startRig(context, "small", small, dir))
      rigs.push(await startRig(context, "large", large, dir))
      const [smallRig, largeRig] = rigs as [Rig, Rig]
      // The worker's memory at its highest RSS over the rounds, per rig, and at its first round's start.
      const peaks = new Map<string, EndToEndBench.MemoryBreakdown>()
      const starts = new Map<string, EndToEndBench.MemoryBreakdown>()
      const appendRates = new Map<string, Array<number>>([
        ["small", []],
        ["large", []]
      ])
      const values = await Measure.interleave(
        context.rounds,
        rigs.map((rig) => ({
          name: rig.label,
          run: async (n: number) => {
            const { rate, appends, report } = await round(rig, perTerminal, n)
            appendRates.get(rig.label)?.push(appends)
            if (
              report.peakBreakdown !== undefined &&
              report.peakBreakdown.rss > (peaks.get(rig.label)?.rss ?? 0)
            )
              peaks.set(rig.label, report.peakBreakdown)
            if (!starts.has(rig.label) && report.startBreakdown !== undefined)
              starts.set(rig.label, report.startBreakdown)
            return rate
          }
        })),
        context.log,
        { warmup: 1 }
      )
      const f = Measure.formatNumber
      const figures: Array<Measure.Figure> = [
        {
          section: "e2e-growth",
          name: `payment throughput with ${largeRig.payments.toLocaleString("en-US")} completed payments stored (1000 terminals, 1000 in flight, one worker)`,
          unit: "payments/s",
          rounds: values.get("large") ?? [],
          baseline: {
            name: `the same with ${smallRig.payments.toLocaleString("en-US")} stored`,
            rounds: values.get("small") ?? []
          },
          target: { _tag: "RatioAtLeast", ratio: 0.9 }
        }
      ]
      const sorted = [...loads].sort((a, b) => a - b)
      const details = [
        `Two rigs of the end-to-end section (a simulator and a worker process each: 1000 terminals, a worker of ` +
          `concurrency 64 on PostgreSQL with a pool of 10, callback delivery), each on its own database. After the ` +
          `calibration's 50 real sales, each database is given a history of completed payments written in SQL ` +
          `(\`HistoryGrowthBench.seedHistory\`): the calibration's streams and events copied under new stream and ` +
          `event ids, its execution rows inserted running and updated four times to succeeded (dead row versions and ` +
          `index entries as a run leaves them), the terminals' concurrency keys taken and freed once per copy; nothing ` +
          `vacuumed or analysed (autovacuum off). Small: ${smallRig.payments.toLocaleString("en-US")} payments in ` +
          `${f(smallRig.seedSeconds)} s; ${smallRig.sizes}. Large: ${largeRig.payments.toLocaleString("en-US")} in ` +
          `${f(largeRig.seedSeconds)} s; ${largeRig.sizes}. Each round makes ${perTerminal} sale(s) on each of the 1000 ` +
          `terminals, one at a time per terminal (1000 in flight), timed to the last completion; rounds alternate ` +
          `between the two rigs (one warm-up round each, not kept). shared_buffers ${await sharedBuffers(smallRig.count)}.`,
        "",
        `Load average (1 min) during the section: min ${f(sorted[0] ?? 0)}, median ${f(Measure.median(sorted))}, max ${f(sorted[sorted.length - 1] ?? 0)} on ${os.cpus().length} CPUs.`,
        "",
        "| round | small: payments/s | large: payments/s | ratio | small: durable appends/s | large: durable appends/s |",
        "|---:|---:|---:|---:|---:|---:|",
        ...(values.get("small") ?? []).map((s, i) => {
          const l = values.get("large")?.[i] ?? Number.NaN
          return `| ${i + 1} | ${f(s)} | ${f(l)} | ${(l / s).toFixed(2)} | ${f(appendRates.get("small")?.[i + 1] ?? Number.NaN)} | ${f(appendRates.get("large")?.[i + 1] ?? Number.NaN)} |`
        }),
        "",
        "The workers' memory (`process.memoryUsage()`, `v8.getHeapSpaceStatistics()`): at the start of the first " +
          "round (calibrated, history written, nothing in flight) and at the highest resident memory sampled over the rounds.",
        "",
        EndToEndBench.breakdownTable(
          rigs.flatMap((rig) => {
            const start = starts.get(rig.label)
            const peak = peaks.get(rig.label)
            return [
              ...(start === undefined ? [] : [[`${rig.label}: start`, start] as const]),
              ...(peak === undefined ? [] : [[`${rig.label}: peak`, peak] as const])
            ]
          })
        )
      ].join("\n")
      return { figures, details }
    } finally {
      clearInterval(sampler)
      for (const rig of rigs) await rig.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/**
 * Issue 31 (`--only e2e-archive [--payments N]`): the hot path's cost independent of the
 * archive's size. Three rigs: two given the same history of N completed payments (default
 * 25,000; 5,000 with `--quick`), and one given 4N; on the second and the third,
 * `tillflow archive run --hot-days 0` then moves every idle stream's events into
 * `events_archive` and every finished execution's row into `tillflow_executions_archive`.
 * Rounds alternate between the three. Two figures: archived N against the same history hot,
 * and archived 4N against archived N (the archive four times as large).
 */
export const archiveSection: Section.Section = {
  name: "e2e-archive",
  title:
    "Issue 31: e2e throughput with a large history archived, against the same history hot and a 4× archive",
  optIn: true,
  run: async (context) => {
    const payments = context.payments ?? (context.quick ? 5_000 : 25_000)
    const perTerminal = context.quick ? 1 : 2
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-archive-"))
    const loads: Array<number> = []
    const sampler = setInterval(() => loads.push(os.loadavg()[0] ?? 0), 2000)
    const rigs: Array<Rig> = []
    try {
      rigs.push(await startRig(context, "hot", payments, dir))
      rigs.push(await startRig(context, "archived", payments, dir, true))
      rigs.push(await startRig(context, "archived4x", payments * 4, dir, true))
      const [hotRig, archivedRig, largeRig] = rigs as [Rig, Rig, Rig]
      const values = await Measure.interleave(
        context.rounds,
        rigs.map((rig) => ({
          name: rig.label,
          run: async (n: number) => (await round(rig, perTerminal, n)).rate
        })),
        context.log,
        { warmup: 1 }
      )
      const f = Measure.formatNumber
      const count = (rig: Rig) => rig.payments.toLocaleString("en-US")
      const figures: Array<Measure.Figure> = [
        {
          section: "e2e-archive",
          name: `payment throughput after archiving a history of ${count(archivedRig)} completed payments (1000 terminals, 1000 in flight, one worker)`,
          unit: "payments/s",
          rounds: values.get("archived") ?? [],
          baseline: {
            name: `the same history kept hot`,
            rounds: values.get("hot") ?? []
          },
          target: { _tag: "RatioAtLeast", ratio: 0.9 }
        },
        {
          section: "e2e-archive",
          name: `payment throughput after archiving a history of ${count(largeRig)} completed payments (the archive 4× as large)`,
          unit: "payments/s",
          rounds: values.get("archived4x") ?? [],
          baseline: {
            name: `after archiving ${count(archivedRig)}`,
            rounds: values.get("archived") ?? []
          },
          target: { _tag: "RatioAtLeast", ratio: 0.9 }
        }
      ]
      const sorted = [...loads].sort((a, b) => a - b)
      const details = [
        `Three rigs of the e2e-growth section, given histories of ${count(hotRig)}, ${count(archivedRig)} and ` +
          `${count(largeRig)} completed payments in SQL (\`seedHistory\`); on the second and the third, ` +
          `\`tillflow archive run --hot-days 0\` then moved every idle stream's events into \`events_archive\` and ` +
          `every finished execution's row into \`tillflow_executions_archive\`. Hot: ${hotRig.sizes}. Archived ` +
          `(history and archive run ${f(archivedRig.seedSeconds)} s): ${archivedRig.sizes}. Archived 4× (history and ` +
          `archive run ${f(largeRig.seedSeconds)} s): ${largeRig.sizes}. Each round makes ${perTerminal} sale(s) on ` +
          `each of the 1000 terminals, timed to the last completion; rounds alternate between the three rigs (one ` +
          `warm-up round each, not kept).`,
        "",
        `Load average (1 min) during the section: min ${f(sorted[0] ?? 0)}, median ${f(Measure.median(sorted))}, max ${f(sorted[sorted.length - 1] ?? 0)} on ${os.cpus().length} CPUs.`,
        "",
        "| round | hot: payments/s | archived: payments/s | archived 4×: payments/s | archived ÷ hot | archived 4× ÷ archived |",
        "|---:|---:|---:|---:|---:|---:|",
        ...(values.get("hot") ?? []).map((h, i) => {
          const a = values.get("archived")?.[i] ?? Number.NaN
          const l = values.get("archived4x")?.[i] ?? Number.NaN
          return `| ${i + 1} | ${f(h)} | ${f(a)} | ${f(l)} | ${(a / h).toFixed(2)} | ${(l / a).toFixed(2)} |`
        })
      ].join("\n")
      return { figures, details }
    } finally {
      clearInterval(sampler)
      for (const rig of rigs) await rig.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

const sharedBuffers = async (count: pg.Client): Promise<string> =>
  String((await count.query("SHOW shared_buffers")).rows[0]?.shared_buffers ?? "?")
