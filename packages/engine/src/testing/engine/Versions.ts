/**
 * Workflow versions (`WorkflowVersion`) and the replay kit (`ReplayKit`): an execution
 * started under a workflow's old code completes after a restart on new code that marks
 * its change; the same change without the marker is caught by the determinism check and
 * by the replay kit; a retired change names itself when an execution still needs it.
 */
import { expect } from "@effect/vitest"
import { Activity, DurableDeferred, Workflow } from "@effect/workflow"
import { DurableEngine, ReplayKit, WorkflowVersion } from "../../index.js"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { awaitStatus, engineEvents, unique } from "./Executions.js"
import { type EngineTests, provideNode, startNode } from "./Nodes.js"

const Gate = DurableDeferred.make("Gate")
const Evolving = Workflow.make({
  name: "VersionedEvolving",
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: (payload) => payload.id
})
const step = (name: string) => Activity.make({ name, success: Schema.String, execute: Effect.succeed(name) })

/** The old code: reserve, pack, wait for the gate, receipt. */
const V1 = Evolving.toLayer(() =>
  Effect.gen(function* () {
    const done = [yield* step("Reserve"), yield* step("Pack")]
    yield* DurableDeferred.await(Gate)
    done.push(yield* step("Receipt"))
    return done.join(",")
  })
)
/** The new code, changed with a version marker: "label" replaces "pack". */
const V2Marked = Evolving.toLayer(() =>
  Effect.gen(function* () {
    const done = [yield* step("Reserve")]
    done.push(
      (yield* WorkflowVersion.patched("label-instead-of-pack")) ? yield* step("Label") : yield* step("Pack")
    )
    yield* DurableDeferred.await(Gate)
    done.push(yield* step("Receipt"))
    return done.join(",")
  })
)
/** The same change without the marker. */
const V2Unmarked = Evolving.toLayer(() =>
  Effect.gen(function* () {
    const done = [yield* step("Reserve"), yield* step("Label")]
    yield* DurableDeferred.await(Gate)
    done.push(yield* step("Receipt"))
    return done.join(",")
  })
)
/** The change retired: only the new branch is left. */
const V3Retired = Evolving.toLayer(() =>
  Effect.gen(function* () {
    const done = [yield* step("Reserve")]
    yield* WorkflowVersion.deprecated("label-instead-of-pack")
    done.push(yield* step("Label"))
    yield* DurableDeferred.await(Gate)
    done.push(yield* step("Receipt"))
    return done.join(",")
  })
)

const resolveGate = (executionId: string) =>
  DurableDeferred.succeed(Gate, {
    token: DurableDeferred.tokenFromExecutionId(Gate, { workflow: Evolving, executionId }),
    value: undefined
  })

/** The execution's history as the replay kit takes it. */
const recorded = (executionId: string) =>
  Effect.map(
    Effect.flatMap(DurableEngine.DurableEngine, (engine) => engine.history(executionId)),
    (history) =>
      ReplayKit.fromRecorded(
        executionId,
        history.map((entry) => entry.recorded)
      )
  )

/** Starts an execution on the old code and leaves it suspended at the gate; the node stopped. */
const startedUnderOldCode = Effect.gen(function* () {
  const payload = { id: unique() }
  const v1 = yield* startNode(V1)
  const executionId = yield* Evolving.execute(payload, { discard: true }).pipe(provideNode(v1.context))
  yield* awaitStatus(executionId, "suspended")
  const history = yield* recorded(executionId).pipe(provideNode(v1.context))
  yield* v1.stop
  return { payload, executionId, history }
})

const markers = (executionId: string) =>
  Effect.map(engineEvents(executionId), (events) => events.filter((event) => event._tag === "VersionMarked"))

