/**
 * End to end: the simulator in its own process (1,000 virtual terminals, every step 0 ms,
 * results delivered by callback) and one worker process (`processes/EndToEndWorker.ts`)
 * keeping 1,000 sales in flight, one per terminal. Sustained payments per second are set
 * beside the store-bound limit: the raw 8-connection insert rate measured in the same run
 * divided by the durable appends one payment makes (counted, not assumed). The worker's
 * resident memory is sampled every second and its heap measured after a full GC as
 * completed payments double, to show whether memory grows with history.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import * as AddedTime from "./internal/AddedTime.js"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import * as Raw from "./internal/Raw.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

/** What the simulator process answers once listening. */
export interface SimInfo {
  readonly baseUrl: string
  readonly transactionsUrl: string
  readonly apiKey: string
  readonly terminals: ReadonlyArray<{ readonly serial_number: string; readonly terminal_type: string }>
}

interface Sample {
  readonly t: number
  readonly completed: number
  readonly rss: number
  readonly heapUsed: number
}

/** The worker's report of one run. */
export interface Report {
  readonly seconds: number
  readonly completed: number
  readonly inFlightAtEnd: number
  readonly cpuMs: number
  readonly givenUp: number
  readonly statuses: Readonly<Record<string, number>>
  /** The first executions that did not succeed: their execution stream's event types and last event. */
  readonly unsuccessful: ReadonlyArray<{
    readonly executionId: string
    readonly status: string
    readonly types: ReadonlyArray<string>
    readonly last: string
  }>
  readonly timeline: ReadonlyArray<Sample>
  readonly checkpoints: ReadonlyArray<{
    readonly completed: number
    readonly events: number
    readonly t: number
    readonly rss: number
    readonly heapUsed: number
    /** Taken after the run, with nothing in flight. */
    readonly afterRun: boolean
  }>
  readonly peakRss: number
  /** The worker's memory at its highest resident memory sampled, and at the run's start. */
  readonly peakBreakdown?: MemoryBreakdown | undefined
  readonly startBreakdown?: MemoryBreakdown | undefined
  /** Statements sent during a census run, by kind, most frequent first. */
  readonly statements: ReadonlyArray<readonly [kind: string, count: number]>
}

/** `process.memoryUsage()` and the V8 heap spaces (committed `size`, `used`), in bytes. */
export interface MemoryBreakdown {
  readonly rss: number
  readonly heapTotal: number
  readonly heapUsed: number
  readonly external: number
  readonly arrayBuffers: number
  readonly spaces: ReadonlyArray<{ readonly name: string; readonly size: number; readonly used: number }>
}

/** A Markdown table of breakdowns side by side (MB). */
export const breakdownTable = (columns: ReadonlyArray<readonly [title: string, MemoryBreakdown]>): string => {
  const f = (bytes: number) => Measure.formatNumber(bytes / 2 ** 20)
  const first = columns[0]?.[1]
  if (first === undefined) return ""
  const row = (name: string, value: (b: MemoryBreakdown) => string) =>
    `| ${name} | ${columns.map(([, b]) => value(b)).join(" | ")} |`
  return [
    `| MB | ${columns.map(([title]) => title).join(" | ")} |`,
    `|---|${columns.map(() => "---:").join("|")}|`,
    row("resident (RSS)", (b) => f(b.rss)),
    row("V8 heap committed (heapTotal)", (b) => f(b.heapTotal)),
    row("V8 heap used", (b) => f(b.heapUsed)),
    ...first.spaces.map((space) =>
      row(`  ${space.name}: committed / used`, (b) => {
        const found = b.spaces.find((s) => s.name === space.name)
        return found === undefined ? "" : `${f(found.size)} / ${f(found.used)}`
      })
    ),
    row("external (buffers outside the heap)", (b) => f(b.external)),
    row("  of which ArrayBuffers", (b) => f(b.arrayBuffers)),
    row("RSS not in the V8 heap (code, stacks, native, free pages)", (b) => f(b.rss - b.heapTotal))
  ].join("\n")
}

