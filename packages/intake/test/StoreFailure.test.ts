/**
 * A store that fails (in process, on any database: the appends refused as an unreachable
 * PostgreSQL refuses them) is answered 503 with a JSON reason and `Retry-After` — where the
 * engine gives up on it with a defect too, which the platform alone would answer 500 with
 * an empty body. apps/worker's StoreOutage test cuts a real PostgreSQL instead.
 */
import { expect, layer } from "@effect/vitest"
import { CallbackRegistration, ProtocolSettings } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { IntakeHttp, IntakeLocal, Stack } from "@tillflow/intake"
import { SqlExecutionQueue, TestDatabase } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { call, token } from "./support.js"

/** Switched on by a test: every append fails as the SQL store fails when the server is gone. */
const down = { appends: false }

const failingAppends = Layer.effect(
  EventStore.EventStore,
  Effect.map(EventStore.EventStore, (store) => ({
    ...store,
    append: (
      streamId: string,
      expected: EventStore.ExpectedVersion,
      events: ReadonlyArray<EventStore.NewEvent>
    ) =>
      down.appends
        ? Effect.fail(
            new EventStore.EventStoreError({
              operation: "append",
              detail: "connect ECONNREFUSED 127.0.0.1:5432"
            })
          )
        : store.append(streamId, expected, events)
  }))
)

const served = IntakeHttp.serve(Redacted.make(token)).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      Stack.workflowsLayerFor({ mcc: Option.none(), motoTerminal: Option.none() }),
      IntakeLocal.layer()
    ).pipe(Layer.provide(ProtocolSettings.layer({})))
  ),
  Layer.provideMerge(Stack.cloudLayer({ _tag: "Simulator", seed: 7, port: 0, fast: true }).pipe(Layer.orDie)),
  Layer.provideMerge(IntakeHttp.serverLayer({ host: "127.0.0.1", port: 0 })),
  Layer.provideMerge(Stack.receiverLayer),
  Layer.provideMerge(CallbackRegistration.registeredAttemptsLayer()),
  Layer.provideMerge(Stack.engineLayer),
  Layer.provideMerge(failingAppends),
  Layer.provideMerge(
    SqlExecutionQueue.layerWith({ streamVersions: true }).pipe(Layer.provideMerge(TestDatabase.layer))
  )
)

layer(served, { timeout: 60_000, excludeTestServices: true })("a store that fails under the intake", (it) => {
  it.effect(
    "a sale is answered 503 with a JSON reason naming the store and Retry-After, never 500 with an empty body",
    () =>
      Effect.gen(function* () {
        const { terminals } = yield* Stack.Cloud
        const terminal = terminals[0]
        if (terminal === undefined) return yield* Effect.dieMessage("no terminal")
        down.appends = true
        const reply = yield* call("POST", "/v1/operations", {
          body: JSON.stringify({
            idempotencyKey: "store-down-1",
            request: {
              operation: "sale",
              serial_number: terminal.serialNumber,
              amount: "1000",
              currency: "EUR"
            }
          })
        })
        down.appends = false
        expect({
          status: reply.status,
          contentType: reply.contentType,
          retryAfter: reply.retryAfter,
          json: reply.json
        }).toEqual({
          status: 503,
          contentType: expect.stringMatching(/application\/json/),
          retryAfter: expect.stringMatching(/^[0-9]+$/),
          json: {
            _tag: "Unavailable",
            message: expect.stringContaining(
              "the store did not answer (Event store append failed: connect ECONNREFUSED"
            )
          }
        })
        // Back: the same key is taken as a new start.
        const again = yield* call("POST", "/v1/operations", {
          body: JSON.stringify({
            idempotencyKey: "store-down-1",
            request: {
              operation: "sale",
              serial_number: terminal.serialNumber,
              amount: "1000",
              currency: "EUR"
            }
          })
        })
        expect(again.status).toBe(200)
      })
  )
})
