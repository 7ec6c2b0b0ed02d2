/**
 * The peer section: tillflow beside DBOS Transact (`@dbos-inc/dbos-sdk`), the engine a
 * backend developer would pick instead, running the same workflow (10 durable steps,
 * each returning ~100 bytes of JSON: `internal/PeerWorkflow.ts`) on the same PostgreSQL,
 * each in its own fresh database and its own process, in interleaved rounds: steps/s
 * with 8 and with 64 executions in flight, the latency of one execution at a time (p50,
 * p99), Node CPU per step, and the statements and transactions each sends per step.
 */
import * as Child from "./internal/Child.js"
import * as Measure from "./internal/Measure.js"
import type * as PeerDrive from "./internal/PeerDrive.js"
import * as PeerWorkflow from "./internal/PeerWorkflow.js"
import * as Scratch from "./internal/Scratch.js"
import type * as Section from "./internal/Section.js"

const driven = (message: unknown): PeerDrive.Driven | string | undefined =>
  Child.field<PeerDrive.Driven>("driven")(message) ?? Child.field<string>("failed")(message)

const drive = async (child: Child.Child, command: PeerDrive.Drive): Promise<PeerDrive.Driven> => {
  child.send({ drive: command })
  const answer = await child.next(driven)
  if (typeof answer === "string") throw new Error(`a peer process failed: ${answer}`)
  return answer
}

type Engine = "tillflow" | "tillflow, Activity.make" | "DBOS"
type Mode = "8 in flight" | "64 in flight" | "one at a time"

interface Kept {
  readonly rate: Array<number>
  readonly cpuPerStep: Array<number>
  readonly statementsPerStep: Array<number>
  readonly commitsPerStep: Array<number>
  readonly p50: Array<number>
  readonly p99: Array<number>
}

const fmt = (values: ReadonlyArray<number>, digits = 2) => values.map((v) => v.toFixed(digits)).join(", ")