/** The simulator's terminals, and the sales in flight (one per terminal). */
export const terminalsCount = 1000
const mb = (bytes: number) => bytes / 2 ** 20

/** One run of the worker (`EndToEndWorker`'s `run` command), its report. */
export const run = async (
  worker: Child.Child,
  command: Record<string, unknown>,
  timeoutMs: number
): Promise<Report> => {
  worker.send({ run: command })
  const answer = await worker.next(
    (m) => Child.field<Report>("report")(m) ?? Child.field<string>("failed")(m),
    timeoutMs
  )
  if (typeof answer === "string") throw new Error(`end-to-end worker: ${answer}`)
  return answer
}

const warmTerminals = 50

/** The worker process, on the scratch database, driving the simulator's terminals. */
export const startWorker = (
  context: Section.Context,
  url: string,
  info: SimInfo,
  terminalsFile: string,
  progressFile?: string,
  /** More variables (the many-merchants bench: SIM_MERCHANTS_FILE, TILLFLOW_KEK …). */
  moreEnv: Readonly<Record<string, string>> = {}
) =>
  Child.start("apps/bench/src/processes/EndToEndWorker.ts", {
    env: {
      DATABASE_URL: url,
      SIM_BASE_URL: info.baseUrl,
      SIM_TRANSACTIONS_URL: info.transactionsUrl,
      SIM_API_KEY: info.apiKey,
      SIM_TERMINALS_FILE: terminalsFile,
      ...(progressFile === undefined ? {} : { E2E_PROGRESS_FILE: progressFile }),
      ...moreEnv
    },
    // E2E_WORKER_NODE_FLAGS: more flags for the worker (`--max-old-space-size=256`: the
    // old-space cap `npm start` sets, for the memory figures with and without it).
    nodeFlags: [
      "--expose-gc",
      ...(process.env.E2E_WORKER_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "")
    ],
    profileDir: context.profileDir,
    label: "e2e-worker"
  })

/** The durable appends so far: distinct (transaction, stream) pairs in `events`. */
const appendTransactions = async (count: pg.Client) =>
  Number(
    (
      await count.query(
        "SELECT count(*) AS n FROM (SELECT DISTINCT transaction_id, stream_id FROM events) AS a"
      )
    ).rows[0]?.n ?? 0
  )

/** What one payment costs the store, measured before the run. */
export interface Calibration {
  readonly warm: Report
  /** The durable appends in the store after the calibration. */
  readonly appendsAfter: number
  readonly appendsPerPayment: number
  readonly eventsPerPayment: number
}

/**
 * Warm-up and calibration: one sale on each of 50 terminals, all finished; the
 * (transaction, stream) pairs of the events appended meanwhile are the durable appends
 * of 50 payments (pairs, not transactions: the store's group commit puts the appends
 * of several streams in one transaction).
 */
export const calibrate = async (
  context: Section.Context,
  worker: Child.Child,
  count: pg.Client
): Promise<Calibration> => {
  const before = await appendTransactions(count)
  context.log(`e2e: calibration, one sale on each of ${warmTerminals} terminals`)
  const warm = await run(
    worker,
    {
      inFlight: warmTerminals,
      paymentsPerTerminal: 1,
      maxSeconds: 120,
      prefix: "warm",
      checkpoints: [],
      giveUpSeconds: 110,
      census: true
    },
    150_000
  )
  if (warm.completed < warmTerminals) {
    throw new Error(
      `calibration: ${warm.completed} of ${warmTerminals} payments finished (${JSON.stringify(warm.statuses)})`
    )
  }
  const appendsAfter = await appendTransactions(count)
  const appendsPerPayment = (appendsAfter - before) / warmTerminals
  const eventsPerPayment =
    Number((await count.query("SELECT count(*) AS n FROM events")).rows[0]?.n ?? 0) / warmTerminals
  return { warm, appendsAfter, appendsPerPayment, eventsPerPayment }
}

