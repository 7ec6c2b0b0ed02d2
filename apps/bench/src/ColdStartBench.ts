/**
 * Cold start of the worker on the embedded store, beyond PGlite's own start: a fresh
 * process composing the worker's layers on PGlite (`processes/WorkerStart.ts`) against a
 * fresh process that only loads PGlite, opens the same kind of data directory and runs
 * one query (`processes/PgliteStart.ts`), interleaved; with a new data directory (first
 * start: PGlite's initdb and tillflow's migrations) and with the directory of an earlier
 * start. Each process reports its times from the start of module evaluation, so Node's
 * and tsx's bootstrap (the same for both) is left out. The worker app (`apps/worker`) is
 * not built yet: this composes the layers it will run, in a process of its own.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import type * as Section from "./internal/Section.js"

interface Ready {
  readonly bootMs: number
  readonly loadedMs: number
  readonly readyMs: number
}

const startOnce = async (script: string, dataDir: string, profileDir: string | undefined): Promise<Ready> => {
  const child = Child.start(script, { env: { DATA_DIR: dataDir }, profileDir, label: path.basename(script) })
  try {
    return await child.next(Child.field<Ready>("ready"), 180_000)
  } finally {
    await child.stop()
  }
}

const pgliteScript = "apps/bench/src/processes/PgliteStart.ts"
const workerScript = "apps/bench/src/processes/WorkerStart.ts"

/** The section. */
export const section: Section.Section = {
  name: "cold",
  title: "Cold start",
  run: async (context) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-cold-"))
    // A first start (PGlite's initdb) takes 10–20 s here: one round of those, then the
    // rounds of restarts on the directories it made.
    const rounds = Math.min(context.rounds, 3)
    try {
      const runs = new Map<string, Array<Ready>>()
      const record = (name: string, ready: Ready) => {
        const list = runs.get(name) ?? []
        list.push(ready)
        runs.set(name, list)
        return ready.readyMs / 1000
      }
      const pgliteDir = path.join(root, "pglite")
      const workerDir = path.join(root, "worker")
      await Measure.interleave(
        1,
        [
          {
            name: "PGlite alone, new data dir",
            run: async () =>
              record("pglite-new", await startOnce(pgliteScript, pgliteDir, context.profileDir))
          },
          {
            name: "worker, new data dir",
            run: async () =>
              record("worker-new", await startOnce(workerScript, workerDir, context.profileDir))
          }
        ],
        context.log
      )
      await Measure.interleave(
        rounds,
        [
          {
            name: "PGlite alone, existing data dir",
            run: async () =>
              record("pglite-old", await startOnce(pgliteScript, pgliteDir, context.profileDir))
          },
          {
            name: "worker, existing data dir",
            run: async () =>
              record("worker-old", await startOnce(workerScript, workerDir, context.profileDir))
          }
        ],
        context.log
      )
      const total = (name: string) => (runs.get(name) ?? []).map((r) => r.readyMs / 1000)
      const loading = (name: string) => (runs.get(name) ?? []).map((r) => r.loadedMs / 1000)
      const beyond = (worker: string, pglite: string) =>
        total(worker).map((w, round) => w - (total(pglite)[round] ?? Number.NaN))
      const note = "layers composed in a process: apps/worker not built yet"
      const figures: Array<Measure.Figure> = [
        {
          section: "cold",
          name: "worker start beyond PGlite's own start, new data dir (initdb + migrations)",
          unit: "s",
          rounds: beyond("worker-new", "pglite-new"),
          target: { _tag: "AtMost", value: 3 },
          note
        },
        {
          section: "cold",
          name: "worker start beyond PGlite's own start, existing data dir",
          unit: "s",
          rounds: beyond("worker-old", "pglite-old"),
          target: { _tag: "AtMost", value: 3 },
          note
        }
      ]
      const list = (values: ReadonlyArray<number>) => values.map((v) => v.toFixed(2)).join(", ")
      const details = [
        "Each start is a fresh `node --import tsx` process; times run from the process's start to everything up " +
          "(Node's and tsx's bootstrap is in both; loading, transpiling and evaluating tillflow's modules counts). " +
          "A new data directory is started once (PGlite's initdb alone takes 10–20 s on this machine), then the " +
          `directories it made are restarted ${rounds} times, interleaved. ` +
          "PGlite alone: load `@electric-sql/pglite`, " +
          "`PGlite.create(dir)`, `SELECT 1`. Worker: the layers the worker app will compose (`apps/worker` is not built " +
          "yet): the PGlite event store with its migrations, the SQL execution queue and its migrations, the durable " +
          "engine, the payment protocol's workflows, the HTTP client, the callback receiver listening on a loopback " +
          "port and an engine worker. The figure is the per-round difference, worker minus PGlite alone.",
        "",
        "| start | modules loaded (s since process start) | ready (s since process start) |",
        "|---|---|---|",
        `| PGlite alone, new data dir | ${list(loading("pglite-new"))} | ${list(total("pglite-new"))} |`,
        `| worker, new data dir | ${list(loading("worker-new"))} | ${list(total("worker-new"))} |`,
        `| PGlite alone, existing data dir | ${list(loading("pglite-old"))} | ${list(total("pglite-old"))} |`,
        `| worker, existing data dir | ${list(loading("worker-old"))} | ${list(total("worker-old"))} |`,
        "",
        Measure.roundsTable(figures)
      ].join("\n")
      return { figures, details }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}
