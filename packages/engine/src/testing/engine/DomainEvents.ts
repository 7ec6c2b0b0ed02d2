/**
 * Domain events emitted by activities: appended with their activity's record, once to
 * other streams across replays, and refused outside an activity.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import { DurableEngine, EngineEvent, EventStore } from "../../index.js"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique, awaitStatus, historyTypes } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect(
    "domain events are appended with their activity's record, and once to other streams across replays",
    () =>
      Effect.gen(function* () {
        const Gate = DurableDeferred.make("AuditGate")
        const Order = Workflow.make({
          name: "Order",
          payload: { id: Schema.String },
          idempotencyKey: (payload) => payload.id
        })
        const warehouseStream = `warehouse-${unique()}`
        const OrderLive = Order.toLayer(() =>
          Effect.gen(function* () {
            yield* Activity.make({
              name: "Place",
              execute: Effect.gen(function* () {
                yield* DurableEngine.emit({
                  type: "OrderPlaced",
                  data: { amount: "1000", currency: "EUR" }
                })
                yield* DurableEngine.emit({
                  type: "WarehouseUsed",
                  data: { operation: "pick" },
                  stream: warehouseStream
                })
              })
            })
            yield* DurableDeferred.await(Gate)
          })
        )
        const payload = { id: unique() }
        const node = yield* startNode(OrderLive)
        const executionId = yield* Order.execute(payload, { discard: true }).pipe(provideNode(node.context))
        yield* awaitStatus(executionId, "suspended")
        yield* DurableDeferred.succeed(Gate, {
          token: DurableDeferred.tokenFromExecutionId(Gate, { workflow: Order, executionId }),
          value: undefined
        }).pipe(provideNode(node.context))
        yield* awaitStatus(executionId, "succeeded")
        const store = yield* EventStore.EventStore
        const own = yield* store.readStream(EngineEvent.streamId(executionId))
        const completed = own.find((event) => event.type === "ActivityCompleted")
        const placed = own.find((event) => event.type === "OrderPlaced")
        expect(placed?.version).toBe((completed?.version ?? 0) + 1)
        expect(placed?.transactionId).toBe(completed?.transactionId)
        expect(placed?.data).toEqual({ amount: "1000", currency: "EUR" })
        // The run after the gate replayed the activity: the other stream still has it once.
        const other = yield* store.readStream(warehouseStream)
        expect(other.map((event) => event.type)).toEqual(["WarehouseUsed"])
        yield* node.stop
      })
  )

  it.effect("DurableEngine.emit outside an activity is a defect, and appends nothing", () =>
    Effect.gen(function* () {
      const Emitting = Workflow.make({
        name: "EmittingOutside",
        payload: { id: Schema.String },
        success: Schema.String,
        idempotencyKey: (payload) => payload.id
      })
      const EmittingLive = Emitting.toLayer(() =>
        DurableEngine.emit({ type: "Outside", data: {} }).pipe(Effect.as("emitted"))
      )
      const payload = { id: unique() }
      const node = yield* startNode(EmittingLive)
      const exit = yield* Emitting.execute(payload).pipe(provideNode(node.context), Effect.exit)
      expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toContain(
        "DurableEngine.emit is only available inside an activity"
      )
      expect(yield* historyTypes(yield* Emitting.executionId(payload))).toEqual([
        "WorkflowStarted",
        "WorkflowCompleted"
      ])
      yield* node.stop
    }).pipe(Effect.scoped)
  )
}
