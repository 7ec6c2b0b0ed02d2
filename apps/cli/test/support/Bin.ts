/**
 * The `tillflow` executable run as a process for tests: bundled into a build folder of the
 * test file's own (`TILLFLOW_CLI_BUILD_DIR`, so it never races the repository's bundle),
 * output piped (so not a terminal), without settings that would point it elsewhere.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** A new build folder under `apps/cli/build`; the caller removes it. */
export const testBuildDir = (): string => {
  const parent = Path.join(root, "apps/cli/build")
  Fs.mkdirSync(parent, { recursive: true })
  return Fs.mkdtempSync(Path.join(parent, "test-"))
}

/** A running `tillflow`: its output so far, a wait for a line on stderr, and its end. */
export interface Running {
  readonly pid: number | undefined
  readonly stderr: () => string
  /** The first match of `pattern` in stderr, once it is there. */
  readonly waitForStderr: (pattern: RegExp) => Promise<RegExpMatchArray>
  readonly ended: Promise<{
    readonly status: number | null
    readonly stdout: string
    readonly stderr: string
  }>
}

/**
 * Starts `apps/cli/bin/tillflow.mjs`. Asynchronously: a first run builds the bundle, which on
 * a loaded host takes long enough that a blocked test worker misses vitest's calls.
 */
export const start = (
  buildDir: string,
  args: ReadonlyArray<string>,
  extra: Record<string, string> = {},
  /** Killed (SIGTERM) after this long; a process the test stops itself (a worker) passes 0: never. */
  timeoutMs = 180_000
): Running => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env)) {
    if (key.startsWith("TILLFLOW_") || key === "NO_COLOR" || key === "FORCE_COLOR") delete env[key]
  }
  const merged: NodeJS.ProcessEnv = { ...env, TILLFLOW_CLI_BUILD_DIR: buildDir, ...extra }
  // An empty value in `extra` removes the variable (e.g. DATABASE_URL: the embedded store).
  for (const [key, value] of Object.entries(extra)) if (value === "") delete merged[key]
  const child = spawn(process.execPath, ["apps/cli/bin/tillflow.mjs", ...args], {
    cwd: root,
    env: merged,
    stdio: ["ignore", "pipe", "pipe"],
    ...(timeoutMs > 0 ? { timeout: timeoutMs } : {})
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  const ended = new Promise<{
    readonly status: number | null
    readonly stdout: string
    readonly stderr: string
  }>((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })))
  const waitForStderr = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const look = () => {
        const match = stderr.match(pattern)
        if (match === null) return false
        child.stderr.off("data", look)
        resolve(match)
        return true
      }
      if (look()) return
      child.stderr.on("data", look)
      void ended.then(() => {
        if (!look()) reject(new Error(`tillflow ended without ${String(pattern)} on stderr:\n${stderr}`))
      })
    })
  return { pid: child.pid, stderr: () => stderr, waitForStderr, ended }
}

/** Runs `apps/cli/bin/tillflow.mjs` to its end. */
export const run = (
  buildDir: string,
  args: ReadonlyArray<string>,
  extra: Record<string, string> = {}
): Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }> =>
  start(buildDir, args, extra).ended

/** The help's usage lines (`$ …`). */
export const usageLines = (help: string): ReadonlyArray<string> =>
  help.split("\n").filter((line) => line.startsWith("$ "))
