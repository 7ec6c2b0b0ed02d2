/**
 * `tillflow transactions resolve <guid>`: an operator resolves a request in doubt on a
 * transaction — its outcome stayed unknown after reconciliation and it holds the
 * transaction — as applied or not applied, with their name and a reason. Recorded as an
 * audited `InDoubtResolved` in the transaction's history (`InDoubtResolution`), never by
 * deleting anything; refused naming the rule when nothing is in doubt under that request.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Intake from "@tillflow/intake/Intake"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { common } from "../internal/options.js"

const resolve = Command.make(
  "resolve",
  {
    ...common,
    guid: Args.text({ name: "guid" }),
    request: Options.text("request").pipe(
      Options.withDescription("the requestId of the request in doubt (see `tillflow audit timeline`)")
    ),
    applied: Options.boolean("applied").pipe(Options.withDescription("the request was applied")),
    notApplied: Options.boolean("not-applied").pipe(Options.withDescription("the request was not applied")),
    reason: Options.text("reason").pipe(Options.withDescription("why: what the operator knows")),
    operator: Options.text("operator").pipe(Options.withDescription("who resolves it")),
    statusEndpoint: Options.text("status-endpoint").pipe(
      Options.withDescription("what the status endpoint said, if it was asked"),
      Options.optional
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      if (o.applied === o.notApplied) {
        return yield* new Output.UsageError({ message: "give exactly one of --applied or --not-applied" })
      }
      return yield* Backend.provide(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const resolved = yield* (yield* Intake.Intake).resolve(o.guid, {
            requestId: o.request,
            resolution: o.applied ? "applied" : "notApplied",
            operator: o.operator,
            reason: o.reason,
            ...(Option.isSome(o.statusEndpoint) ? { statusEndpoint: o.statusEndpoint.value } : {})
          })
          yield* Output.print(o.json, resolved, () => [
            `${resolved.operation} request ${resolved.requestId} on ${resolved.guid} resolved as ` +
              `${resolved.resolution === "applied" ? "applied" : "not applied"}` +
              (resolved.amount === undefined ? "" : ` (${resolved.amount} ${resolved.currency ?? ""})`) +
              ` at ${resolved.at}`
          ])
          return Output.ExitCode.ok
        })
      )
    })
  )
).pipe(
  Command.withDescription(
    "resolve a request in doubt on a transaction as applied or not applied, with the operator's name and a reason (audited)"
  )
)

/** `tillflow transactions`: operator actions on a transaction's history. */
export const transactions = Command.make("transactions").pipe(
  Command.withDescription("operator actions on a transaction's history"),
  Command.withSubcommands([resolve])
)
