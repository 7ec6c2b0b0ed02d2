/**
 * Stopping a terminal's operation from the console (`POST /v1/terminals/{serial}/stop`,
 * the route the CLI's `tillflow stop` and any caller use): offered on the page of a
 * terminal operation still in flight, to an operator or an admin. Confirmed first, with
 * what it stops; sent under a key derived from the execution (`console-stop-<id>`), so a
 * double click or a second confirmation asks the terminal once. What stopping does is the
 * terminal's: a card already read may still complete the payment (the outcome says). The stop
 * is recorded in the stopped execution's history with the operator's name and reason.
 */
import * as Dialog from "./dialog.js"
import { h, replace } from "./dom.js"
import type { Execution } from "./views.js"
import { executionLink } from "./views.js"

/** Whether an execution is a terminal operation still in flight that a stop could end. */
export const stoppable = (e: Execution): string | undefined => {
  if (e.workflow !== "TerminalOperation") return undefined
  if (e.status !== "pending" && e.status !== "running" && e.status !== "suspended") return undefined
  const serial = e.attributes["serialNumber"]
  const operation = e.attributes["operation"]
  if (serial === undefined || serial === "" || operation === "stopCurrentTransaction") return undefined
  return serial
}

/** The key a stop of this execution is sent under: one stop per execution. */
export const stopKey = (executionId: string): string => `console-stop-${executionId}`

const describe = (e: Execution, serial: string): string => {
  const operation = e.attributes["operation"] ?? "operation"
  const amount = e.attributes["amount"]
  const currency = e.attributes["currency"] ?? ""
  return `the ${operation}${amount === undefined ? "" : ` of ${amount} ${currency}`} on terminal ${serial}`
}

/** The stop panel of an execution's page, or nothing when it does not fit. */
export const panel = (
  e: Execution,
  who: { readonly name: string; readonly role: string } | undefined,
  reload: () => void
): HTMLElement | null => {
  const serial = stoppable(e)
  if (serial === undefined || who === undefined || who.role === "viewer") return null
  const what = describe(e, serial)
  const notice = h("p", { id: "stop-notice", role: "status" })
  const dialog = () => {
    const reason = h("textarea", {
      id: "stop-reason",
      name: "reason",
      required: true,
      rows: 2
    }) as HTMLTextAreaElement
    return Dialog.make({
      id: "stop",
      title: "Stop the terminal's operation",
      content: [
        h("p", { id: "stop-confirm" }, `Stop ${what}?`),
        h("p", {}, h("label", { for: "stop-reason" }, "Reason (recorded with your name) "), reason)
      ],
      confirmLabel: "Stop it",
      send: () =>
        Dialog.post(`/v1/terminals/${encodeURIComponent(serial)}/stop`, {
          idempotencyKey: stopKey(e.executionId),
          of: e.executionId,
          reason: reason.value
        }),
      done: (body) => {
        replace(
          notice,
          `Stop sent to terminal ${serial}: execution `,
          executionLink((body as { readonly executionId?: string } | undefined)?.executionId ?? ""),
          ". What the terminal does with it shows in the outcome."
        )
        reload()
      }
    }).dialog
  }
  return h(
    "section",
    { id: "stop", "aria-label": "Stop" },
    h(
      "p",
      {},
      h(
        "button",
        {
          type: "button",
          id: "stop-open",
          class: "secondary",
          onclick: () => Dialog.open(dialog())
        },
        "Stop the terminal's operation…"
      )
    ),
    notice
  )
}

/** The panel once the operation ended: its button gone, the notice of a stop sent from it kept. */
export const ended = (container: HTMLElement): void => {
  const notice = container.querySelector("#stop-notice")
  if (notice === null || notice.textContent === "") replace(container)
  else container.querySelector("#stop-open")?.closest("p")?.remove()
}
