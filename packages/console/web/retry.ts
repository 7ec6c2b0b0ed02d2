/**
 * Trying again, from the console, a terminal operation that charged nothing (its report:
 * `unavailable` or `not-charged`): `POST /v1/executions/{id}/retry`, the route the CLI's
 * `tillflow executions retry` and any caller use. Offered to an operator or an admin; a
 * dialog says what is sent again and asks for a reason (recorded with their name); the
 * server starts it under `retry-<id>`, so a double click tries once. A refusal shows its rule.
 */
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
  const error = h("p", { id: "retry-error", class: "error", role: "alert" })
  const reason = h("textarea", {
    id: "retry-reason",
    name: "reason",
    required: true,
    rows: 2
  }) as HTMLTextAreaElement
  const confirm = h("button", { type: "submit", id: "retry-send" }, "Send it again") as HTMLButtonElement
  const dialog = h(
    "dialog",
    { id: "retry-dialog", "aria-labelledby": "retry-title" },
    h(
      "form",
      {
        method: "dialog",
        onsubmit: (event: Event) => {
          event.preventDefault()
          if (confirm.disabled) return
          confirm.disabled = true
          error.textContent = ""
          void fetch(`/v1/executions/${encodeURIComponent(e.executionId)}/retry`, {
            method: "POST",
            credentials: "same-origin",
            headers: { "content-type": "application/json", accept: "application/json" },
            body: JSON.stringify({ reason: reason.value })
          })
            .then(async (response) => {
              const body = (await response.json().catch(() => undefined)) as
                | { readonly executionId?: string; readonly message?: string; readonly rule?: string }
                | undefined
              if (!response.ok) {
                const message = body?.message ?? `${response.status} ${response.statusText}`
                error.textContent =
                  body?.rule === undefined ? message : `Refused by rule ${body.rule}: ${message}`
                confirm.disabled = false
                return
              }
              dialog.close()
              replace(notice, "Sent again: execution ", executionLink(body?.executionId ?? ""))
              reload()
            })
            .catch((cause: unknown) => {
              error.textContent = cause instanceof Error ? cause.message : String(cause)
              confirm.disabled = false
            })
        }
      },
      h("h2", { id: "retry-title" }, "Try it again"),
      h("p", { id: "retry-confirm" }, `Send ${what} again, as a new attempt with a fresh reference?`),
      h("p", {}, h("label", { for: "retry-reason" }, "Reason (recorded with your name) "), reason),
      error,
      h(
        "p",
        {},
        confirm,
        " ",
        h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Cancel")
      )
    )
  ) as HTMLDialogElement
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
          onclick: () => {
            if (!dialog.isConnected) document.body.append(dialog)
            dialog.showModal()
          }
        },
        "Try it again…"
      )
    ),
    notice
  )
}
