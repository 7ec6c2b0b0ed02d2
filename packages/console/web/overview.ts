/** The terminals page and the alerts page: what is happening now, and what needs a person. */
import { get } from "./api.js"
import { h, replace } from "./dom.js"
import type { Page } from "./shell.js"
import { type Alert, amountOf, badge, type Execution, executionLink, stateOf, time } from "./views.js"

interface Terminal {
  readonly serialNumber: string
  readonly terminalType: string
  readonly merchant: string
  readonly state: "idle" | "busy"
  readonly running?: Execution
  readonly queued: number
}

/** Every terminal with its state and the operation it runs, refreshed live. */
export const terminals: Page = (main) => {
  const list = h("div", { class: "cards", "aria-live": "polite" }, h("p", {}, "Loading…"))
  replace(main, h("h1", {}, "Terminals"), list)
  const load = async () => {
    const all = await get<ReadonlyArray<Terminal>>("/v1/monitor/terminals")
    replace(
      list,
      all.length === 0 ? h("p", {}, "The service lists no terminal.") : null,
      all.map((t) =>
        h(
          "section",
          { class: `card terminal terminal-${t.state}`, "data-serial": t.serialNumber },
          h("h2", {}, t.serialNumber, " ", badge(t.state)),
          h("p", { class: "muted" }, `${t.terminalType} · merchant ${t.merchant}`),
          t.running === undefined
            ? h("p", {}, "No operation running.")
            : h(
                "div",
                {},
                h(
                  "p",
                  {},
                  executionLink(
                    t.running.executionId,
                    t.running.attributes["operation"] ?? t.running.workflow
                  ),
                  " ",
                  amountOf(t.running),
                  " ",
                  badge(stateOf(t.running))
                ),
                h("p", { class: "muted" }, `waiting for ${t.running.progress?.waitingFor ?? "…"}`)
              ),
          t.queued > 0 ? h("p", { class: "muted" }, `${t.queued} more queued`) : null
        )
      )
    )
  }
  return { load, live: () => true }
}

/** Alerts, most severe first: mismatches, unresolved outcomes, stuck and overdue executions, late results. */
export const alerts: Page = (main) => {
  const body = h("div", { "aria-live": "polite" }, h("p", {}, "Loading…"))
  replace(main, h("h1", {}, "Alerts"), body)
  const load = async () => {
    const view = await get<{ alerts: ReadonlyArray<Alert>; caughtUp: boolean }>("/v1/monitor/alerts")
    replace(
      body,
      view.caughtUp
        ? null
        : h("p", { class: "notice" }, "Still reading the event log: the list may be incomplete."),
      view.alerts.length === 0
        ? h(
            "p",
            { class: "ok", id: "no-alerts" },
            "No alert: no mismatch, nothing unresolved, stuck or overdue."
          )
        : h(
            "table",
            { class: "table", id: "alerts" },
            h("caption", {}, `${view.alerts.length} alerts`),
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                h("th", { scope: "col" }, "Kind"),
                h("th", { scope: "col" }, "When"),
                h("th", { scope: "col" }, "Execution"),
                h("th", { scope: "col" }, "What")
              )
            ),
            h(
              "tbody",
              {},
              view.alerts.map((a) =>
                h(
                  "tr",
                  { class: `alert alert-${a.kind}` },
                  h("td", {}, badge(a.kind)),
                  h("td", {}, time(a.at)),
                  h("td", {}, executionLink(a.executionId)),
                  h("td", {}, a.message)
                )
              )
            )
          )
    )
  }
  return { load, live: () => true }
}
