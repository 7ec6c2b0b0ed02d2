/**
 * Durable clocks (`DurableClock.sleep`): a clock is scheduled once, as a `ClockScheduled`
 * event with the time it fires at, and fires when its deferred is looked up at or after
 * that time (a `ClockFired` event resolves it). The earliest clock still to fire is when a
 * suspended execution is due again (`executionHistory.nextTimer`).
 */
import type * as WorkflowEngineModule from "@effect/workflow/WorkflowEngine"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { EngineState } from "./EngineState.js"
import { now, runOf, wake } from "./EngineState.js"
import type { Log } from "./ExecutionLog.js"
import { appendEngine, engineEvent, keep, load } from "./ExecutionLog.js"
import * as History from "./executionHistory.js"

/** Records a clock (once per name); outside a run, wakes the execution to look at it. */
export const scheduleClock =
  (state: EngineState): WorkflowEngineModule.Encoded["scheduleClock"] =>
  (_workflow, { clock, executionId }) =>
    Effect.gen(function* () {
      const run = yield* runOf(state, executionId)
      const log = run?.log ?? (yield* load(state, executionId))
      if (log.history.clocks.has(clock.name)) return
      const durationMillis = Duration.toMillis(clock.duration)
      const fireAt = (yield* now) + durationMillis
      yield* appendEngine(state, log, (history) =>
        history.clocks.has(clock.name)
          ? undefined
          : [engineEvent({ _tag: "ClockScheduled", name: clock.name, fireAt, durationMillis })]
      )
      // Outside a run nothing would look at the timer before the next suspension.
      if (run === undefined) {
        yield* keep(state, log)
        yield* wake(state, executionId)
      }
    })

/** The clock whose deferred is `deferredName`, if it is a clock's and that clock is scheduled. */
export const clockOf = (
  history: History.History,
  deferredName: string
): { readonly name: string; readonly fireAt: number } | undefined => {
  if (!deferredName.startsWith(History.clockDeferredPrefix)) return undefined
  const name = deferredName.slice(History.clockDeferredPrefix.length)
  const clock = history.clocks.get(name)
  return clock === undefined ? undefined : { name, fireAt: clock.fireAt }
}

/** Records that a due clock fired (once), which resolves its deferred. */
export const fire = (state: EngineState, log: Log, name: string): Effect.Effect<boolean> =>
  appendEngine(state, log, (history) =>
    history.clocks.get(name)?.fired === true ? undefined : [engineEvent({ _tag: "ClockFired", name })]
  )
