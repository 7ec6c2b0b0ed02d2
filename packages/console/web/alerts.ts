/**
 * The alerts page: most severe first, each with its state (open, acknowledged, resolved),
 * who moved it on, why and when; buttons that acknowledge or resolve one, each asking for
 * the reason first. Resolved alerts are hidden unless the state filter asks for them
 * (`#/alerts?state=all`).
 */
import { ApiError, get, post } from "./api.js"
import { h, replace, replaceChanged } from "./dom.js"
import { navigate, type Page } from "./shell.js"
import { type Alert, type AlertStep, badge, executionLink, time } from "./views.js"

const states: ReadonlyArray<readonly [string, string]> = [
  ["", "unresolved"],
  ["open", "open"],
  ["acknowledged", "acknowledged"],
  ["resolved", "resolved"],
  ["all", "all"]
]

const stepText = (verb: string, step: AlertStep | undefined) =>
  step === undefined
    ? null
    : h(
        "p",
        { class: `alert-step alert-${verb}` },
        `${verb} by ${step.operator}, ${time(step.at)}: ${step.reason}`
      )

/** The form asking why before a step is sent; `done` reloads the list. */
const stepForm = (
  alert: Alert,
  action: "acknowledge" | "resolve",
  done: () => Promise<void>
): HTMLElement => {
  const reason = h("input", {
    name: "reason",
    required: true,
    maxlength: 500,
    placeholder:
      action === "acknowledge" ? "why: what you are doing about it" : "why: what was done or found",
    "aria-label": `reason to ${action}`
  })
  const error = h("p", { class: "error", role: "alert" })
  const form = h(
    "form",
    { class: "alert-form", "data-action": action },
    reason,
    h("button", { type: "submit" }, `Confirm ${action}`),
    h("button", { type: "button", onclick: () => form.remove() }, "Cancel"),
    error
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const submit = form.querySelector<HTMLButtonElement>("button[type=submit]")
    if (submit !== null) submit.disabled = true
    post(`/v1/monitor/alerts/${encodeURIComponent(alert.id)}/${action}`, { reason: reason.value })
      .then(done)
      .catch((e: unknown) => {
        if (submit !== null) submit.disabled = false
        replace(error, e instanceof ApiError || e instanceof Error ? e.message : String(e))
      })
  })
  return form
}

/** Alerts, most severe first: mismatches, unresolved outcomes, stuck and overdue executions, late results. */
export const alerts: Page = (main, route) => {
  const wanted = route.query.get("state") ?? ""
  const filter = h(
    "select",
    {
      id: "alert-state",
      "aria-label": "state",
      onchange: (event) => {
        const query = new URLSearchParams()
        const value = (event.target as HTMLSelectElement).value
        if (value !== "") query.set("state", value)
        navigate("alerts", query)
      }
    },
    states.map(([value, label]) =>
      h("option", { value, ...(value === wanted ? { selected: true } : {}) }, label)
    )
  )
  const body = h("div", { "aria-live": "polite" }, h("p", {}, "Loading…"))
  replace(main, h("h1", {}, "Alerts"), h("label", {}, "State ", filter), body)
  const load = async (): Promise<void> => {
    // A reason being typed is not thrown away by a live refresh.
    if (body.querySelector("form.alert-form") !== null) return
    const view = await get<{ alerts: ReadonlyArray<Alert>; caughtUp: boolean }>("/v1/monitor/alerts", {
      state: wanted
    })
    const cell = (a: Alert) => {
      const actions = h("div", { class: "alert-actions" })
      const open = (action: "acknowledge" | "resolve") => () => {
        actions.querySelector("form")?.remove()
        const form = stepForm(a, action, async () => {
          form.remove()
          await load()
        })
        actions.append(form)
        form.querySelector("input")?.focus()
      }
      if (a.state === "open")
        actions.append(
          h(
            "button",
            { type: "button", class: "alert-acknowledge", onclick: open("acknowledge") },
            "Acknowledge"
          )
        )
      if (a.state !== "resolved")
        actions.append(
          h("button", { type: "button", class: "alert-resolve", onclick: open("resolve") }, "Resolve")
        )
      return actions
    }
    // Rendered again only when the list changed: a live refresh that changes nothing keeps
    // an open acknowledge or resolve form, and the reason being typed in it.
    replaceChanged(
      body,
      JSON.stringify(view),
      view.caughtUp
        ? null
        : h("p", { class: "notice" }, "Still reading the event log: the list may be incomplete."),
      view.alerts.length === 0
        ? h(
            "p",
            { class: "ok", id: "no-alerts" },
            wanted === ""
              ? "No alert: no mismatch, nothing unresolved, stuck or overdue."
              : "No alert in this state."
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
                h("th", { scope: "col" }, "What"),
                h("th", { scope: "col" }, "State")
              )
            ),
            h(
              "tbody",
              {},
              view.alerts.map((a) =>
                h(
                  "tr",
                  { class: `alert alert-${a.kind} alert-state-${a.state}`, "data-alert": a.id },
                  h("td", {}, badge(a.kind)),
                  h("td", {}, time(a.at)),
                  h("td", {}, a.executionId === "-" ? "—" : executionLink(a.executionId)),
                  h("td", {}, a.message),
                  h(
                    "td",
                    {},
                    badge(a.state),
                    stepText("acknowledged", a.acknowledged),
                    stepText("resolved", a.resolved),
                    cell(a)
                  )
                )
              )
            )
          )
    )
  }
  return { load, live: () => true }
}
