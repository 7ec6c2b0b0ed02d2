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

/**
 * Runs `apps/cli/bin/tillflow.mjs` to its end. Asynchronously: a first run builds the bundle,
 * which on a loaded host takes long enough that a blocked test worker misses vitest's calls.
 */
export const run = (
  buildDir: string,
  args: ReadonlyArray<string>,
  extra: Record<string, string> = {}
): Promise<{ readonly status: number | null; readonly stdout: string; readonly stderr: string }> => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env)) {
    if (key.startsWith("TILLFLOW_") || key === "NO_COLOR" || key === "FORCE_COLOR") delete env[key]
  }
  const child = spawn(process.execPath, ["apps/cli/bin/tillflow.mjs", ...args], {
    cwd: root,
    env: { ...env, TILLFLOW_CLI_BUILD_DIR: buildDir, ...extra },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 180_000
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })))
}

/** The help's usage lines (`$ …`). */
export const usageLines = (help: string): ReadonlyArray<string> =>
  help.split("\n").filter((line) => line.startsWith("$ "))
