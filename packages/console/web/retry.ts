/**
 * Trying again, from the console, a terminal operation that charged nothing (its report:
 * `unavailable` or `not-charged`): `POST /v1/executions/{id}/retry`, the route the CLI's
 * `tillflow executions retry` and any caller use. Offered to an operator or an admin; a
 * dialog says what is sent again and asks for a reason (recorded with their name); the
 * server starts it under `retry-<id>`, so a double click tries once. A refusal shows its rule.
 */
import * as Dialog from "./dialog.js"
import { h, replace } from "./dom.js"
import type { Execution } from "./views.js"
import { executionLink } from "./views.js"

/** Whether an execution is a terminal operation that ended charging nothing. */
export const retryable = (e: Execution): boolean =>
  e.workflow === "TerminalOperation" &&
  (e.report?.verdict === "unavailable" || e.report?.verdict === "not-charged")

/** The retry panel of an execution's page, or nothing when it does not fit. */
export const panel = (
  e: Execution,
  who: { readonly name: string; readonly role: string } | undefined,
  reload: () => void
): HTMLElement | null => {
  if (!retryable(e) || who === undefined || who.role === "viewer") return null
  const operation = e.attributes["operation"] ?? "operation"
  const amount = e.attributes["amount"]
  const what = `the ${operation}${amount === undefined ? "" : ` of ${amount} ${e.attributes["currency"] ?? ""}`}${
    e.attributes["serialNumber"] === undefined ? "" : ` on terminal ${e.attributes["serialNumber"]}`
  }`
  const notice = h("p", { id: "retry-notice", role: "status" })
  const dialog = () => {
    const reason = h("textarea", {
      id: "retry-reason",
      name: "reason",
      required: true,
      rows: 2
    }) as HTMLTextAreaElement
    return Dialog.make({
      id: "retry",
      title: "Try it again",
      content: [
        h("p", { id: "retry-confirm" }, `Send ${what} again, as a new attempt with a fresh reference?`),
        h("p", {}, h("label", { for: "retry-reason" }, "Reason (recorded with your name) "), reason)
      ],
      confirmLabel: "Send it again",
      send: () =>
        Dialog.post(`/v1/executions/${encodeURIComponent(e.executionId)}/retry`, { reason: reason.value }),
      done: (body) => {
        replace(
          notice,
          "Sent again: execution ",
          executionLink((body as { readonly executionId?: string } | undefined)?.executionId ?? "")
        )
        reload()
      }
    }).dialog
  }
  return h(
    "section",
    { id: "retry", "aria-label": "Retry" },
    h(
      "p",
      {},
      `Nothing was charged (${e.report?.verdict ?? ""}). `,
      h(
        "button",
        {
          type: "button",
          id: "retry-open",
          onclick: () => Dialog.open(dialog())
        },
        "Try it again…"
      )
    ),
    notice
  )
}
