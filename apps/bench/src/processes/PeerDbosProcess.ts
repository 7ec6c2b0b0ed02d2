/**
 * DBOS Transact's process of the peer section: `@dbos-inc/dbos-sdk` launched on the
 * PostgreSQL of DATABASE_URL as its system database (its own pool, POOL_SIZE connections,
 * 10 by default: DBOS's default), running the peer workflow (`internal/PeerWorkflow.ts`)
 * written as DBOS's documentation writes one: a registered workflow calling
 * `DBOS.runStep` for each step. Each execution is started with its own workflow id and
 * awaited, as tillflow's are; driven as `internal/PeerDrive.ts` says. DBOS keeps its state
 * in globals, hence a process of its own.
 */
import "../internal/StatementCount.js"
import { DBOS } from "@dbos-inc/dbos-sdk"
import * as PeerDrive from "../internal/PeerDrive.js"
import * as PeerWorkflow from "../internal/PeerWorkflow.js"

const url = process.env["DATABASE_URL"] ?? ""
const pool = Number(process.env["POOL_SIZE"] ?? "10")

const stepsWorkflow = DBOS.registerWorkflow(
  async (id: string): Promise<number> => {
    let total = 0
    for (let i = 0; i < PeerWorkflow.steps; i++) {
      const result = await DBOS.runStep(() => Promise.resolve(PeerWorkflow.value(id, i)), {
        name: `step-${i}`
      })
      total += result.step
    }
    return total
  },
  { name: "BenchPeerSteps" }
)

const main = async () => {
  DBOS.setConfig({
    name: "tillflow-bench-peer",
    systemDatabaseUrl: url,
    systemDatabasePoolSize: pool,
    logLevel: "error"
  })
  await DBOS.launch()
  PeerDrive.serve(async (id) => {
    const handle = await DBOS.startWorkflow(stepsWorkflow, { workflowID: id })(id)
    return handle.getResult()
  })
}

main().catch((error: unknown) => {
  process.stderr.write(
    `DBOS peer process failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`
  )
  process.exit(1)
})

const stop = () => {
  DBOS.shutdown().finally(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
