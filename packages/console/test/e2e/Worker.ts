/**
 * The worker as `npm start` runs it (`apps/worker/bin/start.mjs`: the bundle, the console's
 * assets), on the embedded store in a temporary folder and the built-in simulator, with a
 * known intake token; its addresses read from the banner it prints.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** A running worker. */
export interface Worker {
  /** `http://127.0.0.1:<port>`. */
  readonly base: string
  /** The built-in simulator's admin API. */
  readonly admin: string
  readonly token: string
  readonly stderr: () => string
  readonly stop: () => Promise<void>
}

/** Starts a worker; `env` adds settings. */
export const start = async (env: Record<string, string> = {}): Promise<Worker> => {
  const token = `console-e2e-${globalThis.crypto.randomUUID()}`
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "tillflow-console-"))
  const buildParent = path.join(root, "apps/worker/build")
  fs.mkdirSync(buildParent, { recursive: true })
  const build = fs.mkdtempSync(path.join(buildParent, "test-console-"))
  const clean: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(clean)) {
    if (key.startsWith("TILLFLOW_") || key.startsWith("TERMINAL_CLOUD_") || key === "DATABASE_URL")
      delete clean[key]
  }
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "apps/worker/bin/start.mjs")], {
    cwd: root,
    env: {
      ...clean,
      TILLFLOW_DATA_DIR: path.join(data, "data"),
      TILLFLOW_INTAKE_PORT: "0",
      TILLFLOW_INTAKE_TOKEN: token,
      TILLFLOW_SIMULATOR_FAST: "true",
      TILLFLOW_WORKER_BUILD_DIR: build,
      TILLFLOW_LOG_LEVEL: "warning",
      ...env
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let err = ""
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk
  })
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))])
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    fs.rmSync(data, { recursive: true, force: true })
    fs.rmSync(build, { recursive: true, force: true })
  }
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const consoleUrl = /console\s+(http:\/\/\S+)\/console/.exec(err)
    const admin = /admin (http:\/\/\S+\/_sim)\)/.exec(err)
    if (consoleUrl?.[1] !== undefined && admin?.[1] !== undefined) {
      return { base: consoleUrl[1], admin: admin[1], token, stderr: () => err, stop }
    }
    if (child.exitCode !== null) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await stop()
  throw new Error(`the worker did not print its console URL:\n${err}`)
}
