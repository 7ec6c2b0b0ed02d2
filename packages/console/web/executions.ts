/**
 * The executions page (a live list, a page of 100 at a time by cursor, with filters —
 * outcome, status, terminal, operation, workflow, dates — and a search by the start of an
 * execution id, idempotency key, transaction reference, guid, customer reference or last
 * four digits, all in the URL so a view can be linked) and one execution's page (its outcome,
 * its operation's timeline as a story, its late results and mismatches, and its raw event
 * history on demand).
 */
import * as Actions from "./actions.js"
import * as Resolve from "./resolve.js"
import * as Retry from "./retry.js"
import * as Stop from "./stop.js"
import { actingFor, get } from "./api.js"
import { h, replace, replaceChanged } from "./dom.js"
import * as Money from "./money.js"
import { navigate, type Page } from "./shell.js"
import { amountOf, badge, type Execution, executionLink, type StoredEvent, stateOf, time } from "./views.js"

const outcomes = ["", "approved", "declined", "failed", "unresolved", "in-progress"]
const statuses = ["", "pending", "running", "suspended", "succeeded", "failed", "interrupted", "stuck"]
const filterNames = [
  "q",
  "outcome",
  "status",
  "serialNumber",
  "operation",
  "workflow",
  "from",
  "to",
  "amount",
  "currency",
  "merchant"
] as const
const pageSize = 100

const field = (name: string, label: string, input: HTMLElement) =>
  h("div", { class: "field" }, h("label", { for: `f-${name}` }, label), input)

/** The live list of executions with its filters (kept in the URL, so a search can be linked). */
export const executions: Page = (main, route) => {
  const value = (name: string) => route.query.get(name) ?? ""
  const text = (name: string, placeholder = "", type = "text") =>
    h("input", { id: `f-${name}`, name, type, value: value(name), placeholder })
  const choice = (name: string, values: ReadonlyArray<string>) =>
    h(
      "select",
      { id: `f-${name}`, name },
      values.map((s) => h("option", { value: s, selected: s === value(name) }, s === "" ? "any" : s))
    )
  const form = h(
    "form",
    {
      class: "filters",
      role: "search",
      onsubmit: (event) => {
        event.preventDefault()
        const data = new FormData(event.target as HTMLFormElement)
        const query = new URLSearchParams()
        for (const name of filterNames) {
          const v = String(data.get(name) ?? "").trim()
          if (v !== "") query.set(name, v)
        }
        navigate("executions", query)
      }
    },
    field(
      "q",
      "Search",
      text("q", "id (8 characters), key, reference, guid, customer ref., last 4", "search")
    ),
    field("outcome", "Outcome", choice("outcome", outcomes)),
    field("status", "Run status", choice("status", statuses)),
    field("serialNumber", "Terminal", text("serialNumber", "serial number")),
    field("operation", "Operation", text("operation", "sale, refund …")),
    field("workflow", "Workflow", text("workflow")),
    field("from", "From (UTC day)", text("from", "", "date")),
    field("to", "To (UTC day)", text("to", "", "date")),
    field("amount", "Amount", text("amount", "10.50")),
    field("currency", "Currency", text("currency", "EUR")),
    // An operator limited to merchants sees its merchant's only (chosen above the page).
    actingFor() === undefined ? field("merchant", "Merchant", text("merchant", "merchant id")) : null,
    h(
      "div",
      { class: "field actions" },
      h("button", { type: "submit" }, "Filter"),
      h("a", { href: "#/executions", class: "button secondary" }, "Clear")
    )
  )
  const results = h("div", { "aria-live": "polite" }, h("p", {}, "Loading…"))
  replace(main, h("h1", {}, "Executions"), form, results)

  // The page shown: `after` is its cursor; `trail` the cursors of the pages before it
  // (`-` for the first page, which has none).
  const after = value("after")
  const trail = value("trail") === "" ? [] : value("trail").split(",")
  const filters = () => {
    const query = new URLSearchParams()
    for (const name of filterNames) if (value(name) !== "") query.set(name, value(name))
    return query
  }
  const pageLink = (label: string, id: string, cursor: string | undefined, before: ReadonlyArray<string>) => {
    const query = filters()
    if (cursor !== undefined && cursor !== "" && cursor !== "-") query.set("after", cursor)
    if (before.length > 0) query.set("trail", before.join(","))
    return h(
      "a",
      {
        href: `#/executions${query.size === 0 ? "" : `?${query.toString()}`}`,
        id,
        class: "button secondary"
      },
      label
    )
  }

  const load = async () => {
    const params: Record<string, string> = { limit: String(pageSize) }
    for (const name of filterNames) if (value(name) !== "") params[name] = value(name)
    if (after !== "") params["after"] = after
    const found = await get<{ executions: ReadonlyArray<Execution>; total: number; next?: string }>(
      "/v1/monitor/executions",
      params
    )
    const first = trail.length * pageSize + 1
    const shown =
      found.executions.length === 0
        ? `${found.total} executions`
        : `${found.total} executions, ${first}–${first + found.executions.length - 1} shown, newest first`
    const pager = h(
      "nav",
      { class: "pager", "aria-label": "Pages of executions" },
      after === "" ? null : pageLink("Newest", "page-newest", undefined, []),
      after === "" ? null : pageLink("← Newer", "page-newer", trail[trail.length - 1], trail.slice(0, -1)),
      found.next === undefined
        ? null
        : pageLink("Older →", "page-older", found.next, [...trail, after === "" ? "-" : after])
    )
    // Rendered again only when the answer changed (a live refresh mostly changes nothing).
    replaceChanged(
      results,
      JSON.stringify(found),
      h(
        "table",
        { class: "table", id: "executions" },
        h("caption", {}, shown),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Created", "Execution", "Operation", "Terminal", "Amount", "Outcome", "Idempotency key"].map(
              (c) => h("th", { scope: "col" }, c)
            )
          )
        ),
        h(
          "tbody",
          {},
          found.executions.map((e) =>
            h(
              "tr",
              { "data-execution": e.executionId, "data-key": e.attributes["idempotencyKey"] ?? "" },
              h("td", {}, time(e.createdAt)),
              h("td", {}, executionLink(e.executionId)),
              h("td", {}, e.attributes["operation"] ?? e.workflow),
              h("td", {}, e.attributes["serialNumber"] ?? ""),
              h("td", { class: "num" }, amountOf(e)),
              h("td", {}, badge(stateOf(e))),
              h("td", { class: "wrap" }, e.attributes["idempotencyKey"] ?? "")
            )
          )
        )
      ),
      pager
    )
  }
  return { load, live: () => true }
}