/** The measured run, and the store's counts after it. */
interface Measured {
  readonly report: Report
  readonly events: number
  readonly appends: number
  /** The time tillflow added to each payment completed in the run, from its events. */
  readonly added: ReturnType<typeof AddedTime.compute>
}

/** The events appended after `afterPosition`, as `AddedTime` reads them. */
const eventsAfter = async (
  count: pg.Client,
  afterPosition: string
): Promise<Array<AddedTime.StoredEvent>> => {
  const rows = await count.query<{ stream_id: string; type: string; at: string; data: unknown }>(
    `SELECT stream_id, type, (extract(epoch FROM recorded_at) * 1000)::text AS at, data
     FROM events WHERE global_position > $1 ORDER BY global_position`,
    [afterPosition]
  )
  return rows.rows.map((row) => ({
    streamId: row.stream_id,
    type: row.type,
    recordedAt: Number(row.at),
    data: row.data
  }))
}

const lastPosition = async (count: pg.Client): Promise<string> =>
  (await count.query<{ p: string }>("SELECT COALESCE(max(global_position), 0)::text AS p FROM events"))
    .rows[0]?.p ?? "0"

/** `terminalsCount` sales in flight for `seconds`, checkpoints at a quarter, half and three quarters. */
const measure = async (
  context: Section.Context,
  worker: Child.Child,
  count: pg.Client,
  seconds: number
): Promise<Measured> => {
  context.log(`e2e: ${terminalsCount} sales in flight for ${seconds} s`)
  const from = await lastPosition(count)
  const checkpoints = [0.25, 0.5, 0.75].map((share) => Math.round(seconds * share))
  const report = await run(
    worker,
    {
      inFlight: terminalsCount,
      maxSeconds: seconds,
      prefix: "run",
      checkpoints,
      giveUpSeconds: seconds
    },
    (seconds + 120) * 1000
  )
  const afterCounts = await count.query(
    "SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM (SELECT DISTINCT transaction_id, stream_id FROM events) AS a) AS tx"
  )
  return {
    report,
    events: Number(afterCounts.rows[0]?.events ?? 0),
    appends: Number(afterCounts.rows[0]?.tx ?? 0),
    added: AddedTime.compute(await eventsAfter(count, from))
  }
}

/** Everything the section measured, and the rates derived from it. */
interface Outcome {
  readonly seconds: number
  readonly calibration: Calibration
  readonly measured: Measured
  /** Raw 8-connection single-row insert rates, before and after the run. */
  readonly rawRounds: ReadonlyArray<number>
}

const ratesOf = ({ seconds, calibration, measured, rawRounds }: Outcome) => {
  const report = measured.report
  // Sustained: completions over the last 40 % of the run. With 1,000 in flight a payment
  // takes 1,000 ÷ throughput seconds (Little's law), so the first completions come late
  // and the early part of the run is the pipeline filling.
  const timeline = report.timeline
  const from = timeline.find((s) => s.t >= seconds * 0.6) ?? timeline[0]
  const to = timeline[timeline.length - 1]
  const sustained =
    from === undefined || to === undefined || to.t <= from.t
      ? Number.NaN
      : (to.completed - from.completed) / (to.t - from.t)
  // The work done, finished or not: appends per second ÷ appends per payment.
  const appendsInRun = measured.appends - calibration.appendsAfter
  const workRate = appendsInRun / report.seconds / calibration.appendsPerPayment
  const rawRate = Measure.median(rawRounds)
  const limit = rawRate / calibration.appendsPerPayment
  return { sustained, appendsInRun, workRate, rawRate, limit }
}

