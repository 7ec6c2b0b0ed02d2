/**
 * `tillflow moto`: mail and telephone orders, keyed on a terminal with `--serial`, or
 * terminal-less with a card token (sale) or the MOTO sale's guid (refund, reverse).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { parseAmount } from "../internal/amount.js"
import { optionalRef, runLifecycle, runOperation, terminalOptions } from "../internal/execution.js"
import { linked } from "../internal/linked.js"
import {
  amount,
  billing,
  currency,
  customerReference,
  customerReferenceField,
  dual,
  duplicateCheck,
  originalId,
  reference,
  run
} from "../internal/options.js"
import { billingField } from "../internal/requestFields.js"

const sale = Command.make(
  "sale",
  {
    ...dual,
    amount,
    currency,
    reference,
    customerReference,
    duplicateCheck,
    ...billing,
    cardToken: Options.text("card-token").pipe(
      Options.withDescription("terminal-less: the card token (from tokenize or a tokenizing sale)"),
      Options.optional
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const money = yield* parseAmount(o.amount, o.currency)
      const billed = yield* billingField(o)
      if (Option.isSome(o.serial) === Option.isSome(o.cardToken)) {
        return yield* new Output.UsageError({
          message:
            "moto sale takes either --serial (keyed on a terminal) or --card-token (terminal-less), not both"
        })
      }
      return yield* Option.isSome(o.serial)
        ? runOperation(terminalOptions(o, o.serial.value), {
            operation: "moToSale",
            ...money,
            ...optionalRef(o.reference),
            ...customerReferenceField(o.customerReference),
            ...(o.duplicateCheck ? { duplicate_check: true } : {}),
            ...billed
          })
        : o.duplicateCheck
          ? Effect.fail(
              new Output.UsageError({
                message: "--duplicate-check goes with --serial (a terminal's moToSale)"
              })
            )
          : runLifecycle(o, "Moto.Sale", {
              cardToken: Option.getOrElse(o.cardToken, () => ""),
              amount: money,
              ...optionalRef(o.reference),
              ...customerReferenceField(o.customerReference),
              ...billed
            })
    })
  )
).pipe(Command.withDescription("a MOTO sale"))

const refund = Command.make(
  "refund",
  {
    ...dual,
    amount,
    currency,
    reference,
    customerReference,
    originalTransactionId: Options.optional(originalId)
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const money = yield* parseAmount(o.amount, o.currency)
      if (Option.isNone(o.serial) && Option.isNone(o.originalTransactionId)) {
        return yield* new Output.UsageError({
          message: "a terminal-less MOTO refund needs --original-transaction-id (the MOTO sale's guid)"
        })
      }
      return yield* Option.isSome(o.serial)
        ? runOperation(terminalOptions(o, o.serial.value), {
            operation: "moToRefund",
            ...money,
            ...(Option.isSome(o.originalTransactionId)
              ? { originalTransactionId: o.originalTransactionId.value }
              : optionalRef(o.reference)),
            ...customerReferenceField(o.customerReference)
          })
        : runLifecycle(o, "Moto.Refund", {
            originalGuid: Option.getOrElse(o.originalTransactionId, () => ""),
            amount: money,
            ...optionalRef(o.reference),
            ...customerReferenceField(o.customerReference)
          })
    })
  )
).pipe(Command.withDescription("a MOTO refund (all refunds together not above the sale)"))

const reverse = linked("reverse", "reverses a MOTO sale within 24 h", () => "moToReversal", "optional", {
  terminalLess: ({ originalGuid }) => Effect.succeed({ workflow: "Moto.Reverse", payload: { originalGuid } })
})

const preauth = Command.make(
  "preauth",
  { ...run, amount, currency, reference, customerReference },
  Handler.make((o) =>
    Effect.flatMap(parseAmount(o.amount, o.currency), (money) =>
      runOperation(o, {
        operation: "moToPreAuthorization",
        ...money,
        ...optionalRef(o.reference),
        ...customerReferenceField(o.customerReference)
      })
    )
  )
).pipe(Command.withDescription("a MOTO pre-authorization (moToPreAuthorization), keyed on a terminal"))

export const moto = Command.make("moto").pipe(
  Command.withDescription("MOTO: keyed on a terminal with --serial, or terminal-less with a card token"),
  Command.withSubcommands([sale, refund, reverse, preauth])
)
