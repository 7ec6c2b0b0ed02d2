/**
 * A worker for the command line's tests: `tillflow worker` as a process of its own, on an
 * embedded store in a fresh folder and the built-in simulator with every step at 0 ms,
 * its intake on a free port; commands reach it through `TILLFLOW_WORKER_URL`.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Bin from "./Bin.js"

/** The token the test worker's intake asks for. */
export const token = "cli-test-intake-token-0123456789"

/** A running test worker. */
export interface TestWorker {
  readonly url: string
  /** Runs `tillflow <args>` against the worker. */
  readonly cli: (
    args: ReadonlyArray<string>,
    extra?: Record<string, string>
  ) => Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }>
  readonly stop: () => Promise<void>
}

/**
 * Starts a worker with the executable of `buildDir` (and `extra` settings: operators …);
 * resolves once its intake listens.
 */
export const start = async (buildDir: string, extra: Record<string, string> = {}): Promise<TestWorker> => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-cli-worker-"))
  const running = Bin.start(
    buildDir,
    ["worker"],
    {
      TILLFLOW_DATA_DIR: Path.join(dir, "data"),
      TILLFLOW_INTAKE_PORT: "0",
      TILLFLOW_INTAKE_TOKEN: token,
      TILLFLOW_SIMULATOR_FAST: "true",
      ...extra
    },
    0
  )
  const match = await running.waitForStderr(/intake\s+(http:\/\/\S+)/)
  const url = match[1] ?? ""
  return {
    url,
    cli: (args, extra = {}) =>
      Bin.run(buildDir, args, { TILLFLOW_WORKER_URL: url, TILLFLOW_INTAKE_TOKEN: token, ...extra }),
    stop: async () => {
      try {
        if (running.pid !== undefined) process.kill(running.pid, "SIGTERM")
      } catch {
        // Already gone: its end below is what the test waits for.
      }
      await running.ended
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}
