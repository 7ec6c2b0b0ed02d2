/**
 * Secrets never reach the store: a `Redacted` payload is refused before anything is
 * stored, and an activity result holding a secret is recorded as the refusal.
 */
import { expect } from "@effect/vitest"
import { Activity, Workflow } from "@effect/workflow"
import { DurableEngine, EngineEvent, EventStore } from "../../index.js"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique, awaitStatus, historyTypes } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect("refuses a Redacted value in a payload: nothing is stored", () =>
    Effect.gen(function* () {
      const Secretive = Workflow.make({
        name: "Secretive",
        payload: { id: Schema.String, apiKey: Schema.Redacted(Schema.String) },
        idempotencyKey: (payload) => payload.id
      })
      const SecretiveLive = Secretive.toLayer(() => Effect.void)
      const payload = { id: unique(), apiKey: Redacted.make("sk_live_secret") }
      const node = yield* startNode(SecretiveLive)
      const exit = yield* Secretive.execute(payload).pipe(provideNode(node.context), Effect.exit)
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toBeInstanceOf(
        DurableEngine.RedactedValueRefused
      )
      expect(yield* historyTypes(yield* Secretive.executionId(payload))).toEqual([])
      yield* node.stop
    })
  )

  it.effect(
    "an activity result the store refuses as a secret is recorded as that refusal: the workflow sees a defect",
    () =>
      Effect.gen(function* () {
        const Leaky = Workflow.make({
          name: "Leaky",
          payload: { id: Schema.String },
          success: Schema.String,
          idempotencyKey: (payload) => payload.id
        })
        const LeakyLive = Leaky.toLayer(() =>
          Activity.make({
            name: "ReadCard",
            success: Schema.Struct({ cvv: Schema.String }),
            execute: Effect.succeed({ cvv: "123" })
          }).pipe(Effect.map(() => "leaked"))
        )
        const payload = { id: unique() }
        const node = yield* startNode(LeakyLive)
        const exit = yield* Leaky.execute(payload).pipe(provideNode(node.context), Effect.exit)
        expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toContain("card security code")
        const executionId = yield* Leaky.executionId(payload)
        const store = yield* EventStore.EventStore
        const events = yield* store.readStream(EngineEvent.streamId(executionId))
        expect(events.map((event) => event.type)).toEqual([
          "WorkflowStarted",
          "ActivityCompleted",
          "WorkflowCompleted"
        ])
        expect(JSON.stringify(events.map((event) => event.data))).not.toContain('"123"')
        expect((yield* awaitStatus(executionId, "failed")).workflowName).toBe("Leaky")
        yield* node.stop
      })
  )
}