const figuresOf = (outcome: Outcome): Array<Measure.Figure> => {
  const { appendsPerPayment } = outcome.calibration
  const report = outcome.measured.report
  const { sustained, workRate, limit } = ratesOf(outcome)
  // Taken while 1,000 were in flight; the one after the run (nothing in flight) is only shown.
  const during = report.checkpoints.filter((c) => !c.afterRun)
  const firstCheckpoint = during[0]
  const lastCheckpoint = during[during.length - 1]
  const figures: Array<Measure.Figure> = [
    {
      section: "e2e",
      name: `sustained payment throughput, ${terminalsCount} terminals, ${terminalsCount} in flight, one worker (durable appends/s ÷ ${appendsPerPayment.toFixed(1)})`,
      unit: "payments/s",
      rounds: [workRate],
      baseline: {
        name: `store-bound limit: raw 8-connection insert rate ÷ ${appendsPerPayment.toFixed(1)} appends per payment`,
        rounds: [limit]
      },
      target: { _tag: "RatioAtLeast", ratio: 0.3 },
      note: `payments completed within the run: ${report.completed}, ${Measure.formatNumber(sustained)}/s over its last 40 %`
    },
    {
      section: "e2e",
      name: "worker resident memory, peak",
      unit: "MB",
      rounds: [mb(report.peakRss)],
      target: { _tag: "AtMost", value: 512 }
    }
  ]
  const added = outcome.measured.added.splits.map((split) => split.added)
  if (added.length > 0) {
    figures.push(
      {
        section: "e2e",
        name: `time tillflow added to a payment (started → POST sent, plus result received → outcome recorded), median of ${added.length.toLocaleString("en-US")}, ${terminalsCount} in flight`,
        unit: "ms",
        rounds: [Measure.median(added)],
        target: { _tag: "AtMost", value: 20 }
      },
      {
        section: "e2e",
        name: "the same, p99",
        unit: "ms",
        rounds: [Measure.percentile(added, 99)],
        target: { _tag: "AtMost", value: 60 }
      }
    )
  }
  if (firstCheckpoint !== undefined && lastCheckpoint !== undefined && lastCheckpoint !== firstCheckpoint) {
    figures.push({
      section: "e2e",
      name: `worker heap after GC with ${lastCheckpoint.events.toLocaleString("en-US")} events stored (${lastCheckpoint.completed} completed)`,
      unit: "MB",
      rounds: [mb(lastCheckpoint.heapUsed)],
      baseline: {
        name: `heap after GC with ${firstCheckpoint.events.toLocaleString("en-US")} events stored (${firstCheckpoint.completed} completed)`,
        rounds: [mb(firstCheckpoint.heapUsed)]
      },
      target: { _tag: "RatioAtMost", ratio: 1.1 },
      note: "flat: at most 10 % more heap for several times the work done"
    })
  }
  return figures
}