const factsOf = (result: unknown): Record<string, unknown> | undefined => {
  // The stored exit: {_tag: "Success", value: {_tag: "Approved", facts: {...}}}.
  if (typeof result !== "object" || result === null) return undefined
  const value = (result as { value?: unknown }).value
  if (typeof value !== "object" || value === null) return undefined
  const facts = (value as { facts?: unknown }).facts
  return typeof facts === "object" && facts !== null ? (facts as Record<string, unknown>) : undefined
}

const shownFacts = [
  "finStatus",
  "source",
  "transactionReference",
  "efttransactionID",
  "maskedCardNumber",
  "cardSchemeName",
  "authorisationCode",
  "issuerResponseCode",
  "statusMessage",
  "errorMessage"
]
const moneyFacts = ["requestedAmount", "totalAmount", "tipAmount", "dueAmount"]

const outcome = (e: Execution) => {
  const facts = factsOf(e.result)
  const rows: Array<[string, string]> = [
    ["Outcome", e.report?.verdict ?? (e.progress === undefined ? e.status : "in progress")],
    ["Run status", e.status],
    ["Workflow", e.workflow],
    ["Created", time(e.createdAt)],
    ["Updated", time(e.updatedAt)],
    ...Object.entries(e.attributes).map(([k, v]): [string, string] => [k, v])
  ]
  if (e.report !== undefined)
    rows.push(["Summary", e.report.summary], ["Reconciled", e.report.reconciled ? "yes" : "no"])
  if (e.progress !== undefined)
    rows.push(["Waiting for", e.progress.waitingFor], ["Attempt", String(e.progress.attempt)])
  if (facts !== undefined) {
    for (const k of moneyFacts) {
      const m = Money.ofJson(facts[k])
      if (m !== undefined) rows.push([k, m])
    }
    for (const k of shownFacts) if (typeof facts[k] === "string" && facts[k] !== "") rows.push([k, facts[k]])
  }
  return h(
    "dl",
    { class: "facts" },
    rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])
  )
}

const lateNotes = (business: ReadonlyArray<StoredEvent>) => {
  const notes = business.filter((e) => e.type === "ResultMismatch" || e.type === "LateResultRecorded")
  if (notes.length === 0) return h("p", { class: "ok" }, "No late result, no mismatch.")
  return h(
    "ul",
    { class: "notes", id: "late-results" },
    notes.map((e) => {
      const d = (e.data ?? {}) as Record<string, unknown>
      return h(
        "li",
        { class: e.type === "ResultMismatch" ? "alert-mismatch" : "" },
        badge(e.type === "ResultMismatch" ? "mismatch" : "late-result"),
        " ",
        time(Date.parse(e.recordedAt)),
        " ",
        e.type === "ResultMismatch"
          ? `a result says ${String(d["received"])} but ${String(d["recorded"])} was recorded`
          : `a result (${String(d["finStatus"] ?? "no finStatus")}) arrived after the outcome was recorded`
      )
    })
  )
}

