/**
 * The merchants of the deployment and their API keys (issue 32), for an admin: the list
 * (`GET /v1/merchants`: with what each one's acquirer supports and its rate limit, its own
 * or the deployment's), a merchant registered, disabled or enabled, a key added or retired —
 * each through a dialog of `dialog.ts` that sends once, the routes the CLI's `tillflow
 * merchants` matches. The page and its link are shown to an admin only; the server refuses
 * everyone else (403) in any case. A key is typed into a password field, sent once and
 * cleared as it is sent: the API never answers it back, so it is never shown again.
 */
import { get } from "./api.js"
import * as Dialog from "./dialog.js"
import { type Child, h, replace } from "./dom.js"
import type { Page } from "./shell.js"
import { badge, time } from "./views.js"

/** A key as listed: never the key. */
interface Key {
  readonly keyId: string
  readonly kind: "merchant" | "partner"
  readonly state: "active" | "retired"
  readonly createdAt: number
  readonly retiredAt?: number
  readonly kek: string
}

/** A rate limit of operations started: `count` per `intervalMillis` (a second or a minute), `burst` at once. */
interface RateLimit {
  readonly count: number
  readonly intervalMillis: number
  readonly burst: number
}

/** A merchant as listed: an acquirer's capability or the rate limit absent is the deployment's. */
interface Merchant {
  readonly id: string
  readonly name: string
  readonly mcc: string
  readonly virtualTerminal?: string
  readonly partialReversal?: boolean
  readonly captureReversal?: boolean
  readonly rateLimit?: RateLimit
  readonly enabled: boolean
  readonly createdAt: number
  readonly keys: ReadonlyArray<Key>
}

const path = (...segments: ReadonlyArray<string>) =>
  `/v1/merchants${segments.map((s) => `/${encodeURIComponent(s)}`).join("")}`

/** A capability of the merchant's acquirer: its own yes or no, else the deployment's. */
const capability = (what: string, value: boolean | undefined): HTMLElement =>
  h(
    "li",
    { "data-capability": what },
    `${what}: `,
    value === undefined ? h("span", { class: "muted" }, "deployment's") : value ? "yes" : "no"
  )

/** The merchant's own rate limit (`20/s (burst 20)`), else the deployment's. */
const rateLimit = (limit: RateLimit | undefined): Child =>
  limit === undefined
    ? h("span", { class: "muted" }, "deployment's")
    : `${limit.count}/${limit.intervalMillis === 60_000 ? "min" : "s"} (burst ${limit.burst})`

const field = (id: string, label: string, input: HTMLElement): HTMLElement =>
  h("p", { class: "field" }, h("label", { for: id }, `${label} `), input)

/** Registers a merchant: id, name, MCC, virtual terminal (optional). */
const registerDialog = (done: (m: Merchant) => void): HTMLDialogElement => {
  const input = (id: string, attributes: Record<string, string | boolean> = {}) =>
    h("input", { id, name: id, required: true, ...attributes }) as HTMLInputElement
  const id = input("merchant-id", { maxlength: "64", autocomplete: "off" })
  const name = input("merchant-name", { maxlength: "200", autocomplete: "off" })
  const mcc = input("merchant-mcc", { inputmode: "numeric", maxlength: "4", autocomplete: "off" })
  const terminal = input("merchant-terminal", { required: false, maxlength: "64", autocomplete: "off" })
  return Dialog.make({
    id: "merchant-register",
    title: "Register a merchant",
    content: [
      field("merchant-id", "Id (letters, digits, '.', '_', '-')", id),
      field("merchant-name", "Name", name),
      field("merchant-mcc", "MCC (4 digits)", mcc),
      field("merchant-terminal", "Virtual terminal (optional)", terminal)
    ],
    confirmLabel: "Register",
    check: () =>
      id.value.trim() === "" || name.value.trim() === "" || !/^\d{4}$/.test(mcc.value.trim())
        ? "an id, a name and an MCC of 4 digits are needed"
        : undefined,
    send: () =>
      Dialog.post(path(), {
        id: id.value.trim(),
        name: name.value.trim(),
        mcc: mcc.value.trim(),
        ...(terminal.value.trim() === "" ? {} : { virtualTerminal: terminal.value.trim() })
      }),
    done: (body) => done(body as Merchant)
  }).dialog
}

/** Adds a key: its kind and the key, in a password field emptied as it is sent. */
const keyDialog = (m: Merchant, done: (key: Key) => void): HTMLDialogElement => {
  const kind = h(
    "select",
    { id: "merchant-key-kind", name: "kind" },
    h("option", { value: "merchant" }, "merchant"),
    h("option", { value: "partner" }, "partner")
  ) as HTMLSelectElement
  const key = h("input", {
    id: "merchant-key",
    name: "key",
    type: "password",
    required: true,
    autocomplete: "off",
    spellcheck: "false"
  }) as HTMLInputElement
  return Dialog.make({
    id: "merchant-key",
    title: `Add an API key to ${m.name}`,
    content: [
      field("merchant-key-kind", "Kind", kind),
      field("merchant-key", "API key (sealed when stored, never shown again)", key),
      h("p", { class: "muted" }, `Merchant ${m.id}.`)
    ],
    confirmLabel: "Add the key",
    check: () => (key.value === "" ? "the key is empty" : undefined),
    send: () => {
      const body = { kind: kind.value, key: key.value }
      // Out of the page as soon as it is sent: a refusal asks for it again.
      key.value = ""
      return Dialog.post(path(m.id, "keys"), body)
    },
    done: (body) => done(body as Key)
  }).dialog
}

