/**
 * The terminal operations of the spec's `POST /transactions`, one command each: sale,
 * refund, reverse, tokenize, print, ping, card-pan, and stop for the operation in flight.
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
import { parseAmount } from "../internal/amount.js"
import { optionalRef, runOperation } from "../internal/execution.js"
import { linked } from "../internal/linked.js"
import { billingField } from "../internal/requestFields.js"
import {
  amount,
  billing,
  common,
  currency,
  customerReference,
  customerReferenceField,
  duplicateCheck,
  key,
  originalId,
  originalReference,
  reference,
  run,
  serial,
  terminalType,
  waitSeconds,
  withShownDefault
} from "../internal/options.js"

export const sale = Command.make(
  "sale",
  {
    ...run,
    amount,
    currency,
    reference,
    customerReference,
    duplicateCheck,
    ...billing,
    tokenize: Options.boolean("tokenize").pipe(
      Options.withDescription("also return a card token (saleAndTokenizeCard)")
    )
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      const money = yield* parseAmount(o.amount, o.currency)
      const billed = yield* billingField(o)
      return yield* runOperation(o, {
        operation: o.tokenize ? "saleAndTokenizeCard" : "sale",
        ...money,
        ...optionalRef(o.reference),
        ...customerReferenceField(o.customerReference),
        ...(o.duplicateCheck ? { duplicate_check: true } : {}),
        ...billed
      })
    })
  )
).pipe(Command.withDescription("a card payment on a terminal"))

export const refund = Command.make(
  "refund",
  {
    ...run,
    amount,
    currency,
    reference,
    customerReference,
    duplicateCheck,
    originalTransactionId: Options.optional(originalId),
    originalReference
  },
  Handler.make((o) =>
    Effect.gen(function* () {
      if (Option.isNone(o.originalTransactionId) && Option.isSome(o.originalReference)) {
        return yield* new Output.UsageError({
          message: "--original-reference is only allowed with --original-transaction-id (a linked refund)"
        })
      }
      if (Option.isSome(o.originalTransactionId) && Option.isSome(o.reference)) {
        return yield* new Output.UsageError({
          message:
            "--reference is not allowed on a linked refund: it is reconciled through --original-reference"
        })
      }
      const money = yield* parseAmount(o.amount, o.currency)
      return yield* runOperation(
        o,
        {
          operation: "refund",
          ...money,
          ...(Option.isSome(o.originalTransactionId)
            ? { originalTransactionId: o.originalTransactionId.value }
            : optionalRef(o.reference)),
          ...customerReferenceField(o.customerReference),
          ...(o.duplicateCheck ? { duplicate_check: true } : {})
        },
        { originalTransactionReference: Option.getOrUndefined(o.originalReference) }
      )
    })
  )
).pipe(Command.withDescription("a refund: unlinked, or linked to its sale with --original-transaction-id"))

export const reverse = linked(
  "reverse",
  "reverses a sale: through the terminal with --serial (saleReversal, or refundReversal with --refund), else terminal-less (POST /reversal; in full, or --amount where partial reversals are allowed)",
  (o) => (o.refund ? "refundReversal" : "saleReversal"),
  "optional",
  {
    refundFlag: true,
    amountOnTerminal:
      "--amount is required with --serial: a saleReversal (or refundReversal) through the terminal carries the amount it reverses, the original's full amount. Without --serial the reversal is terminal-less and --amount is optional (in full when left out)",
    terminalLess: ({ money, originalGuid, reason }) =>
      Effect.succeed({
        workflow: "Reversal.Reverse",
        payload: {
          originalGuid,
          ...(money === undefined ? {} : { amount: money }),
          ...(Option.isSome(reason) ? { messageReasonCode: reason.value } : {})
        }
      })
  }
)

/** A terminal operation that takes nothing but the common options. */
const utility = (name: string, operation: string, description: string) =>
  Command.make(
    name,
    { ...run },
    Handler.make((o) => runOperation(o, { operation }))
  ).pipe(Command.withDescription(description))

export const tokenize = utility(
  "tokenize",
  "tokenizeCard",
  "reads a card and returns its token, without charging"
)

export const ping = Command.make(
  "ping",
  {
    ...run,
    deviceInfo: Options.boolean("device-info").pipe(Options.withDescription("ask for versions and battery"))
  },
  Handler.make((o) =>
    runOperation(o, { operation: "pingDevice", ...(o.deviceInfo ? { returnDeviceInfo: true } : {}) })
  )
).pipe(Command.withDescription("checks that a terminal answers"))

export const print = Command.make(
  "print",
  { ...run, receipt: Args.text({ name: "receipt" }).pipe(Args.withDescription("receipt HTML, or its URL")) },
  Handler.make((o) => runOperation(o, { operation: "printReceipt", receipt: o.receipt }))
).pipe(Command.withDescription("prints a receipt on a terminal"))

export const cardPan = utility(
  "card-pan",
  "cardPan",
  "reads the number of a whitelisted (non-payment) card; it is never stored"
)

export const stop = Command.make(
  "stop",
  {
    ...common,
    serial,
    terminalType,
    key,
    wait: waitSeconds.pipe(withShownDefault(60)),
    of: Options.text("of").pipe(
      Options.withDescription(
        "the execution being stopped: the stop is then recorded in its history, with --reason"
      ),
      Options.optional
    ),
    reason: Options.text("reason").pipe(
      Options.withDescription("why (with --of): recorded with who asked"),
      Options.optional
    )
  },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: true, worker: true },
      Effect.gen(function* () {
        const intake = yield* Intake.Intake
        const view = yield* intake.stop(
          {
            serialNumber: o.serial,
            ...(Option.isSome(o.terminalType) ? { terminalType: o.terminalType.value } : {}),
            ...(Option.isSome(o.key) ? { idempotencyKey: o.key.value } : {}),
            ...(Option.isSome(o.of) ? { of: o.of.value } : {}),
            ...(Option.isSome(o.reason) ? { reason: o.reason.value } : {}),
            waitSeconds: o.wait
          },
          { name: process.env["USER"] ?? "cli", via: "operator" }
        )
        yield* Output.printExecution(o.json, view)
        return Output.exitCodeOf(view)
      })
    )
  )
).pipe(Command.withDescription("stops the operation in flight on a terminal (at a stoppable step)"))
