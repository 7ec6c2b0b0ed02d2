/**
 * Search attributes: executions listed by workflow, status and attributes, and one
 * execution's history read back; the attributes a finished execution gains from its exit.
 */
import { expect } from "@effect/vitest"
import { Workflow } from "@effect/workflow"
import { DurableEngine, EngineEvent, EventStore } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type EngineTests, startNode, provideNode } from "./Nodes.js"
import { unique } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect(
    "lists executions by workflow, status and search attributes, and reads one execution's history",
    () =>
      Effect.gen(function* () {
        const Shipment = DurableEngine.withSearchAttributes(
          Workflow.make({
            name: "ShipmentVisible",
            payload: {
              id: Schema.String,
              locker: Schema.String,
              sender: Schema.String,
              amount: Schema.String
            },
            idempotencyKey: (payload) => payload.id
          }),
          (payload) => ({ locker: payload.locker, sender: payload.sender, amount: payload.amount })
        )
        const ShipmentLive = Shipment.toLayer((payload) =>
          DurableEngine.setSearchAttributes({ trackingNumber: `ref-${payload.id}` })
        )
        const sender = unique()
        const node = yield* startNode(ShipmentLive)
        const one = { id: unique(), locker: "L-1", sender, amount: "1000" }
        const two = { id: unique(), locker: "L-2", sender, amount: "250" }
        yield* Shipment.execute(one).pipe(provideNode(node.context))
        yield* Shipment.execute(two).pipe(provideNode(node.context))
        const engine = yield* DurableEngine.DurableEngine.pipe(provideNode(node.context))
        const bySender = yield* engine.list({ workflowName: "ShipmentVisible", attributes: { sender } })
        expect(bySender.map((info) => info.attributes["amount"])).toEqual(["1000", "250"])
        const byLocker = yield* engine.list({
          status: "succeeded",
          attributes: { sender, locker: "L-2" }
        })
        expect(byLocker.map((info) => info.executionId)).toEqual([yield* Shipment.executionId(two)])
        const byReference = yield* engine.list({ attributes: { trackingNumber: `ref-${one.id}` } })
        expect(byReference.map((info) => info.attributes["locker"])).toEqual(["L-1"])
        expect(yield* engine.list({ status: "running", attributes: { sender } })).toEqual([])
        const history = yield* engine.history(yield* Shipment.executionId(one))
        expect(history.map((entry) => Option.map(entry.engine, (event) => event._tag))).toEqual([
          Option.some("WorkflowStarted"),
          Option.some("WorkflowCompleted")
        ])
        yield* node.stop
      })
  )

  it.effect(
    "a start under an execution id another payload owns queues it under the owner's attributes, never the caller's",
    () =>
      Effect.gen(function* () {
        const Parcel = DurableEngine.withSearchAttributes(
          Workflow.make({
            name: "ParcelOwned",
            payload: { key: Schema.String, locker: Schema.String },
            idempotencyKey: (payload) => payload.key
          }),
          (payload) => ({ locker: payload.locker })
        )
        const node = yield* startNode(Parcel.toLayer(() => Effect.void))
        const key = unique()
        const owner = { key, locker: `owner-${key}` }
        const executionId = yield* Parcel.executionId(owner)
        // The owner's start was appended, and its process died before it enqueued the execution.
        const store = yield* EventStore.EventStore
        const started = EngineEvent.toStored({
          _tag: "WorkflowStarted",
          workflowName: "ParcelOwned",
          payload: owner,
          parent: null
        })
        yield* store.append(EngineEvent.streamId(executionId), EventStore.NoStream, [
          {
            type: started.type,
            data: started.data as EventStore.JsonObject,
            schemaVersion: EngineEvent.schemaVersion
          }
        ])
        // Another caller starts the same id with another payload: it joins the owner's execution.
        yield* Parcel.execute({ key, locker: `caller-${key}` }, { discard: true }).pipe(
          provideNode(node.context)
        )
        const engine = yield* DurableEngine.DurableEngine.pipe(provideNode(node.context))
        expect(yield* engine.list({ attributes: { locker: `caller-${key}` } })).toEqual([])
        const listed = yield* engine.list({ attributes: { locker: `owner-${key}` } })
        expect(listed.map((info) => info.executionId)).toEqual([executionId])
        yield* node.stop
      })
  )

  it.effect("a finished execution gains the search attributes its exit gives (Options.exitAttributes)", () =>
    Effect.gen(function* () {
      const Parcel = Workflow.make({
        name: "ParcelEnded",
        payload: { key: Schema.String, deliver: Schema.Boolean },
        success: Schema.Struct({ status: Schema.String }),
        error: Schema.String,
        idempotencyKey: (payload) => payload.key
      })
      const node = yield* startNode(
        Parcel.toLayer((payload) =>
          payload.deliver ? Effect.succeed({ status: "DELIVERED" }) : Effect.fail("no such address")
        ),
        {},
        {
          exitAttributes: (workflowName, exit) =>
            workflowName !== "ParcelEnded"
              ? {}
              : exit._tag === "Success"
                ? { ended: String((exit.value as { status: string }).status) }
                : { ended: "refused" }
        }
      )
      const delivered = { key: unique(), deliver: true }
      const refused = { key: unique(), deliver: false }
      yield* Parcel.execute(delivered).pipe(provideNode(node.context))
      yield* Effect.either(Parcel.execute(refused).pipe(provideNode(node.context)))
      const engine = yield* DurableEngine.DurableEngine.pipe(provideNode(node.context))
      const info = (payload: typeof delivered) =>
        Effect.flatMap(Parcel.executionId(payload), (id) => Effect.map(engine.get(id), Option.getOrThrow))
      expect((yield* info(delivered)).attributes).toEqual({ ended: "DELIVERED" })
      expect((yield* info(refused)).attributes).toEqual({ ended: "refused" })
      expect(yield* engine.count({ workflowName: "ParcelEnded", attributes: { ended: "refused" } })).toBe(1)
      yield* node.stop
    })
  )
}
