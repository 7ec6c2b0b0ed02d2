/**
 * Test support for whatever drives the simulator, exported from `@tillflow/simulator/testing`
 * only: step timings that take no time, a client of the simulator's admin API over HTTP, and
 * a process started from a script that says `ready` (a worker or a simulator in a process of
 * its own, for crash tests), killed with its scope. One home for what the simulator's, the
 * HTTP client's and the callback receiver's tests used to write each for itself.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import type { Timings } from "../internal/model.js"

/** No simulated step takes time unless a test says so (the acquirer timeout stays as it is). */
export const instantTimings: Omit<Timings, "AcquirerTimeout"> = {
  WaitingForCard: 0,
  PinInput: 0,
  WaitingHostConnect: 0,
  WaitingHostSend: 0,
  WaitingHostReceive: 0,
  PrintingMerchantReceipt: 0,
  Reboot: 0
}

/**
 * Calls the simulator's admin API (`/_sim/…`) at `adminUrl`: the JSON it answers, or
 * `undefined` for an empty body; a status other than 2xx is a defect naming the call.
 */
export const adminClient =
  (adminUrl: string) =>
  (method: string, path: string, body?: unknown): Effect.Effect<unknown> =>
    Effect.promise(async () => {
      const response = await fetch(`${adminUrl}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`admin ${method} ${path}: ${response.status} ${text}`)
      return text === "" ? undefined : (JSON.parse(text) as unknown)
    })

/** A script to run as a process of its own. */
export interface ScriptProcess {
  /** The TypeScript file run with node and the tsx loader. */
  readonly script: string
  /** The working directory. */
  readonly cwd: string
  /** Its name: given to the process as `WORKER_ID`, and in the failure if it exits early. */
  readonly id: string
  /** Added to this process's environment. */
  readonly env: Record<string, string>
}

/**
 * Starts `script` and waits (60 s at most) for `ready` on its standard output; SIGKILLed when
 * the scope closes, if still running. It is node itself with the tsx loader, not the tsx
 * wrapper, whose child would survive a SIGKILL of the wrapper; the workspace's packages
 * resolve to their sources (the `@tillflow/source` export condition).
 */
export const startProcess = (options: ScriptProcess): Effect.Effect<ChildProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<ChildProcess, Error>((resume) => {
      const child = spawn(
        process.execPath,
        ["--conditions=@tillflow/source", "--import", "tsx", options.script],
        {
          cwd: options.cwd,
          env: { ...process.env, ...options.env, WORKER_ID: options.id },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let seen = ""
      child.stdout.on("data", (chunk: Buffer) => {
        seen += chunk.toString()
        if (seen.includes("ready")) resume(Effect.succeed(child))
      })
      child.stderr.on("data", () => {})
      child.on("exit", (code) =>
        resume(Effect.fail(new Error(`worker ${options.id} exited early (${code})`)))
      )
    }).pipe(Effect.timeout("60 seconds"), Effect.orDie),
    (child) =>
      Effect.sync(() => {
        child.kill("SIGKILL")
      })
  )
