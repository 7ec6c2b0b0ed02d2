/**
 * Terminal-less follow-ups of a completed transaction, by its guid: `tip-adjust` (the tip
 * of an approved sale before its batch closes) and `token` (its card token, later).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Handler from "../Handler.js"
import { parseAmount } from "../internal/amount.js"
import { runLifecycle } from "../internal/execution.js"
import { currency, lifecycleRun, originalId } from "../internal/options.js"

export const tipAdjust = Command.make(
  "tip-adjust",
  {
    ...lifecycleRun,
    originalTransactionId: originalId,
    tip: Options.text("tip").pipe(
      Options.withDescription("the tip in major units, e.g. 2.50 (replaces any earlier one)")
    ),
    currency
  },
  Handler.make((o) =>
    Effect.flatMap(parseAmount(o.tip, o.currency), (tip) =>
      runLifecycle(o, "TipAdjustment.Adjust", { originalGuid: o.originalTransactionId, tip })
    )
  )
).pipe(
  Command.withDescription("sets the tip of an approved sale before its batch closes (the last one wins)")
)

export const token = Command.make(
  "token",
  { ...lifecycleRun, originalTransactionId: originalId },
  Handler.make((o) =>
    runLifecycle(o, "DeferredTokenization.Tokenize", { originalGuid: o.originalTransactionId })
  )
).pipe(Command.withDescription("the card token of a completed card-present transaction (within 12 months)"))