/** The section. */
export const section: Section.Section = {
  name: "peer",
  title: "Beside DBOS Transact (the peer)",
  run: (context) =>
    Scratch.using("peer_tillflow", (tillflowDb) =>
      Scratch.using("peer_tillflow_activity", (activityDb) =>
        Scratch.using("peer_dbos", async (dbosDb) => {
          const sizes: Record<Mode, { executions: number; inFlight: number }> = {
            "8 in flight": { executions: context.quick ? 40 : 80, inFlight: 8 },
            "64 in flight": { executions: context.quick ? 128 : 320, inFlight: 64 },
            "one at a time": { executions: context.quick ? 40 : 100, inFlight: 1 }
          }
          const children: Record<Engine, Child.Child> = {
            tillflow: Child.start("apps/bench/src/processes/PeerTillflowProcess.ts", {
              env: { DATABASE_URL: tillflowDb.url, POOL_SIZE: "10" },
              profileDir: context.profileDir,
              label: "peer-tillflow"
            }),
            "tillflow, Activity.make": Child.start("apps/bench/src/processes/PeerTillflowProcess.ts", {
              env: { DATABASE_URL: activityDb.url, POOL_SIZE: "10", PEER_STEP: "activity" },
              profileDir: context.profileDir,
              label: "peer-tillflow-activity"
            }),
            DBOS: Child.start("apps/bench/src/processes/PeerDbosProcess.ts", {
              env: { DATABASE_URL: dbosDb.url, POOL_SIZE: "10" },
              profileDir: context.profileDir,
              label: "peer-dbos"
            })
          }
          const kept = new Map<string, Kept>()
          const keep = (engine: Engine, mode: Mode): Kept => {
            const key = `${engine}, ${mode}`
            const existing = kept.get(key)
            if (existing !== undefined) return existing
            const fresh: Kept = {
              rate: [],
              cpuPerStep: [],
              statementsPerStep: [],
              commitsPerStep: [],
              p50: [],
              p99: []
            }
            kept.set(key, fresh)
            return fresh
          }
          try {
            await Promise.all([
              children.tillflow.next(Child.field("ready"), 120_000),
              children["tillflow, Activity.make"].next(Child.field("ready"), 120_000),
              children.DBOS.next(Child.field("ready"), 120_000)
            ])
            // PEER_ACTIVITY_FIRST=1 runs the Activity.make variant before tillflow's DurableStep one
            // in each round (to see whether the place in a round biases their A/B).
            const engines: ReadonlyArray<Engine> =
              process.env["PEER_ACTIVITY_FIRST"] === "1"
                ? ["DBOS", "tillflow, Activity.make", "tillflow"]
                : ["DBOS", "tillflow", "tillflow, Activity.make"]
            const modes: ReadonlyArray<Mode> = ["8 in flight", "64 in flight", "one at a time"]
            context.log(
              `peer: ${sizes["8 in flight"].executions} executions at 8 in flight, ${sizes["64 in flight"].executions} at 64, ` +
                `${sizes["one at a time"].executions} one at a time, ${PeerWorkflow.steps} steps each, per round`
            )
            const cases: Array<Measure.Case> = modes.flatMap((mode) =>
              engines.map((engine) => ({
                name: `${engine}, ${mode}`,
                run: async (round: number) => {
                  const result = await drive(children[engine], {
                    ...sizes[mode],
                    prefix: `${mode.replace(/ /g, "")}-${round}`
                  })
                  if (round < context.rounds) {
                    const k = keep(engine, mode)
                    k.rate.push(result.steps / result.seconds)
                    k.cpuPerStep.push(result.cpuMs / result.steps)
                    k.statementsPerStep.push(result.statements / result.steps)
                    k.commitsPerStep.push(result.commits / result.steps)
                    k.p50.push(Measure.percentile(result.latencies, 50))
                    k.p99.push(Measure.percentile(result.latencies, 99))
                  }
                  return mode === "one at a time"
                    ? Measure.percentile(result.latencies, 50)
                    : result.steps / result.seconds
                }
              }))
            )
            await Measure.interleave(context.rounds, cases, context.log, { warmup: 1 })
            const of = (engine: Engine, mode: Mode) => keep(engine, mode)
            const figures: Array<Measure.Figure> = [
              {
                section: "peer",
                name: "durable steps, 8 executions in flight (tillflow)",
                unit: "steps/s",
                rounds: of("tillflow", "8 in flight").rate,
                baseline: {
                  name: "DBOS Transact 5.3.0, the same workflow",
                  rounds: of("DBOS", "8 in flight").rate
                },
                target: { _tag: "RatioAtLeast", ratio: 1.5 }
              },
              {
                section: "peer",
                name: "durable steps, 64 executions in flight (tillflow)",
                unit: "steps/s",
                rounds: of("tillflow", "64 in flight").rate,
                baseline: {
                  name: "DBOS Transact 5.3.0, the same workflow",
                  rounds: of("DBOS", "64 in flight").rate
                },
                target: { _tag: "RatioAtLeast", ratio: 2 }
              },
              {
                section: "peer",
                name: "latency of one execution at a time, p50 (tillflow)",
                unit: "ms",
                rounds: of("tillflow", "one at a time").p50,
                baseline: { name: "DBOS p50", rounds: of("DBOS", "one at a time").p50 },
                target: { _tag: "RatioAtMost", ratio: 1 }
              },
              {
                section: "peer",
                name: "latency of one execution at a time, p99 (tillflow)",
                unit: "ms",
                rounds: of("tillflow", "one at a time").p99,
                baseline: { name: "DBOS p99", rounds: of("DBOS", "one at a time").p99 },
                target: { _tag: "RatioAtMost", ratio: 1 }
              },
              {
                section: "peer",
                name: "Node CPU per durable step, 8 in flight, warm (tillflow)",
                unit: "ms",
                rounds: of("tillflow", "8 in flight").cpuPerStep,
                baseline: { name: "DBOS, the same", rounds: of("DBOS", "8 in flight").cpuPerStep },
                target: { _tag: "AtMost", value: 0.3 }
              },
              {
                section: "peer",
                name: "Node CPU per durable step, 8 in flight, warm (tillflow, DurableStep)",
                unit: "ms",
                rounds: of("tillflow", "8 in flight").cpuPerStep,
                baseline: {
                  name: "tillflow, Activity.make, the same",
                  rounds: of("tillflow, Activity.make", "8 in flight").cpuPerStep
                }
              },
              {
                section: "peer",
                name: "durable steps, 8 executions in flight (tillflow, DurableStep)",
                unit: "steps/s",
                rounds: of("tillflow", "8 in flight").rate,
                baseline: {
                  name: "tillflow, Activity.make, the same",
                  rounds: of("tillflow, Activity.make", "8 in flight").rate
                }
              }
            ]
            const perStep = [
              "| engine | in flight | steps/s (median) | Node CPU per step, ms (rounds) | statements per step | transactions per step |",
              "|---|---|---:|---|---:|---:|",
              ...modes.flatMap((mode) =>
                engines.map((engine) => {
                  const k = of(engine, mode)
                  return `| ${engine} | ${mode} | ${Measure.formatNumber(Measure.median(k.rate))} | ${fmt(k.cpuPerStep, 3)} | ${Measure.median(
                    k.statementsPerStep
                  ).toFixed(2)} | ${Measure.median(k.commitsPerStep).toFixed(2)} |`
                })
              )
            ].join("\n")
            const details = [
              `Per round, for each engine in turn (DBOS first, then tillflow, for each load): ${sizes["8 in flight"].executions} ` +
                `executions with 8 in flight, ${sizes["64 in flight"].executions} with 64 in flight, ` +
                `${sizes["one at a time"].executions} one at a time, of a workflow of ${PeerWorkflow.steps} sequential durable steps ` +
                "each returning a ~100-byte JSON object (`internal/PeerWorkflow.ts`), one warm-up round first. Each engine runs in " +
                "its own process (`processes/PeerTillflowProcess.ts`, `processes/PeerDbosProcess.ts`) on its own fresh database " +
                "of the same PostgreSQL, with a pool of 10 connections (DBOS's default). tillflow: `Workflow.make` + " +
                '`DurableStep` ("tillflow, Activity.make": the same workflow with `Activity.make` inline, in a process and database of its own), the durable engine, the SQL execution queue and a worker of concurrency 64; each execution is ' +
                "started with `execute` and awaited (a free slot of the worker in the same process: its queue row inserted leased to it and run at once, start leased; otherwise enqueued, claimed, run). DBOS: " +
                "`DBOS.registerWorkflow` + `DBOS.runStep`, each execution started with `DBOS.startWorkflow` under its own " +
                "workflow id and awaited (it runs in the calling process at once). steps/s is steps over the wall time from the " +
                "first start to the last result; latency is start → result of each execution; Node CPU is `process.cpuUsage` of " +
                "the engine's process over the round; statements are the `pg` driver's `query` calls in that process, and " +
                "transactions are those outside `BEGIN … COMMIT` plus each `COMMIT` (both engines use `pg`).",
              "",
              perStep,
              "",
              "| engine | p50 ms (rounds) | p99 ms (rounds) |",
              "|---|---|---|",
              ...engines.map(
                (engine) =>
                  `| ${engine} | ${fmt(of(engine, "one at a time").p50, 1)} | ${fmt(of(engine, "one at a time").p99, 1)} |`
              ),
              "",
              Measure.roundsTable(figures)
            ].join("\n")
            return { figures, details }
          } finally {
            await Promise.all([
              children.tillflow.stop(),
              children["tillflow, Activity.make"].stop(),
              children.DBOS.stop()
            ])
          }
        })
      )
    )
}
