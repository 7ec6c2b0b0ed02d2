/**
 * An execution's result as its callers see it: `poll` reads it (from a history kept here,
 * or the queue's status and then the stream), and `awaitCompletion` waits for it, woken by
 * the execution's completion in this process or, through the queue's notifications, in
 * another; polling, backing off while nothing happens, is the floor for a lost one.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { workflowExitSchema } from "./Codecs.js"
import { stuckResult } from "./Determinism.js"
import type { EngineState } from "./EngineState.js"
import { orDieAfterRetries } from "./EngineState.js"
import type { Log } from "./ExecutionLog.js"
import { load } from "./ExecutionLog.js"

/** Wakes the callers waiting here for the result of `executionId`. */
export const changed = (state: EngineState, executionId: string) =>
  Effect.sync(() => {
    const waiting = state.waiters.get(executionId)
    if (waiting !== undefined) for (const waiter of waiting) Deferred.unsafeDone(waiter, Exit.void)
  })

/**
 * A wait for the next `changed` of `executionId`, registered now and forgotten when the
 * scope closes (`DurableEngine.awaitChange`).
 */
export const awaitChange = (
  state: EngineState,
  executionId: string
): Effect.Effect<Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const wakeup = yield* Deferred.make<void>()
    const waiting = state.waiters.get(executionId) ?? new Set()
    waiting.add(wakeup)
    state.waiters.set(executionId, waiting)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        waiting.delete(wakeup)
        if (waiting.size === 0 && state.waiters.get(executionId) === waiting)
          state.waiters.delete(executionId)
      })
    )
    return Deferred.await(wakeup)
  })

/** The result the log holds, decoded by the workflow's schemas, if it is complete. */
export const decodeCompleted = (workflow: Workflow.Any, log: Log) =>
  Effect.gen(function* () {
    const completed = log.history.completed
    if (completed === undefined) return undefined
    const exit = yield* Effect.orDie(Schema.decodeUnknown(workflowExitSchema(workflow))(completed.exit))
    return new Workflow.Complete({ exit })
  })

/** An execution's result, `Suspended` while it waits, or `undefined` while it has not finished. */
const pollResult = (state: EngineState, workflow: Workflow.Any, executionId: string) =>
  Effect.gen(function* () {
    // A kept history that holds the completion has the result: the first
    // `WorkflowCompleted` is final, whatever the queue's row says yet (a run releases
    // its claim after appending it). What a caller waiting here polls once the run of
    // its execution in this process ended: no statement for it.
    if (state.histories.get(executionId)?.history.completed !== undefined) {
      return yield* decodeCompleted(workflow, yield* load(state, executionId))
    }
    const info = yield* orDieAfterRetries(state.queue.get(executionId))
    if (Option.isNone(info)) return undefined
    switch (info.value.status) {
      case "succeeded":
      case "failed":
      case "interrupted":
        return yield* decodeCompleted(workflow, yield* load(state, executionId))
      case "stuck":
        return stuckResult(workflow, yield* load(state, executionId))
      case "suspended":
        return new Workflow.Suspended({})
      default:
        return undefined
    }
  })

/** `WorkflowEngine`'s `poll`: see `pollResult`. */
export const poll =
  (state: EngineState): WorkflowEngineModule.Encoded["poll"] =>
  (workflow, executionId) =>
    pollResult(state, workflow, executionId)

/**
 * Waits for an execution's result: woken by its completion here or, through the
 * queue's `changes`, in another process; polling is the floor for a lost notification,
 * from `pollInterval`, doubling while nothing happens, up to 16 times it. While the
 * execution runs in this process the floor is not needed: its run's end wakes the
 * waiters here (`RunLoop` calls `changed` after `running` forgot it), so the status is
 * read on a wakeup or once it runs elsewhere, not on every interval.
 */
export const awaitCompletion = (
  state: EngineState,
  workflow: Workflow.Any,
  executionId: string,
  justCreated: boolean
) =>
  Effect.gen(function* () {
    const pollInterval = state.pollInterval
    let interval = pollInterval
    const longest = Duration.times(pollInterval, 16)
    // An execution this call has just enqueued is pending: its first status is not read.
    let skipFirst = justCreated
    let woken = true
    while (true) {
      // Registered before the poll, so a change between the poll and the wait is kept.
      const wakeup = yield* Deferred.make<void>()
      const waiting = state.waiters.get(executionId) ?? new Set()
      waiting.add(wakeup)
      state.waiters.set(executionId, waiting)
      const outcome = yield* Effect.gen(function* () {
        if (!skipFirst && (woken || !state.running.has(executionId))) {
          const result = yield* pollResult(state, workflow, executionId)
          if (result !== undefined && result._tag === "Complete") return result
        }
        skipFirst = false
        woken = yield* Effect.raceFirst(
          Effect.as(Deferred.await(wakeup), true),
          Effect.as(Effect.sleep(interval), false)
        )
        interval = woken ? pollInterval : Duration.min(Duration.times(interval, 2), longest)
        return undefined
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            waiting.delete(wakeup)
            if (waiting.size === 0 && state.waiters.get(executionId) === waiting)
              state.waiters.delete(executionId)
          })
        )
      )
      if (outcome !== undefined) return outcome
    }
  })
