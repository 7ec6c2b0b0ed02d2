/**
 * A sale on the built-in simulator, for a newcomer to watch one go through: marked as
 * simulated, offered only when the worker's service is the simulator. It starts the sale
 * through the intake API (`POST /v1/operations`) like the command line's `tillflow sale`.
 */
import { post } from "./api.js"
import { h, replace } from "./dom.js"
import * as Money from "./money.js"
import { navigate, type Page, type ServiceInfo } from "./shell.js"
import type { Execution } from "./views.js"

/** The simulated-sale page for the simulator's terminals. */
export const simulator =
  (service: ServiceInfo): Page =>
  (main) => {
    const error = h("p", { class: "error", role: "alert", id: "sale-error" })
    const form = h(
      "form",
      {
        class: "sale",
        onsubmit: (event) => {
          event.preventDefault()
          const data = new FormData(event.target as HTMLFormElement)
          const currency = String(data.get("currency") ?? "")
            .trim()
            .toUpperCase()
          const minor = Money.toMinor(String(data.get("amount") ?? ""), currency)
          if (!/^[A-Z]{3}$/.test(currency) || minor === undefined || minor === "0") {
            error.textContent = `the amount must be a positive number with at most ${Money.exponentOf(currency)} decimals, and the currency three letters (EUR)`
            return
          }
          error.textContent = ""
          post<Execution>("/v1/operations", {
            idempotencyKey: String(data.get("key") ?? "").trim() || `console-${crypto.randomUUID()}`,
            request: {
              operation: "sale",
              serial_number: String(data.get("serial") ?? ""),
              amount: minor,
              currency
            },
            waitSeconds: 0
          })
            .then((execution) => navigate(`executions/${execution.executionId}`))
            .catch((e: unknown) => {
              error.textContent = e instanceof Error ? e.message : String(e)
            })
        }
      },
      h(
        "div",
        { class: "field" },
        h("label", { for: "sale-serial" }, "Terminal"),
        h(
          "select",
          { id: "sale-serial", name: "serial" },
          service.terminals.map((t) =>
            h("option", { value: t.serialNumber }, `${t.serialNumber} (${t.terminalType})`)
          )
        )
      ),
      h(
        "div",
        { class: "field" },
        h("label", { for: "sale-amount" }, "Amount"),
        h("input", {
          id: "sale-amount",
          name: "amount",
          inputmode: "decimal",
          value: "10.50",
          required: true
        })
      ),
      h(
        "div",
        { class: "field" },
        h("label", { for: "sale-currency" }, "Currency"),
        h("input", { id: "sale-currency", name: "currency", value: "EUR", maxlength: 3, required: true })
      ),
      h(
        "div",
        { class: "field" },
        h("label", { for: "sale-key" }, "Idempotency key (optional)"),
        h("input", { id: "sale-key", name: "key" })
      ),
      h("div", { class: "field actions" }, h("button", { type: "submit" }, "Start a simulated sale")),
      error
    )
    replace(
      main,
      h("h1", {}, "Simulated sale"),
      h(
        "p",
        { class: "simulated" },
        "SIMULATED: the sale goes to the built-in simulator's virtual terminal, no card is charged. Amounts 37.79, 37.84 and 37.93 are declined, 37.57 partially approved, 37.68 times out at the acquirer."
      ),
      form
    )
    return { load: () => Promise.resolve() }
  }
