/**
 * Many merchants in one deployment (issue 32), end to end: the end-to-end section's
 * simulator and worker processes, the simulator holding 100 more merchants of 10 terminals
 * each (`MERCHANTS`), the worker taking each call's key from the merchant registry on its
 * store (keys sealed under a test KEK) and running with a fair share per merchant
 * (`TENANT_CONCURRENCY`). In interleaved rounds, on one worker and one store:
 *
 * 1. single merchant: N sales over the default merchant's 1,000 terminals, one at a time per
 *    terminal (the e2e section's drive);
 * 2. 100 merchants × 10 terminals: the same N sales over the merchants' 1,000 terminals, each
 *    started within `MerchantKeys.forMerchant(id)`; throughput against (1);
 * 3. fairness: 99 merchants driven the same way while the hundredth floods — many times its
 *    share of sales started at once, queued on its 10 terminals — against the same 99
 *    without the flood: their median time from start to outcome, flooded ÷ unflooded;
 * 4. fairness without terminals: the same 99 while the hundredth floods with terminal-less
 *    MOTO sales (`Moto.Sale` on a card token), which no terminal holds back: only its share
 *    (`tenantConcurrency`) keeps the others' sales served; against the same unflooded runs.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Child from "./internal/Child.js"
import * as EndToEnd from "./EndToEndBench.js"
import * as Measure from "./internal/Measure.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"
import type { SimMerchant } from "./processes/SimulatorProcess.js"

const merchantsCount = 100
const terminalsPerMerchant = 10
/** A merchant's fair share: at most this many of its executions running at once (of 64). */
const tenantConcurrency = 8
/** The flood: this many times the flooding merchant's share of the run's sales. */
const floodFactor = 20
/**
 * The MOTO flood: this many times the flooding merchant's share of the run's sales, all
 * started at once (more than the terminal flood's: with no terminal to wait for, each is
 * done sooner, and the flood is meant to last about as long as the others' run).
 */
const motoFloodFactor = 50
/** A key-encryption key for the bench: the registry seals the merchants' keys under it. */
const kek = `kek-bench:${Buffer.alloc(32, 7).toString("base64")}`

/** The worker's report, with what the many-merchants runs add. */
interface Report extends EndToEnd.Report {
  /** Each completed sale's time from start to outcome seen (ms), by merchant ("" = the default one). */
  readonly durations: Readonly<Record<string, ReadonlyArray<number>>>
  readonly floodCompleted: number
  readonly floodStatuses: Readonly<Record<string, number>>
}

interface RunResult {
  readonly report: Report
  /** Sales completed per second over the run. */
  readonly throughput: number
  /** The median time from start to outcome of the merchants driven (the flood's left out). */
  readonly medianMs: number
  readonly p90Ms: number
}

const summarize = (report: Report, exclude: string | undefined): RunResult => {
  const times = Object.entries(report.durations).flatMap(([merchant, values]) =>
    merchant === exclude ? [] : values
  )
  return {
    report,
    throughput: report.completed / report.seconds,
    medianMs: Measure.median(times),
    p90Ms: Measure.percentile(times, 90)
  }
}

const check = (label: string, report: Report, expected: number) => {
  if (report.completed < expected)
    throw new Error(
      `${label}: ${report.completed} of ${expected} sales completed (${JSON.stringify(report.statuses)}, ` +
        `${report.givenUp} given up; ${JSON.stringify(report.unsuccessful[0] ?? null)})`
    )
}