const detailsOf = (outcome: Outcome): string => {
  const { seconds, calibration, measured, rawRounds } = outcome
  const { warm, appendsPerPayment, eventsPerPayment } = calibration
  const report = measured.report
  const { sustained, appendsInRun, workRate, rawRate, limit } = ratesOf(outcome)
  const timeline = report.timeline
  const f = Measure.formatNumber
  const step = Math.max(1, Math.floor(timeline.length / 12))
  return [
    `Simulator: \`SimulatorServer.layer\` in its own process (\`processes/SimulatorProcess.ts\`), ${terminalsCount} ` +
      "virtual terminals, every step 0 ms, results delivered by callback. Worker: its own process with the durable " +
      "engine and a worker (concurrency 64) on the PostgreSQL event store and execution queue (pool of 10), the " +
      "payment protocol, the HTTP client to the simulator and the callback receiver on a loopback port; logging at " +
      `Warning. It runs one sale at a time on each of ${terminalsCount} terminals (so ${terminalsCount} in flight), ` +
      `for ${seconds} s; completions are seen by one query every 100 ms over the executions in flight. Sustained ` +
      "throughput: the durable appends made during the run (distinct (transaction, stream) pairs in `events`) per second, " +
      "divided by the appends one payment makes, i.e. payments' worth of work per second, finished or not; in a " +
      "steady state it equals completions per second. Completions within the run are shown too: the queue " +
      "claims executions already started (woken by their callback, timers, retries) before new ones, so " +
      "payments complete from the first seconds instead of after the whole first wave of 1,000.",
    "",
    `Calibration before the run: ${warmTerminals} sales, all finished, made ${appendsPerPayment.toFixed(1)} durable ` +
      `appends (distinct (transaction, stream) pairs in \`events\`) and ${eventsPerPayment.toFixed(1)} events per payment. Raw ` +
      `8-connection single-row insert rate, before and after the run: ${rawRounds.map(f).join(", ")} rows/s ` +
      `(median ${f(rawRate)}); store-bound limit ${f(limit)} payments/s.`,
    "",
    `Statements the worker sent per payment during the calibration (${warm.statements.reduce((n, [, c]) => n + c, 0) / warmTerminals} in all), by kind:`,
    "",
    "| statement | per payment |",
    "|---|---:|",
    ...warm.statements.map(([kind, n]) => `| \`${kind.replace(/\|/g, "\\|")}\` | ${f(n / warmTerminals)} |`),
    "",
    `Run: ${report.completed.toLocaleString("en-US")} payments completed in ${report.seconds.toFixed(0)} s ` +
      `(${Object.entries(report.statuses)
        .map(([status, n]) => `${n} ${status}`)
        .join(", ")}), ${report.inFlightAtEnd} still in flight at the end, ${report.givenUp} given up; ` +
      `${measured.events.toLocaleString("en-US")} events in the store. Work done during ` +
      `the run, finished or not: ${f(appendsInRun / report.seconds)} durable appends/s, the appends of ` +
      `${f(workRate)} payments/s; completed over the last 40 %: ${f(sustained)} payments/s. The worker used ` +
      `${f(report.cpuMs / 1000)} s of CPU in ${f(report.seconds)} s: ${f(report.cpuMs / Math.max(1, appendsInRun))} ms ` +
      `per durable append, ${f((report.cpuMs / Math.max(1, appendsInRun)) * appendsPerPayment)} ms per payment's worth.`,
    ...report.unsuccessful.flatMap((u) => [
      "",
      `Not succeeded: execution \`${u.executionId}\` (${u.status}), events ${u.types.join(", ")}; last: \`${u.last.replace(/`/g, "'")}\``
    ]),
    "",
    addedDetails(measured.added),
    "",
    "| t (s) | completed | payments/s since previous | RSS MB | heap used MB |",
    "|---:|---:|---:|---:|---:|",
    ...timeline
      .filter((_, i) => i % step === 0 || i === timeline.length - 1)
      .map((s, i, shown) => {
        const prev = shown[i - 1]
        const rate =
          prev === undefined || s.t <= prev.t ? "" : f((s.completed - prev.completed) / (s.t - prev.t))
        return `| ${s.t.toFixed(0)} | ${s.completed.toLocaleString("en-US")} | ${rate} | ${f(mb(s.rss))} | ${f(mb(s.heapUsed))} |`
      }),
    "",
    "| at t (s) | events stored | completed | RSS MB after GC | heap used MB after GC |",
    "|---:|---:|---:|---:|---:|",
    ...report.checkpoints.map(
      (c) =>
        `| ${c.t.toFixed(0)}${c.afterRun ? " (after the run, idle)" : ""} | ${c.events.toLocaleString("en-US")} | ${c.completed.toLocaleString("en-US")} | ${f(mb(c.rss))} | ${f(mb(c.heapUsed))} |`
    )
  ].join("\n")
}

