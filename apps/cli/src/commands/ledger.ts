/**
 * `tillflow audit ledger`: the event log replayed into a ledger, as totals per day,
 * terminal and merchant (a table, CSV or JSON) or one line per business fact
 * (`--entries`), to stdout or a file.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Ledger } from "@tillflow/core"
import * as Intake from "@tillflow/intake/Intake"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { common, withShownDefault } from "../internal/options.js"

const dimensionsOf = (text: string): Effect.Effect<ReadonlyArray<Ledger.Dimension>, Output.UsageError> => {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0 && p !== "none")
  const bad = parts.filter((p) => p !== "day" && p !== "terminal" && p !== "merchant")
  return bad.length > 0
    ? Effect.fail(
        new Output.UsageError({
          message: `--by ${bad.join(",")} is not allowed: use day, terminal, merchant (comma-separated) or none`
        })
      )
    : Effect.succeed(parts as ReadonlyArray<Ledger.Dimension>)
}

const tableOf = (rows: ReadonlyArray<Ledger.SummaryRow>): ReadonlyArray<string> => {
  const shown = Ledger.kinds.filter((k) => rows.some((r) => r.tallies[k].count > 0))
  const header = ["day", "terminal", "merchant", "currency", ...shown, "net"]
  const body = rows.map((r) => [
    r.day,
    r.terminal,
    r.merchant,
    r.currency,
    ...shown.map((k) => `${r.tallies[k].count} / ${Ledger.formatAmount(r.tallies[k].amount, r.currency)}`),
    Ledger.formatAmount(r.net, r.currency)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()
  return rows.length === 0 ? ["no entry in the ledger"] : [line(header), ...body.map(line)]
}

const writeOut = (out: Option.Option<string>, text: string) =>
  Option.isSome(out)
    ? Effect.zipRight(
        Effect.sync(() => Fs.writeFileSync(out.value, text)),
        Output.note(`tillflow: wrote ${out.value}`)
      )
    : Effect.sync(() => void process.stdout.write(text))

const entriesHeader =
  "position,at,day,kind,operation,finStatus,amount,currency,terminal,merchant,transactionReference,reconciled,stream"

/** `--entries`: one line per business fact, as CSV or JSON. */
const exportEntries = (
  intake: Intake.Service,
  o: { readonly from: Option.Option<string>; readonly out: Option.Option<string> },
  format: "table" | "csv" | "json"
) =>
  Effect.gen(function* () {
    const found = yield* intake.entries(Option.getOrUndefined(o.from), 1_000_000)
    if (format === "json") return yield* writeOut(o.out, JSON.stringify(found, null, 2) + "\n")
    const csv = found.entries.map((e) =>
      [
        e.position,
        new Date(e.at).toISOString(),
        e.day,
        e.kind,
        e.operation,
        e.finStatus,
        e.amount ?? "",
        e.currency ?? "",
        e.terminal,
        e.merchant,
        e.transactionReference ?? "",
        String(e.reconciled),
        e.streamId
      ].join(",")
    )
    return yield* writeOut(o.out, [entriesHeader, ...csv].join("\n") + "\n")
  })

/** The totals by the `--by` dimensions, as a table, CSV or JSON. */
const exportTotals = (
  intake: Intake.Service,
  o: {
    readonly by: string
    readonly source: "replay" | "live"
    readonly from: Option.Option<string>
    readonly out: Option.Option<string>
  },
  format: "table" | "csv" | "json"
) =>
  Effect.gen(function* () {
    const by = yield* dimensionsOf(o.by)
    const view = yield* intake.ledger({
      source: o.source === "live" ? "live" : "replay",
      from: Option.getOrUndefined(o.from)
    })
    const rows = Ledger.summarize(Ledger.fromRows(view.rows), by)
    if (format === "csv") return yield* writeOut(o.out, Ledger.toCsv(rows))
    if (format === "json") {
      return yield* writeOut(
        o.out,
        JSON.stringify(
          {
            source: view.source,
            from: view.from,
            checkpoint: view.checkpoint,
            eventsRead: view.eventsRead,
            entries: view.entries,
            undecodable: view.undecodable,
            rows: Ledger.toJson(rows)
          },
          null,
          2
        ) + "\n"
      )
    }
    const lines = [
      `ledger (${view.source}) from ${view.from} to ${view.checkpoint}: ${view.eventsRead} events read, ${view.entries} entries`,
      ...view.undecodable.map((u) => `  UNREADABLE: ${u}`),
      ...tableOf(rows)
    ]
    yield* writeOut(o.out, lines.join("\n") + "\n")
  })

export const ledger = Command.make(
  "ledger",
  {
    ...common,
    by: Options.text("by").pipe(
      Options.withDescription("day, terminal, merchant (comma-separated) or none"),
      withShownDefault("day")
    ),
    format: Options.choice("format", ["table", "csv", "json"]).pipe(withShownDefault("table")),
    from: Options.text("from").pipe(
      Options.withDescription("replay from this checkpoint instead of the first event"),
      Options.optional
    ),
    source: Options.choice("source", ["replay", "live"]).pipe(
      Options.withDescription("replay the log now, or read the live projection's latest snapshot"),
      withShownDefault("replay")
    ),
    entries: Options.boolean("entries").pipe(
      Options.withDescription("export one line per business fact instead of totals")
    ),
    out: Options.text("out").pipe(
      Options.withDescription("write to this file instead of stdout"),
      Options.optional
    )
  },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: false, worker: false },
      Effect.gen(function* () {
        const intake = yield* Intake.Intake
        const format = o.json ? "json" : o.format
        yield* o.entries ? exportEntries(intake, o, format) : exportTotals(intake, o, format)
        return Output.ExitCode.ok
      })
    )
  )
).pipe(
  Command.withDescription(
    "replays the event log into a ledger per day / terminal / merchant, with CSV and JSON export"
  )
)
