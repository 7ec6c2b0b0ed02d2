/**
 * The ledger: the audit's summary per day, terminal, merchant and currency (folded from
 * the log by the worker), with filters, a chart of the net amount per day, CSV export of
 * what is shown, and the audit's check (hash chains, money conservation) with its result.
 * An operator limited to merchants gets its merchant's ledger (filtered by the worker) and
 * no check: the hash chains span every merchant's log.
 */
import { get } from "./api.js"
import { h, replace, svg } from "./dom.js"
import * as Money from "./money.js"
import type { Page } from "./shell.js"

interface Row {
  readonly day: string
  readonly terminal: string
  readonly merchant: string
  readonly currency: string
  readonly tallies: Record<string, { readonly count: number; readonly amount: string }>
  readonly net: string
}

interface Verify {
  readonly ok: boolean
  readonly streamsChecked: number
  readonly eventsChecked: number
  readonly broken: ReadonlyArray<{ streamId: string; version: number; kind: string }>
  /** Money conservation per transaction (credited back ≤ charged), when the worker checks it. */
  readonly conservation?: {
    readonly transactionsChecked: number
    readonly broken: ReadonlyArray<{ readonly message: string }>
  }
}

/**
 * Every kind of the ledger, in the order of `Ledger.kinds` (core), so this CSV has the CLI's
 * columns: net = sale + capture + refundReversal + tip − refund − reversal (holds,
 * increases, releases and declines move nothing), and every row adds up from its columns.
 */
const kinds = [
  "sale",
  "refund",
  "reversal",
  "refundReversal",
  "preAuthorization",
  "increase",
  "release",
  "capture",
  "decline",
  "tip"
]

/** The rows as CSV: amounts in major units (decimal strings), one column per kind. */
export const toCsv = (rows: ReadonlyArray<Row>): string => {
  const quote = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s)
  const exponentless = (minor: string, currency: string) =>
    Money.fromMinor(minor, currency).replace(/ .*$/, "").replace(/,/g, "")
  const header = [
    "day",
    "terminal",
    "merchant",
    "currency",
    ...kinds.flatMap((k) => [`${k}_count`, `${k}_amount`]),
    "net"
  ]
  const lines = rows.map((r) =>
    [
      r.day,
      r.terminal,
      r.merchant,
      r.currency,
      ...kinds.flatMap((k) => {
        const t = r.tallies[k]
        return [String(t?.count ?? 0), exponentless(t?.amount ?? "0", r.currency)]
      }),
      exponentless(r.net, r.currency)
    ]
      .map(quote)
      .join(",")
  )
  return [header.join(","), ...lines].join("\n") + "\n"
}

const chart = (rows: ReadonlyArray<Row>, currency: string) => {
  const byDay = new Map<string, bigint>()
  for (const r of rows)
    if (r.currency === currency) byDay.set(r.day, (byDay.get(r.day) ?? 0n) + BigInt(r.net))
  const days = [...byDay.keys()].sort()
  if (days.length === 0) return null
  const values = days.map((d) => byDay.get(d) ?? 0n)
  const max = values.reduce((m, v) => (v < 0n ? (-v > m ? -v : m) : v > m ? v : m), 1n)
  const width = 600
  const height = 160
  const bar = Math.min(48, Math.max(4, Math.floor(width / days.length) - 4))
  // The zero line at the bottom unless a day is negative.
  const zero = values.some((v) => v < 0n) ? height / 2 : height
  const scale = values.some((v) => v < 0n) ? height / 2 : height
  // Heights are scaled in integers (per mille of the largest), drawing only.
  return h(
    "figure",
    { class: "chart" },
    svg(
      "svg",
      { viewBox: `0 0 ${width} ${height + 2}`, role: "img", "aria-label": `net ${currency} per day` },
      days.map((day, i) => {
        const v = values[i] ?? 0n
        const size = Number(((v < 0n ? -v : v) * 1000n) / max) / 1000
        const barHeight = Math.max(1, Math.round(size * scale))
        const x = i * (bar + 4)
        const y = v < 0n ? zero : zero - barHeight
        return svg(
          "rect",
          { x, y, width: bar, height: barHeight, class: v < 0n ? "neg" : "pos" },
          svg("title", {}, `${day}: ${Money.fromMinor(v, currency)}`)
        )
      }),
      svg("line", { x1: 0, x2: width, y1: zero, y2: zero, class: "axis" })
    ),
    h("figcaption", {}, `Net ${currency} per day, ${days[0]} to ${days[days.length - 1]}`)
  )
}

