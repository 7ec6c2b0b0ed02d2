/**
 * Cold start of the worker on the embedded store, beyond PGlite's own start: the worker
 * app as `npm start` runs it (`apps/worker/bin/start.mjs`: the app bundled by esbuild,
 * rebuilt only when a source changed, and run by plain `node`) on a PGlite data directory,
 * against a process that only loads PGlite, opens the same kind of directory and runs one
 * query (`processes/PgliteStart.ts`). Both are fresh processes timed from spawn to their
 * ready signal (the worker's "tillflow worker started" log line, written once its store is
 * migrated and its intake, callback receiver and engine worker are up), interleaved; with
 * a new data directory (PGlite's initdb and tillflow's migrations) and with the directory
 * of an earlier start. Beside them: the launcher's first start after a source changed (the
 * bundle rebuilt first), and the sources run through tsx (`npm run start:dev`), which
 * shows what module loading through tsx's hooks costs.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import type * as Section from "./internal/Section.js"

const pgliteScript = "apps/bench/src/processes/PgliteStart.ts"
const workerScript = "apps/worker/src/main.ts"
const launcherScript = "apps/worker/bin/start.mjs"

/** The worker's "started" log line (JSON logs). */
const workerStarted = (message: unknown): true | undefined =>
  JSON.stringify(Child.field<unknown>("message")(message) ?? "").includes("tillflow worker started")
    ? true
    : undefined

type Start = "pglite" | "npm start" | "npm start, rebuilt" | "tsx"

/** Seconds from spawn to the ready signal. */
const startOnce = async (
  which: Start,
  dataDir: string,
  buildDir: string,
  profileDir: string | undefined
): Promise<number> => {
  if (which === "npm start, rebuilt") {
    // As after editing a source: the bundle is older than its inputs.
    const past = new Date(Date.now() - 365 * 24 * 3600 * 1000)
    fs.utimesSync(path.join(buildDir, "main.mjs"), past, past)
  }
  const started = performance.now()
  const child =
    which === "pglite"
      ? Child.start(pgliteScript, { env: { DATA_DIR: dataDir }, profileDir, label: "pglite-start" })
      : Child.start(which === "tsx" ? workerScript : launcherScript, {
          tsx: which === "tsx",
          env: {
            TILLFLOW_DATA_DIR: dataDir,
            TILLFLOW_WORKER_BUILD_DIR: buildDir,
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
    // The launcher's bundle in a folder of the bench's own, inside the repository (where
    // the bundle finds PGlite, external, in node_modules): never built yet, so the first
    // start below builds it, as a fresh clone's first `npm start` does.
    const buildParent = path.join(Child.root, "apps/worker/build")
    fs.mkdirSync(buildParent, { recursive: true })
    const buildDir = fs.mkdtempSync(path.join(buildParent, "bench-"))
    // A first start (PGlite's initdb) takes 4–20 s here: one round of those, then the
    // rounds of restarts on the directories it made.
    const rounds = Math.min(context.rounds, 3)
    const pgliteDir = path.join(root, "pglite")
    const workerDir = path.join(root, "worker")
    const run = (which: Start, dir: string) => () => startOnce(which, dir, buildDir, context.profileDir)
    try {
      const fresh = await Measure.interleave(
        1,
        [
          { name: "PGlite alone, new data dir", run: run("pglite", pgliteDir) },
          { name: "npm start, new data dir, bundle not built yet", run: run("npm start", workerDir) }
        ],
        context.log
      )
      const again = await Measure.interleave(
        rounds,
        [
          { name: "PGlite alone, existing data dir", run: run("pglite", pgliteDir) },
          { name: "npm start, existing data dir", run: run("npm start", workerDir) },
          {
            name: "npm start after a source changed (bundle rebuilt)",
            run: run("npm start, rebuilt", workerDir)
          },
          { name: "tsx (npm run start:dev), existing data dir", run: run("tsx", workerDir) }
        ],
        context.log
      )
      const get = (name: string) => fresh.get(name) ?? again.get(name) ?? []
      const beyond = (worker: string, pglite: string) =>
        get(worker).map((w, round) => w - (get(pglite)[round] ?? Number.NaN))
      const figures: Array<Measure.Figure> = [
        {
          section: "cold",
          name: "worker app start beyond PGlite's own start, existing data dir (npm start)",
          unit: "s",
          rounds: beyond("npm start, existing data dir", "PGlite alone, existing data dir"),
          target: { _tag: "AtMost", value: 3 }
        },
        {
          section: "cold",
          name: "the same, first start after a source changed (bundle rebuilt)",
          unit: "s",
          rounds: beyond(
            "npm start after a source changed (bundle rebuilt)",
            "PGlite alone, existing data dir"
          ),
          target: { _tag: "AtMost", value: 3 }
        },
        {
          section: "cold",
          name: "worker app first start beyond PGlite's own, new data dir (initdb + migrations + first build)",
          unit: "s",
          rounds: beyond("npm start, new data dir, bundle not built yet", "PGlite alone, new data dir"),
          target: { _tag: "AtMost", value: 3 },
          note: "one round: a first start is 4–20 s of PGlite initdb here, so this difference is noisy"
        },
        {
          section: "cold",
          name: "the sources through tsx (npm run start:dev), existing data dir",
          unit: "s",
          rounds: beyond("tsx (npm run start:dev), existing data dir", "PGlite alone, existing data dir"),
          note: "development only"
        }
      ]
      const list = (name: string) =>
        get(name)
          .map((v) => v.toFixed(2))
          .join(", ")
      const details = [
        "Each start is a fresh Node process timed from spawn to its ready signal, so all include Node's " +
          "bootstrap. PGlite alone (`node --import tsx`, one small module): load `@electric-sql/pglite`, " +
          "`PGlite.create(dir)`, `SELECT 1`. Worker: `node apps/worker/bin/start.mjs`, what `npm start` runs (npm's " +
          "own start, ~0.2 s, left out), with `TILLFLOW_DATA_DIR` (no `DATABASE_URL`), intake on a free port, a " +
          "remote service configured but never called (so the built-in simulator stays off), ready at its " +
          '"tillflow worker started" log line: store and execution queue migrated, projection, intake API, callback ' +
          "receiver and engine worker up. The launcher runs the bundle `apps/worker/build/main.mjs` (esbuild, PGlite " +
          "external) and rebuilds it first when it is missing or older than one of its inputs; the rebuilt case dates " +
          "the bundle back before the start, as an edited source would. tsx: `node --import tsx " +
          "apps/worker/src/main.ts`, the sources through tsx's loader hooks. A new data directory is started once " +
          `(with the bundle not built yet), then restarted ${rounds} times, interleaved. The figure is the ` +
          "per-round difference, worker minus PGlite alone.",
        "",
        "| start | seconds per round (spawn → ready) |",
        "|---|---|",
        ...[
          "PGlite alone, new data dir",
          "npm start, new data dir, bundle not built yet",
          "PGlite alone, existing data dir",
          "npm start, existing data dir",
          "npm start after a source changed (bundle rebuilt)",
          "tsx (npm run start:dev), existing data dir"
        ].map((name) => `| ${name} | ${list(name)} |`),
        "",
        Measure.roundsTable(figures)
      ].join("\n")
      return { figures, details }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
      fs.rmSync(buildDir, { recursive: true, force: true })
    }
  }
}
