/**
 * The body of `tillflow replay` (loaded by the command only): the histories from the
 * configured store (`Stack.storeLayer`) or from an export file, written to an export file
 * or replayed against this build's workflows (`Stack.replayWorkflowsLayer`).
 */
import { ReplayKit } from "@tillflow/engine"
import * as Stack from "@tillflow/intake/Stack"
import * as WorkerConfig from "@tillflow/intake/WorkerConfig"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import { BackendError } from "../Backend.js"
import * as Output from "../Output.js"

/** The command's options. */
export interface Input {
  readonly json: boolean
  readonly from: Option.Option<string>
  readonly export: Option.Option<string>
  readonly workflow: Option.Option<string>
}

const fromStore = (config: WorkerConfig.WorkerConfig, workflowName: string | undefined) =>
  ReplayKit.fromStore({ workflowName }).pipe(
    Effect.mapError((error) => new BackendError({ message: `reading the histories: ${error.message}` })),
    Effect.provide(Stack.storeLayer(config.store, "cli replay")),
    Effect.scoped
  )

const fromFile = (path: string) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => Fs.readFileSync(path, "utf8"),
      catch: (cause) => new Output.UsageError({ message: `--from ${path}: ${String(cause)}` })
    })
    const parsed = ReplayKit.parseExport(text)
    if (Either.isLeft(parsed))
      return yield* new Output.UsageError({ message: `--from ${path}: ${parsed.left}` })
    return parsed.right
  })

/** Runs the command; its exit code. */
export const run = (input: Input) =>
  Effect.gen(function* () {
    const config = yield* WorkerConfig.load.pipe(
      Effect.mapError((error) => new BackendError({ message: `configuration: ${error.message}` }))
    )
    const workflowName = Option.getOrUndefined(input.workflow)
    if (Option.isSome(input.from) && Option.isSome(input.export)) {
      return yield* new Output.UsageError({ message: "--from and --export do not go together" })
    }
    if (Option.isSome(input.export)) {
      const histories = yield* fromStore(config, workflowName)
      const path = input.export.value
      yield* Effect.try({
        try: () =>
          Fs.writeFileSync(path, histories.map((history) => `${ReplayKit.exportLine(history)}\n`).join("")),
        catch: (cause) => new BackendError({ message: `--export ${path}: ${String(cause)}` })
      })
      yield* Output.print(input.json, { exported: histories.length, file: path }, () => [
        `${histories.length} execution histories written to ${path}`
      ])
      return Output.ExitCode.ok
    }
    const all = Option.isSome(input.from)
      ? yield* fromFile(input.from.value)
      : yield* fromStore(config, workflowName)
    const histories = workflowName === undefined ? all : all.filter((h) => h.workflowName === workflowName)
    const report = yield* ReplayKit.replay(histories, Stack.replayWorkflowsLayer(Stack.merchantOf(config)))
    yield* Output.print(input.json, report, () => ReplayKit.describe(report).split("\n"))
    return report.divergences.length === 0 ? Output.ExitCode.ok : Output.ExitCode.failed
  })
