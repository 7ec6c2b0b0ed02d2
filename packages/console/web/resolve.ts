/**
 * An operator resolves a terminal-less request left in doubt (its execution's outcome is
 * `unresolved`: the service's answer was lost and reconciliation could not tell), or a
 * terminal operation whose outcome stayed unresolved, from the execution's page: applied or not applied, with what the status endpoint said and a
 * reason, in the operator's own name — through the same routes as the CLI and any caller
 * (`POST /v1/transactions/{guid}/resolve` for a request on a transaction,
 * `POST /v1/attempts/{kind}/{key}/resolve` for a batch close, a MOTO sale, a device
 * command, or a terminal operation under its execution id). Where the request is resolved comes from the workflow and its payload
 * ({@link targetOf}, pure); the server decides and records (`InDoubtResolved`), and a
 * refusal shows its rule in the dialog.
 */
import { merchantHeaders } from "./api.js"
import * as Dialog from "./dialog.js"
import { h, replace } from "./dom.js"
import type { Execution } from "./views.js"

/** Where a request in doubt is resolved, and what the dialog says it is. */
export interface Target {
  readonly path: string
  readonly requestId: string
  /** What the request is, for the dialog ("the batch close of terminal T1"). */
  readonly what: string
  /** An applied MOTO sale (or terminal operation) needs the guid the gateway gave it. */
  readonly needsGuid: boolean
  /** A terminal operation: the operator may say it moved another amount than asked. */
  readonly terminal?: boolean
}

/**
 * The target of a terminal operation left unresolved: resolved under its execution id
 * (`POST /v1/attempts/terminal/{executionId}/resolve`); the guid is asked for an operation
 * that moves money, and the amount may be corrected (a partial approval, a tip).
 */
export const terminalTargetOf = (e: Pick<Execution, "executionId" | "attributes">): Target => {
  const operation = text(e.attributes["operation"]) ?? "operation"
  const serial = text(e.attributes["serialNumber"])
  return {
    path: `/v1/attempts/terminal/${encodeURIComponent(e.executionId)}/resolve`,
    requestId: e.executionId,
    what: `the ${operation}${serial === undefined ? "" : ` on terminal ${serial}`}`,
    needsGuid: true,
    terminal: true
  }
}

/** What an operator's resolution of a terminal operation said, for its page. */
export const resolvedLine = (r: NonNullable<Execution["resolution"]>): string =>
  `Resolved by ${r.operator} as ${r.resolution === "applied" ? "applied" : "not applied"}` +
  (r.guid === undefined ? "" : `: transaction ${r.guid}`) +
  (r.amount === undefined ? "" : ` (${r.amount} ${r.currency ?? ""})`) +
  ` at ${r.at
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z")
    .replace("Z", " UTC")} — ${r.reason}`

const text = (u: unknown): string | undefined => (typeof u === "string" && u.trim() !== "" ? u : undefined)

/**
 * The target of an execution's request in doubt, from its workflow, payload (as
 * `WorkflowStarted` stored it) and report; none when the execution is not one that can be
 * resolved this way (a terminal operation, or a payload without what is needed).
 */
export const targetOf = (
  workflow: string,
  payload: Readonly<Record<string, unknown>>,
  report?: { readonly transactionReference?: string | undefined }
): Target | undefined => {
  const requestId = text(payload["requestId"])
  if (requestId === undefined) return undefined
  const at = (kind: string, key: string) => `/v1/attempts/${kind}/${encodeURIComponent(key)}/resolve`
  const serial = text(payload["serialNumber"])
  if (workflow === "Batch.Close")
    return serial === undefined
      ? undefined
      : {
          path: at("batch", serial),
          requestId,
          what: `the batch close of terminal ${serial}`,
          needsGuid: false
        }
  if (workflow === "DeviceCommand.Send")
    return serial === undefined
      ? undefined
      : { path: at("device", serial), requestId, what: `the command to terminal ${serial}`, needsGuid: false }
  if (workflow === "Moto.Sale") {
    const reference = text(payload["transactionReference"]) ?? text(report?.transactionReference)
    return reference === undefined
      ? undefined
      : { path: at("moto-sale", reference), requestId, what: `the MOTO sale ${reference}`, needsGuid: true }
  }
  const guid = text(payload["originalGuid"])
  return guid === undefined
    ? undefined
    : {
        path: `/v1/transactions/${encodeURIComponent(guid)}/resolve`,
        requestId,
        what: `the ${workflow} request on transaction ${guid}`,
        needsGuid: false
      }
}

/** The payload an execution started with, from its history (`GET /v1/executions/{id}/history`). */
const payloadOf = async (executionId: string): Promise<Record<string, unknown> | undefined> => {
  const response = await fetch(`/v1/executions/${encodeURIComponent(executionId)}/history`, {
    credentials: "same-origin",
    headers: { accept: "application/json", ...merchantHeaders() }
  })
  if (!response.ok) return undefined
  const history = (await response.json()) as {
    readonly engine: ReadonlyArray<{ readonly type: string; readonly data: unknown }>
  }
  const started = history.engine.find((e) => e.type === "WorkflowStarted")?.data as
    { readonly payload?: unknown } | undefined
  const payload = started?.payload
  return typeof payload === "object" && payload !== null ? (payload as Record<string, unknown>) : undefined
}

