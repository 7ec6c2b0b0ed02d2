/**
 * Cold start of the worker on the embedded store, beyond PGlite's own start: the worker
 * app itself (`apps/worker/src/main.ts`, what `npm start` runs) on a PGlite data
 * directory, against a process that only loads PGlite, opens the same kind of directory
 * and runs one query (`processes/PgliteStart.ts`). Both are fresh `node --import tsx`
 * processes timed from spawn to their ready signal (the worker's "tillflow worker started"
 * log line, written once its store is migrated and its intake, callback receiver and
 * engine worker are up), interleaved; with a new data directory (PGlite's initdb and
 * tillflow's migrations) and with the directory of an earlier start. The same app bundled
 * by esbuild into one file and run by plain `node` shows what module loading through tsx
 * costs.
 */
import { build } from "esbuild"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import type * as Section from "./internal/Section.js"

const pgliteScript = "apps/bench/src/processes/PgliteStart.ts"
const workerScript = "apps/worker/src/main.ts"
const bundleFile = "apps/bench/build/worker.mjs"

/** Bundles the worker app into one ES module (PGlite stays external: it loads its WASM beside itself). */
const bundleWorker = () =>
  build({
    entryPoints: [path.join(Child.root, workerScript)],
    outfile: path.join(Child.root, bundleFile),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["@electric-sql/pglite", "pg-native"],
    // Bundled CommonJS dependencies call `require`.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
    },
    logLevel: "warning"
  })

/** The worker's "started" log line (JSON logs). */
const workerStarted = (message: unknown): true | undefined =>
  JSON.stringify(Child.field<unknown>("message")(message) ?? "").includes("tillflow worker started")
    ? true
    : undefined

/** Seconds from spawn to the ready signal. */
const startOnce = async (
  which: "pglite" | "worker" | "bundle",
  dataDir: string,
  profileDir: string | undefined
): Promise<number> => {
  const started = performance.now()
  const child =
    which === "pglite"
      ? Child.start(pgliteScript, { env: { DATA_DIR: dataDir }, profileDir, label: "pglite-start" })
      : Child.start(which === "worker" ? workerScript : bundleFile, {
          tsx: which === "worker",
          env: {
            TILLFLOW_DATA_DIR: dataDir,
            TILLFLOW_INTAKE_PORT: "0",
            TILLFLOW_LOG_FORMAT: "json",
            TILLFLOW_LOG_LEVEL: "info",
            TILLFLOW_INTAKE_TOKEN: "cold-start-intake-token",
            // A remote service that is never called: the built-in simulator stays off.
            TERMINAL_CLOUD_API_KEY: "cold-start-key",
            TERMINAL_CLOUD_BASE_URL: "http://127.0.0.1:9/",
            TERMINAL_CLOUD_TRANSACTIONS_URL: "http://127.0.0.1:9/"
          },
          // The embedded store: no PostgreSQL, no configuration file.
          unsetEnv: ["DATABASE_URL", "TILLFLOW_CONFIG"],
          profileDir,
          label: "worker-start"
        })
  try {
    await child.next(which === "pglite" ? Child.field<true>("ready") : workerStarted, 180_000)
    return (performance.now() - started) / 1000
  } finally {
    await child.stop()
  }
}

/** The section. */
export const section: Section.Section = {
  name: "cold",
  title: "Cold start",
  run: async (context) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-cold-"))
    // A first start (PGlite's initdb) takes 10–20 s here: one round of those, then the
    // rounds of restarts on the directories it made.
    const rounds = Math.min(context.rounds, 3)
    const pgliteDir = path.join(root, "pglite")
    const workerDir = path.join(root, "worker")
    try {
      await bundleWorker()
      const fresh = await Measure.interleave(
        1,
        [
          {
            name: "PGlite alone, new data dir",
            run: () => startOnce("pglite", pgliteDir, context.profileDir)
          },
          { name: "worker, new data dir", run: () => startOnce("worker", workerDir, context.profileDir) }
        ],
        context.log
      )
      const again = await Measure.interleave(
        rounds,
        [
          {
            name: "PGlite alone, existing data dir",
            run: () => startOnce("pglite", pgliteDir, context.profileDir)
          },
          {
            name: "worker, existing data dir",
            run: () => startOnce("worker", workerDir, context.profileDir)
          },
          {
            name: "worker bundled, existing data dir",
            run: () => startOnce("bundle", workerDir, context.profileDir)
          }
        ],
        context.log
      )
      const get = (name: string) => fresh.get(name) ?? again.get(name) ?? []
      const beyond = (worker: string, pglite: string) =>
        get(worker).map((w, round) => w - (get(pglite)[round] ?? Number.NaN))
      const figures: Array<Measure.Figure> = [
        {
          section: "cold",
          name: "worker app start beyond PGlite's own start, existing data dir",
          unit: "s",
          rounds: beyond("worker, existing data dir", "PGlite alone, existing data dir"),
          target: { _tag: "AtMost", value: 3 }
        },
        {
          section: "cold",
          name: "the same app bundled (esbuild, plain node), existing data dir",
          unit: "s",
          rounds: beyond("worker bundled, existing data dir", "PGlite alone, existing data dir"),
          target: { _tag: "AtMost", value: 3 },
          note: "not how npm start runs it today"
        },
        {
          section: "cold",
          name: "worker app first start beyond PGlite's own, new data dir (initdb + migrations)",
          unit: "s",
          rounds: beyond("worker, new data dir", "PGlite alone, new data dir"),
          target: { _tag: "AtMost", value: 3 },
          note: "one round: a first start is 10–20 s of PGlite initdb here, so this difference is noisy"
        }
      ]
      const list = (name: string) =>
        get(name)
          .map((v) => v.toFixed(2))
          .join(", ")
      const details = [
        "Each start is a fresh Node process (`node --import tsx`, but for the bundle) timed from spawn to its ready " +
          "signal, so all include " +
          "Node's and tsx's bootstrap; the worker's includes loading, transpiling and evaluating its modules. PGlite " +
          "alone: load `@electric-sql/pglite`, `PGlite.create(dir)`, `SELECT 1`. Worker: `apps/worker/src/main.ts` " +
          "with `TILLFLOW_DATA_DIR` (no `DATABASE_URL`), intake on a free port, a remote service configured but " +
          'never called (so the built-in simulator stays off), ready at its "tillflow worker started" log line: ' +
          "store and execution queue migrated, projection, intake API, callback receiver and engine worker up. A " +
          `new data directory is started once, then restarted ${rounds} times, interleaved. The figure is the ` +
          "per-round difference, worker minus PGlite alone. Bundled: the same `apps/worker/src/main.ts` bundled by " +
          "esbuild into one ES module (PGlite external) and run by `node` without tsx, on the worker's directory.",
        "",
        "| start | seconds per round (spawn → ready) |",
        "|---|---|",
        ...[
          "PGlite alone, new data dir",
          "worker, new data dir",
          "PGlite alone, existing data dir",
          "worker, existing data dir",
          "worker bundled, existing data dir"
        ].map((name) => `| ${name} | ${list(name)} |`),
        "",
        Measure.roundsTable(figures)
      ].join("\n")
      return { figures, details }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}
