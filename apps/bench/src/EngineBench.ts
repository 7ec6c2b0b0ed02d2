/**
 * The workflow engine: durable steps per second with 8 executions in flight, against the
 * raw 8-connection single-row insert rate (each durable step is one append, so that is
 * its ceiling on this machine), and the same load spread over two worker processes
 * sharing one PostgreSQL, which must not lower it. The workers are child processes
 * (`processes/EngineProcess.ts`); the raw baseline runs in this process between them.
 */
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import * as Raw from "./internal/Raw.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"
import * as StepsWorkflow from "./internal/StepsWorkflow.js"

interface Driven {
  readonly executions: number
  readonly steps: number
  readonly seconds: number
  readonly cpuMs: number
}

const driven = (message: unknown): Driven | string | undefined =>
  Child.field<Driven>("driven")(message) ?? Child.field<string>("failed")(message)

const drive = async (child: Child.Child, command: Record<string, unknown>): Promise<Driven> => {
  child.send({ drive: command })
  const answer = await child.next(driven)
  if (typeof answer === "string") throw new Error(`a worker process failed: ${answer}`)
  return answer
}

/** The section. */
export const section: Section.Section = {
  name: "engine",
  title: "Workflow engine",
  run: (context) =>
    Scratch.using("engine", async (scratch) => {
      const steps = context.quick ? 20 : 50
      const executions = context.quick ? 16 : 32
      const perConnection = context.quick ? 60 : 200
      const env = { DATABASE_URL: scratch.url }
      const first = Child.start("apps/bench/src/processes/EngineProcess.ts", {
        env: {
          ...env,
          WORKFLOWS: `${StepsWorkflow.Single.name},${StepsWorkflow.Shared.name}`,
          WORKER_ID: "bench-a"
        },
        profileDir: context.profileDir,
        label: "engine-a"
      })
      let second: Child.Child | undefined
      const cpuPerStep: Array<number> = []
      const raw = await Raw.connect(scratch.url, 8)
      try {
        await first.next(Child.field("ready"), 120_000)
        second = Child.start("apps/bench/src/processes/EngineProcess.ts", {
          env: { ...env, WORKFLOWS: StepsWorkflow.Shared.name, WORKER_ID: "bench-b" },
          profileDir: context.profileDir,
          label: "engine-b"
        })
        const other = second
        await other.next(Child.field("ready"), 120_000)
        // A warm-up execution in each process (JIT, pools, prepared plans).
        await Promise.all([
          drive(first, {
            workflow: StepsWorkflow.Shared.name,
            executions: 4,
            inFlight: 4,
            steps,
            prefix: "warm-a"
          }),
          drive(other, {
            workflow: StepsWorkflow.Shared.name,
            executions: 4,
            inFlight: 4,
            steps,
            prefix: "warm-b"
          })
        ])
        context.log(`engine: ${executions} executions of ${steps} steps per round, 8 in flight`)
        const values = await Measure.interleave(
          context.rounds,
          [
            { name: "raw 8 connections", run: () => Raw.parallelSingleInserts(raw, perConnection) },
            {
              name: "one worker process",
              run: async (round) => {
                const result = await drive(first, {
                  workflow: StepsWorkflow.Single.name,
                  executions,
                  inFlight: 8,
                  steps,
                  prefix: `single-${round}`
                })
                if (round < context.rounds) cpuPerStep.push(result.cpuMs / result.steps)
                return result.steps / result.seconds
              }
            },
            {
              name: "two worker processes",
              run: async (round) => {
                const started = performance.now()
                const half = {
                  workflow: StepsWorkflow.Shared.name,
                  executions: executions / 2,
                  inFlight: 4,
                  steps
                }
                const [a, b] = await Promise.all([
                  drive(first, { ...half, prefix: `shared-a-${round}` }),
                  drive(other, { ...half, prefix: `shared-b-${round}` })
                ])
                return (a.steps + b.steps) / ((performance.now() - started) / 1000)
              }
            }
          ],
          context.log,
          { warmup: 1 }
        )
        const rawRounds = values.get("raw 8 connections") ?? []
        const oneRounds = values.get("one worker process") ?? []
        const figures: Array<Measure.Figure> = [
          {
            section: "engine",
            name: "durable steps, 8 executions in flight, one worker process",
            unit: "steps/s",
            rounds: oneRounds,
            baseline: { name: "pg: single-row INSERT per tx on 8 connections", rounds: rawRounds },
            target: { _tag: "RatioAtLeast", ratio: 0.6 }
          },
          {
            section: "engine",
            name: "durable steps, 8 in flight over two worker processes (4 + 4)",
            unit: "steps/s",
            rounds: values.get("two worker processes") ?? [],
            baseline: { name: "the same with one worker process", rounds: oneRounds },
            target: { _tag: "RatioAtLeast", ratio: 1 }
          }
        ]
        const details = [
          `Per round: ${executions} executions of a workflow of ${steps} activities (each activity's result is one ` +
            "append of `ActivityCompleted` to the execution's stream, with an exact expected version), 8 in flight at a " +
            "time; steps/s counts activities over the wall time from the first start to the last completion, so the " +
            "executions' own start, claim, load and completion are paid out of it. Each worker process has the engine, " +
            "the SQL execution queue and a worker of concurrency 8 on a pool of 8 connections; it starts the executions " +
            "it drives and awaits them. One process: 8 in flight in process A, on a workflow only A registers. Two " +
            "processes: 4 in flight in A and 4 in B at once, on a workflow both register, so either may claim any of " +
            `them. Baseline: 8 \`pg\` connections, each doing ${perConnection} \`BEGIN; INSERT one row; COMMIT\` into a ` +
            "table shaped like `events`, in the same database.",
          "",
          `CPU of the worker process per durable step (process.cpuUsage over the one-process rounds): ` +
            `${cpuPerStep.map((v) => v.toFixed(2)).join(", ")} ms (median ${Measure.median(cpuPerStep).toFixed(2)} ms).`,
          "",
          Measure.roundsTable(figures)
        ].join("\n")
        return { figures, details }
      } finally {
        await Promise.all([first.stop(), second?.stop()])
        await raw.close()
      }
    })
}
