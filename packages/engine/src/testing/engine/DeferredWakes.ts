/**
 * When a deferred's resolution wakes an execution: not when its own run resolved it, and
 * when a run's look-up missed a resolution because it trusted a recently checked history.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import { EventStore, ExecutionQueue } from "../../index.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { type EngineTests, manualEngine, claimAndRun } from "./Nodes.js"
import { unique } from "./Executions.js"

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect(
    "a deferred resolved by its own run wakes nothing while it runs; a run that suspends after it is due at once",
    () =>
      Effect.gen(function* () {
        const Never = DurableDeferred.make("NeverResolved")
        const runs = { settled: 0, parked: 0 }
        const Settle = Workflow.make({
          name: "Settle",
          payload: { id: Schema.String, park: Schema.Boolean },
          success: Schema.Number,
          idempotencyKey: (payload) => payload.id
        })
        const SettleLive = Settle.toLayer(({ park }) =>
          Effect.gen(function* () {
            // The race's own deferred is resolved by this run (its first effect wins).
            const won = yield* DurableDeferred.raceAll({
              name: "settle",
              success: Schema.Number,
              error: Schema.Never,
              effects: [
                Activity.make({ name: "Win", success: Schema.Number, execute: Effect.succeed(7) }),
                DurableDeferred.await(Never).pipe(Effect.as(0))
              ]
            })
            if (park) {
              runs.parked++
              yield* DurableDeferred.await(Never)
            }
            runs.settled++
            return won
          })
        )
        const queue = yield* ExecutionQueue.ExecutionQueue
        const woken: Array<string> = []
        const counting = ExecutionQueue.ExecutionQueue.of({
          ...queue,
          wake: (wakeOptions) =>
            Effect.suspend(() => {
              woken.push(wakeOptions.executionId)
              return queue.wake(wakeOptions)
            })
        })
        const a = yield* manualEngine(SettleLive, { queue: counting })
        const done = { id: unique(), park: false }
        const doneId = yield* Settle.execute(done, { discard: true }).pipe(Effect.provide(a))
        const finished = yield* claimAndRun(a, "Settle", doneId, "engine-a")
        expect(finished.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
        expect(yield* Settle.execute(done).pipe(Effect.provide(a))).toBe(7)
        expect(woken).toEqual([])

        // Resolved its race, then suspended: released due now, so it is claimed again.
        const parked = { id: unique(), park: true }
        const parkedId = yield* Settle.execute(parked, { discard: true }).pipe(Effect.provide(a))
        const first = yield* claimAndRun(a, "Settle", parkedId, "engine-a")
        expect(first.outcome._tag).toBe("Suspended")
        expect(woken).toEqual([])
        const again = yield* claimAndRun(a, "Settle", parkedId, "engine-a")
        expect(again.outcome._tag).toBe("Suspended")
        expect(runs.parked).toBe(2)
        // That run resolved nothing of its own: it waits for a real wake-up now.
        const info = yield* Effect.orDie(queue.get(parkedId))
        expect(Option.map(info, (execution) => [execution.status, execution.dueAt])).toEqual(
          Option.some(["suspended", null])
        )
      }).pipe(Effect.scoped)
  )

  it.effect(
    "a run's look-up of an unresolved deferred reads the stream only when its history was last checked longer ago than recheckAfter; a resolution it skips wakes it",
    () =>
      Effect.gen(function* () {
        const Signal = DurableDeferred.make("Signal")
        const trace: Array<string> = []
        let resolveFromOutside: Effect.Effect<void> = Effect.void
        const afterStep = yield* Deferred.make<void>()
        const proceed = yield* Deferred.make<void>()
        const Recheck = Workflow.make({
          name: "Recheck",
          payload: { id: Schema.String, pause: Schema.Boolean, hold: Schema.Boolean },
          success: Schema.String,
          idempotencyKey: (payload) => payload.id
        })
        const RecheckLive = Recheck.toLayer(({ hold, pause }) =>
          Effect.gen(function* () {
            yield* Activity.make({ name: "Step", execute: Effect.sync(() => void trace.push("step")) })
            // Resolved from outside (another engine) after the step, once.
            yield* resolveFromOutside
            resolveFromOutside = Effect.void
            if (pause) yield* TestClock.adjust("100 millis")
            if (hold) {
              yield* Deferred.succeed(afterStep, undefined)
              yield* Deferred.await(proceed)
            }
            yield* DurableDeferred.await(Signal)
            return yield* Activity.make({
              name: "After",
              success: Schema.String,
              execute: Effect.sync(() => {
                trace.push("after")
                return "done"
              })
            })
          })
        )
        const store = yield* EventStore.EventStore
        const counting = EventStore.EventStore.of({
          ...store,
          readStream: (stream, readOptions) =>
            Effect.suspend(() => {
              trace.push("read")
              return store.readStream(stream, readOptions)
            })
        })
        const a = yield* manualEngine(RecheckLive, { store: counting })
        const b = yield* manualEngine(RecheckLive)
        const outside = (executionId: string) =>
          DurableDeferred.done(Signal, {
            token: DurableDeferred.tokenFromExecutionId(Signal, { workflow: Recheck, executionId }),
            exit: Exit.void
          }).pipe(Effect.provide(b))

        // The look-up comes right after the step's append: nothing is read, the resolution
        // is missed and the run suspends; the resolution's wake makes it due, and the next
        // run finishes.
        const quick = { id: unique(), pause: false, hold: false }
        const quickId = yield* Recheck.execute(quick, { discard: true }).pipe(Effect.provide(a))
        resolveFromOutside = outside(quickId)
        trace.length = 0
        const first = yield* claimAndRun(a, "Recheck", quickId, "engine-a")
        expect(first.outcome._tag).toBe("Suspended")
        // One read: the suspension's append met the resolution (a conflict), not a look-up.
        expect(trace.slice(trace.indexOf("step"))).toEqual(["step", "read"])
        const second = yield* claimAndRun(a, "Recheck", quickId, "engine-a")
        expect(second.outcome).toEqual({ _tag: "Finished", status: "succeeded" })

        // 100 ms after the step's append the look-up reads, and finds the resolution.
        const slow = { id: unique(), pause: true, hold: false }
        const slowId = yield* Recheck.execute(slow, { discard: true }).pipe(Effect.provide(a))
        resolveFromOutside = outside(slowId)
        trace.length = 0
        const once = yield* claimAndRun(a, "Recheck", slowId, "engine-a")
        expect(once.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
        expect(trace.slice(trace.indexOf("step"))).toEqual(["step", "read", "after"])

        // Resolved during the run by this very process (its callback receiver, say), from
        // outside the run: the look-up reads whatever the time, and the run goes on.
        const local = { id: unique(), pause: false, hold: true }
        const localId = yield* Recheck.execute(local, { discard: true }).pipe(Effect.provide(a))
        const running = yield* Effect.fork(claimAndRun(a, "Recheck", localId, "engine-a"))
        yield* Deferred.await(afterStep)
        yield* DurableDeferred.done(Signal, {
          token: DurableDeferred.tokenFromExecutionId(Signal, { workflow: Recheck, executionId: localId }),
          exit: Exit.void
        }).pipe(Effect.provide(a))
        yield* Deferred.succeed(proceed, undefined)
        const held = yield* Fiber.join(running)
        expect(held.outcome).toEqual({ _tag: "Finished", status: "succeeded" })
      }).pipe(Effect.scoped)
  )
}
