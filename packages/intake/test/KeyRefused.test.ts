/**
 * A worker whose API key the service refuses (a wrong TERMINAL_CLOUD_API_KEY) is
 * misconfigured, and says so: `/ready` answers 503 naming the refused key, and callers get
 * 503 "the service refused this worker's API key" with `Retry-After` — never a 400, which
 * would tell them their request was wrong.
 */
import { describe, expect, it } from "@effect/vitest"
import { CallbackRegistration, ProtocolSettings } from "@tillflow/core"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { IntakeHttp, IntakeLocal, Stack } from "@tillflow/intake"
import { SimulatorServer } from "@tillflow/simulator"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { call, token } from "./support.js"

const simulator = SimulatorServer.layer({ seed: 11, port: 0 })

/** The service's client with a key the simulator never issued. */
const wrongKey = Layer.unwrapEffect(
  Effect.map(SimulatorServer.SimulatorInfo, (info) =>
    HttpTerminalCloud.layer(
      TerminalCloudConfig.make({
        apiKey: Redacted.make("not-a-key-the-service-issued"),
        baseUrl: new URL(info.baseUrl),
        transactionsUrl: new URL(info.transactionsUrl)
      })
    )
  )
)

const layer = IntakeHttp.serve(Redacted.make(token)).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Stack.workflowsLayerFor({ mcc: Option.none(), motoTerminal: Option.none() }),
      IntakeLocal.layer()
    ).pipe(Layer.provide(ProtocolSettings.layer({})))
  ),
  Layer.provideMerge(
    Layer.merge(
      wrongKey,
      Layer.succeed(Stack.Cloud, { kind: "remote", baseUrl: "", transactionsUrl: "", terminals: [] })
    )
  ),
  Layer.provideMerge(simulator),
  Layer.provideMerge(IntakeHttp.serverLayer({ host: "127.0.0.1", port: 0 })),
  Layer.provideMerge(Stack.receiverLayer),
  Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
  Layer.provideMerge(Stack.engineLayer),
  Layer.provideMerge(
    SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(Layer.provideMerge(TestDatabase.layer))
  )
)

describe("the service refuses this worker's API key", () => {
  it.layer(layer, { timeout: 60_000 })((it) => {
    it.effect("/ready is 503 naming the refused key; callers get 503 with Retry-After, never 400", () =>
      Effect.gen(function* () {
        const info = yield* SimulatorServer.SimulatorInfo
        const terminal = info.terminals[0]
        if (terminal === undefined) return yield* Effect.dieMessage("no terminal")

        const ready = yield* call("GET", "/ready", { token: null })
        expect(ready.status).toBe(503)
        expect(ready.retryAfter).toMatch(/^[0-9]+$/)
        expect(ready.json).toEqual(
          expect.objectContaining({
            _tag: "NotReady",
            store: "ok",
            service: expect.stringContaining("the service refused this worker's API key (403")
          })
        )

        const sale = (key: string, extra: Record<string, unknown> = {}) =>
          JSON.stringify({
            idempotencyKey: key,
            request: {
              operation: "sale",
              serial_number: terminal.serial_number,
              amount: "1000",
              currency: "EUR",
              ...extra
            }
          })
        const answers = [
          yield* call("GET", "/v1/devices"),
          yield* call("POST", "/v1/operations", { body: sale("refused-1") }),
          yield* call("POST", "/v1/operations", {
            body: sale("refused-2", { terminal_type: terminal.terminal_type })
          }),
          yield* call("POST", `/v1/terminals/${terminal.serial_number}/stop`, { body: "{}" }),
          yield* call("POST", "/v1/lifecycle/Reversal.Reverse", {
            body: JSON.stringify({
              payload: { requestId: "refused-3", originalGuid: "6a4f1b0e-9d7c-4e2a-8f3b-1c2d3e4f5a6b" }
            }),
            timeoutMs: 20_000
          })
        ]
        expect(
          answers.map((a) => ({
            status: a.status,
            retryAfter: a.retryAfter,
            refused:
              typeof a.json?.message === "string" &&
              a.json.message.includes("the service refused this worker's API key")
          }))
        ).toEqual(
          answers.map(() => ({ status: 503, retryAfter: expect.stringMatching(/^[0-9]+$/), refused: true }))
        )
      })
    )
  })
})