/** The ledger page; with `verify`, the button checking the whole log's hash chains. */
export const ledgerPage =
  (options: { readonly verify: boolean }): Page =>
  (main) => {
    const filters = { day: "", terminal: "", merchant: "", currency: "" }
    const body = h("div", {}, h("p", {}, "Loading…"))
    const verifyResult = h("p", { id: "verify-result", role: "status" })
    let rows: ReadonlyArray<Row> = []
    const shown = () =>
      rows.filter(
        (r) =>
          (filters.day === "" || r.day.startsWith(filters.day)) &&
          (filters.terminal === "" || r.terminal === filters.terminal) &&
          (filters.merchant === "" || r.merchant === filters.merchant) &&
          (filters.currency === "" || r.currency === filters.currency)
      )
    const input = (name: keyof typeof filters, label: string, placeholder: string) =>
      h(
        "div",
        { class: "field" },
        h("label", { for: `l-${name}` }, label),
        h("input", {
          id: `l-${name}`,
          placeholder,
          oninput: (event) => {
            filters[name] = (event.target as HTMLInputElement).value.trim()
            render()
          }
        })
      )
    const exportCsv = () => {
      const blob = new Blob([toCsv(shown())], { type: "text/csv" })
      const link = h("a", { href: URL.createObjectURL(blob), download: "ledger.csv" })
      document.body.appendChild(link)
      link.click()
      link.remove()
    }
    const verify = async () => {
      verifyResult.textContent = "Checking every hash chain…"
      const v = await get<Verify>("/v1/audit/verify")
      verifyResult.className = v.ok ? "ok" : "error"
      const money = v.conservation
      const chains =
        v.broken.length === 0
          ? `Chain verified: ${v.streamsChecked} streams, ${v.eventsChecked} events, no broken link.`
          : `BROKEN: ${v.broken.map((b) => `${b.streamId} at version ${b.version} (${b.kind})`).join("; ")}`
      const conserved =
        money === undefined
          ? ""
          : money.broken.length === 0
            ? ` Money conserved in ${money.transactionsChecked} transactions.`
            : ` MONEY NOT CONSERVED: ${money.broken.map((b) => b.message).join("; ")}`
      verifyResult.textContent = chains + conserved
    }
    replace(
      main,
      h("h1", {}, "Ledger"),
      h(
        "div",
        { class: "filters" },
        input("day", "Day", "2026-11 or 2026-11-24"),
        input("terminal", "Terminal", "serial number"),
        input("merchant", "Merchant", "merchant"),
        input("currency", "Currency", "EUR"),
        h(
          "div",
          { class: "field actions" },
          h("button", { type: "button", id: "export-csv", onclick: exportCsv }, "Export CSV"),
          options.verify
            ? h(
                "button",
                { type: "button", id: "verify-chain", class: "secondary", onclick: () => void verify() },
                "Verify the chain"
              )
            : null
        )
      ),
      verifyResult,
      body
    )
    const render = () => {
      const visible = shown()
      const currencies = [...new Set(visible.map((r) => r.currency))].sort()
      replace(
        body,
        currencies.map((c) => chart(visible, c)),
        h(
          "table",
          { class: "table", id: "ledger" },
          h("caption", {}, `${visible.length} rows (per day, terminal, merchant and currency)`),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Day", "Terminal", "Merchant", "Sales", "Refunds", "Declines", "Net"].map((c) =>
                h("th", { scope: "col" }, c)
              )
            )
          ),
          h(
            "tbody",
            {},
            visible.map((r) => {
              const tally = (k: string) => {
                const t = r.tallies[k]
                return t === undefined || t.count === 0
                  ? ""
                  : `${t.count} · ${Money.fromMinor(t.amount, r.currency)}`
              }
              return h(
                "tr",
                {},
                h("td", {}, r.day),
                h("td", {}, r.terminal),
                h("td", {}, r.merchant),
                h("td", { class: "num" }, tally("sale")),
                h("td", { class: "num" }, tally("refund")),
                h("td", { class: "num" }, r.tallies["decline"]?.count ?? 0),
                h("td", { class: "num" }, Money.fromMinor(r.net, r.currency))
              )
            })
          )
        )
      )
    }
    const load = async () => {
      const view = await get<{ rows: ReadonlyArray<Row> }>("/v1/audit/ledger")
      rows = view.rows
      render()
    }
    return { load, live: (event) => /^Payment|Capture|Refund|Reversal|PreAuthorization/.test(event.type) }
  }

/** The ledger page of the platform's operators. */
export const ledger: Page = ledgerPage({ verify: true })
