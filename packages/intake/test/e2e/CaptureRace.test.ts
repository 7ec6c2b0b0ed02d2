/**
 * End to end with real processes: two worker processes on one PostgreSQL database race a
 * capture of one pre-authorization sent to its terminal against a terminal-less capture of
 * it. Both are decided from the pre-authorization's history and record their request at
 * the version they read, so exactly one capture is sent and recorded; the other gets the
 * typed refusal, nothing sent.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  LifecycleEvent,
  Money,
  PreAuthorizationWorkflow,
  TerminalOperations,
  TerminalOutcomeRecorder
} from "@tillflow/core"
import { DurableEngine, EventStore } from "@tillflow/engine"
import { Simulator, SimulatorServer } from "@tillflow/simulator"
import { startProcess } from "@tillflow/simulator/testing"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../../../..")
const script = path.join(here, "capture-worker.ts")

const quick = {
  WaitingForCard: 300,
  PinInput: 100,
  WaitingHostConnect: 50,
  WaitingHostSend: 50,
  WaitingHostReceive: 100,
  PrintingMerchantReceipt: 50,
  Reboot: 100
}

const system = SimulatorServer.layer({ seed: 19, statusPort: 0, timings: quick }).pipe(
  Layer.merge(
    DurableEngine.layer({ pollInterval: "100 millis" }).pipe(Layer.provideMerge(SqlExecutionQueue.layer))
  ),
  Layer.provideMerge(TestDatabase.layer)
)

// Two processes share one database: PostgreSQL only (DATABASE_URL), as in CI. Where
// TILLFLOW_REQUIRE_POSTGRES=1 (CI) the test runs and fails without a server, never skips.
const postgres = TestDatabase.postgresExpected

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

describe("end to end: a terminal capture and a terminal-less capture race", () => {
  it.live.skipIf(!postgres)(
    "two worker processes: exactly one capture is sent and recorded, the other is refused CaptureAlreadyDone",
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
        yield* Effect.all(
          [
            startProcess({ script, cwd: root, id: "worker-a", env }),
            startProcess({ script, cwd: root, id: "worker-b", env })
          ],
          { concurrency: 2 }
        )

        const amount = Money.make(10000n, "EUR")
        const authorised = yield* TerminalOperations.preAuthorization(
          { ...terminal, amount },
          { idempotencyKey: "race-preauth", delivery: "polling" }
        ).pipe(Effect.timeout("90 seconds"))
        expect(authorised._tag).toBe("Approved")
        const guid = Identifiers.Guid.make(authorised.facts.efttransactionID ?? "")
        const reference = Schema.decodeSync(Identifiers.TransactionReference)(
          authorised.facts.transactionReference ?? ""
        )
        // As the intake does before a terminal-less operation: the approved outcome opens its history.
        yield* TerminalOutcomeRecorder.catchUp({ mcc: Option.some("7011") })

        const [viaTerminal, terminalLess] = yield* Effect.all(
          [
            Effect.exit(
              TerminalOperations.preAuthorizationCapture(
                { ...terminal, originalTransactionId: guid, amount },
                {
                  idempotencyKey: "race-capture-terminal",
                  delivery: "polling",
                  originalTransactionReference: reference
                }
              )
            ),
            Effect.exit(
              PreAuthorizationWorkflow.Capture.execute({
                requestId: "race-capture-tl",
                originalGuid: guid,
                amount
              })
            )
          ],
          { concurrency: 2 }
        ).pipe(Effect.timeout("120 seconds"))

        expect([Exit.isSuccess(viaTerminal), Exit.isSuccess(terminalLess)].filter(Boolean)).toHaveLength(1)
        const terminalRefusal = failureOf(viaTerminal)
        const terminalLessRefusal = failureOf(terminalLess)
        if (Exit.isSuccess(viaTerminal)) {
          expect(viaTerminal.value._tag).toBe("Approved")
          expect(terminalLessRefusal?._tag).toBe("CaptureAlreadyDone")
        } else {
          expect(terminalRefusal).toMatchObject({ _tag: "OperationRefused", error: "CaptureAlreadyDone" })
        }

        const counters = (yield* sim.admin.counters) as {
          readonly terminals: Record<string, { readonly captures: number }>
        }
        const captures = Object.values(counters.terminals).reduce((sum, t) => sum + t.captures, 0)
        expect(captures).toBe(1)
        const store = yield* EventStore.EventStore
        const history = yield* store.readStream(LifecycleEvent.transactionStream(guid))
        expect(history.filter((e) => e.type === "PreAuthorizationCaptured")).toHaveLength(1)
        expect(history.filter((e) => e.type === "CaptureRequested")).toHaveLength(1)
      }).pipe(Effect.scoped, Effect.provide(system)),
    { timeout: 240_000 }
  )
})