/** The added time's split over the run's payments (`internal/AddedTime`), as a table. */
const addedDetails = ({ splits, skipped, reasons }: ReturnType<typeof AddedTime.compute>): string => {
  const f = Measure.formatNumber
  const row = (name: string, values: ReadonlyArray<number>) =>
    `| ${name} | ${f(Measure.median(values))} | ${f(Measure.percentile(values, 99))} |`
  const taken = splits.filter((s) => s.marks["OperationRequested"] !== undefined)
  return [
    `The time tillflow added to each payment of the run that ended with a result by callback ` +
      `(${splits.length.toLocaleString("en-US")} payments; ${skipped} others skipped${reasons[0] === undefined ? "" : `, e.g. ${reasons[0]}`}), ` +
      "computed from the events in the store by `internal/AddedTime.ts`, the `added` section's computation: started = " +
      "`WorkflowStarted`, POST sent = the first attempt's `AttemptRegistered`, result received = the deciding " +
      "`ResultReceived`'s `receivedAt`, outcome recorded = `WorkflowCompleted` (PostgreSQL's `recorded_at`, microseconds). " +
      "With 1,000 in flight, (a) is mostly the wait for one of the worker's 64 slots (1,000 in flight ÷ the " +
      "throughput, by Little's law), not a path one sale takes alone: the rows from the payment's first step leave " +
      "that wait out. The path of one sale at a time is the `added` section's.",
    "",
    "| part | median ms | p99 ms |",
    "|---|---:|---:|",
    row(
      "(a) started → POST sent",
      splits.map((s) => s.startToPost)
    ),
    row(
      "(b) result received → outcome recorded",
      splits.map((s) => s.resultToOutcome)
    ),
    row(
      "added: (a) + (b)",
      splits.map((s) => s.added)
    ),
    row(
      "(a) from the payment's first step (`OperationRequested`), the wait for a slot left out",
      taken.map((s) => s.startToPost - (s.marks["OperationRequested"] ?? 0))
    ),
    row(
      "(a) from the first step, plus (b)",
      taken.map((s) => s.added - (s.marks["OperationRequested"] ?? 0))
    ),
    row(
      "the service's and terminal's own: POST sent → result received",
      splits.map((s) => s.service)
    ),
    row(
      "started → outcome recorded",
      splits.map((s) => s.total)
    )
  ].join("\n")
}

/** What a run of the worker against the simulator is given. */
interface Rig {
  readonly worker: Child.Child
  /** A connection of the bench's own, for counting the store. */
  readonly count: pg.Client
  readonly calibration: Calibration
}

/**
 * The simulator and the worker on a scratch database, calibrated (`calibrate`), with the
 * raw 8-connection insert rate measured before and after `body`; everything is stopped,
 * the scratch database dropped, whatever happens.
 */
