/**
 * `tillflow alerts list|ack|resolve`: a running worker's alerts (its monitor follows the
 * event log), listed with their state, who moved them on and why; acknowledged or resolved
 * with a reason, attributed to the operator logged in (`tillflow login`), else the intake
 * token. Alerts are a worker's view, so these commands need one (`--worker`,
 * `TILLFLOW_WORKER_URL`, or the worker holding the embedded store).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as IntakeClient from "@tillflow/intake/IntakeClient"
import * as Monitor from "@tillflow/intake/Monitor"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { common } from "../internal/options.js"

/** The running worker's alerts, or a usage error saying one is needed. */
const client = (options: { readonly worker: Option.Option<string> }) =>
  Effect.gen(function* () {
    const running = yield* Backend.runningWorker(options)
    if (Option.isNone(running)) {
      return yield* new Output.UsageError({
        message:
          "alerts are a running worker's: start one (tillflow worker) or name it with --worker / TILLFLOW_WORKER_URL"
      })
    }
    return yield* IntakeClient.alerts({
      baseUrl: running.value.baseUrl,
      credential: running.value.credential
    })
  })

const utc = (at: number) => `${new Date(at).toISOString().replace("T", " ").slice(0, 19)} UTC`

/** An alert in a few lines: its id, kind, state, what, and who moved it on and why. */
export const describeAlert = (a: Monitor.AlertView): ReadonlyArray<string> => [
  `${a.id}  ${a.kind}  ${a.state}  ${utc(a.at)}`,
  `  ${a.message}`,
  ...(a.acknowledged === undefined
    ? []
    : [
        `  acknowledged by ${a.acknowledged.operator} at ${utc(a.acknowledged.at)}: ${a.acknowledged.reason}`
      ]),
  ...(a.resolved === undefined
    ? []
    : [`  resolved by ${a.resolved.operator} at ${utc(a.resolved.at)}: ${a.resolved.reason}`])
]

const list = Command.make(
  "list",
  {
    ...common,
    state: Options.choice("state", ["open", "acknowledged", "resolved", "all"]).pipe(
      Options.withDescription("only alerts in this state, or all (default: the unresolved ones)"),
      Options.optional
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const alerts = yield* client(o)
      const view = yield* alerts.list(Option.isSome(o.state) ? { state: o.state.value } : {})
      yield* Output.print(o.json, view, () =>
        view.alerts.length === 0 ? ["no alert"] : view.alerts.flatMap(describeAlert)
      )
      return Output.ExitCode.ok
    })
  )
).pipe(
  Command.withDescription("lists the alerts, most severe first (the unresolved ones unless --state says)")
)

const step = (name: "ack" | "resolve", description: string) =>
  Command.make(
    name,
    {
      ...common,
      id: Args.text({ name: "alert-id" }),
      reason: Options.text("reason").pipe(Options.withDescription("why: what was done or found"))
    },
    Handler.make((o) =>
      Effect.gen(function* () {
        // A malformed id is said here, before anything is sent.
        if (!Schema.is(Monitor.AlertId)(o.id)) {
          return yield* new Output.UsageError({
            message: `${o.id}: an alert id is <kind>.<executionId>[.<version>] as \`tillflow alerts list\` shows it`
          })
        }
        const alerts = yield* client(o)
        const alert = yield* name === "ack"
          ? alerts.acknowledge(o.id, o.reason)
          : alerts.resolve(o.id, o.reason)
        yield* Output.print(o.json, alert, () => describeAlert(alert))
        return Output.ExitCode.ok
      })
    )
  ).pipe(Command.withDescription(description))

/** `tillflow alerts`: a running worker's alerts and their lifecycle. */
export const alerts = Command.make("alerts").pipe(
  Command.withDescription("a running worker's alerts: list, acknowledge, resolve (with a reason)"),
  Command.withSubcommands([
    list,
    step("ack", "acknowledges an open alert with a reason (someone is on it)"),
    step("resolve", "resolves an alert with a reason (hidden from the list unless asked for)")
  ])
)
