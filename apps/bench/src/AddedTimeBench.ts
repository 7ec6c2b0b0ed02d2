/**
 * The time tillflow adds to a payment (issue 20), on the embedded defaults, one sale at a
 * time: the worker as `npm start` runs it with nothing configured (the launcher's bundle,
 * PGlite in a fresh data directory, the built-in simulator with its default step timings,
 * results by callback to the worker's own receiver) in its own process; sales sent one after
 * the other through the intake API (`POST /v1/operations` with `waitSeconds`, the path a
 * user's backend or the command line takes), then the events read back through the intake's
 * event log (`GET /v1/events`). For each sale `internal/AddedTime` computes from the events
 * (a) operation started → POST sent and (b) result received → outcome recorded, and the
 * rest (the service's and the terminal's own time).
 *
 * Baseline, in interleaved rounds: the simulator alone in another process, with the same
 * default timings, answering the same sale from a bare client (`node:http`: POST with a
 * callback URL, the callback received by a bare `node:http` server). Its POST → callback
 * time is the service's and the terminal's own time without tillflow.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as AddedTime from "./internal/AddedTime.js"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import type * as Section from "./internal/Section.js"

const launcherScript = "apps/worker/bin/start.mjs"
const simulatorScript = "apps/bench/src/processes/SimulatorProcess.ts"
const token = "added-time-bench-intake-token"

interface SimInfo {
  readonly baseUrl: string
  readonly apiKey: string
  readonly terminals: ReadonlyArray<{ readonly serial_number: string; readonly terminal_type: string }>
}

/** A JSON request over a keep-alive agent; resolves with the status and the parsed body. */
const request = (
  agent: http.Agent,
  url: string,
  init: { readonly method: string; readonly headers?: Record<string, string>; readonly body?: unknown }
): Promise<{ readonly status: number; readonly body: unknown }> =>
  new Promise((resolve, reject) => {
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body)
    const req = http.request(
      url,
      {
        method: init.method,
        agent,
        headers: {
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) }),
          ...init.headers
        }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let body: unknown = text
          try {
            body = text.length === 0 ? undefined : (JSON.parse(text) as unknown)
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body })
        })
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(payload)
  })

/** The worker's "started" log line (JSON logs), answering its intake URL. */
const intakeUrlOf = (message: unknown): string | undefined => {
  if (Child.field<unknown>("message")(message) !== "tillflow worker started") return undefined
  const annotations = Child.field<Record<string, unknown>>("annotations")(message)
  const url = annotations?.["intakeUrl"]
  return typeof url === "string" ? url : undefined
}

/** Amounts in minor units, distinct per sale (the simulator's duplicate check prompts on a repeat within 5 minutes), never a trigger amount (37.xx). */
const amountOf = (n: number): string => String(1_000 + (n % 2_000))

/** CPU time (user + system) of a process so far, in ms, from /proc (Linux; NaN elsewhere). */
const cpuMsOf = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return Number.NaN
  }
}

/** A sale sent through the intake: its client-side time and wall-clock instants. */
interface Sent {
  readonly ms: number
  readonly executionId: string
  readonly sentAt: number
  readonly answeredAt: number
}