/** The dialog that resolves `target` in `operator`'s name; `done` once it was recorded. */
const dialog = (target: Target, operator: string, done: () => void): HTMLDialogElement => {
  const applied = h("input", {
    type: "radio",
    id: "resolve-applied",
    name: "resolution",
    value: "applied"
  }) as HTMLInputElement
  const notApplied = h("input", {
    type: "radio",
    id: "resolve-not-applied",
    name: "resolution",
    value: "notApplied"
  }) as HTMLInputElement
  const guid = h("input", { id: "resolve-guid", name: "guid" }) as HTMLInputElement
  const amount = h("input", {
    id: "resolve-amount",
    name: "amount",
    inputmode: "decimal"
  }) as HTMLInputElement
  const currency = h("input", { id: "resolve-currency", name: "currency", size: 3 }) as HTMLInputElement
  const statusEndpoint = h("input", { id: "resolve-status", name: "statusEndpoint" }) as HTMLInputElement
  const reason = h("textarea", {
    id: "resolve-reason",
    name: "reason",
    required: true,
    rows: 2
  }) as HTMLTextAreaElement
  return Dialog.make({
    id: "resolve",
    title: "Resolve the request in doubt",
    content: [
      h("p", {}, `What became of ${target.what} (request ${target.requestId})?`),
      h(
        "p",
        {},
        applied,
        h("label", { for: "resolve-applied" }, " Applied "),
        notApplied,
        h("label", { for: "resolve-not-applied" }, " Not applied")
      ),
      target.needsGuid
        ? h(
            "p",
            {},
            h("label", { for: "resolve-guid" }, "The guid the gateway gave it (when applied) "),
            guid
          )
        : null,
      target.terminal === true
        ? h(
            "p",
            {},
            h("label", { for: "resolve-amount" }, "What it moved, when not the amount asked (optional) "),
            amount,
            h("label", { for: "resolve-currency" }, " currency "),
            currency
          )
        : null,
      h(
        "p",
        {},
        h("label", { for: "resolve-status" }, "What the status endpoint said (optional) "),
        statusEndpoint
      ),
      h("p", {}, h("label", { for: "resolve-reason" }, "Reason (recorded with your name) "), reason)
    ],
    confirmLabel: "Record the resolution",
    check: () =>
      applied.checked || notApplied.checked ? undefined : "Say whether the request was applied or not.",
    send: () =>
      Dialog.post(target.path, {
        requestId: target.requestId,
        resolution: applied.checked ? "applied" : "notApplied",
        operator,
        reason: reason.value,
        ...(statusEndpoint.value.trim() === "" ? {} : { statusEndpoint: statusEndpoint.value.trim() }),
        ...(target.needsGuid && guid.value.trim() !== "" ? { guid: guid.value.trim() } : {}),
        ...(target.terminal === true && amount.value.trim() !== ""
          ? { amount: amount.value.trim(), currency: currency.value.trim().toUpperCase() }
          : {})
      }),
    done: () => done()
  }).dialog
}

/**
 * The resolve panel of an execution's page: a button for an unresolved terminal-less
 * execution whose request can be resolved, for an operator or an admin; nothing otherwise.
 */
export const panel = async (
  e: Execution,
  who: { readonly name: string; readonly role: string } | undefined,
  reload: () => void
): Promise<HTMLElement | null> => {
  if (e.report?.verdict !== "unresolved") return null
  const terminal = e.workflow === "TerminalOperation"
  const box = h("section", { id: "resolve", "aria-label": "Resolve" })
  if (terminal && e.resolution !== undefined) {
    replace(box, h("h2", {}, "Resolved"), h("p", { id: "resolve-done" }, resolvedLine(e.resolution)))
    return box
  }
  if (who === undefined || who.role === "viewer") return null
  const payload = terminal ? undefined : await payloadOf(e.executionId)
  const target = terminal
    ? terminalTargetOf(e)
    : payload === undefined
      ? undefined
      : targetOf(e.workflow, payload, e.report)
  if (target === undefined) return null
  const notice = h("p", { id: "resolve-notice", role: "status" })
  replace(
    box,
    h("h2", {}, terminal ? "Unresolved" : "In doubt"),
    h(
      "p",
      {},
      terminal
        ? `Nobody could learn whether ${target.what} was applied: look at the terminal, the acquirer's report or the status endpoint, then say what became of it. `
        : `The service's answer to ${target.what} was lost and reconciliation could not tell whether it was applied. `,
      h(
        "button",
        {
          type: "button",
          id: "resolve-open",
          onclick: () => {
            const d = dialog(target, who.name, () => {
              replace(notice, `Resolution recorded in ${who.name}'s name.`)
              reload()
            })
            Dialog.open(d)
          }
        },
        "Resolve…"
      )
    ),
    notice
  )
  return box
}