/** Registers this concern's tests on the engine contract's shared stores. */
export const suite = (it: EngineTests): void => {
  it.effect(
    "an execution started under the old code completes after a restart on new code that marks its change (old branch), a new one takes the new branch",
    () =>
      Effect.gen(function* () {
        const old = yield* startedUnderOldCode
        const v2 = yield* startNode(V2Marked)
        yield* resolveGate(old.executionId).pipe(provideNode(v2.context))
        const result = yield* Evolving.execute(old.payload).pipe(provideNode(v2.context))
        expect(result).toBe("Reserve,Pack,Receipt")
        expect(yield* markers(old.executionId)).toEqual([])

        const fresh = { id: unique() }
        const freshId = yield* Evolving.execute(fresh, { discard: true }).pipe(provideNode(v2.context))
        yield* awaitStatus(freshId, "suspended")
        yield* resolveGate(freshId).pipe(provideNode(v2.context))
        expect(yield* Evolving.execute(fresh).pipe(provideNode(v2.context))).toBe("Reserve,Label,Receipt")
        expect(yield* markers(freshId)).toEqual([
          { _tag: "VersionMarked", change: "label-instead-of-pack", seq: 1 }
        ])
        // Both histories, the old one and the marked one, replay on the new code.
        const histories = [
          yield* recorded(old.executionId).pipe(provideNode(v2.context)),
          yield* recorded(freshId).pipe(provideNode(v2.context))
        ]
        yield* v2.stop
        const report = yield* ReplayKit.replay(histories, V2Marked)
        expect(report).toEqual({ replayed: 2, divergences: [] })
      })
  )

  it.effect(
    "the same change without the marker: the replay kit reports the step where it diverges, and the restarted execution fails the determinism check",
    () =>
      Effect.gen(function* () {
        const old = yield* startedUnderOldCode
        // Caught before the deploy, from the recorded history, with nothing run.
        const report = yield* ReplayKit.replay([old.history], V2Unmarked)
        expect(report.replayed).toBe(1)
        expect(report.divergences).toEqual([
          {
            executionId: old.executionId,
            workflowName: "VersionedEvolving",
            step: 1,
            reason:
              'at step 1 its history recorded activity "Pack" (attempt 1) but the code now asks for activity "Label" (attempt 1)',
            change: undefined
          }
        ])
        expect(ReplayKit.describe(report)).toContain("1 executions replayed, 1 would not replay")
        // The replay ran nothing live and wrote nothing to the store.
        expect((yield* engineEvents(old.executionId)).map((event) => event._tag)).toEqual(
          old.history.events.map((event) => event.type)
        )

        const v2 = yield* startNode(V2Unmarked)
        yield* resolveGate(old.executionId).pipe(provideNode(v2.context))
        yield* awaitStatus(old.executionId, "stuck")
        const exit = yield* Evolving.execute(old.payload).pipe(provideNode(v2.context), Effect.exit)
        const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        expect(defect).toBeInstanceOf(DurableEngine.DeterminismError)
        yield* v2.stop
      })
  )

  it.effect(
    "a completed history replays on code that marks the change, and the kit reports code that asks for a step the completed history never ran",
    () =>
      Effect.gen(function* () {
        const old = yield* startedUnderOldCode
        const v1 = yield* startNode(V1)
        yield* resolveGate(old.executionId).pipe(provideNode(v1.context))
        expect(yield* Evolving.execute(old.payload).pipe(provideNode(v1.context))).toBe(
          "Reserve,Pack,Receipt"
        )
        const history = yield* recorded(old.executionId).pipe(provideNode(v1.context))
        yield* v1.stop
        expect(yield* ReplayKit.replay([history], V2Marked)).toEqual({ replayed: 1, divergences: [] })
        const Longer = Evolving.toLayer(() =>
          Effect.gen(function* () {
            const done = [yield* step("Reserve"), yield* step("Pack")]
            yield* DurableDeferred.await(Gate)
            done.push(yield* step("Receipt"), yield* step("Survey"))
            return done.join(",")
          })
        )
        const longer = yield* ReplayKit.replay([history], Longer)
        expect(longer.divergences.map((d) => [d.step, d.reason])).toEqual([
          [
            3,
            'the code asks for activity "Survey" (attempt 1) at step 3, which its history (completed) never ran'
          ]
        ])
        const Other = Evolving.toLayer(() =>
          Effect.gen(function* () {
            yield* step("Reserve")
            yield* step("Pack")
            yield* DurableDeferred.await(Gate)
            yield* step("Receipt")
            return "something else"
          })
        )
        const other = yield* ReplayKit.replay([history], Other)
        expect(other.divergences.map((d) => d.reason)).toEqual([
          "the code completes with another result than its history recorded"
        ])
      })
  )

  it.effect(
    "a retired change (deprecated) stops an execution that still needs its old branch with a DeterminismError naming the change; the engine counts those executions first",
    () =>
      Effect.gen(function* () {
        const old = yield* startedUnderOldCode
        const v2 = yield* startNode(V2Marked)
        const marked = { id: unique() }
        const markedId = yield* Evolving.execute(marked, { discard: true }).pipe(provideNode(v2.context))
        yield* awaitStatus(markedId, "suspended")
        const pending = yield* WorkflowVersion.unfinishedWithoutMarker(
          "VersionedEvolving",
          "label-instead-of-pack"
        ).pipe(provideNode(v2.context))
        // Other tests' executions of this workflow share the stores: look at these two.
        expect(pending.withoutMarker).toContain(old.executionId)
        expect(pending.withoutMarker).not.toContain(markedId)
        expect(pending.unfinished - pending.marked).toBe(pending.withoutMarker.length)
        expect(pending.marked).toBeGreaterThanOrEqual(1)
        yield* v2.stop

        const histories = [old.history, yield* recorded(markedId).pipe(provideNode(v2.context))]
        const report = yield* ReplayKit.replay(histories, V3Retired)
        expect(report.divergences.map((d) => [d.executionId, d.step, d.change])).toEqual([
          [old.executionId, 1, "label-instead-of-pack"]
        ])

        const v3 = yield* startNode(V3Retired)
        yield* resolveGate(old.executionId).pipe(provideNode(v3.context))
        yield* resolveGate(markedId).pipe(provideNode(v3.context))
        expect(yield* Evolving.execute(marked).pipe(provideNode(v3.context))).toBe("Reserve,Label,Receipt")
        yield* awaitStatus(old.executionId, "stuck")
        const exit = yield* Evolving.execute(old.payload).pipe(provideNode(v3.context), Effect.exit)
        const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        expect(defect).toBeInstanceOf(DurableEngine.DeterminismError)
        expect((defect as DurableEngine.DeterminismError).change).toBe("label-instead-of-pack")
        expect((defect as Error).message).toContain('workflow change "label-instead-of-pack"')
        const violation = (yield* engineEvents(old.executionId)).find((e) => e._tag === "DeterminismViolated")
        expect(violation).toMatchObject({ seq: 1, change: "label-instead-of-pack" })
        yield* v3.stop
      })
  )

  it.effect(
    "code without the change replaying a history that took it (a rollback) fails the determinism check naming the change",
    () =>
      Effect.gen(function* () {
        const v2 = yield* startNode(V2Marked)
        const payload = { id: unique() }
        const executionId = yield* Evolving.execute(payload, { discard: true }).pipe(provideNode(v2.context))
        yield* awaitStatus(executionId, "suspended")
        const history = yield* recorded(executionId).pipe(provideNode(v2.context))
        yield* v2.stop
        const report = yield* ReplayKit.replay([history], V1)
        expect(report.divergences.map((d) => [d.step, d.change])).toEqual([[1, "label-instead-of-pack"]])
        const v1 = yield* startNode(V1)
        yield* resolveGate(executionId).pipe(provideNode(v1.context))
        yield* awaitStatus(executionId, "stuck")
        const violation = (yield* engineEvents(executionId)).find((e) => e._tag === "DeterminismViolated")
        expect(violation).toMatchObject({
          seq: 1,
          recorded: 'activity "Label" (attempt 1)',
          requested: 'activity "Pack" (attempt 1)',
          change: "label-instead-of-pack"
        })
        yield* v1.stop
      })
  )

  it.effect("patched outside a workflow run is a defect", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(WorkflowVersion.patched("anything"))
      expect(Exit.isFailure(exit)).toBe(true)
    })
  )
}
