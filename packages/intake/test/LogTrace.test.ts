/**
 * A worker's log line leads to its trace and its execution: every record written under a
 * span carries the span's `traceId` and `spanId`, and `executionId` of the execution whose
 * run it belongs to.
 */
import { describe, expect, it } from "@effect/vitest"
import { Worker } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"

const captured = () => {
  const records: Array<Record<string, unknown>> = []
  const logger = Logger.make(({ annotations, message }) => {
    records.push({ message, ...Object.fromEntries(HashMap.toEntries(annotations)) })
  })
  return { records, layer: Logger.replace(Logger.defaultLogger, Worker.traced(logger)) }
}

describe("Worker.traced: log lines carry their trace and execution", () => {
  it.effect("a record under an execution's run names the run's trace, its own span and the execution", () => {
    const { records, layer } = captured()
    return Effect.gen(function* () {
      const ids = yield* Effect.gen(function* () {
        yield* Effect.log("attempt sent")
        return yield* Effect.currentSpan
      }).pipe(
        Effect.withSpan("attempt-1/send"),
        Effect.withSpan("DurableEngine.run", {
          attributes: { executionId: "exec-42", workflow: "TerminalOperation" }
        })
      )
      yield* Effect.log("outside any span")
      yield* Effect.log("annotated by its writer").pipe(
        Effect.annotateLogs({ executionId: "exec-own" }),
        Effect.withSpan("DurableEngine.run", { attributes: { executionId: "exec-run" } })
      )
      expect(records[0]).toMatchObject({
        message: ["attempt sent"],
        traceId: ids.traceId,
        spanId: ids.spanId,
        executionId: "exec-42"
      })
      expect(Option.fromNullable(records[1]?.["traceId"])).toEqual(Option.none())
      expect(records[2]?.["executionId"]).toBe("exec-own")
    }).pipe(Effect.provide(layer))
  })
})
