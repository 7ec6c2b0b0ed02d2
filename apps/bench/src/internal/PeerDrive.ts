/**
 * How both child processes of the peer section drive their engine, the same way: on
 * `{"drive": {executions, inFlight, prefix}}` they run that many executions of the peer
 * workflow, `inFlight` at a time, each started and awaited in the process, and answer
 * `{"driven": …}` with the wall time, the process's CPU time, the statements and
 * transactions its `pg` driver sent meanwhile, and each execution's latency.
 * `{"profile": "start"}` / `{"profile": "FILE"}` start V8's CPU profiler in the process and
 * stop it, writing a `.cpuprofile` (only the window between them: warm code, no start-up).
 */
import * as fs from "node:fs"
import * as inspector from "node:inspector"
import { performance } from "node:perf_hooks"
import * as Child from "./Child.js"
import * as PeerWorkflow from "./PeerWorkflow.js"
import * as StatementCount from "./StatementCount.js"

/** A command. */
export interface Drive {
  readonly executions: number
  readonly inFlight: number
  readonly prefix: string
}

/** The answer. */
export interface Driven {
  readonly executions: number
  readonly steps: number
  readonly seconds: number
  readonly cpuMs: number
  readonly statements: number
  readonly commits: number
  /** Milliseconds from start to result, one per execution. */
  readonly latencies: ReadonlyArray<number>
}

/** Runs `command` with `run(executionId)` starting one execution and resolving with its result. */
export const drive = async (run: (id: string) => Promise<unknown>, command: Drive): Promise<Driven> => {
  const latencies: Array<number> = []
  let next = 0
  StatementCount.take()
  const cpu = process.cpuUsage()
  const started = performance.now()
  const lane = async () => {
    while (next < command.executions) {
      const id = `${command.prefix}-${next++}`
      const begun = performance.now()
      await run(id)
      latencies.push(performance.now() - begun)
    }
  }
  await Promise.all(Array.from({ length: Math.min(command.inFlight, command.executions) }, lane))
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const counted = StatementCount.take()
  return {
    executions: command.executions,
    steps: command.executions * PeerWorkflow.steps,
    seconds,
    cpuMs: (used.user + used.system) / 1000,
    statements: counted.statements,
    commits: counted.commits,
    latencies
  }
}

/** Answers drive commands on stdin with `run`, one at a time, after telling `{"ready": true}`. */
export const serve = (run: (id: string) => Promise<unknown>): void => {
  Child.tell({ ready: true })
  const session = new inspector.Session()
  session.connect()
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (error, result) => (error === null ? resolve(result) : reject(error)))
    )
  Child.onCommand((command) => {
    const profile = Child.field<string>("profile")(command)
    if (profile !== undefined) {
      const done =
        profile === "start"
          ? post("Profiler.enable").then(() => post("Profiler.start"))
          : post("Profiler.stop").then((result) =>
              fs.writeFileSync(profile, JSON.stringify((result as { profile: unknown }).profile))
            )
      done.then(
        () => Child.tell({ profiled: profile }),
        (error: unknown) => Child.tell({ failed: String(error) })
      )
      return
    }
    const body = Child.field<Drive>("drive")(command)
    if (body === undefined) return
    drive(run, body).then(
      (driven) => Child.tell({ driven }),
      (error: unknown) =>
        Child.tell({ failed: error instanceof Error ? (error.stack ?? error.message) : String(error) })
    )
  })
}
