/**
 * An operator's actions on the transaction an execution made (`POST
 * /v1/transactions/{guid}/actions`): only those that fit what it is are offered (refund,
 * reverse and tip on an approved sale; capture, increase and release on an open
 * pre-authorization; reverse on a refund), none to a viewer (`GET /console/session`) — the
 * server decides in every case. Each opens a dialog that shows the amount and currency to
 * be sent and asks for a reason; its confirmation is sent once (the button is disabled
 * while it is sent, and the server's key derived from the action makes a second request
 * answer the first's execution). A refusal shows the rule's message in the dialog.
 */
import * as Dialog from "./dialog.js"
import { h, replace } from "./dom.js"
import type { Execution } from "./views.js"
import { executionLink } from "./views.js"

/** Who the session is. */
export interface Session {
  readonly name: string
  readonly role: "viewer" | "operator" | "admin"
  readonly via: "operator" | "token"
  /** The merchants it is limited to; absent for the platform's operators, who see every merchant. */
  readonly merchants?: ReadonlyArray<string>
}

let session: Promise<Session | undefined> | undefined

/** The session's operator, asked once per page load. */
export const currentSession = (): Promise<Session | undefined> => {
  session ??= fetch("/console/session", {
    credentials: "same-origin",
    headers: { accept: "application/json" }
  })
    .then((r) => (r.ok ? (r.json() as Promise<Session>) : undefined))
    .catch(() => undefined)
  return session
}

type Action = "refund" | "reverse" | "capture" | "increase" | "release" | "tip"

const labels: Record<Action, string> = {
  refund: "Refund",
  reverse: "Reverse",
  capture: "Capture",
  increase: "Increase the hold",
  release: "Release the hold",
  tip: "Adjust the tip"
}

/** Whether the action sends an amount (reverse: in full from here; release: the whole hold). */
const withAmount = (action: Action): boolean => action !== "reverse" && action !== "release"

/** The transaction an approved terminal operation made: its guid, what it is, its amount. */
const transactionOf = (e: Execution) => {
  const verdict = e.report?.verdict
  if (verdict !== "approved" && verdict !== "partially-approved") return undefined
  const value = (e.result as { value?: { facts?: Record<string, unknown> } } | undefined)?.value
  const guid = value?.facts?.["efttransactionID"]
  if (typeof guid !== "string" || guid === "") return undefined
  return {
    guid,
    operation: e.attributes["operation"] ?? "",
    amount: e.attributes["amount"],
    currency: e.attributes["currency"]
  }
}

/** The actions that fit the transaction. */
const offered = (operation: string): ReadonlyArray<Action> => {
  switch (operation) {
    case "sale":
    case "saleAndTokenizeCard":
      return ["refund", "reverse", "tip"]
    case "preAuthorization":
      return ["capture", "increase", "release"]
    case "refund":
      return ["reverse"]
    default:
      return []
  }
}

/** The confirmation dialog of one action; `done` once it was sent. */
const dialog = (
  action: Action,
  target: NonNullable<ReturnType<typeof transactionOf>>,
  done: (execution: Execution) => void
): HTMLDialogElement => {
  const currency = target.currency ?? ""
  const amount = h("input", {
    id: "action-amount",
    name: "amount",
    inputmode: "decimal",
    required: true,
    value: action === "refund" ? (target.amount ?? "") : "",
    "aria-describedby": "action-confirm"
  }) as HTMLInputElement
  const reason = h("textarea", {
    id: "action-reason",
    name: "reason",
    required: true,
    rows: 2
  }) as HTMLTextAreaElement
  const confirmLine = h("p", { id: "action-confirm", class: "confirm" })
  const summary = () =>
    withAmount(action)
      ? `${labels[action]} ${amount.value.trim() === "" ? "…" : amount.value.trim()} ${currency} on transaction ${target.guid}`
      : `${labels[action]} transaction ${target.guid} in full`
  const { confirm, dialog: element } = Dialog.make({
    id: "action",
    title: labels[action],
    content: [
      withAmount(action)
        ? h("p", {}, h("label", { for: "action-amount" }, `Amount (${currency}) `), amount)
        : null,
      h("p", {}, h("label", { for: "action-reason" }, "Reason (recorded with your name) "), reason),
      confirmLine
    ],
    confirmLabel: "Confirm",
    send: () =>
      Dialog.post(`/v1/transactions/${encodeURIComponent(target.guid)}/actions`, {
        action,
        reason: reason.value,
        ...(withAmount(action) ? { amount: amount.value.trim(), currency } : {})
      }),
    done: (body) => done(body as Execution)
  })
  const refresh = () => {
    confirmLine.textContent = `${summary()}?`
    confirm.textContent = withAmount(action) ? `Confirm: ${amount.value.trim()} ${currency}` : "Confirm"
  }
  amount.addEventListener("input", refresh)
  refresh()
  return element
}

/**
 * The actions panel of an execution's page: the buttons that fit its transaction (none for a
 * viewer, or for an execution that made no transaction), and the notice of what was sent.
 */
export const panel = async (e: Execution, reload: () => void): Promise<HTMLElement | null> => {
  const target = transactionOf(e)
  if (target === undefined) return null
  const actions = offered(target.operation)
  if (actions.length === 0) return null
  const who = await currentSession()
  const box = h("section", { id: "actions", "aria-label": "Actions" })
  const notice = h("p", { id: "action-notice", role: "status" })
  if (who?.role === "viewer") {
    replace(
      box,
      h("p", { class: "muted" }, `Signed in as ${who.name} (viewer): a viewer reads, it does not act.`)
    )
    return box
  }
  replace(
    box,
    h("h2", {}, "Actions"),
    h(
      "p",
      {},
      actions.map((action) =>
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            "data-action": action,
            onclick: () => {
              const d = dialog(action, target, (execution) => {
                replace(notice, `${labels[action]} sent: execution `, executionLink(execution.executionId))
                reload()
              })
              Dialog.open(d)
            }
          },
          labels[action]
        )
      )
    ),
    notice
  )
  return box
}
