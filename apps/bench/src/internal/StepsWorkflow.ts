/**
 * The workflow of the engine benchmark: `steps` activities in a row, each a durable step
 * (one `ActivityCompleted` appended to the execution's stream) doing no work of its own,
 * so the engine's cost per step is what is measured. Two names of the same workflow let a
 * benchmark choose which worker processes may run an execution (a process runs only the
 * workflows it registers).
 */
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The workflow under `name`. */
export const make = (name: string) =>
  Workflow.make({
    name,
    payload: { id: Schema.String, steps: Schema.Int },
    success: Schema.Int,
    idempotencyKey: (payload) => payload.id
  })

/** Run by one worker process only. */
export const Single = make("BenchStepsSingle")
/** Run by every worker process. */
export const Shared = make("BenchStepsShared")

/** The implementation of a steps workflow, as a layer that registers it. */
export const layer = (workflow: ReturnType<typeof make>) =>
  workflow.toLayer(({ steps }) =>
    Effect.gen(function* () {
      let sum = 0
      for (let i = 0; i < steps; i++) {
        sum += yield* Activity.make({ name: `step-${i}`, success: Schema.Int, execute: Effect.succeed(i) })
      }
      return sum
    })
  )
