/**
 * `tillflow preauth`: pre-authorizations. `open` runs on a terminal; `increase`,
 * `capture` and `reverse` run through the terminal with `--serial`, else terminal-less on
 * the hold's guid.
 */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { parseAmount } from "../internal/amount.js"
import { optionalRef, runOperation } from "../internal/execution.js"
import { linked } from "../internal/linked.js"
import {
  amount,
  currency,
  customerReference,
  customerReferenceField,
  reference,
  run
} from "../internal/options.js"

const open = Command.make(
  "open",
  { ...run, amount, currency, reference, customerReference },
  Handler.make((o) =>
    Effect.flatMap(parseAmount(o.amount, o.currency), (money) =>
      runOperation(o, {
        operation: "preAuthorization",
        ...money,
        ...optionalRef(o.reference),
        ...customerReferenceField(o.customerReference)
      })
    )
  )
).pipe(Command.withDescription("opens a pre-authorization (a hold) on a terminal"))

const increase = linked(
  "increase",
  "increases a hold (a negative --amount decreases it); terminal-less without --serial",
  () => "preAuthorizationIncrease",
  "signed",
  {
    tip: true,
    terminalLess: ({ money, originalGuid, tip, customerReference }) =>
      money === undefined
        ? Effect.fail(new Output.UsageError({ message: "--amount is required" }))
        : money.amount.startsWith("-") && tip !== undefined
          ? Effect.fail(
              new Output.UsageError({
                message: "--tip goes with an increase: a decrease (negative --amount) takes none"
              })
            )
          : Effect.succeed(
              money.amount.startsWith("-")
                ? {
                    workflow: "PreAuthorization.Decrease",
                    payload: {
                      originalGuid,
                      amount: { ...money, amount: money.amount.slice(1) },
                      ...customerReferenceField(customerReference)
                    }
                  }
                : {
                    workflow: "PreAuthorization.Increase",
                    payload: {
                      originalGuid,
                      amount: money,
                      ...(tip === undefined ? {} : { tip }),
                      ...customerReferenceField(customerReference)
                    }
                  }
            )
  }
)

const capture = linked(
  "capture",
  "captures a pre-authorization once (checked against its scheme's window and tolerance); terminal-less without --serial, where --amount is required",
  () => "preAuthorizationCapture",
  "optional",
  {
    tip: true,
    terminalLess: ({ money, originalGuid, tip, customerReference }) =>
      money === undefined
        ? Effect.fail(
            new Output.UsageError({
              message:
                "--amount is required for a terminal-less capture (without --serial): the amount to capture; through a terminal (--serial) it is optional"
            })
          )
        : Effect.succeed({
            workflow: "PreAuthorization.Capture",
            payload: {
              originalGuid,
              amount: money,
              ...(tip === undefined ? {} : { tip }),
              ...customerReferenceField(customerReference)
            }
          })
  }
)

const reverse = linked(
  "reverse",
  "releases a hold, or reverses its capture before settlement; terminal-less without --serial",
  () => "preAuthorizationReversal",
  "none",
  {
    terminalLess: ({ originalGuid, reason }) =>
      Effect.succeed({
        workflow: "Reversal.Reverse",
        payload: { originalGuid, ...(Option.isSome(reason) ? { messageReasonCode: reason.value } : {}) }
      })
  }
)

export const preauth = Command.make("preauth").pipe(
  Command.withDescription("pre-authorizations: through a terminal with --serial, else terminal-less"),
  Command.withSubcommands([open, increase, capture, reverse])
)
