/** `tillflow executions`: the latest workflow executions, and one execution in full. */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { ExecutionQueue } from "@tillflow/engine"
import * as Intake from "@tillflow/intake/Intake"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import * as Presentation from "../Presentation.js"
import { boundedInteger, common, withShownDefault } from "../internal/options.js"

/** One execution as a row of the list. */
const executionRow = (v: Intake.ExecutionView): ReadonlyArray<string> => [
  v.executionId,
  new Date(v.createdAt).toISOString().replace("T", " ").slice(0, 19),
  v.attributes["operation"] ?? v.workflow,
  v.attributes["serialNumber"] ?? "-",
  v.attributes["amount"] === undefined ? "-" : `${v.attributes["amount"]} ${v.attributes["currency"] ?? ""}`,
  Presentation.statusOf(v) +
    (v.report === undefined && v.progress !== undefined ? ` (${v.progress.phase})` : "")
]

const list = Command.make(
  "list",
  {
    ...common,
    status: Options.choice("status", ExecutionQueue.ExecutionStatus.literals).pipe(Options.optional),
    serialNumber: Options.text("serial").pipe(Options.optional),
    operation: Options.text("operation").pipe(Options.optional),
    workflow: Options.text("workflow").pipe(Options.optional),
    limit: boundedInteger("limit", 1, 10_000).pipe(
      Options.withDescription("how many, 1 to 10000"),
      withShownDefault(20)
    )
  },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const found = yield* (yield* Intake.Intake).list({
          ...(Option.isSome(o.status) ? { status: o.status.value } : {}),
          ...(Option.isSome(o.serialNumber) ? { serialNumber: o.serialNumber.value } : {}),
          ...(Option.isSome(o.operation) ? { operation: o.operation.value } : {}),
          ...(Option.isSome(o.workflow) ? { workflow: o.workflow.value } : {}),
          limit: o.limit
        })
        yield* Output.print(o.json, found.map(Presentation.executionJson), () =>
          found.length === 0
            ? ["no execution"]
            : Presentation.table(
                ["execution", "created (UTC)", "operation", "serial", "amount", "status"],
                found.map(executionRow)
              )
        )
        return Output.ExitCode.ok
      })
    )
  )
).pipe(Command.withDescription("the latest executions, newest first"))

const show = Command.make(
  "show",
  {
    ...common,
    executionId: Args.text({ name: "executionId" }),
    history: Options.boolean("history").pipe(Options.withDescription("also print every stored event"))
  },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const intake = yield* Intake.Intake
        const view = yield* intake.execution(o.executionId, 0)
        const history = o.history ? Option.some(yield* intake.history(o.executionId)) : Option.none()
        yield* Output.print(
          o.json,
          Option.isSome(history)
            ? { ...(Presentation.executionJson(view) as object), history: history.value }
            : Presentation.executionJson(view),
          () => [
            ...Output.describeExecution(view),
            ...(Option.isSome(history)
              ? [...history.value.engine, ...history.value.business]
                  .sort((a, b) => a.recordedAt.localeCompare(b.recordedAt))
                  .map((e) => `  ${e.recordedAt}  ${e.streamId}@${e.version}  ${e.type}`)
              : [])
          ]
        )
        // Showing an execution is a display: it succeeded whatever the payment's outcome (a
        // declined or partial payment is said in the output, not the exit code), so `set -e`
        // scripts can show any execution.
        return Output.ExitCode.ok
      })
    )
  )
).pipe(Command.withDescription("one execution: status, progress or report (exit 0 whatever its outcome)"))

export const executions = Command.make("executions").pipe(
  Command.withDescription("workflow executions"),
  Command.withSubcommands([list, show])
)
