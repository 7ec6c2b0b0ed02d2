/**
 * `tillflow executions`: workflow executions newest first, a page at a time, filtered by
 * outcome, status, terminal, operation, workflow, time, amount and merchant and searched; one
 * in full.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Prompt from "@effect/cli/Prompt"
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

/** The API's page size: a longer list is read a page at a time. */
const pageSize = 500

const list = Command.make(
  "list",
  {
    ...common,
    outcome: Options.choice("outcome", Intake.ExecutionOutcome.literals).pipe(
      Options.withDescription(
        "how it ended: approved, declined, failed, unresolved, in-progress (not the engine's status)"
      ),
      Options.optional
    ),
    status: Options.choice("status", ExecutionQueue.ExecutionStatus.literals).pipe(Options.optional),
    serialNumber: Options.text("serial").pipe(Options.optional),
    operation: Options.text("operation").pipe(Options.optional),
    workflow: Options.text("workflow").pipe(Options.optional),
    from: Options.text("from").pipe(
      Options.withDescription(
        "created at or after (ISO 8601 date or date-time, UTC unless the zone is written)"
      ),
      Options.optional
    ),
    to: Options.text("to").pipe(
      Options.withDescription("created before (a date means its end)"),
      Options.optional
    ),
    amount: Options.text("amount").pipe(
      Options.withDescription("the amount asked, in major units (e.g. 10.50), with --currency"),
      Options.optional
    ),
    currency: Options.text("currency").pipe(
      Options.withDescription("the currency of --amount"),
      Options.optional
    ),
    merchant: Options.text("merchant").pipe(
      Options.withDescription("made for this merchant (a platform's credential; see also TILLFLOW_MERCHANT)"),
      Options.optional
    ),
    search: Options.text("search").pipe(
      Options.withDescription(
        "an execution id or its start (8 characters), idempotency key, reference, guid, customer reference or last four digits"
      ),
      Options.optional
    ),
    after: Options.text("after").pipe(
      Options.withDescription("the page after this cursor (printed as `next` by the previous page)"),
      Options.optional
    ),
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
        const intake = yield* Intake.Intake
        const given = <A>(option: Option.Option<A>, key: string) =>
          Option.isSome(option) ? { [key]: option.value } : {}
        const query = {
          ...given(o.outcome, "outcome"),
          ...given(o.status, "status"),
          ...given(o.serialNumber, "serialNumber"),
          ...given(o.operation, "operation"),
          ...given(o.workflow, "workflow"),
          ...given(o.from, "from"),
          ...given(o.to, "to"),
          ...given(o.amount, "amount"),
          ...given(o.currency, "currency"),
          ...given(o.merchant, "merchant"),
          ...given(o.search, "q")
        } as Intake.SearchQuery
        // A page at a time (keyset), as many as `--limit` asks.
        const found: Array<Intake.ExecutionView> = []
        let after = Option.getOrUndefined(o.after)
        let total = 0
        let next: string | undefined
        do {
          const page = yield* intake.search({
            ...query,
            ...(after === undefined ? {} : { after }),
            limit: Math.min(pageSize, o.limit - found.length)
          })
          found.push(...page.executions)
          total = page.total
          next = page.next
          after = next
        } while (next !== undefined && found.length < o.limit)
        yield* Output.print(
          o.json,
          {
            executions: found.map(Presentation.executionJson),
            total,
            ...(next === undefined ? {} : { next })
          },
          () =>
            found.length === 0
              ? ["no execution"]
              : Presentation.table(
                  ["execution", "created (UTC)", "operation", "serial", "amount", "status"],
                  found.map(executionRow)
                )
        )
        if (!o.json && found.length > 0) {
          yield* Output.note(
            `${found.length} of ${total}${next === undefined ? "" : `; next page: --after ${next}`}`
          )
        }
        return Output.ExitCode.ok
      })
    )
  )
).pipe(Command.withDescription("executions, newest first, a page at a time (--after), filtered and searched"))

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

const retry = Command.make(
  "retry",
  {
    ...common,
    executionId: Args.text({ name: "executionId" }),
    reason: Options.text("reason").pipe(Options.withDescription("why: recorded with the operator's name")),
    operator: Options.text("operator").pipe(
      Options.withDescription(
        "who asks, recorded with the retry (this process's store; a worker records its caller)"
      ),
      Options.optional
    ),
    wait: Options.integer("wait").pipe(
      Options.withDescription("seconds to wait for the new execution to end (default 60)"),
      Options.withDefault(60)
    ),
    yes: Options.boolean("yes").pipe(Options.withDescription("confirmed: do not ask"))
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const what = `try execution ${o.executionId} again (the same request, a new attempt)`
      if (!o.yes) {
        if (process.stdin.isTTY !== true) {
          return yield* new Output.UsageError({ message: `${what}: not confirmed; add --yes to send it` })
        }
        const confirmed = yield* Prompt.confirm({ message: `${what}?`, initial: false }).pipe(Effect.orDie)
        if (!confirmed)
          return yield* new Output.UsageError({ message: `${what}: not confirmed, nothing sent` })
      }
      return yield* Backend.provide(
        o,
        { cloud: true, worker: false },
        Effect.gen(function* () {
          yield* Backend.noteOperatorIgnored(o.operator)
          const view = yield* (yield* Intake.Intake).retry(
            o.executionId,
            { reason: o.reason, waitSeconds: Math.max(0, Math.min(600, o.wait)) },
            { name: Option.getOrElse(o.operator, () => process.env["USER"] ?? "cli"), via: "operator" }
          )
          yield* Output.printExecution(o.json, view)
          return Output.ExitCode.ok
        })
      )
    })
  )
).pipe(
  Command.withDescription(
    "try again a terminal operation that charged nothing (unavailable, not charged): the same request, a fresh reference, recorded with a reason"
  )
)

export const executions = Command.make("executions").pipe(
  Command.withDescription("workflow executions"),
  Command.withSubcommands([list, show, retry])
)
