/** `tillflow batch`: a terminal's batches (close, summary, detail), terminal-less. */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"
import * as Handler from "../Handler.js"
import { onTerminal } from "../internal/execution.js"
import {
  currency,
  customerReference,
  customerReferenceField,
  lifecycleRun,
  serial,
  terminalType
} from "../internal/options.js"

const batchOptions = {
  ...lifecycleRun,
  serial,
  terminalType,
  batch: Options.text("batch").pipe(Options.withDescription("the batch number"))
}

const close = Command.make(
  "close",
  batchOptions,
  Handler.make((o) => onTerminal(o, "Batch.Close", { batchNumber: o.batch }))
).pipe(Command.withDescription("closes the open batch"))

const summary = Command.make(
  "summary",
  { ...batchOptions, currency },
  Handler.make((o) =>
    onTerminal(o, "Batch.Summary", { batchNumber: o.batch, currency: o.currency.toUpperCase() })
  )
).pipe(Command.withDescription("a batch's totals"))

const detail = Command.make(
  "detail",
  {
    ...batchOptions,
    currency,
    customerReference,
    rrn: Options.text("rrn").pipe(
      Options.withDescription("only the transaction of this RRN"),
      Options.optional
    )
  },
  Handler.make((o) =>
    onTerminal(o, "Batch.Detail", {
      batchNumber: o.batch,
      currency: o.currency.toUpperCase(),
      ...(Option.isSome(o.rrn) ? { rrn: o.rrn.value } : {}),
      ...customerReferenceField(o.customerReference)
    })
  )
).pipe(Command.withDescription("a batch's transactions, one line each"))

export const batch = Command.make("batch").pipe(
  Command.withDescription("a terminal's batches"),
  Command.withSubcommands([close, summary, detail])
)
