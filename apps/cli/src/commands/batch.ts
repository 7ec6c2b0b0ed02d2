/** `tillflow batch`: a terminal's batches (close, summary, detail), terminal-less. */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Option from "effect/Option"
import * as Handler from "../Handler.js"
import { onTerminal } from "../internal/execution.js"
import { currency, lifecycleRun, serial, terminalType } from "../internal/options.js"

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
  { ...batchOptions, currency, rrn: Options.text("rrn").pipe(Options.optional) },
  Handler.make((o) =>
    onTerminal(o, "Batch.Detail", {
      batchNumber: o.batch,
      currency: o.currency.toUpperCase(),
      ...(Option.isSome(o.rrn) ? { rrn: o.rrn.value } : {})
    })
  )
).pipe(Command.withDescription("a batch's transactions"))

export const batch = Command.make("batch").pipe(
  Command.withDescription("a terminal's batches"),
  Command.withSubcommands([close, summary, detail])
)
