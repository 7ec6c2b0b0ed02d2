/**
 * Concurrency keys: executions sharing one run one at a time, also while the holder is
 * suspended.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import { DurableEngine } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode, tick } from "./Nodes.js"
import { unique, awaitInfo, awaitStatus } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect("executions with the same concurrency key run one at a time, even while one is suspended", () =>
    Effect.gen(function* () {
      const Done = DurableDeferred.make("Done")
      const Op = DurableEngine.withConcurrencyKey(
        Workflow.make({
          name: "LockerOp",
          payload: { id: Schema.String, locker: Schema.String },
          idempotencyKey: (payload) => payload.id
        }),
        (payload) => `locker:${payload.locker}`
      )
      const OpLive = Op.toLayer(() =>
        Effect.gen(function* () {
          yield* Activity.make({ name: "Send", execute: Effect.void })
          yield* DurableDeferred.await(Done)
        })
      )
      const locker = unique()
      const a = { id: unique(), locker }
      const b = { id: unique(), locker }
      const c = { id: unique(), locker: unique() }
      const node = yield* startNode(OpLive)
      const run = (payload: typeof a) =>
        Op.execute(payload, { discard: true }).pipe(provideNode(node.context))
      const idA = yield* run(a)
      yield* awaitStatus(idA, "suspended")
      const idB = yield* run(b)
      const idC = yield* run(c)
      // A different locker runs; the same locker waits for A to finish.
      yield* awaitStatus(idC, "suspended")
      for (let i = 0; i < 10; i++) yield* tick
      expect(
        yield* awaitInfo(idB, (info) => info.status === "pending" && info.claims === 0, "waiting")
      ).toBeDefined()
      const done = (executionId: string) =>
        DurableDeferred.succeed(Done, {
          token: DurableDeferred.tokenFromExecutionId(Done, { workflow: Op, executionId }),
          value: undefined
        }).pipe(provideNode(node.context))
      yield* done(idA)
      yield* awaitStatus(idA, "succeeded")
      yield* awaitStatus(idB, "suspended")
      yield* done(idB)
      yield* done(idC)
      yield* awaitStatus(idB, "succeeded")
      yield* awaitStatus(idC, "succeeded")
      yield* node.stop
    })
  )
}
