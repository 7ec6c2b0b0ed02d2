/**
 * Child processes of the suite (a second worker, the load generator, the simulator …):
 * started with Node and the `tsx` loader, spoken to in JSON lines (commands on stdin,
 * messages on stdout), stopped with SIGTERM (SIGKILL after a grace period) and never left
 * behind. With `--profile DIR` they run under `--cpu-prof` and write their profile there.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

/** The repository root (where `tsx` and the workspaces resolve). */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** A running child. */
export interface Child {
  readonly pid: number
  /** Sends one command (a JSON line on its stdin). */
  readonly send: (message: unknown) => void
  /** The next message that satisfies `accept` (rejects if the child exits first or after `timeoutMs`). */
  readonly next: <A>(accept: (message: unknown) => A | undefined, timeoutMs?: number) => Promise<A>
  /** Stops it (SIGTERM, then SIGKILL after `graceMs`) and waits for its exit. */
  readonly stop: (graceMs?: number) => Promise<void>
  /** The last lines it wrote to stderr (for error messages). */
  readonly stderrTail: () => string
}

/** Options of a child. */
export interface Options {
  readonly args?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Variables of this process the child must not inherit. */
  readonly unsetEnv?: ReadonlyArray<string> | undefined
  /** Load the script through tsx (default true; false for plain JavaScript). */
  readonly tsx?: boolean | undefined
  /** Node flags before the script (`--expose-gc` …). */
  readonly nodeFlags?: ReadonlyArray<string> | undefined
  /** Write a CPU profile into this directory. */
  readonly profileDir?: string | undefined
  /** Label of its lines in the suite's log. */
  readonly label?: string | undefined
  /** Echo its stderr to ours (default: only with BENCH_ECHO=1; otherwise kept for errors). */
  readonly echo?: boolean | undefined
}

const live = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL")
})

/** Starts `script` (a path relative to the repository root, or absolute) as a child process. */
export const start = (script: string, options: Options = {}): Child => {
  const flags = [
    ...(options.nodeFlags ?? []),
    ...(options.profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", options.profileDir]),
    ...(options.tsx === false ? [] : ["--conditions=@tillflow/source", "--import", "tsx"])
  ]
  const env: Record<string, string | undefined> = { ...process.env, ...options.env }
  for (const name of options.unsetEnv ?? []) delete env[name]
  const child = spawn(process.execPath, [...flags, path.resolve(root, script), ...(options.args ?? [])], {
    cwd: root,
    env,
    stdio: ["pipe", "pipe", "pipe"]
  })
  live.add(child)
  const label = options.label ?? path.basename(script)
  const echo = options.echo ?? process.env["BENCH_ECHO"] === "1"
  const messages: Array<unknown> = []
  const waiters = new Set<() => void>()
  const wake = () => {
    for (const waiter of waiters) waiter()
  }
  let stderr: Array<string> = []
  let exited: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined
  const exit = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exited = { code, signal }
      live.delete(child)
      wake()
      resolve()
    })
  })
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      messages.push(JSON.parse(line) as unknown)
      wake()
    } catch {
      if (echo) process.stderr.write(`  [${label}] ${line}\n`)
    }
  })
  createInterface({ input: child.stderr }).on("line", (line) => {
    stderr.push(line)
    if (stderr.length > 40) stderr = stderr.slice(-40)
    if (echo) process.stderr.write(`  [${label}] ${line}\n`)
  })
  child.stdin.on("error", () => {})

  const next = <A>(accept: (message: unknown) => A | undefined, timeoutMs = 600_000): Promise<A> =>
    new Promise<A>((resolve, reject) => {
      const check = () => {
        for (let i = 0; i < messages.length; i++) {
          const accepted = accept(messages[i])
          if (accepted !== undefined) {
            messages.splice(i, 1)
            done()
            resolve(accepted)
            return
          }
        }
        if (exited !== undefined) {
          done()
          reject(
            new Error(
              `${label} exited (${exited.code ?? exited.signal}) before answering:\n${stderr.slice(-15).join("\n")}`
            )
          )
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`${label} did not answer within ${timeoutMs} ms:\n${stderr.slice(-15).join("\n")}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })

  return {
    pid: child.pid ?? -1,
    send: (message) => {
      child.stdin.write(`${JSON.stringify(message)}\n`)
    },
    next,
    stop: async (graceMs = 15_000) => {
      if (exited !== undefined) return
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
      await exit
      clearTimeout(timer)
    },
    stderrTail: () => stderr.join("\n")
  }
}

/** Accepts a message with the given key, returning its value. */
export const field =
  <A>(key: string) =>
  (message: unknown): A | undefined =>
    typeof message === "object" && message !== null && key in message
      ? ((message as Record<string, unknown>)[key] as A)
      : undefined

/** For a child script: reads JSON-line commands from stdin. */
export const onCommand = (handle: (command: unknown) => void): void => {
  createInterface({ input: process.stdin }).on("line", (line) => {
    try {
      handle(JSON.parse(line) as unknown)
    } catch {
      // not a command
    }
  })
}

/** For a child script: writes one message to the parent. */
export const tell = (message: unknown): void => {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}