const rawEvents = (events: ReadonlyArray<StoredEvent>) =>
  h(
    "ol",
    { class: "raw" },
    events.map((e) =>
      h(
        "li",
        {},
        h(
          "p",
          {},
          h("strong", {}, e.type),
          ` · ${e.streamId} v${e.version} · ${time(Date.parse(e.recordedAt))} · ${e.position}`
        ),
        h("pre", {}, JSON.stringify(e.data, null, 2))
      )
    )
  )

/** One execution: outcome, timeline, late results and mismatches, raw history on demand. */
export const execution: Page = (main, route) => {
  const id = route.path[1] ?? ""
  const head = h("div", {}, h("p", {}, "Loading…"))
  const actions = h("div", {})
  const resolving = h("div", {})
  const stopping = h("div", {})
  const retrying = h("div", {})
  const story = h("ol", { class: "timeline", id: "timeline" })
  const notes = h("div", {})
  const raw = h("div", { id: "raw-history" })
  let rawShown = false
  const toggle = h(
    "button",
    {
      type: "button",
      "aria-expanded": "false",
      "aria-controls": "raw-history",
      onclick: () => {
        rawShown = !rawShown
        toggle.setAttribute("aria-expanded", String(rawShown))
        toggle.textContent = rawShown ? "Hide the raw event history" : "Show the raw event history"
        if (!rawShown) replace(raw)
        else void load()
      }
    },
    "Show the raw event history"
  )
  replace(
    main,
    h("p", {}, h("a", { href: "#/executions" }, "← Executions")),
    h("h1", {}, "Execution ", h("code", {}, id)),
    head,
    actions,
    stopping,
    retrying,
    resolving,
    h("h2", {}, "Timeline"),
    story,
    h("h2", {}, "Late results and mismatches"),
    notes,
    h("h2", {}, "Raw event history"),
    toggle,
    raw
  )
  const load = async () => {
    const e = await get<Execution>(`/v1/executions/${encodeURIComponent(id)}`)
    replace(
      head,
      h("p", { class: "verdict" }, badge(stateOf(e)), " ", amountOf(e), " ", e.report?.summary ?? ""),
      outcome(e)
    )
    // The actions that fit its transaction (module of their own: actions.ts).
    if (actions.childElementCount === 0) replace(actions, await Actions.panel(e, () => void load()))
    // A terminal operation in flight: stopped here by an operator (stop.ts). Once it ended the
    // button goes; the notice of a stop sent from here stays.
    if (Stop.stoppable(e) === undefined) Stop.ended(stopping)
    else if (stopping.childElementCount === 0)
      replace(
        stopping,
        Stop.panel(e, await Actions.currentSession(), () => void load())
      )
    // A terminal operation that charged nothing: tried again here by an operator (retry.ts).
    if (retrying.childElementCount === 0)
      replace(
        retrying,
        Retry.panel(e, await Actions.currentSession(), () => void load())
      )
    // A request left in doubt, or a terminal operation left unresolved: resolved here by an
    // operator (resolve.ts); once resolved, what they said replaces the button.
    if (
      resolving.childElementCount === 0 ||
      (e.resolution !== undefined && resolving.querySelector("#resolve-done") === null)
    )
      replace(resolving, await Resolve.panel(e, await Actions.currentSession(), () => void load()))
    // The timeline: an operator limited to merchants gets its merchant's (the server finds
    // its operations only, and tells only its linked ones).
    const [timeline, history] = await Promise.all([
      get<{ lines: ReadonlyArray<string> }>(`/v1/audit/timeline/${encodeURIComponent(id)}`).catch(() => ({
        lines: []
      })),
      get<{ engine: ReadonlyArray<StoredEvent>; business: ReadonlyArray<StoredEvent> }>(
        `/v1/executions/${encodeURIComponent(id)}/history`
      )
    ])
    replace(
      story,
      timeline.lines.length === 0
        ? h("li", {}, "Nothing recorded yet.")
        : timeline.lines.map((l) => h("li", {}, l))
    )
    replace(notes, lateNotes(history.business))
    if (rawShown) {
      replace(
        raw,
        h("h3", {}, "Business events"),
        rawEvents(history.business),
        h("h3", {}, "Engine events"),
        rawEvents(history.engine)
      )
    }
  }
  return { load, live: (event) => event.streamId.includes(id) }
}