/** A confirmation: what will happen, then the POST. */
const confirmDialog = (
  id: string,
  title: string,
  question: string,
  label: string,
  target: string,
  done: (body: unknown) => void
): HTMLDialogElement =>
  Dialog.make({
    id,
    title,
    content: [h("p", { id: `${id}-question` }, question)],
    confirmLabel: label,
    send: () => Dialog.post(target, {}),
    done
  }).dialog

/** The merchants page. */
export const merchants: Page = (main) => {
  const notice = h("p", { id: "merchants-notice", role: "status" })
  const list = h("div", { id: "merchants-list" })
  let reload: () => Promise<void> = () => Promise.resolve()
  const said = (text: string) => {
    notice.textContent = text
    reload().catch((error: unknown) => {
      notice.textContent = `${text} The list could not be read again: ${error instanceof Error ? error.message : String(error)}`
    })
  }

  const keyRow = (m: Merchant, k: Key): HTMLElement =>
    h(
      "li",
      { "data-key": k.keyId },
      h("code", {}, k.keyId),
      ` ${k.kind} `,
      badge(k.state),
      ` added ${time(k.createdAt)}`,
      k.retiredAt === undefined ? "" : `, retired ${time(k.retiredAt)}`,
      ` (sealed under ${k.kek}) `,
      k.state === "active"
        ? h(
            "button",
            {
              type: "button",
              class: "secondary",
              "data-action": "retire",
              onclick: () =>
                Dialog.open(
                  confirmDialog(
                    "merchant-retire",
                    "Retire a key",
                    `Retire key ${k.keyId} of ${m.name} (${m.id})? It is never used again.`,
                    "Retire the key",
                    path(m.id, "keys", k.keyId, "retire"),
                    () => said(`Key ${k.keyId} of ${m.id} retired.`)
                  )
                )
            },
            "Retire…"
          )
        : null
    )

  const row = (m: Merchant): HTMLElement => {
    const next = m.enabled ? "disable" : "enable"
    return h(
      "tr",
      { "data-merchant": m.id },
      h("td", {}, h("code", {}, m.id)),
      h("td", {}, m.name),
      h("td", {}, m.mcc),
      h("td", {}, m.virtualTerminal ?? "—"),
      h(
        "td",
        { class: "merchant-acquirer" },
        h(
          "ul",
          { class: "plain" },
          capability("partial reversal", m.partialReversal),
          capability("capture reversal", m.captureReversal)
        )
      ),
      h("td", { class: "merchant-rate-limit" }, rateLimit(m.rateLimit)),
      h("td", { class: "merchant-state" }, badge(m.enabled ? "enabled" : "disabled")),
      h(
        "td",
        {},
        m.keys.length === 0
          ? h("span", { class: "muted" }, "no key")
          : h(
              "ul",
              {},
              m.keys.map((k) => keyRow(m, k))
            )
      ),
      h(
        "td",
        {},
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            "data-action": next,
            onclick: () =>
              Dialog.open(
                confirmDialog(
                  "merchant-state",
                  m.enabled ? "Disable a merchant" : "Enable a merchant",
                  m.enabled
                    ? `Disable ${m.name} (${m.id})? Its operations are refused until it is enabled again.`
                    : `Enable ${m.name} (${m.id}) again?`,
                  m.enabled ? "Disable" : "Enable",
                  path(m.id, next),
                  () => said(`${m.id} ${m.enabled ? "disabled" : "enabled"}.`)
                )
              )
          },
          m.enabled ? "Disable…" : "Enable…"
        ),
        " ",
        h(
          "button",
          {
            type: "button",
            class: "secondary",
            "data-action": "add-key",
            onclick: () =>
              Dialog.open(keyDialog(m, (k) => said(`Key ${k.keyId} (${k.kind}) added to ${m.id}.`)))
          },
          "Add a key…"
        )
      )
    )
  }

  const table = (all: ReadonlyArray<Merchant>): Child =>
    all.length === 0
      ? h("p", { class: "muted", id: "no-merchants" }, "No merchant is registered.")
      : h(
          "table",
          { class: "table", id: "merchants" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Id", "Name", "MCC", "Virtual terminal", "Acquirer", "Rate limit", "State", "Keys", ""].map(
                (t) => h("th", { scope: "col" }, t)
              )
            )
          ),
          h("tbody", {}, all.map(row))
        )

  replace(
    main,
    h("h1", {}, "Merchants"),
    h(
      "p",
      {},
      "The merchants this deployment serves and their API keys (ids, kinds, states: never a key). ",
      h(
        "button",
        {
          type: "button",
          id: "merchant-register-open",
          onclick: () => Dialog.open(registerDialog((m) => said(`${m.id} registered.`)))
        },
        "Register a merchant…"
      )
    ),
    notice,
    list
  )
  reload = async () => replace(list, table(await get<ReadonlyArray<Merchant>>(path())))
  return { load: () => reload() }
}
