/**
 * Capture once across worker PROCESSES: two `node` processes, each running tillflow's
 * `DurableEngine` and one `EngineWorker` on the same PostgreSQL database and the HTTP
 * client to the simulator (served by this test process over real sockets). Captures of
 * one pre-authorization are started from this process and claimed by the workers; the
 * simulator's counters say how many captures reached the gateway: one.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  LifecycleEvent,
  Money,
  PreAuthorizationWorkflow,
  TransactionHistory
} from "@tillflow/core"
import { DurableEngine, EventStore } from "@tillflow/engine"
import { Simulator, SimulatorServer } from "@tillflow/simulator"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as F from "./Fixtures.js"
import { instantTimings, startProcess } from "@tillflow/simulator/testing"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../../..")
const script = path.join(here, "support", "lifecycle-worker.ts")
const eur = (minor: bigint) => Money.make(minor, "EUR")

/** Starts a worker process, waits for its `ready` line; killed with the scope. */
const startWorker = (id: string, env: Record<string, string>) => startProcess({ script, cwd: root, id, env })

const system = SimulatorServer.layer({ seed: 21, statusPort: 0, timings: instantTimings }).pipe(
  Layer.merge(
    DurableEngine.layer({ pollInterval: "100 millis" }).pipe(Layer.provideMerge(SqlExecutionQueue.layer))
  ),
  Layer.provideMerge(TestDatabase.layer)
)

// Two processes share one database: PostgreSQL only (DATABASE_URL), as in CI. Where
// TILLFLOW_REQUIRE_POSTGRES=1 (CI) the test runs and fails without a server, never skips.
const postgres = TestDatabase.postgresExpected

describe("capture once across two worker processes", () => {
  it.live.skipIf(!postgres)(
    "one worker's capture is in flight; the other process, reading the shared history, refuses its capture; one gateway call",
    () =>
      Effect.gen(function* () {
        const database = yield* TestDatabase.TestDatabase
        if (Option.isNone(database.url))
          return yield* Effect.dieMessage("this test needs PostgreSQL: set DATABASE_URL")
        const info = yield* SimulatorServer.SimulatorInfo
        const sim = yield* Simulator.Simulator
        const store = yield* EventStore.EventStore
        const env = {
          DATABASE_URL: Redacted.value(database.url.value),
          SIM_BASE_URL: info.baseUrl,
          SIM_TRANSACTIONS_URL: info.transactionsUrl,
          SIM_API_KEY: info.apiKey
        }
        const cloud = yield* F.client(
          { baseUrl: new URL(info.baseUrl), transactionsUrl: new URL(info.transactionsUrl) },
          { apiKey: Redacted.make(info.apiKey) }
        )
        const first = info.terminals[0]
        if (first === undefined) return yield* Effect.dieMessage("no terminal")
        const terminal = {
          serialNumber: Identifiers.SerialNumber.make(first.serial_number),
          terminalType: Identifiers.TerminalType.make(first.terminal_type)
        }

        /** A pre-authorization on the terminal, its lifecycle opened in PostgreSQL. */
        const preAuthorize = (amount: Money.Money) =>
          Effect.gen(function* () {
            const accepted = yield* cloud.sendTransaction({
              operation: "preAuthorization",
              ...terminal,
              amount,
              transactionReference: yield* Identifiers.makeTransactionReference
            })
            yield* sim.admin.settle(10_000)
            const outcome = yield* cloud.transactionResult(
              accepted.transactionResultId ?? Identifiers.TransactionResultId.make("?")
            )
            if (outcome._tag !== "Ready") return yield* Effect.dieMessage("no result")
            const authorised = yield* TransactionHistory.preAuthorizationFromResult(outcome.result, {
              mcc: "7011",
              serialNumber: terminal.serialNumber,
              terminalType: terminal.terminalType
            })
            yield* TransactionHistory.openPreAuthorization(store, authorised)
            return Identifiers.Guid.make(authorised.guid)
          })
        const captures = Effect.map(sim.admin.counters, (c) =>
          Object.values(
            (c as { readonly merchants: Record<string, { readonly captures: number }> }).merchants
          ).reduce((n, m) => n + m.captures, 0)
        )
        const capture = (originalGuid: Identifiers.Guid, requestId: string) =>
          Effect.either(
            PreAuthorizationWorkflow.Capture.execute({ requestId, originalGuid, amount: eur(9000n) })
          )

        // 1. The first capture's POST is held 5 s by the simulator, so the worker that claimed
        //    it (one execution at a time) is busy: the second capture goes to the other process.
        const guid = yield* preAuthorize(eur(10000n))
        yield* startWorker("worker-a", env)
        yield* startWorker("worker-b", env)
        yield* sim.admin.addFault({
          kind: "delay",
          method: "POST",
          path: "/preauthorization/capture",
          delayMs: 5000
        })
        const a = yield* Effect.fork(capture(guid, "cap-a"))
        while ((yield* sim.admin.faults).length > 0) yield* Effect.sleep("20 millis")
        const b = yield* capture(guid, "cap-b")
        expect(Either.isLeft(b) ? b.left._tag : "Captured").toBe("CaptureAlreadyDone")
        expect(Either.isLeft(b) ? b.left.message : "").toContain("already being captured by request cap-a")
        const winner = yield* Fiber.join(a)
        expect(Either.isRight(winner) ? winner.right.total : undefined).toEqual(eur(9000n))
        expect(yield* captures).toBe(1)

        // 2. Both workers idle; four captures of another pre-authorization at once.
        const second = yield* preAuthorize(eur(10100n))
        const results = yield* Effect.all(
          ["cap-1", "cap-2", "cap-3", "cap-4"].map((requestId) => capture(second, requestId)),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight)).toHaveLength(1)
        expect(results.filter(Either.isLeft).map((r) => (Either.isLeft(r) ? r.left._tag : ""))).toEqual([
          "CaptureAlreadyDone",
          "CaptureAlreadyDone",
          "CaptureAlreadyDone"
        ])
        expect(yield* captures).toBe(2)
        const types = (yield* store.readStream(LifecycleEvent.transactionStream(second))).map((e) => e.type)
        expect(types.filter((t) => t === "CaptureRequested")).toHaveLength(1)
      }).pipe(Effect.scoped, Effect.provide(system)),
    { timeout: 180_000 }
  )
})
