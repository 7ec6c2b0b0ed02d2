/**
 * `tillflow attempts resolve`: an operator resolves a request in doubt outside a
 * transaction's history — a terminal's batch close (`--batch <serial>`: it holds every later
 * close of the terminal), a MOTO sale attempt (`--moto-sale <transactionReference>`: charged,
 * maybe, under a guid tillflow never saw), a device command (`--device <serial>`) or a
 * terminal operation whose outcome stayed unresolved (`--terminal <executionId>`) — as
 * applied or not applied, with their name and a reason, through the intake's
 * `POST /v1/attempts/{kind}/{key}/resolve` (`InDoubtResolution.resolveAttempt`). An applied
 * MOTO sale or terminal operation that moves money needs `--guid`, the guid the gateway
 * gave it: its history opens under it; a terminal operation is booked at the amount asked,
 * or `--amount`/`--currency` when it moved another. Recorded as an audited `InDoubtResolved`
 * (a terminal operation's: `TerminalOutcomeResolved`); refused naming the rule when nothing
 * is in doubt.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as Intake from "@tillflow/intake/Intake"
import * as IntakeService from "@tillflow/intake/Intake"
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
    batch: Options.text("batch").pipe(
      Options.withDescription("a batch close in doubt: the terminal's serial"),
      Options.optional
    ),
    motoSale: Options.text("moto-sale").pipe(
      Options.withDescription("a MOTO sale in doubt: its transactionReference"),
      Options.optional
    ),
    device: Options.text("device").pipe(
      Options.withDescription("a device command in doubt: the terminal's serial"),
      Options.optional
    ),
    terminal: Options.text("terminal").pipe(
      Options.withDescription(
        "a terminal operation whose outcome stayed unresolved: its execution id (--request: its attempt id or the execution id)"
      ),
      Options.optional
    ),
    ...resolution,
    guid: Options.text("guid").pipe(
      Options.withDescription(
        "an applied MOTO sale or terminal operation: the guid the gateway gave it (from its report or status)"
      ),
      Options.optional
    ),
    amount: Options.text("amount").pipe(
      Options.withDescription(
        "an applied terminal operation: what it moved in major units, when not the amount asked (with --currency)"
      ),
      Options.optional
    ),
    currency: Options.text("currency").pipe(
      Options.withDescription("the currency of --amount (the one the operation asked in)"),
      Options.optional
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const named: ReadonlyArray<readonly [Intake.AttemptKind, Option.Option<string>]> = [
        ["batch", o.batch],
        ["moto-sale", o.motoSale],
        ["device", o.device],
        ["terminal", o.terminal]
      ]
      const given = named.flatMap(([kind, key]) => (Option.isSome(key) ? [[kind, key.value] as const] : []))
      const only = given.length === 1 ? given[0] : undefined
      if (only === undefined) {
        return yield* new Output.UsageError({
          message:
            "give exactly one of --batch <serial>, --moto-sale <transactionReference>, --device <serial> or --terminal <executionId>"
        })
      }
      if (o.applied === o.notApplied) {
        return yield* new Output.UsageError({ message: "give exactly one of --applied or --not-applied" })
      }
      const [kind, key] = only
      return yield* Backend.provide(
        o,
        { cloud: false, worker: false },
        Effect.gen(function* () {
          const resolved = yield* (yield* IntakeService.Intake).resolveAttempt(kind, key, {
            requestId: o.request,
            resolution: o.applied ? "applied" : "notApplied",
            operator: yield* Backend.resolvingOperator(o.operator),
            reason: o.reason,
            ...(Option.isSome(o.guid) ? { guid: o.guid.value } : {}),
            ...(Option.isSome(o.amount) ? { amount: o.amount.value } : {}),
            ...(Option.isSome(o.currency) ? { currency: o.currency.value } : {}),
            ...(Option.isSome(o.statusEndpoint) ? { statusEndpoint: o.statusEndpoint.value } : {})
          })
          yield* Output.print(o.json, resolved, () => [
            `${resolved.operation} request ${resolved.requestId} on ${resolved.streamId} resolved as ` +
              `${resolved.resolution === "applied" ? "applied" : "not applied"}` +
              (resolved.guid === undefined
                ? ""
                : `: transaction ${resolved.guid} opened (${resolved.amount ?? "?"} ${resolved.currency ?? ""})`) +
              ` at ${resolved.at}`
          ])
          return Output.ExitCode.ok
        })
      )
    })
  )
).pipe(
  Command.withDescription(
    "resolve a request in doubt on a batch close, a MOTO sale attempt, a device command or a terminal operation left unresolved as applied or not applied, with the operator's name and a reason (audited)"
  )
)

/** `tillflow attempts`: requests in doubt outside a transaction's history. */
export const attempts = Command.make("attempts").pipe(
  Command.withDescription(
    "requests in doubt outside a transaction's history: batch closes, MOTO sales, device commands, terminal operations left unresolved"
  ),
  Command.withSubcommands([resolve])
)
