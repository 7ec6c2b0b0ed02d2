/**
 * The replay corpus (`fixtures/replay-corpus.jsonl`, written by `npm run replay-corpus`
 * from a worker's simulator runs) replays against the workflows of this build: a change to
 * a workflow that executions recorded under the old code cannot replay fails here, with
 * the execution and the step, before it ships. Refresh the corpus only for a change made
 * on purpose (and versioned with `WorkflowVersion` when executions may be in flight).
 */
import { expect, it } from "@effect/vitest"
import { ReplayKit } from "@tillflow/engine"
import { Stack } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const fixture = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "fixtures/replay-corpus.jsonl")
const workflows = Stack.replayWorkflowsLayer({ mcc: Option.none(), motoTerminal: Option.none() })

const corpus = () => {
  const parsed = ReplayKit.parseExport(Fs.readFileSync(fixture, "utf8"))
  if (Either.isLeft(parsed)) throw new Error(parsed.left)
  return parsed.right
}

it.effect(
  "every history of the corpus replays against the workflows of this build",
  () =>
    Effect.gen(function* () {
      const histories = corpus()
      const names = new Set(histories.map((history) => history.workflowName))
      for (const name of [
        "TerminalOperation",
        "StopCurrentTransaction",
        "PreAuthorization.Increase",
        "PreAuthorization.Capture",
        "TipAdjustment.Adjust",
        "DeferredTokenization.Tokenize",
        "Reversal.Reverse",
        "Moto.Sale",
        "Moto.Refund",
        "Moto.Reverse",
        "Batch.Close",
        "Batch.Summary",
        "Batch.Detail",
        "DeviceCommand.Send"
      ]) {
        expect(names, name).toContain(name)
      }
      const report = yield* ReplayKit.replay(histories, workflows)
      expect(ReplayKit.describe(report)).toBe(`${histories.length} executions replayed, 0 would not replay`)
    }),
  120_000
)

it.effect(
  "a history the code no longer replays is reported with its execution and step",
  () =>
    Effect.gen(function* () {
      // As if the code had renamed the second step of one sale: its recorded step is another.
      const history = corpus().find(
        (h) => h.workflowName === "TerminalOperation" && h.events.some((e) => e.type === "WorkflowCompleted")
      )
      if (history === undefined) throw new Error("the corpus has no completed TerminalOperation")
      let renamed = ""
      const changed: ReplayKit.RecordedHistory = {
        ...history,
        events: history.events.map((event) => {
          const data = event.data as { readonly seq?: number; readonly name?: string }
          if (event.type !== "ActivityCompleted" || data.seq !== 1) return event
          renamed = String(data.name)
          return { ...event, data: { ...(event.data as object), name: `${renamed}V0` } }
        })
      }
      const report = yield* ReplayKit.replay([changed], workflows)
      expect(report.divergences).toHaveLength(1)
      expect(report.divergences[0]).toMatchObject({ executionId: history.executionId, step: 1 })
      expect(report.divergences[0]?.reason).toContain(`"${renamed}V0"`)
    }),
  120_000
)