export const section: Section.Section = {
  name: "e2e-merchants",
  title: "End to end: many merchants in one worker",
  run: (context) =>
    Scratch.using("e2e_merchants", async (scratch) => {
      const perTerminal = context.quick ? 2 : 4
      const sales = EndToEnd.terminalsCount * perTerminal
      const floodSales = floodFactor * terminalsPerMerchant * perTerminal
      const motoFloodSales = motoFloodFactor * terminalsPerMerchant * perTerminal
      const maxSeconds = context.quick ? 300 : 600
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-e2e-merchants-"))
      const sim = Child.start("apps/bench/src/processes/SimulatorProcess.ts", {
        env: {
          TERMINALS: String(EndToEnd.terminalsCount),
          MERCHANTS: String(merchantsCount),
          MERCHANT_TERMINALS: String(terminalsPerMerchant)
        },
        profileDir: context.profileDir,
        label: "simulator"
      })
      let worker: Child.Child | undefined
      try {
        const info = await sim.next(
          Child.field<EndToEnd.SimInfo & { readonly merchants: ReadonlyArray<SimMerchant> }>("sim"),
          300_000
        )
        if (info.merchants.length < merchantsCount)
          throw new Error(`the simulator has ${info.merchants.length} merchants`)
        const terminalsFile = path.join(dir, "terminals.json")
        fs.writeFileSync(terminalsFile, JSON.stringify(info.terminals))
        const merchantsFile = path.join(dir, "merchants.json")
        fs.writeFileSync(merchantsFile, JSON.stringify(info.merchants))
        worker = EndToEnd.startWorker(context, scratch.url, info, terminalsFile, undefined, {
          SIM_MERCHANTS_FILE: merchantsFile,
          TILLFLOW_KEK: kek,
          TENANT_CONCURRENCY: String(tenantConcurrency)
        })
        const running = worker
        await running.next(Child.field("ready"), 300_000)
        const flooder = info.merchants[merchantsCount - 1]?.id ?? ""
        const drive = async (label: string, command: Record<string, unknown>): Promise<Report> =>
          (await EndToEnd.run(
            running,
            { maxSeconds, giveUpSeconds: maxSeconds, checkpoints: [], prefix: label, ...command },
            (maxSeconds + 120) * 1000
          )) as Report

        context.log(`e2e-merchants: warm-up (one sale on 100 terminals of each kind)`)
        check("warm-up", await drive("warm-single", { inFlight: 100, paymentsPerTerminal: 1 }), 100)
        check(
          "warm-up",
          await drive("warm-merchants", { inFlight: 1000, paymentsPerTerminal: 1, merchants: {} }),
          1000
        )
        // The MOTO path warmed, and the flooding merchant's card token made (a tokenizing sale).
        const warmMoto = await drive("warm-moto", {
          inFlight: 0,
          merchants: {},
          motoFlood: { merchant: flooder, sales: 20 }
        })
        if (warmMoto.floodCompleted < 20)
          throw new Error(
            `warm-up: ${warmMoto.floodCompleted} of 20 MOTO sales completed (${JSON.stringify(warmMoto.floodStatuses)})`
          )

        const others = (merchantsCount - 1) * terminalsPerMerchant * perTerminal
        const results = {
          single: [] as Array<RunResult>,
          merchants: [] as Array<RunResult>,
          unflooded: [] as Array<RunResult>,
          flooded: [] as Array<RunResult>,
          motoFlooded: [] as Array<RunResult>
        }
        const cases: ReadonlyArray<readonly [keyof typeof results, (round: number) => Promise<RunResult>]> = [
          [
            "single",
            async (round) => {
              const report = await drive(`single-${round}`, {
                inFlight: EndToEnd.terminalsCount,
                paymentsPerTerminal: perTerminal
              })
              check("single merchant", report, sales)
              return summarize(report, undefined)
            }
          ],
          [
            "merchants",
            async (round) => {
              const report = await drive(`merchants-${round}`, {
                inFlight: EndToEnd.terminalsCount,
                paymentsPerTerminal: perTerminal,
                merchants: {}
              })
              check("100 merchants", report, sales)
              return summarize(report, undefined)
            }
          ],
          [
            "unflooded",
            async (round) => {
              const report = await drive(`unflooded-${round}`, {
                inFlight: EndToEnd.terminalsCount,
                paymentsPerTerminal: perTerminal,
                merchants: { skip: [flooder] }
              })
              check("unflooded", report, others)
              return summarize(report, flooder)
            }
          ],
          [
            "flooded",
            async (round) => {
              const report = await drive(`flooded-${round}`, {
                inFlight: EndToEnd.terminalsCount,
                paymentsPerTerminal: perTerminal,
                merchants: { skip: [flooder] },
                flood: { merchant: flooder, sales: floodSales }
              })
              check("flooded", report, others)
              return summarize(report, flooder)
            }
          ],
          [
            "motoFlooded",
            async (round) => {
              const report = await drive(`moto-flooded-${round}`, {
                inFlight: EndToEnd.terminalsCount,
                paymentsPerTerminal: perTerminal,
                merchants: { skip: [flooder] },
                motoFlood: { merchant: flooder, sales: motoFloodSales }
              })
              check("MOTO-flooded", report, others)
              return summarize(report, flooder)
            }
          ]
        ]
        for (let round = 0; round < context.rounds; round++) {
          // Each pair in the other order every other round: neither always runs first.
          // (The unflooded run first, then last: each flood is as often before it as after it.)
          const order = round % 2 === 0 ? [0, 1, 2, 3, 4] : [1, 0, 4, 3, 2]
          for (const i of order) {
            const entry = cases[i]
            if (entry === undefined) continue
            const [name, runCase] = entry
            const result = await runCase(round)
            results[name].push(result)
            context.log(
              `  round ${round + 1}/${context.rounds}  ${name}: ${Measure.formatNumber(result.throughput)} sales/s, ` +
                `median ${Measure.formatNumber(result.medianMs)} ms to outcome` +
                (name === "flooded" || name === "motoFlooded"
                  ? `, flood ${result.report.floodCompleted}/${name === "flooded" ? floodSales : motoFloodSales} done ` +
                    JSON.stringify(result.report.floodStatuses)
                  : "")
            )
          }
        }
        await worker.stop()
        worker = undefined
        return resultOf({ results, perTerminal, sales, floodSales, motoFloodSales, others, flooder })
      } finally {
        await worker?.stop()
        await sim.stop()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
}

const resultOf = (outcome: {
  readonly results: Readonly<
    Record<"single" | "merchants" | "unflooded" | "flooded" | "motoFlooded", ReadonlyArray<RunResult>>
  >
  readonly perTerminal: number
  readonly sales: number
  readonly floodSales: number
  readonly motoFloodSales: number
  readonly others: number
  readonly flooder: string
}): Section.Result => {
  const { results, perTerminal, sales, floodSales, motoFloodSales, others, flooder } = outcome
  const f = Measure.formatNumber
  const figures: Array<Measure.Figure> = [
    {
      section: "e2e-merchants",
      name: `sale throughput, ${sales.toLocaleString("en-US")} sales over ${merchantsCount} merchants × ${terminalsPerMerchant} terminals (each within forMerchant, keys from the registry), one worker`,
      unit: "sales/s",
      rounds: results.merchants.map((r) => r.throughput),
      baseline: {
        name: `the same ${sales.toLocaleString("en-US")} sales over one merchant's ${EndToEnd.terminalsCount} terminals`,
        rounds: results.single.map((r) => r.throughput)
      },
      target: { _tag: "RatioAtLeast", ratio: 0.9 }
    },
    {
      section: "e2e-merchants",
      name: `fairness: the other ${merchantsCount - 1} merchants' median time from start to outcome while one floods (${floodSales.toLocaleString("en-US")} sales queued at once on its ${terminalsPerMerchant} terminals), tenantConcurrency ${tenantConcurrency}`,
      unit: "ms",
      rounds: results.flooded.map((r) => r.medianMs),
      baseline: {
        name: `the same ${merchantsCount - 1} merchants' without the flood`,
        rounds: results.unflooded.map((r) => r.medianMs)
      },
      target: { _tag: "RatioAtMost", ratio: 1.2 }
    },
    {
      section: "e2e-merchants",
      name: `fairness without terminals: the other ${merchantsCount - 1} merchants' median time from start to outcome while one floods with ${motoFloodSales.toLocaleString("en-US")} terminal-less MOTO sales started at once (held back by its share alone), tenantConcurrency ${tenantConcurrency}`,
      unit: "ms",
      rounds: results.motoFlooded.map((r) => r.medianMs),
      baseline: {
        name: `the same ${merchantsCount - 1} merchants' without the flood`,
        rounds: results.unflooded.map((r) => r.medianMs)
      },
      target: { _tag: "RatioAtMost", ratio: 1.2 }
    }
  ]
  const row = (name: string, rs: ReadonlyArray<RunResult>) =>
    `| ${name} | ${rs.map((r) => f(r.throughput)).join(", ")} | ${rs.map((r) => f(r.medianMs)).join(", ")} | ${rs.map((r) => f(r.p90Ms)).join(", ")} | ${rs.map((r) => f(r.report.seconds)).join(", ")} |`
  const details = [
    "The end-to-end section's processes (`processes/SimulatorProcess.ts`, `processes/EndToEndWorker.ts`): the " +
      `simulator with its default merchant's ${EndToEnd.terminalsCount} terminals and ${merchantsCount} more merchants ` +
      `of ${terminalsPerMerchant} terminals each (added through its admin API, each with its own API key), every step ` +
      "0 ms, results by callback; one worker (concurrency 64, PostgreSQL pool of 10) whose calls take their key from " +
      "the merchant registry on its store (`MerchantKeys.fromRegistry` over `SqlMerchantRegistry`, each merchant " +
      "registered with its key sealed under a test KEK), with `tenantConcurrency` " +
      `${tenantConcurrency} for every run (executions of the default merchant have no tenant and are not limited). ` +
      "Each run starts its sales one at a time per terminal and ends when the last has its outcome; a sale's time " +
      "to outcome runs from its start to its status seen by the driver's watcher (one query every 100 ms). Rounds " +
      "interleaved, each pair in the other order every other round, after a warm-up of one sale on 100 of the " +
      "default merchant's terminals and one on each merchant terminal.",
    "",
    `- single merchant: ${sales.toLocaleString("en-US")} sales, ${perTerminal} on each of the default merchant's ` +
      `${EndToEnd.terminalsCount} terminals (started without a merchant: the deployment's own key).`,
    `- ${merchantsCount} merchants: ${sales.toLocaleString("en-US")} sales, ${perTerminal} on each of the ` +
      `${merchantsCount * terminalsPerMerchant} merchant terminals, each started within \`MerchantKeys.forMerchant(id)\`.`,
    `- unflooded: ${others.toLocaleString("en-US")} sales of ${merchantsCount - 1} merchants (${perTerminal} per ` +
      `terminal); \`${flooder}\` idle.`,
    `- flooded: the same, while \`${flooder}\` has ${floodSales.toLocaleString("en-US")} sales (${floodFactor} times ` +
      `its share of ${terminalsPerMerchant * perTerminal}) started at once on its ${terminalsPerMerchant} terminals, ` +
      "queued behind each other there (one operation per terminal at a time: the terminal's concurrency key). The " +
      "run ends when the flood is done too; only the other merchants' sales are timed.",
    `- MOTO-flooded: the same, while \`${flooder}\` has ${motoFloodSales.toLocaleString("en-US")} terminal-less MOTO ` +
      `sales (${motoFloodFactor} times its share; \`Moto.Sale\` on a card token its first terminal tokenized once ` +
      "before the rounds, each sale of its own amount: the simulator refuses the same card and amount twice in a " +
      "row) started at once. No terminal holds them back: only the merchant's share of the worker " +
      `(\`tenantConcurrency\` ${tenantConcurrency} of 64) keeps the others' sales served. The run ends when the ` +
      "flood is done too; only the other merchants' sales are timed.",
    "",
    "| run | sales/s by round | median ms to outcome by round | p90 ms by round | seconds by round |",
    "|---|---|---|---|---|",
    row("single merchant", results.single),
    row(`${merchantsCount} merchants`, results.merchants),
    row(`unflooded (${merchantsCount - 1} merchants)`, results.unflooded),
    row(`flooded (${merchantsCount - 1} merchants timed)`, results.flooded),
    row(`MOTO-flooded (${merchantsCount - 1} merchants timed)`, results.motoFlooded),
    "",
    "The flooded runs' sales/s count the 99 merchants' sales over the whole run, the flood's drain included."
  ].join("\n")
  return { figures, details }
}
