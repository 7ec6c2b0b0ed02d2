/**
 * The failure of the determinism check: the code asked for another activity than the one
 * the history recorded at that step. A leaf of its own so that the engine's state can name
 * it without importing the check (`Determinism.ts`).
 */
import * as Schema from "effect/Schema"

/**
 * The workflow code asked for a different activity than its history recorded at that
 * point: the code changed in a way that cannot replay the executions already running.
 * The execution is stopped (`stuck`) with a `DeterminismViolated` event; deploy code that
 * replays the history, then `resume` it.
 */
export class DeterminismError extends Schema.TaggedError<DeterminismError>()("DeterminismError", {
  workflowName: Schema.String,
  executionId: Schema.String,
  seq: Schema.Int,
  recorded: Schema.String,
  requested: Schema.String,
  /** The workflow change (`WorkflowVersion`) that is the cause, when one is. */
  change: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return (
      `Workflow "${this.workflowName}" (execution ${this.executionId}) is not deterministic: ` +
      `at step ${this.seq} its history recorded ${this.recorded} but the code now asks for ${this.requested}` +
      (this.change === undefined ? "" : ` (the cause is the workflow change "${this.change}")`)
    )
  }
}
