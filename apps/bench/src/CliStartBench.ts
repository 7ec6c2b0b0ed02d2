/**
 * Start-up of the command line as an operator meets it: `tillflow --help`, `tillflow sale
 * --help`, and `tillflow devices` against a running worker (the command that talks to a
 * worker over its intake and prints the answer), each a fresh `node
 * apps/cli/bin/tillflow.mjs …` process timed from spawn to its exit, beside `node -e ''`
 * (Node's own start, the floor no command gets under), interleaved round by round. The
 * bundle is built, its help index and its code cache written before the rounds, as after
 * any first run.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import type * as Section from "./internal/Section.js"

const bin = "apps/cli/bin/tillflow.mjs"
const token = "cli-start-bench-intake-token"

/** Seconds from spawn to exit of `node args…`; fails on a non-zero exit. */
const timeRun = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, {
      cwd: Child.root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("close", (code) => {
      const seconds = (performance.now() - started) / 1000
      if (code === 0) resolve(seconds)
      else reject(new Error(`node ${args.join(" ")} exited ${code}:\n${stderr}`))
    })
  })

/** A worker (`tillflow worker`) on a fresh embedded store, with its intake's URL. */
const startWorker = async (buildDir: string, dataDir: string) => {
  const child = spawn(process.execPath, [bin, "worker"], {
    cwd: Child.root,
    env: {
      ...process.env,
      TILLFLOW_CLI_BUILD_DIR: buildDir,
      TILLFLOW_DATA_DIR: dataDir,
      TILLFLOW_INTAKE_PORT: "0",
      TILLFLOW_INTAKE_TOKEN: token,
      TILLFLOW_SIMULATOR_FAST: "true"
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  const url = await new Promise<string>((resolve, reject) => {
    let stderr = ""
    const timer = setTimeout(() => reject(new Error(`no worker within 180 s:\n${stderr}`)), 180_000)
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
      const match = /intake\s+(http:\/\/\S+)/.exec(stderr)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    child.on("close", (code) => reject(new Error(`the worker exited (${code}):\n${stderr}`)))
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.on("close", () => resolve())
      child.kill("SIGTERM")
    })
  return { url, stop }
}

/** The section. */
export const section: Section.Section = {
  name: "cli",
  title: "CLI start-up",
  run: async (context) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-bench-cli-"))
    // The command line's bundle in a folder of the bench's own, inside the repository.
    const buildParent = path.join(Child.root, "apps/cli/build")
    fs.mkdirSync(buildParent, { recursive: true })
    const buildDir = fs.mkdtempSync(path.join(buildParent, "bench-"))
    const env = { TILLFLOW_CLI_BUILD_DIR: buildDir }
    const worker = await startWorker(buildDir, path.join(root, "data"))
    try {
      const remote = { ...env, TILLFLOW_WORKER_URL: worker.url, TILLFLOW_INTAKE_TOKEN: token }
      // As after a first run: the help index and the code cache are there.
      await timeRun([bin, "--help"], env)
      await timeRun([bin, "devices"], remote)
      const rounds = context.quick ? 5 : 11
      const values = await Measure.interleave(
        rounds,
        [
          { name: "node -e ''", run: () => timeRun(["-e", ""], {}) },
          { name: "tillflow --help", run: () => timeRun([bin, "--help"], env) },
          { name: "tillflow sale --help", run: () => timeRun([bin, "sale", "--help"], env) },
          { name: "tillflow devices (a running worker)", run: () => timeRun([bin, "devices"], remote) }
        ],
        context.log,
        { warmup: 1 }
      )
      const get = (name: string) => values.get(name) ?? []
      const floor = { name: "node -e ''", rounds: get("node -e ''") }
      const figures: Array<Measure.Figure> = [
        {
          section: "cli",
          name: "tillflow --help (spawn to exit)",
          unit: "s",
          rounds: get("tillflow --help"),
          baseline: floor,
          target: { _tag: "AtMost", value: 0.3 }
        },
        {
          section: "cli",
          name: "tillflow sale --help (spawn to exit)",
          unit: "s",
          rounds: get("tillflow sale --help"),
          baseline: floor,
          target: { _tag: "AtMost", value: 0.3 }
        },
        {
          section: "cli",
          name: "tillflow devices against a running worker (spawn to exit)",
          unit: "s",
          rounds: get("tillflow devices (a running worker)"),
          baseline: floor,
          target: { _tag: "AtMost", value: 0.5 }
        }
      ]
      const details = [
        "Each figure is a fresh `node apps/cli/bin/tillflow.mjs …` process timed from spawn to exit, " +
          "interleaved round by round with `node -e ''` (Node's own start: no command gets under it), " +
          `${rounds} rounds after one warm-up round. The bundle was built, and its help index ` +
          "(`help.json`) and V8 code cache written, by a first run before the rounds, as after any first " +
          "use. `--help` is answered from `help.json` without loading the command line; `devices` loads the " +
          "bundle (a CommonJS script, its code cache beside it), talks to a worker started for the section " +
          "(`tillflow worker`, embedded store, built-in simulator) over its intake, and prints the terminals; " +
          "the store, PGlite, the worker and the simulator are never evaluated on that path.",
        "",
        Measure.roundsTable(figures)
      ].join("\n")
      return { figures, details }
    } finally {
      await worker.stop()
      fs.rmSync(root, { recursive: true, force: true })
      fs.rmSync(buildDir, { recursive: true, force: true })
    }
  }
}
