/**
 * The benchmark suite: `npm run bench [-- --only store,engine] [--quick] [--write]
 * [--rounds N] [--profile DIR]`. Every figure is measured beside its raw baseline in the
 * same run; it prints the table and, after a full run (or with `--write`), updates
 * docs/performance.md. Never part of `npm test`. Needs the PostgreSQL of DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres).
 */
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import * as AddedTimeBench from "./AddedTimeBench.js"
import * as CallbackBench from "./CallbackBench.js"
import * as CliStartBench from "./CliStartBench.js"
import * as ColdStartBench from "./ColdStartBench.js"
import * as ConsoleBench from "./ConsoleBench.js"
import * as EndToEndBench from "./EndToEndBench.js"
import * as HistoryGrowthBench from "./HistoryGrowthBench.js"
import * as EngineBench from "./EngineBench.js"
import * as MerchantsBench from "./MerchantsBench.js"
import * as Measure from "./internal/Measure.js"
import * as Report from "./internal/Report.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"
import * as PeerBench from "./PeerBench.js"
import * as QueueBench from "./QueueBench.js"
import * as LedgerBench from "./LedgerBench.js"
import * as ReplayBench from "./ReplayBench.js"
import * as StoreBench from "./StoreBench.js"

const sections: ReadonlyArray<Section.Section> = [
  StoreBench.section,
  StoreBench.pgliteSection,
  ReplayBench.section,
  LedgerBench.section,
  EngineBench.section,
  PeerBench.section,
  QueueBench.section,
  CallbackBench.section,
  EndToEndBench.section,
  EndToEndBench.historySection,
  MerchantsBench.section,
  HistoryGrowthBench.section,
  HistoryGrowthBench.archiveSection,
  AddedTimeBench.section,
  ColdStartBench.section,
  ConsoleBench.section,
  CliStartBench.section
]

const usage = `usage: npm run bench -- [--only ${sections.map((s) => s.name).join(",")}] [--quick] [--write] [--rounds N] [--profile DIR]
  --only LIST    run these sections only (comma-separated)
  --quick        fewer rounds, smaller sizes: for iterating (rougher numbers)
  --write        update docs/performance.md (default: only after a full run without --quick/--only)
  --no-write     never update docs/performance.md
  --details      print each section's details (its tables of rounds, the e2e statement census …)
  --rounds N     rounds of the interleaved measurements (default 5, 3 with --quick)
  --profile DIR  child processes (workers, load generator) run with --cpu-prof into DIR
  --payments N   payments the long end-to-end run (e2e-history) completes (default 100000, 10000 with --quick)

Sections run by the full suite: ${sections
  .filter((s) => s.optIn !== true)
  .map((s) => s.name)
  .join(", ")}; only with --only: ${sections
  .filter((s) => s.optIn === true)
  .map((s) => s.name)
  .join(", ")}.`

interface Args {
  readonly only: ReadonlyArray<string> | undefined
  readonly quick: boolean
  readonly write: boolean | undefined
  readonly details: boolean
  readonly rounds: number | undefined
  readonly profileDir: string | undefined
  readonly payments: number | undefined
}

const parseArgs = (argv: ReadonlyArray<string>): Args | string => {
  let only: Array<string> | undefined
  let quick = false
  let write: boolean | undefined
  let details = false
  let rounds: number | undefined
  let profileDir: string | undefined
  let payments: number | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const next = argv[i + 1]
    switch (arg) {
      case "--only": {
        if (next === undefined) return "--only needs a list"
        only = next.split(",").map((s) => s.trim())
        const unknown = only.filter((name) => !sections.some((s) => s.name === name))
        if (unknown.length > 0) return `unknown section ${unknown.join(", ")}\n${usage}`
        i++
        break
      }
      case "--quick":
        quick = true
        break
      case "--write":
        write = true
        break
      case "--no-write":
        write = false
        break
      case "--details":
        details = true
        break
      case "--rounds": {
        const n = Number(next)
        if (!Number.isInteger(n) || n < 1 || n > 50) return "--rounds needs an integer from 1 to 50"
        rounds = n
        i++
        break
      }
      case "--profile":
        if (next === undefined) return "--profile needs a directory"
        profileDir = path.resolve(next)
        i++
        break
      case "--payments": {
        const n = Number(next)
        if (!Number.isInteger(n) || n < 1000 || n > 10_000_000)
          return "--payments needs an integer from 1000 to 10000000"
        payments = n
        i++
        break
      }
      case "--help":
      case "-h":
        return usage
      default:
        return `unknown argument ${arg}\n${usage}`
    }
  }
  return { only, quick, write, details, rounds, profileDir, payments }
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

const main = async () => {
  const argv = process.argv.slice(2)
  const args = parseArgs(argv)
  if (typeof args === "string") {
    process.stderr.write(`${args}\n`)
    process.exitCode = args === usage ? 0 : 2
    return
  }
  const server = await Scratch.serverInfo()
  if (server === undefined) {
    process.stderr.write(
      `PostgreSQL is not reachable at DATABASE_URL (${Scratch.adminUrl}): the suite needs it.\n`
    )
    process.exitCode = 1
    return
  }
  const startedAt = new Date()
  const started = performance.now()
  const load = Report.sampleLoad()
  const context: Section.Context = {
    quick: args.quick,
    rounds: args.rounds ?? (args.quick ? 3 : 5),
    log: (line) => process.stderr.write(`${line}\n`),
    profileDir: args.profileDir,
    payments: args.payments
  }
  const chosen = sections.filter((s) =>
    args.only === undefined ? s.optIn !== true : args.only.includes(s.name)
  )
  const results: Array<{ readonly section: Section.Section; readonly result: Section.Result }> = []
  for (const section of chosen) {
    context.log(`== ${section.title}`)
    const sectionStarted = performance.now()
    try {
      const result = await section.run(context)
      results.push({ section, result })
      if (args.details) context.log(`${result.details}\n`)
      context.log(
        `${Measure.summaryTable(result.figures)}\n(${section.name}: ${Math.round((performance.now() - sectionStarted) / 1000)} s)\n`
      )
    } catch (error) {
      context.log(
        `section ${section.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`
      )
      process.exitCode = 1
    }
  }
  const seconds = (performance.now() - started) / 1000
  const machine = Report.machine({ server, load: load.stop(), startedAt, seconds, args: argv })
  const figures = results.flatMap((r) => r.result.figures)
  const summary = `${machine}\n\n${Measure.summaryTable(figures)}`
  process.stdout.write(`\n${summary}\n`)

  const write = args.write ?? (args.only === undefined && !args.quick && process.exitCode !== 1)
  if (write) {
    const page = path.join(root, "docs/performance.md")
    Report.writePage(page, [
      { name: "summary", heading: "Latest run", content: summary },
      ...results.map((r) => ({
        name: r.section.name,
        heading: r.section.title,
        content: `${Measure.summaryTable(r.result.figures)}\n\n${r.result.details}`
      }))
    ])
    process.stderr.write(`docs/performance.md updated (${results.map((r) => r.section.name).join(", ")})\n`)
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
})