/** The worker on the embedded defaults, driven through its intake API. */
const startWorker = async (root: string, profileDir: string | undefined, tree: string = Child.root) => {
  const buildParent = path.join(tree, "apps/worker/build")
  fs.mkdirSync(buildParent, { recursive: true })
  const buildDir = fs.mkdtempSync(path.join(buildParent, "bench-added-"))
  const child = Child.start(path.join(tree, launcherScript), {
    tsx: false,
    env: {
      TILLFLOW_DATA_DIR: path.join(root, "data"),
      TILLFLOW_WORKER_BUILD_DIR: buildDir,
      TILLFLOW_INTAKE_PORT: "0",
      // The bench reads the intake's address from the "started" line: JSON logs (the default).
      TILLFLOW_LOG_FORMAT: "json",
      // A token of the bench's own (the generated one is printed, not logged).
      TILLFLOW_INTAKE_TOKEN: token
    },
    unsetEnv: [
      "DATABASE_URL",
      "TILLFLOW_CONFIG",
      "TILLFLOW_LOG_LEVEL",
      "TERMINAL_CLOUD_API_KEY",
      "TERMINAL_CLOUD_BASE_URL",
      "TERMINAL_CLOUD_TRANSACTIONS_URL",
      "TILLFLOW_DELIVERY",
      "TILLFLOW_CALLBACK_BASE_URL",
      "TILLFLOW_SIMULATOR_FAST"
    ],
    profileDir,
    label: tree === Child.root ? "added-worker" : "added-worker-before"
  })
  const intakeUrl = await child.next(intakeUrlOf, 180_000)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  const auth = { authorization: `Bearer ${token}` }
  const devices = await request(agent, `${intakeUrl}/v1/devices`, { method: "GET", headers: auth })
  const serial = (devices.body as ReadonlyArray<{ readonly serialNumber: string }>)[0]?.serialNumber
  if (serial === undefined) throw new Error(`the worker lists no terminal: ${JSON.stringify(devices.body)}`)
  let cursor: string | undefined
  return {
    /** One sale, answered when it ended: client-side milliseconds, and the wall-clock instants. */
    sale: async (n: number): Promise<Sent> => {
      const sentAt = Date.now()
      const started = performance.now()
      const answer = await request(agent, `${intakeUrl}/v1/operations`, {
        method: "POST",
        headers: auth,
        body: {
          idempotencyKey: `added-${n}`,
          request: { operation: "sale", serial_number: serial, amount: amountOf(n), currency: "EUR" },
          waitSeconds: 60
        }
      })
      const ms = performance.now() - started
      const answeredAt = Date.now()
      const status = Child.field<string>("status")(answer.body)
      const executionId = Child.field<string>("executionId")(answer.body)
      if (answer.status !== 200 || status !== "succeeded" || executionId === undefined) {
        throw new Error(`sale ${n}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 400)}`)
      }
      return { ms, executionId, sentAt, answeredAt }
    },
    /** The events stored since the last call, through the intake's event log. */
    eventsSince: async (): Promise<ReadonlyArray<AddedTime.StoredEvent>> => {
      const all: Array<AddedTime.StoredEvent> = []
      while (true) {
        const query = cursor === undefined ? "limit=1000" : `after=${encodeURIComponent(cursor)}&limit=1000`
        const page = await request(agent, `${intakeUrl}/v1/events?${query}`, { method: "GET", headers: auth })
        const body = page.body as {
          readonly events: ReadonlyArray<Parameters<typeof AddedTime.fromView>[0]>
          readonly next: string
        }
        if (page.status !== 200) throw new Error(`events: ${page.status} ${JSON.stringify(page.body)}`)
        for (const view of body.events) all.push(AddedTime.fromView(view))
        cursor = body.next
        if (body.events.length === 0) return all
      }
    },
    /** The worker process's CPU so far (ms): the built-in simulator's included. */
    cpuMs: () => cpuMsOf(child.pid),
    stop: async () => {
      agent.destroy()
      await child.stop()
      fs.rmSync(buildDir, { recursive: true, force: true })
    }
  }
}

/** The simulator alone (default timings) and a bare client with its own callback server. */
const startBare = async (profileDir: string | undefined) => {
  const child = Child.start(simulatorScript, {
    env: { TERMINALS: "3", TIMINGS: "default" },
    profileDir,
    label: "added-simulator"
  })
  const sim = await child.next(Child.field<SimInfo>("sim"), 120_000)
  const serial = sim.terminals[0]
  if (serial === undefined) throw new Error("the simulator has no terminal")
  const waiting = new Map<string, () => void>()
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      res.writeHead(200).end()
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>
        const reference = body["transactionReference"]
        if (typeof reference === "string") waiting.get(reference)?.()
      } catch {
        // not a result
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  return {
    /** One sale: POST sent → callback received, milliseconds; and POST → 202. */
    sale: async (n: number): Promise<{ readonly total: number; readonly accepted: number }> => {
      const reference = globalThis.crypto.randomUUID()
      const received = new Promise<void>((resolve) => waiting.set(reference, resolve))
      const started = performance.now()
      const answer = await request(agent, `${sim.baseUrl.replace(/\/$/, "")}/transactions`, {
        method: "POST",
        headers: { ApiKeyCloud: sim.apiKey },
        body: {
          operation: "sale",
          serial_number: serial.serial_number,
          terminal_type: serial.terminal_type,
          amount: amountOf(n),
          currency: "EUR",
          transactionReference: reference,
          callbackUrl,
          token: "bare-client-callback-token"
        }
      })
      const accepted = performance.now() - started
      if (answer.status !== 202)
        throw new Error(`bare sale ${n}: ${answer.status} ${JSON.stringify(answer.body)}`)
      await received
      waiting.delete(reference)
      return { total: performance.now() - started, accepted }
    },
    stop: async () => {
      agent.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await child.stop()
    }
  }
}

