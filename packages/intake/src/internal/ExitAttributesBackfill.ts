/**
 * Exit attributes for executions that ended before the engine gave them (issue 30): an
 * execution gains `outcome`, `verdict`, `guid`, `customerReference` and `cardLast4` as it
 * finishes (`ExitAttributes`, `DurableEngine.Options.exitAttributes`), but those that
 * finished under an older version have none, so the outcome filter and the searches by
 * guid, customer reference or last four digits miss them. `run` pages through the finished
 * executions (newest first, keyset paging), and for each without an `outcome` reads its
 * `WorkflowCompleted` exit from its history and merges the attributes it gives. Idempotent
 * (an execution that has them is passed over) and resumable; once a run found nothing left
 * it notes so in its own stream, and a worker starting later skips it (`once`).
 */
import { DurableEngine, EventStore, ExecutionQueue, ExecutionRecord } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { exitAttributes } from "./ExitAttributes.js"

/** The stream where a completed backfill is noted. */
export const doneStream = "intake-exit-attributes-backfill"

/** What a run did. */
export interface Report {
  /** Finished executions read. */
  readonly examined: number
  /** Executions that gained their attributes. */
  readonly updated: number
}

/** Backfills every finished execution without exit attributes; `batchSize` per page (default 500). */
export const run = (options: { readonly batchSize?: number | undefined } = {}) =>
  Effect.gen(function* () {
    const engine = yield* DurableEngine.DurableEngine
    const queue = yield* ExecutionQueue.ExecutionQueue
    const limit = Math.max(1, Math.floor(options.batchSize ?? 500))
    let after: ExecutionQueue.ListPosition | undefined = undefined
    let examined = 0
    let updated = 0
    while (true) {
      const page: ReadonlyArray<ExecutionQueue.ExecutionInfo> = yield* engine.list({
        status: ExecutionQueue.finishedStatuses,
        order: "newest",
        limit,
        ...(after === undefined ? {} : { after })
      })
      for (const info of page) {
        examined += 1
        if (info.attributes["outcome"] !== undefined) continue
        const { exit } = ExecutionRecord.ofHistory(yield* engine.history(info.executionId))
        if (Option.isNone(exit)) continue
        const attributes = exitAttributes(info.workflowName, exit.value)
        if (Object.keys(attributes).length === 0) continue
        yield* queue.setAttributes(info.executionId, attributes)
        updated += 1
      }
      const last = page[page.length - 1]
      if (last === undefined || page.length < limit) break
      after = { createdAt: last.createdAt, executionId: last.executionId }
    }
    return { examined, updated } satisfies Report
  }).pipe(Effect.withSpan("ExitAttributesBackfill.run"))

/**
 * `run`, unless a run already noted it was done; notes it when it is. What a worker starts
 * in the background: logged, never failing the worker (a failure is retried at its next start).
 */
export const once = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  if ((yield* store.streamVersion(doneStream)) > 0) return
  const report = yield* run()
  yield* store
    .append(doneStream, EventStore.NoStream, [
      { type: "ExitAttributesBackfilled", data: { examined: report.examined, updated: report.updated } }
    ])
    .pipe(Effect.catchTag("ConcurrencyConflict", () => Effect.void))
  if (report.updated > 0)
    yield* Effect.logInfo(
      `executions: ${report.updated} of ${report.examined} finished executions gained their outcome and search attributes`
    )
}).pipe(
  Effect.catchAllCause((cause) =>
    Effect.logWarning(
      "executions: the backfill of outcome attributes failed; it runs again at the next start",
      cause
    )
  )
)
