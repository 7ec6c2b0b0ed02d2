/** The terminals page: what is happening now (the alerts page, what needs a person, is `alerts.ts`). */
import { get } from "./api.js"
import { h, replace, replaceChanged } from "./dom.js"
import type { Page } from "./shell.js"
import { amountOf, badge, type Execution, executionLink, stateOf } from "./views.js"

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
    replaceChanged(
      list,
      JSON.stringify(all),
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