const ms = (value: number) => `${Measure.formatNumber(value)}`

/** The section. */
export const section: Section.Section = {
  name: "added",
  title: "The time tillflow adds to a payment (embedded defaults, one sale at a time)",
  run: async (context) => {
    const perRound = context.quick ? 12 : 40
    const warmup = context.quick ? 5 : 20
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-added-"))
    const worker = await startWorker(path.join(root, "this"), context.profileDir)
    // A/B: another checkout's worker (its own node_modules), measured in the same rounds.
    const beforeTree = process.env["BENCH_ADDED_BEFORE_TREE"]
    const before =
      beforeTree === undefined
        ? undefined
        : await startWorker(path.join(root, "before"), context.profileDir, path.resolve(beforeTree))
    const bare = await startBare(context.profileDir)
    let n = 0
    try {
      for (let i = 0; i < warmup; i++) {
        await worker.sale(n++)
        if (before !== undefined) await before.sale(n++)
        await bare.sale(n++)
      }
      await worker.eventsSince()
      if (before !== undefined) await before.eventsSince()
      const beforeAdded: Array<ReadonlyArray<number>> = []
      const beforeP99: Array<number> = []
      const beforeClient: Array<Array<number>> = []
      const cpuPerSale: Array<number> = []
      const beforeCpuPerSale: Array<number> = []
      context.log(`  warm-up: ${warmup} sales each (not kept)`)

      const rounds: Array<{
        readonly splits: ReadonlyArray<AddedTime.Split>
        readonly client: ReadonlyArray<number>
        readonly beforeStart: ReadonlyArray<number>
        readonly afterEnd: ReadonlyArray<number>
        readonly bareTotal: ReadonlyArray<number>
        readonly bareAccepted: ReadonlyArray<number>
        readonly skipped: number
        readonly reasons: ReadonlyArray<string>
      }> = []
      for (let round = 0; round < context.rounds; round++) {
        const sent: Array<Sent> = []
        const sentBefore: Array<number> = []
        beforeClient.push(sentBefore)
        const cpuAtStart = worker.cpuMs()
        const beforeCpuAtStart = before?.cpuMs() ?? Number.NaN
        const bareTotal: Array<number> = []
        const bareAccepted: Array<number> = []
        // Interleaved sale by sale: the same minutes of the machine for both.
        for (let i = 0; i < perRound; i++) {
          sent.push(await worker.sale(n++))
          if (before !== undefined) sentBefore.push((await before.sale(n++)).ms)
          const b = await bare.sale(n++)
          bareTotal.push(b.total)
          bareAccepted.push(b.accepted)
        }
        cpuPerSale.push((worker.cpuMs() - cpuAtStart) / perRound)
        if (before !== undefined) beforeCpuPerSale.push((before.cpuMs() - beforeCpuAtStart) / perRound)
        const { splits, skipped, reasons } = AddedTime.compute(await worker.eventsSince())
        if (before !== undefined) {
          const added = AddedTime.compute(await before.eventsSince()).splits.map((split) => split.added)
          beforeAdded.push(added)
          beforeP99.push(Measure.percentile(added, 99))
        }
        // The intake's own part, outside the events' split: request sent → WorkflowStarted,
        // WorkflowCompleted → the answer read (wall clock, millisecond resolution).
        const byId = new Map(splits.map((s) => [s.executionId, s]))
        const beforeStart: Array<number> = []
        const afterEnd: Array<number> = []
        for (const s of sent) {
          const split = byId.get(s.executionId)
          if (split === undefined) continue
          beforeStart.push(split.startedAt - s.sentAt)
          afterEnd.push(s.answeredAt - (split.startedAt + split.total))
        }
        const client = sent.map((s) => s.ms)
        rounds.push({ splits, client, beforeStart, afterEnd, bareTotal, bareAccepted, skipped, reasons })
        const added = splits.map((s) => s.added)
        context.log(
          `  round ${round + 1}/${context.rounds}: ${splits.length} sales split (${skipped} not), added median ${ms(
            Measure.median(added)
          )} ms, p99 ${ms(Measure.percentile(added, 99))} ms; bare POST → callback median ${ms(
            Measure.median(bareTotal)
          )} ms`
        )
      }

      const of = (pick: (s: AddedTime.Split) => number | undefined) =>
        rounds.map((r) => r.splits.flatMap((s) => (pick(s) === undefined ? [] : [pick(s) as number])))
      const medians = (values: ReadonlyArray<ReadonlyArray<number>>) => values.map((v) => Measure.median(v))
      const p99s = (values: ReadonlyArray<ReadonlyArray<number>>) =>
        values.map((v) => Measure.percentile(v, 99))
      const all = (values: ReadonlyArray<ReadonlyArray<number>>) => values.flat()
      const added = of((s) => s.added)
      const a = of((s) => s.startToPost)
      const b = of((s) => s.resultToOutcome)
      const service = of((s) => s.service)
      const client = rounds.map((r) => r.client)
      const bareTotal = rounds.map((r) => r.bareTotal)
      const total = of((s) => s.total)

      const figures: Array<Measure.Figure> = [
        {
          section: "added",
          name: "time added to a sale, median: (a) started → POST sent + (b) result received → outcome recorded",
          unit: "ms",
          rounds: medians(added),
          target: { _tag: "AtMost", value: 20 },
          note: `median of each round's ${perRound} sales, from the events`
        },
        {
          section: "added",
          name: "time added to a sale, p99",
          unit: "ms",
          rounds: p99s(added),
          target: { _tag: "AtMost", value: 60 },
          note: `p99 of each round's ${perRound} sales`
        },
        {
          section: "added",
          name: "service's and terminal's own time in a sale through tillflow (POST sent → result received), median",
          unit: "ms",
          rounds: medians(service),
          baseline: {
            name: "the simulator alone, bare client: POST → callback received",
            rounds: medians(bareTotal)
          }
        },
        {
          section: "added",
          name: "a sale through the intake, client's request → answer, median",
          unit: "ms",
          rounds: medians(client),
          baseline: {
            name: "the simulator alone, bare client: POST → callback received",
            rounds: medians(bareTotal)
          }
        }
      ]

      if (before !== undefined) {
        figures.push(
          {
            section: "added",
            name: "A/B: time added to a sale, median, this tree",
            unit: "ms",
            rounds: medians(added),
            baseline: {
              name: `the same, worker of ${beforeTree ?? "?"}`,
              rounds: beforeAdded.map((v) => Measure.median(v))
            }
          },
          {
            section: "added",
            name: "A/B: time added to a sale, p99, this tree",
            unit: "ms",
            rounds: p99s(added),
            baseline: { name: `the same, worker of ${beforeTree ?? "?"}`, rounds: beforeP99 }
          },
          {
            section: "added",
            name: "A/B: worker process CPU per sale (built-in simulator included), this tree",
            unit: "ms",
            rounds: cpuPerSale,
            baseline: { name: `the same, worker of ${beforeTree ?? "?"}`, rounds: beforeCpuPerSale }
          },
          {
            section: "added",
            name: "A/B: a sale through the intake, client's request → answer, median, this tree",
            unit: "ms",
            rounds: medians(client),
            baseline: { name: `the same, worker of ${beforeTree ?? "?"}`, rounds: medians(beforeClient) }
          }
        )
      }

      // The profile by timestamps: each instant of a sale relative to WorkflowStarted.
      const splits = rounds.flatMap((r) => r.splits)
      const markNames = new Map<string, Array<number>>()
      for (const split of splits) {
        for (const [name, at] of Object.entries(split.marks)) {
          const list = markNames.get(name) ?? []
          list.push(at)
          markNames.set(name, list)
        }
      }
      const ordered = [...markNames.entries()].sort((x, y) => Measure.median(x[1]) - Measure.median(y[1]))
      const markLines = ordered.map(
        ([name, values]) =>
          `| ${name} | ${ms(Measure.median(values))} | ${ms(Measure.percentile(values, 99))} | ${values.length} |`
      )
      const registeredToAccepted = splits.flatMap((s) =>
        s.registeredToAccepted === undefined ? [] : [s.registeredToAccepted]
      )
      const bareAccepted = rounds.flatMap((r) => r.bareAccepted)
      const beforeStart = rounds.flatMap((r) => r.beforeStart)
      const afterEnd = rounds.flatMap((r) => r.afterEnd)
      const skipped = rounds.reduce((sum, r) => sum + r.skipped, 0)
      const reasons = [...new Set(rounds.flatMap((r) => r.reasons))]
      const roundLines = rounds.map(
        (r, i) =>
          `| ${i + 1} | ${r.splits.length} | ${ms(Measure.median(added[i] ?? []))} | ${ms(
            Measure.percentile(added[i] ?? [], 99)
          )} | ${ms(Measure.median(a[i] ?? []))} | ${ms(Measure.median(b[i] ?? []))} | ${ms(
            Measure.median(service[i] ?? [])
          )} | ${ms(Measure.median(bareTotal[i] ?? []))} | ${ms(Measure.median(client[i] ?? []))} |`
      )
      const details = [
        `Per round: ${perRound} sales through the worker's intake, one at a time (\`POST /v1/operations\` with \`waitSeconds\`), each followed by one sale of the bare client against the simulator alone; ${warmup} of each before, not kept. The worker: \`node apps/worker/bin/start.mjs\` (what \`npm start\` runs) with a fresh \`TILLFLOW_DATA_DIR\`, an intake token and port of the bench's, and nothing else configured: PGlite, the built-in simulator with its default timings, results by callback to the worker's own receiver, logging at its default (info). The split is computed from the events read back through \`GET /v1/events\` (\`internal/AddedTime.ts\`): started = \`WorkflowStarted\`; POST sent = the first attempt's \`AttemptRegistered\` (appended immediately before the POST: a lower bound by its own append, see below); result received = the deciding \`ResultReceived\`'s \`receivedAt\`; outcome recorded = \`WorkflowCompleted\`. Times are the store's \`recordedAt\` (millisecond resolution through the API) and the events' own clock fields, one machine's clock.`,
        "",
        `Sales split: ${splits.length}${skipped === 0 ? "" : `; not split: ${skipped} (${reasons.join(", ")})`}. Over all of them: added median ${ms(
          Measure.median(all(added))
        )} ms, p99 ${ms(Measure.percentile(all(added), 99))} ms; (a) median ${ms(Measure.median(all(a)))} ms, p99 ${ms(
          Measure.percentile(all(a), 99)
        )} ms; (b) median ${ms(Measure.median(all(b)))} ms, p99 ${ms(Measure.percentile(all(b), 99))} ms; started → completed median ${ms(
          Measure.median(all(total))
        )} ms.`,
        "",
        `Worker process CPU per sale (user + system from /proc over each round, the built-in simulator's included; the rounds also hold the other sales' idle time): ${cpuPerSale
          .map((v) => ms(v))
          .join(", ")} ms.`,
        "",
        `The POST itself: registration → the 202 read (\`AttemptAccepted.at\`) median ${ms(
          Measure.median(registeredToAccepted)
        )} ms, p99 ${ms(Measure.percentile(registeredToAccepted, 99))} ms; the bare client's POST → 202 median ${ms(
          Measure.median(bareAccepted)
        )} ms, p99 ${ms(Measure.percentile(bareAccepted, 99))} ms.`,
        "",
        `Outside the split, the intake's own part (wall clock of the bench and the store, same machine): the client's request sent → \`WorkflowStarted\` median ${ms(
          Measure.median(beforeStart)
        )} ms, p99 ${ms(Measure.percentile(beforeStart, 99))} ms; \`WorkflowCompleted\` → the answer read median ${ms(
          Measure.median(afterEnd)
        )} ms, p99 ${ms(Measure.percentile(afterEnd, 99))} ms.`,
        "",
        "| round | sales | added median ms | added p99 ms | (a) median ms | (b) median ms | service median ms | bare POST → callback median ms | client request → answer median ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ...roundLines,
        "",
        "Where the time goes, by timestamps: each instant of a sale after its `WorkflowStarted` (all sales of all rounds).",
        "",
        "| instant | median ms after WorkflowStarted | p99 ms | sales |",
        "|---|---:|---:|---:|",
        ...markLines,
        "",
        Measure.roundsTable(figures)
      ].join("\n")
      return { figures, details }
    } finally {
      await bare.stop()
      await worker.stop()
      await before?.stop()
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}
