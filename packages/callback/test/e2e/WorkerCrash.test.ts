/**
 * End to end with real processes: a worker process is killed (SIGKILL) while its POST of a
 * sale is in flight; another worker process takes the execution over from PostgreSQL and
 * finishes it. Exactly one charge, whatever the simulator did with the cut request.
 */
import { describe, expect, it } from "@effect/vitest"
import { Identifiers, Money, TerminalOperations } from "@tillflow/core"
import { DurableEngine } from "@tillflow/engine"
import { Simulator, SimulatorServer } from "@tillflow/simulator"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { ChildProcess } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { everything, quick } from "./harness.js"
import { startProcess } from "@tillflow/simulator/testing"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../../../..")
const script = path.join(here, "worker-main.ts")

/** Starts a worker process, waits for its `ready` line; killed with the scope. */
const startWorker = (id: string, env: Record<string, string>) => startProcess({ script, cwd: root, id, env })

const killed = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  })

const system = SimulatorServer.layer({
  seed: 11,
  statusPort: 0,
  timings: { ...quick, WaitingForCard: 1500 }
}).pipe(
  Layer.merge(
    DurableEngine.layer({ pollInterval: "100 millis" }).pipe(Layer.provideMerge(SqlExecutionQueue.layer))
  ),
  Layer.provideMerge(TestDatabase.layer)
)

// Two processes share one database: PostgreSQL only (DATABASE_URL), as in CI. Where
// TILLFLOW_REQUIRE_POSTGRES=1 (CI) the test runs and fails without a server, never skips.
const postgres = TestDatabase.postgresExpected

describe("end to end: worker killed mid-payment", () => {
  it.live.skipIf(!postgres)(
    "SIGKILL during the POST: another worker process resumes, exactly one charge",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (database.kind !== "postgres" || Option.isNone(database.url)) {
          return yield* Effect.dieMessage("this test needs PostgreSQL: set DATABASE_URL")
        }
        const info = yield* SimulatorServer.SimulatorInfo
        const sim = yield* Simulator.Simulator
        const env = {
          DATABASE_URL: Redacted.value(database.url.value),
          SIM_BASE_URL: info.baseUrl,
          SIM_TRANSACTIONS_URL: info.transactionsUrl,
          SIM_API_KEY: info.apiKey
        }
        const first = info.terminals[0]
        if (first === undefined) return yield* Effect.dieMessage("no terminal")
        const terminal = {
          serialNumber: Identifiers.SerialNumber.make(first.serial_number),
          terminalType: Identifiers.TerminalType.make(first.terminal_type)
        }
        const request = { ...terminal, amount: Money.make(4200n, "EUR") }
        const options = { idempotencyKey: "crash-1", delivery: "polling", deadline: "5 minutes" } as const

        const a = yield* startWorker("worker-a", env)
        // The sale's POST will hang in the simulator for 3 s before it is processed.
        yield* sim.admin.addFault({ kind: "delay", method: "POST", path: "/transactions", delayMs: 3000 })
        const caller = yield* Effect.fork(TerminalOperations.sale(request, options))
        // The fault is taken when the request arrives: the POST is now in flight.
        while ((yield* sim.admin.faults).length > 0) yield* Effect.sleep("20 millis")
        yield* killed(a)

        yield* startWorker("worker-b", env)
        const exit = yield* Fiber.join(caller).pipe(Effect.timeout("90 seconds"), Effect.exit)
        expect(Exit.isSuccess(exit) ? exit.value._tag : Cause.pretty(exit.cause)).toBe("Approved")

        const counters = (yield* sim.admin.counters) as {
          readonly terminals: Record<string, { readonly charges: number }>
        }
        expect(counters.terminals[first.serial_number]?.charges).toBe(1)
        const types = (yield* everything).filter((e) => e.streamId.startsWith("payment-")).map((e) => e.type)
        // The second worker did not resend the attempt whose POST was cut: it reconciled it.
        expect(types).toContain("AttemptOutcomeUnknown")
        expect(types.filter((t) => t === "PaymentAuthorised")).toHaveLength(1)
      }).pipe(Effect.scoped, Effect.provide(system)),
    { timeout: 180_000 }
  )
})
