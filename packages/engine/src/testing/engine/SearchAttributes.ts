/**
 * Search attributes: executions listed by workflow, status and attributes, and one
 * execution's history read back.
 */
import { expect } from "@effect/vitest"
import { Workflow } from "@effect/workflow"
import { DurableEngine } from "../../index.js"
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
        const Sale = DurableEngine.withSearchAttributes(
          Workflow.make({
            name: "SaleVisible",
            payload: {
              id: Schema.String,
              terminal: Schema.String,
              merchant: Schema.String,
              amount: Schema.String
            },
            idempotencyKey: (payload) => payload.id
          }),
          (payload) => ({ terminal: payload.terminal, merchant: payload.merchant, amount: payload.amount })
        )
        const SaleLive = Sale.toLayer((payload) =>
          DurableEngine.setSearchAttributes({ transactionReference: `ref-${payload.id}` })
        )
        const merchant = unique()
        const node = yield* startNode(SaleLive)
        const one = { id: unique(), terminal: "T-1", merchant, amount: "1000" }
        const two = { id: unique(), terminal: "T-2", merchant, amount: "250" }
        yield* Sale.execute(one).pipe(provideNode(node.context))
        yield* Sale.execute(two).pipe(provideNode(node.context))
        const engine = yield* DurableEngine.DurableEngine.pipe(provideNode(node.context))
        const byMerchant = yield* engine.list({ workflowName: "SaleVisible", attributes: { merchant } })
        expect(byMerchant.map((info) => info.attributes["amount"])).toEqual(["1000", "250"])
        const byTerminal = yield* engine.list({
          status: "succeeded",
          attributes: { merchant, terminal: "T-2" }
        })
        expect(byTerminal.map((info) => info.executionId)).toEqual([yield* Sale.executionId(two)])
        const byReference = yield* engine.list({ attributes: { transactionReference: `ref-${one.id}` } })
        expect(byReference.map((info) => info.attributes["terminal"])).toEqual(["T-1"])
        expect(yield* engine.list({ status: "running", attributes: { merchant } })).toEqual([])
        const history = yield* engine.history(yield* Sale.executionId(one))
        expect(history.map((entry) => Option.map(entry.engine, (event) => event._tag))).toEqual([
          Option.some("WorkflowStarted"),
          Option.some("WorkflowCompleted")
        ])
        yield* node.stop
      })
  )
}
