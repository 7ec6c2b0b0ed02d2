/** `tillflow status`: the remote service's status endpoint for a transaction reference. */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Intake from "@tillflow/intake/Intake"
import * as Effect from "effect/Effect"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { common, withShownDefault } from "../internal/options.js"

/** One status entry as a line: its type, status, amount, currency, guid and time. */
const entryLine = (entry: unknown): string => {
  const r = entry as Record<string, unknown>
  return [
    r["type"],
    r["finStatus"],
    r["totalAmount"] ?? r["requestedAmount"],
    r["currency"],
    r["transactionID"] ?? r["transactionId"],
    r["efttimestamp"]
  ]
    .filter((v) => v !== undefined && v !== null && v !== "")
    .map(String)
    .join("  ")
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
        yield* Output.print(o.json, entries, () => entries.map(entryLine))
        return Output.ExitCode.ok
      })
    )
  )
).pipe(Command.withDescription("the service's status of a transaction by its reference"))
