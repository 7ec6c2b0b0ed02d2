/** `tillflow status`: the remote service's status endpoint for a transaction reference. */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Intake from "@tillflow/intake/Intake"
import * as Effect from "effect/Effect"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import * as Presentation from "../Presentation.js"
import { common, withShownDefault } from "../internal/options.js"

/**
 * One status entry as a row: its type, status, amount (`10.50 EUR`), guid and the
 * terminal's timestamp, which is the terminal's local time (the service says no zone).
 */
const entryRow = (entry: unknown): ReadonlyArray<string> => {
  const r = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>
  return [
    String(r["type"] ?? "-"),
    String(r["finStatus"] ?? "-"),
    Presentation.moneyText(r["totalAmount"] ?? r["requestedAmount"], r["currency"]) ?? "-",
    String(r["transactionID"] ?? r["transactionId"] ?? "-"),
    Presentation.terminalTime(r["efttimestamp"]) ?? "-"
  ]
}

export const status = Command.make(
  "status",
  {
    ...common,
    reference: Args.text({ name: "transactionReference" }),
    selector: Options.text("selector").pipe(
      Options.withDescription("first, last, all or a position from 1"),
      withShownDefault("first")
    )
  },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: true, worker: false },
      Effect.gen(function* () {
        const entries = yield* (yield* Intake.Intake).transactionStatus(o.reference, o.selector)
        yield* Output.print(
          o.json,
          entries.map((entry) => Presentation.plain(entry)),
          () =>
            entries.length === 0
              ? ["no transaction with this reference"]
              : Presentation.table(
                  ["type", "status", "amount", "guid", "efttimestamp"],
                  entries.map(entryRow)
                )
        )
        return Output.ExitCode.ok
      })
    )
  )
).pipe(
  Command.withDescription(
    "the service's status of a transaction by its reference (efttimestamp is the terminal's local time)"
  )
)