const withRig = <A>(
  context: Section.Context,
  name: string,
  progressFile: string | undefined,
  body: (rig: Rig) => Promise<A>
): Promise<{
  readonly value: A
  readonly calibration: Calibration
  readonly rawRounds: ReadonlyArray<number>
}> =>
  Scratch.using(name.replace(/-/g, "_"), async (scratch) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tillflow-bench-${name}-`))
    const raw = await Raw.connect(scratch.url, 8)
    const rawRounds: Array<number> = []
    const rawInsertRounds = async () => {
      for (let i = 0; i < Math.ceil(context.rounds / 2); i++)
        rawRounds.push(await Raw.parallelSingleInserts(raw, context.quick ? 60 : 150))
    }
    const sim = Child.start("apps/bench/src/processes/SimulatorProcess.ts", {
      env: { TERMINALS: String(terminalsCount) },
      profileDir: context.profileDir,
      label: "simulator"
    })
    let worker: Child.Child | undefined
    try {
      const info = await sim.next(Child.field<SimInfo>("sim"), 120_000)
      if (info.terminals.length < terminalsCount)
        throw new Error(`the simulator has ${info.terminals.length} terminals`)
      const terminalsFile = path.join(dir, "terminals.json")
      fs.writeFileSync(terminalsFile, JSON.stringify(info.terminals))
      context.log(`${name}: raw 8-connection insert rate (before)`)
      await rawInsertRounds()
      worker = startWorker(context, scratch.url, info, terminalsFile, progressFile)
      await worker.next(Child.field("ready"), 120_000)
      const count = new pg.Client({ connectionString: scratch.url })
      // A connection the server ends (a restart, another job's cleanup) must not end the run.
      count.on("error", (error) => context.log(`${name}: counting connection: ${error.message}`))
      await count.connect()
      const calibration = await calibrate(context, worker, count)
      const value = await body({ worker, count, calibration })
      await count.end()
      await worker.stop()
      worker = undefined
      context.log(`${name}: raw 8-connection insert rate (after)`)
      await rawInsertRounds()
      return { value, calibration, rawRounds }
    } finally {
      await worker?.stop()
      await sim.stop()
      await raw.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

/** The section. */
export const section: Section.Section = {
  name: "e2e",
  title: "End to end against the simulator",
  run: async (context) => {
    const seconds = context.quick ? 60 : 150
    const { value, calibration, rawRounds } = await withRig(context, "e2e", undefined, ({ worker, count }) =>
      measure(context, worker, count, seconds)
    )
    const outcome: Outcome = { seconds, calibration, measured: value, rawRounds }
    return { figures: figuresOf(outcome), details: detailsOf(outcome) }
  }
}

/**
 * The long run (`--only e2e-history`): the same worker and simulator, 1,000 sales in
 * flight until `--payments N` (default 100,000) have completed, the heap measured after a
 * full GC each time another tenth of N has completed, with 1,000 still in flight every
 * time (N + 1,000 are started). Memory must not grow with the payments done: the heap at N
 * completed against the heap at N/10.
 */
export const historySection: Section.Section = {
  name: "e2e-history",
  title: "End to end: memory over a long run",
  optIn: true,
  run: async (context) => {
    const total = context.payments ?? (context.quick ? 10_000 : 100_000)
    const tenth = Math.round(total / 10)
    const marks = Array.from({ length: 10 }, (_, i) => tenth * (i + 1))
    // Each checkpoint is also appended here as it is taken (kept after the run).
    const progressFile = path.join(os.tmpdir(), `tillflow-e2e-history-${process.pid}.jsonl`)
    context.log(`e2e-history: checkpoints also written to ${progressFile}`)
    const { value, calibration, rawRounds } = await withRig(
      context,
      "e2e-history",
      progressFile,
      async ({ worker, count }) => {
        // At 10 payments/s at worst, with time to spare; the run ends when the last finishes.
        const maxSeconds = Math.ceil(total / 10) + 600
        context.log(
          `e2e-history: ${terminalsCount} in flight until ${total.toLocaleString("en-US")} payments completed`
        )
        const report = await run(
          worker,
          {
            inFlight: terminalsCount,
            maxSeconds,
            prefix: "history",
            checkpoints: [],
            checkpointsCompleted: marks,
            totalPayments: total + terminalsCount,
            giveUpSeconds: 900
          },
          (maxSeconds + 300) * 1000
        )
        return { report, appendsAfter: await appendTransactions(count) }
      }
    )
    return historyResult({ total, calibration, ...value, rawRounds })
  }
}

const historyResult = (outcome: {
  readonly total: number
  readonly calibration: Calibration
  readonly report: Report
  readonly appendsAfter: number
  readonly rawRounds: ReadonlyArray<number>
}): Section.Result => {
  const { total, calibration, report, appendsAfter, rawRounds } = outcome
  const f = Measure.formatNumber
  const { appendsPerPayment } = calibration
  // Checkpoints taken while 1,000 were still in flight (the last one, after the run, is idle).
  const during = report.checkpoints.filter((c) => !c.afterRun)
  const first = during[0]
  const last = during[during.length - 1]
  const appendsInRun = appendsAfter - calibration.appendsAfter
  const workRate = appendsInRun / report.seconds / appendsPerPayment
  const rawRate = Measure.median(rawRounds)
  const limit = rawRate / appendsPerPayment
  const figures: Array<Measure.Figure> = [
    {
      section: "e2e-history",
      name: `payment throughput over ${report.completed.toLocaleString("en-US")} payments, ${terminalsCount} in flight, one worker (durable appends/s ÷ ${appendsPerPayment.toFixed(1)})`,
      unit: "payments/s",
      rounds: [workRate],
      baseline: {
        name: `store-bound limit: raw 8-connection insert rate ÷ ${appendsPerPayment.toFixed(1)} appends per payment`,
        rounds: [limit]
      },
      target: { _tag: "RatioAtLeast", ratio: 0.3 }
    },
    {
      section: "e2e-history",
      name: `worker resident memory, peak over ${report.completed.toLocaleString("en-US")} payments`,
      unit: "MB",
      rounds: [mb(report.peakRss)],
      target: { _tag: "AtMost", value: 512 }
    }
  ]
  if (first !== undefined && last !== undefined && last !== first) {
    figures.push({
      section: "e2e-history",
      name: `worker heap after GC at ${last.completed.toLocaleString("en-US")} completed payments, ${terminalsCount} in flight`,
      unit: "MB",
      rounds: [mb(last.heapUsed)],
      baseline: {
        name: `the same at ${first.completed.toLocaleString("en-US")} completed`,
        rounds: [mb(first.heapUsed)]
      },
      target: { _tag: "RatioAtMost", ratio: 1.1 },
      note: "flat: at most 10 % more heap for ten times the payments done"
    })
  }
  const timeline = report.timeline
  const step = Math.max(1, Math.floor(timeline.length / 12))
  const details = [
    `The end-to-end section's worker and simulator (same processes, same settings: ${terminalsCount} terminals, ` +
      `one sale at a time on each, callback delivery, a worker of concurrency 64 on PostgreSQL with a pool of 10), ` +
      `run until ${total.toLocaleString("en-US")} payments have completed; ${(total + terminalsCount).toLocaleString("en-US")} ` +
      `are started, so ${terminalsCount} are still in flight at every checkpoint. At each tenth of the run the ` +
      "worker runs a full GC (`--expose-gc`) and notes its heap and resident memory and the events stored. " +
      "Throughput is the durable appends made during the run per second divided by the appends one payment " +
      `makes (${appendsPerPayment.toFixed(1)} in the calibration of ${warmTerminals} payments, ` +
      `${calibration.eventsPerPayment.toFixed(1)} events each), set beside the raw 8-connection single-row insert ` +
      `rate measured before and after the run (${rawRounds.map(f).join(", ")} rows/s, median ${f(rawRate)}).`,
    "",
    `Run: ${report.completed.toLocaleString("en-US")} payments completed in ${f(report.seconds)} s ` +
      `(${Object.entries(report.statuses)
        .map(([status, n]) => `${n} ${status}`)
        .join(", ")}), ${report.givenUp} given up; ${f(appendsInRun / report.seconds)} durable appends/s. ` +
      `The worker used ${f(report.cpuMs / 1000)} s of CPU: ${f((report.cpuMs / Math.max(1, appendsInRun)) * appendsPerPayment)} ms per payment.`,
    ...report.unsuccessful.flatMap((u) => [
      "",
      `Not succeeded: execution \`${u.executionId}\` (${u.status}), events ${u.types.join(", ")}; last: \`${u.last.replace(/`/g, "'")}\``
    ]),
    "",
    "| completed | events stored | at t (s) | RSS MB after GC | heap used MB after GC |",
    "|---:|---:|---:|---:|---:|",
    ...report.checkpoints.map(
      (c) =>
        `| ${c.completed.toLocaleString("en-US")}${c.afterRun ? " (after the run, idle)" : ""} | ${c.events.toLocaleString("en-US")} | ${c.t.toFixed(0)} | ${f(mb(c.rss))} | ${f(mb(c.heapUsed))} |`
    ),
    "",
    "| t (s) | completed | payments/s since previous | RSS MB | heap used MB |",
    "|---:|---:|---:|---:|---:|",
    ...timeline
      .filter((_, i) => i % step === 0 || i === timeline.length - 1)
      .map((s, i, shown) => {
        const prev = shown[i - 1]
        const rate =
          prev === undefined || s.t <= prev.t ? "" : f((s.completed - prev.completed) / (s.t - prev.t))
        return `| ${s.t.toFixed(0)} | ${s.completed.toLocaleString("en-US")} | ${rate} | ${f(mb(s.rss))} | ${f(mb(s.heapUsed))} |`
      })
  ].join("\n")
  return { figures, details }
}
