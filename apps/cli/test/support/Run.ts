/**
 * `tillflow` run as an operator runs it, from the sources, as a process of its own: its exit
 * code, standard output and standard error. Standard input is empty (a command that would
 * ask on a terminal reads none and says so).
 *
 * Asynchronous: the test's worker keeps answering vitest while the process runs. A
 * synchronous spawn blocks the worker's event loop for the whole run, and a few of them in a
 * row on a loaded machine outlast vitest's 60 s RPC timeout ("Timeout calling
 * onTaskUpdate"), which fails the whole run though every test passed.
 */
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"

/** The repository's root. */
export const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** What a process ended with. */
export interface Ran {
  readonly status: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `command args…` to its end (killed after `timeoutMs`), `input` on its standard input
 * (none: empty).
 */
export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  options: {
    readonly cwd?: string
    readonly env?: NodeJS.ProcessEnv
    readonly input?: string
    readonly timeoutMs?: number
  } = {}
): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      timeout: options.timeoutMs ?? 120_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr }))
    if (options.input !== undefined) child.stdin?.end(options.input)
  })

/** Runs `tillflow args…` with `env` over this process's environment. */
export const run = (args: ReadonlyArray<string>, env: Record<string, string>, input?: string): Promise<Ran> =>
  runProcess(
    process.execPath,
    ["--conditions=@tillflow/source", "--import", "tsx", "apps/cli/src/main.ts", ...args],
    {
      cwd: root,
      env: { ...process.env, ...env },
      ...(input === undefined ? {} : { input })
    }
  )

/** {@link run} as an effect. */
export const cli = (args: ReadonlyArray<string>, env: Record<string, string>): Effect.Effect<Ran> =>
  Effect.promise(() => run(args, env))
