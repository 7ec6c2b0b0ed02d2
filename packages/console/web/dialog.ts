/**
 * The confirmation dialog every operator action opens (actions.ts, stop.ts, retry.ts,
 * resolve.ts): a title, what will be sent and the fields it needs, an error line, a confirm
 * button that sends once — disabled while the request is out, enabled again on a refusal —
 * and Cancel. The request is a JSON POST of the intake API ({@link post}); a refusal shows
 * in the dialog with the rule it names.
 */
import { merchantHeaders } from "./api.js"
import { type Child, h } from "./dom.js"

/** What a POST answered: its body, or why not (the rule a refusal names, then its message). */
export type Answer =
  { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly message: string }

/** POSTs `body` as JSON to `path`, with the session's cookie. */
export const post = async (path: string, body: unknown): Promise<Answer> => {
  const response = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "application/json", ...merchantHeaders() },
    body: JSON.stringify(body)
  })
  const parsed: unknown = await response.json().catch(() => undefined)
  if (response.ok) return { ok: true, body: parsed }
  const b = (typeof parsed === "object" && parsed !== null ? parsed : {}) as {
    readonly message?: unknown
    readonly rule?: unknown
  }
  const message = typeof b.message === "string" ? b.message : `${response.status} ${response.statusText}`
  return {
    ok: false,
    message: typeof b.rule === "string" ? `Refused by rule ${b.rule}: ${message}` : message
  }
}

/** How a dialog is made. */
export interface Options {
  /** The prefix of its ids: `<id>-dialog`, `<id>-title`, `<id>-send`, `<id>-error`. */
  readonly id: string
  readonly title: string
  /** What it says and asks, between the title and the error line. */
  readonly content: ReadonlyArray<Child>
  readonly confirmLabel: string
  /** A problem with what was filled in, said without sending anything. */
  readonly check?: () => string | undefined
  /** Sends the request. */
  readonly send: () => Promise<Answer>
  /** Once it was accepted (the dialog closed). */
  readonly done: (body: unknown) => void
}

/** A dialog (not yet in the page) and its confirm button (a caller may relabel it). */
export const make = (
  options: Options
): { readonly dialog: HTMLDialogElement; readonly confirm: HTMLButtonElement } => {
  const error = h("p", { id: `${options.id}-error`, class: "error", role: "alert" })
  const confirm = h(
    "button",
    { type: "submit", id: `${options.id}-send` },
    options.confirmLabel
  ) as HTMLButtonElement
  const close = () => {
    dialog.close()
    dialog.remove()
  }
  const dialog = h(
    "dialog",
    { id: `${options.id}-dialog`, "aria-labelledby": `${options.id}-title` },
    h(
      "form",
      {
        method: "dialog",
        onsubmit: (event: Event) => {
          event.preventDefault()
          if (confirm.disabled) return
          const problem = options.check?.()
          if (problem !== undefined) {
            error.textContent = problem
            return
          }
          confirm.disabled = true
          error.textContent = ""
          void options
            .send()
            .then((answer) => {
              if (answer.ok) {
                close()
                options.done(answer.body)
              } else {
                error.textContent = answer.message
                confirm.disabled = false
              }
            })
            .catch((cause: unknown) => {
              error.textContent = cause instanceof Error ? cause.message : String(cause)
              confirm.disabled = false
            })
        }
      },
      h("h2", { id: `${options.id}-title` }, options.title),
      ...options.content,
      error,
      h("p", {}, confirm, " ", h("button", { type: "button", class: "secondary", onclick: close }, "Cancel"))
    )
  ) as HTMLDialogElement
  return { dialog, confirm }
}

/** Opens a dialog made by {@link make}. */
export const open = (dialog: HTMLDialogElement): void => {
  if (!dialog.isConnected) document.body.append(dialog)
  dialog.showModal()
}
