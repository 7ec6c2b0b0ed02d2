/**
 * The workflow of the peer section, the same for tillflow and for DBOS Transact: 10 durable
 * steps in a row, each returning a JSON value of about 100 bytes, so what is measured is
 * each engine's cost of recording a step. `value(executionId, step)` is the step's result
 * on both sides. tillflow's side is written twice, with `DurableStep` and with
 * `Activity.make`, for the A/B of the step primitive in the same run.
 */
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { DurableStep } from "@tillflow/engine"

/** Steps per execution. */
export const steps = 10

/** What a step returns (~100 bytes of JSON). */
export const StepValue = Schema.Struct({
  step: Schema.Int,
  execution: Schema.String,
  reference: Schema.String,
  amount: Schema.String,
  note: Schema.String
})

/** The result of step `step` of an execution. */
export const value = (execution: string, step: number): typeof StepValue.Type => ({
  step,
  execution,
  reference: `ref-${step}-${execution.length}`,
  amount: `${(step + 1) * 125}.00`,
  note: "approved by the peer bench"
})

/** tillflow's side: the workflow, under `Workflow.make` as a user writes it. */
export const Tillflow = Workflow.make({
  name: "BenchPeerSteps",
  payload: { id: Schema.String },
  success: Schema.Int,
  idempotencyKey: (payload) => payload.id
})

// The steps as the payment workflows write theirs (issue 29, decision 2): defined once.
const step = DurableStep.family({ success: StepValue })

/** The implementation of tillflow's side with `DurableStep` (what the payment workflows use), as a layer. */
export const tillflowLayer = Tillflow.toLayer(({ id }) =>
  Effect.gen(function* () {
    let total = 0
    for (let i = 0; i < steps; i++) {
      const result = yield* step(`step-${i}`)(Effect.sync(() => value(id, i)))
      total += result.step
    }
    return total
  })
)

/**
 * The same with `Activity.make` inline, as a user of @effect/workflow writes it (the
 * baseline of decision 2 in the same run: the steps record the same history).
 */
export const tillflowActivityLayer = Tillflow.toLayer(({ id }) =>
  Effect.gen(function* () {
    let total = 0
    for (let i = 0; i < steps; i++) {
      const result = yield* Activity.make({
        name: `step-${i}`,
        success: StepValue,
        execute: Effect.sync(() => value(id, i))
      })
      total += result.step
    }
    return total
  })
)
