/**
 * `tillflow transactions act <guid> --action <kind>`: an operator's action on a transaction
 * (refund, reverse, capture, increase, release, tip) through the intake's
 * `POST /v1/transactions/{guid}/actions`, the same operation and money rules as any caller,
 * under a key derived from the action (run twice, it acts once). Confirmed first with its
 * amount and currency: asked on a terminal, else `--yes` (without it: exit 2, nothing sent).
 * A money rule's refusal prints the rule and its message (exit 4).
 *
 * `tillflow transactions resolve <guid>`: an operator resolves a request in doubt on a
 * transaction — its outcome stayed unknown after reconciliation and it holds the
 * transaction — as applied or not applied, with their name and a reason. Recorded as an
 * audited `InDoubtResolved` in the transaction's history (`InDoubtResolution`), never by
 * deleting anything; refused naming the rule when nothing is in doubt under that request.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Prompt from "@effect/cli/Prompt"
import * as Intake from "@tillflow/intake/Intake"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { common, resolution } from "../internal/options.js"

const resolve = Command.make(
  "resolve",
  {
    ...common,
    guid: Args.text({ name: "guid" }),
    ...resolution
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
            operator: yield* Backend.resolvingOperator(o.operator),
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

const act = Command.make(
  "act",
  {
    ...common,
    guid: Args.text({ name: "guid" }),
    action: Options.choice("action", ["refund", "reverse", "capture", "increase", "release", "tip"]).pipe(
      Options.withDescription("what to do: refund, reverse, capture, increase, release (a hold) or tip")
    ),
    amount: Options.text("amount").pipe(
      Options.withAlias("a"),
      Options.withDescription(
        "amount in major units (10.50): refund, capture, increase, tip; a partial reverse"
      ),
      Options.optional
    ),
    currency: Options.text("currency").pipe(
      Options.withAlias("c"),
      Options.withDescription("the amount's currency, which must be the transaction's (ISO 4217)"),
      Options.optional
    ),
    reason: Options.text("reason").pipe(
      Options.withDescription("why: recorded in the transaction's history")
    ),
    repeat: Options.integer("repeat").pipe(
      Options.withDescription(
        "a second identical action on purpose (2, 3 …): otherwise the same action acts once"
      ),
      Options.optional
    ),
    operator: Options.text("operator").pipe(
      Options.withDescription(
        "who acts, recorded with the action (this process's store; a worker records the operator logged in with tillflow login, else its token)"
      ),
      Options.optional
    ),
    yes: Options.boolean("yes").pipe(Options.withDescription("confirmed: do not ask"))
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const what =
        `${o.action} ${Option.isSome(o.amount) ? `of ${o.amount.value} ${Option.getOrElse(o.currency, () => "(no currency)")}` : "in full"}` +
        ` on transaction ${o.guid}`
      if (!o.yes) {
        if (process.stdin.isTTY !== true) {
          return yield* new Output.UsageError({ message: `${what}: not confirmed; add --yes to send it` })
        }
        const confirmed = yield* Prompt.confirm({ message: `${what}?`, initial: false }).pipe(Effect.orDie)
        if (!confirmed)
          return yield* new Output.UsageError({ message: `${what}: not confirmed, nothing sent` })
      }
      yield* Output.note(`tillflow: ${what}`)
      return yield* Backend.provide(
        o,
        { cloud: true, worker: false },
        Effect.gen(function* () {
          yield* Backend.noteOperatorIgnored(o.operator)
          const view = yield* (yield* Intake.Intake).act(
            o.guid,
            {
              action: o.action,
              reason: o.reason,
              ...(Option.isSome(o.amount) ? { amount: o.amount.value } : {}),
              ...(Option.isSome(o.currency) ? { currency: o.currency.value } : {}),
              ...(Option.isSome(o.repeat) ? { repeat: o.repeat.value } : {})
            },
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
    "an operator's action on a transaction (refund, reverse, capture, increase, release, tip), confirmed with its amount and currency, recorded with a reason"
  )
)

/** `tillflow transactions`: operator actions on a transaction's history. */
export const transactions = Command.make("transactions").pipe(
  Command.withDescription("operator actions on a transaction's history"),
  Command.withSubcommands([act, resolve])
)
