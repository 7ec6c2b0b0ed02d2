/**
 * Commands on an earlier transaction (reversals, pre-authorization follow-ups, MOTO
 * reversal): through the terminal with `--serial` (the spec's `POST /transactions`
 * operation), else terminal-less when the command has a workflow for that.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { parseAmount } from "./amount.js"
import { runLifecycle, runOperation, terminalOptions } from "./execution.js"
import {
  amount,
  currency,
  customerReference,
  customerReferenceField,
  dual,
  originalId,
  originalReference
} from "./options.js"

/** How a linked command takes `--amount`. */
export type MoneyOption = "required" | "optional" | "none" | "signed"

/** The terminal-less workflow of a linked command, and its payload. */
export type TerminalLess = (input: {
  readonly originalGuid: string
  readonly money: { readonly amount: string; readonly currency: string } | undefined
  readonly reason: Option.Option<string>
  readonly tip: { readonly amount: string; readonly currency: string } | undefined
  readonly customerReference: Option.Option<string>
}) => Effect.Effect<
  { readonly workflow: string; readonly payload: Record<string, unknown> },
  Output.UsageError
>

/**
 * `--refund` (refundReversal through the terminal), `--tip` (a pre-authorization's increase
 * and capture), whether the operation through the terminal needs `--amount` (the spec's
 * saleReversal and refundReversal carry the amount they reverse), and the terminal-less
 * workflow if there is one.
 */
export type Flags = {
  readonly refundFlag?: boolean
  readonly tip?: boolean
  readonly amountOnTerminal?: string
  readonly terminalLess?: TerminalLess
}

const optionsOf = (money: MoneyOption, flags: Flags) => ({
  ...dual,
  originalTransactionId: originalId,
  originalReference,
  amount:
    money === "none"
      ? Options.none.pipe(Options.map(() => Option.none<string>()))
      : money === "optional"
        ? Options.optional(amount)
        : amount.pipe(Options.map(Option.some)),
  currency,
  refund:
    flags.refundFlag === true
      ? Options.boolean("refund").pipe(
          Options.withDescription("reverse a refund (refundReversal) instead of a sale; with --serial only")
        )
      : Options.none.pipe(Options.map(() => false)),
  tip:
    flags.tip === true
      ? Options.text("tip").pipe(
          Options.withDescription("a tip in major units (same currency), added to the hold or the capture"),
          Options.optional
        )
      : Options.none.pipe(Options.map(() => Option.none<string>())),
  customerReference,
  reason:
    flags.terminalLess === undefined
      ? Options.none.pipe(Options.map(() => Option.none<string>()))
      : Options.text("reason").pipe(
          Options.withDescription(
            "messageReasonCode of a terminal-less reversal (default CUSTOMER_CANCELLATION)"
          ),
          Options.optional
        )
})

/**
 * A linked operation: through the terminal with `--serial` (the spec's `POST /transactions`
 * operation), else terminal-less when `terminalLess` gives a workflow for it.
 */
export const linked = (
  name: string,
  description: string,
  operation: (o: { readonly refund: boolean }) => string,
  money: MoneyOption,
  flags: Flags = {}
) =>
  Command.make(
    name,
    optionsOf(money, flags),
    Handler.make((o) =>
      Effect.gen(function* () {
        const value = o.amount
        const parsed = Option.isSome(value)
          ? yield* parseAmount(value.value, o.currency, { signed: money === "signed" })
          : undefined
        const tip = Option.isSome(o.tip)
          ? yield* parseAmount(o.tip.value, o.currency, { flag: "--tip" })
          : undefined
        if (Option.isSome(o.serial)) {
          if (tip !== undefined) {
            return yield* new Output.UsageError({
              message: `--tip is for the terminal-less ${name} (without --serial, POST /preauthorization/...): the terminal's ${operation(o)} takes no tip`
            })
          }
          if (parsed === undefined && flags.amountOnTerminal !== undefined) {
            return yield* new Output.UsageError({ message: flags.amountOnTerminal })
          }
          return yield* runOperation(
            terminalOptions(o, o.serial.value),
            {
              operation: operation(o),
              originalTransactionId: o.originalTransactionId,
              ...(parsed ?? {}),
              ...customerReferenceField(o.customerReference)
            },
            { originalTransactionReference: Option.getOrUndefined(o.originalReference) }
          )
        }
        if (flags.terminalLess === undefined) {
          return yield* new Output.UsageError({
            message: `${name} runs through a terminal: --serial is required`
          })
        }
        if (o.refund || Option.isSome(o.originalReference)) {
          return yield* new Output.UsageError({
            message: "--refund and --original-reference are only allowed with --serial (through a terminal)"
          })
        }
        const call = yield* flags.terminalLess({
          originalGuid: o.originalTransactionId,
          money: parsed,
          reason: o.reason,
          tip,
          customerReference: o.customerReference
        })
        return yield* runLifecycle(o, call.workflow, call.payload)
      })
    )
  ).pipe(Command.withDescription(description))
