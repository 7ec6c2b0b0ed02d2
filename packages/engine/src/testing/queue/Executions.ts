/**
 * What the queue contract's tests share: ids unique to a run, enqueueing an execution (and
 * checking it was new), and reading one execution's row.
 */
import { expect, type Vitest } from "@effect/vitest"
import { ExecutionQueue } from "../../index.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** The test methods of the queue contract, over its shared layer. */
export type QueueTests = Vitest.MethodsNonLive<ExecutionQueue.ExecutionQueue>

/** An id unique to this run: workflow names and execution ids no other test shares. */
export const unique = () => globalThis.crypto.randomUUID()

/** Enqueues a new execution of `workflowName` (due at `now`, 1 000 unless given) and returns its id. */
export const enqueue = (
  workflowName: string,
  options: { readonly key?: string; readonly attributes?: Record<string, string>; readonly now?: number } = {}
) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    const executionId = unique()
    const created = yield* queue.enqueue({
      executionId,
      workflowName,
      concurrencyKey: options.key,
      parentId: undefined,
      attributes: options.attributes ?? {},
      now: options.now ?? 1_000
    })
    expect(created).toBe(true)
    return executionId
  })

/** The execution's row, which must exist. */
export const status = (executionId: string) =>
  Effect.gen(function* () {
    const queue = yield* ExecutionQueue.ExecutionQueue
    const info = yield* queue.get(executionId)
    return Option.getOrThrow(info)
  })
