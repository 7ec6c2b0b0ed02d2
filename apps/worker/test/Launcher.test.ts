/**
 * `npm start`'s launcher (`apps/worker/bin/start.mjs`): it bundles the worker when the
 * bundle is missing or older than one of its inputs, and otherwise reuses it, so a restart
 * pays no build. Here with `--build-only` (what `npm run build:worker` runs) into a folder
 * of the test's own; the bundle is started as the worker by `WorkerProcess.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Processes from "./support/Processes.js"

const launcher = "apps/worker/bin/start.mjs"

/**
 * The launcher run with `--build-only`: its standard output. Asynchronous: a bundle built on
 * a loaded machine can take long, and a synchronous spawn would block the test's worker
 * (vitest's RPC to it times out after 60 s, failing the run though every test passed).
 */
const buildOnly = (buildDir: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, "--build-only"], {
      cwd: Processes.root,
      env: Processes.cleanEnv({ TILLFLOW_WORKER_BUILD_DIR: buildDir }),
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 120_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status) =>
      status === 0 ? resolve(stdout.trim()) : reject(new Error(`the launcher exited ${status}: ${stderr}`))
    )
  })

describe("the worker's launcher", () => {
  it("builds the bundle once, reuses it while its inputs are unchanged, and rebuilds when one is newer", async () => {
    const buildDir = Processes.testBuildDir()
    const bundle = Path.join(buildDir, "main.mjs")
    try {
      expect(await buildOnly(buildDir)).toMatch(/^built /)
      expect(Fs.readFileSync(bundle, "utf8")).toContain("tillflow worker started")
      expect(Fs.existsSync(`${bundle}.map`)).toBe(true)
      const meta = JSON.parse(Fs.readFileSync(Path.join(buildDir, "main.meta.json"), "utf8")) as {
        readonly inputs: Record<string, unknown>
      }
      // Its inputs are the worker's sources, the packages' and the dependencies'.
      expect(Object.keys(meta.inputs)).toContain("apps/worker/src/main.ts")
      expect(Object.keys(meta.inputs).some((input) => input.startsWith("packages/core/src/"))).toBe(true)
      expect(Object.keys(meta.inputs).some((input) => input.includes("node_modules/effect/"))).toBe(true)
      // No leftovers of the write-then-rename.
      expect(Fs.readdirSync(buildDir).filter((name) => name.endsWith(".tmp"))).toEqual([])

      const builtAt = Fs.statSync(bundle).mtimeMs
      expect(await buildOnly(buildDir)).toMatch(/^up to date /)
      expect(Fs.statSync(bundle).mtimeMs).toBe(builtAt)

      // A bundle older than its inputs (as after editing a source) is built again.
      const past = new Date(Date.now() - 365 * 24 * 3600 * 1000)
      Fs.utimesSync(bundle, past, past)
      expect(await buildOnly(buildDir)).toMatch(/^built /)
      expect(Fs.statSync(bundle).mtimeMs).toBeGreaterThan(past.getTime())

      // A bundle whose list of inputs is lost is built again too.
      Fs.rmSync(Path.join(buildDir, "main.meta.json"))
      expect(await buildOnly(buildDir)).toMatch(/^built /)
    } finally {
      Fs.rmSync(buildDir, { recursive: true, force: true })
    }
  }, 240_000)
})
