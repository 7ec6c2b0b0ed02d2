/**
 * Processes for end-to-end tests: the worker and the command line started as real
 * processes (node with the tsx loader, so signals reach them directly), their output
 * collected, waited on by pattern, and killed if a test leaves them running.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/**
 * A build folder of a test's own for the worker's launcher (`TILLFLOW_WORKER_BUILD_DIR`):
 * under the repository's `apps/worker/build`, where the bundle finds PGlite (external) in
 * the repository's node_modules.
 */
export const testBuildDir = (): string => {
  const parent = Path.join(root, "apps/worker/build")
  Fs.mkdirSync(parent, { recursive: true })
  return Fs.mkdtempSync(Path.join(parent, "test-"))
}

/** A running process and what it printed so far. */
export interface Running {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the first match of `pattern` in stdout, or stderr (fails if the process exits first). */
  readonly waitFor: (
    pattern: RegExp,
    timeoutMs: number,
    stream?: "stdout" | "stderr"
  ) => Effect.Effect<RegExpMatchArray, Error>
  /** Sends SIGTERM and waits for the exit code. */
  readonly terminate: (timeoutMs: number) => Effect.Effect<number | null, Error>
}

/** Environment without the variables that would point a child elsewhere. */
export const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env)) {
    if (key.startsWith("TILLFLOW_") || key.startsWith("TERMINAL_CLOUD_") || key === "DATABASE_URL")
      delete env[key]
  }
  return { ...env, ...extra }
}

/**
 * Starts `node --import tsx <script> ...args` (plain `node` for a `.mjs` script, such as the
 * worker's launcher), killed when the scope closes if still running.
 */
export const start = (
  script: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv
): Effect.Effect<Running, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const loader = script.endsWith(".mjs") ? [] : ["--conditions=@tillflow/source", "--import", "tsx"]
      const child = spawn(process.execPath, [...loader, script, ...args], {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      let err = ""
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk
      })
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        err += chunk
      })
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      const running: Running = {
        child,
        stdout: () => out,
        stderr: () => err,
        waitFor: (pattern, timeoutMs, stream = "stdout") =>
          Effect.async<RegExpMatchArray, Error>((resume) => {
            const text = () => (stream === "stdout" ? out : err)
            const check = () => {
              const match = text().match(pattern)
              if (match !== null) {
                clearInterval(timer)
                resume(Effect.succeed(match))
              }
            }
            const timer = setInterval(check, 100)
            void exited.then((code) => {
              clearInterval(timer)
              const match = text().match(pattern)
              resume(
                match !== null
                  ? Effect.succeed(match)
                  : Effect.fail(new Error(`exited (${code}) before printing ${pattern}:\n${out}\n${err}`))
              )
            })
            return Effect.sync(() => clearInterval(timer))
          }).pipe(
            Effect.timeoutFail({
              duration: timeoutMs,
              onTimeout: () => new Error(`no ${pattern} within ${timeoutMs} ms:\n${out}\n${err}`)
            })
          ),
        terminate: (timeoutMs) =>
          Effect.promise(() => {
            child.kill("SIGTERM")
            return exited
          }).pipe(
            Effect.timeoutFail({
              duration: timeoutMs,
              onTimeout: () => new Error(`no exit ${timeoutMs} ms after SIGTERM`)
            })
          )
      }
      return running
    }),
    (running) =>
      Effect.sync(() => {
        if (running.child.exitCode === null && running.child.signalCode === null)
          running.child.kill("SIGKILL")
      })
  )

/** Runs a process to its end: exit code, stdout, stderr. */
export const runToEnd = (
  script: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  timeoutMs: number
): Effect.Effect<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }, Error> =>
  Effect.scoped(
    Effect.gen(function* () {
      const running = yield* start(script, args, env)
      const code = yield* Effect.promise(
        () =>
          new Promise<number | null>((resolve) => {
            if (running.child.exitCode !== null) resolve(running.child.exitCode)
            else running.child.on("exit", (c) => resolve(c))
          })
      ).pipe(
        Effect.timeoutFail({
          duration: timeoutMs,
          onTimeout: () =>
            new Error(`${script} ${args.join(" ")} did not end in ${timeoutMs} ms:\n${running.stderr()}`)
        })
      )
      return { code, stdout: running.stdout(), stderr: running.stderr() }
    })
  )
