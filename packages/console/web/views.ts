/**
 * The shapes the console reads from the intake API (the views of `@tillflow/intake`'s
 * `Intake` and `Monitor` modules, as JSON), and how they are shown.
 */
import { h } from "./dom.js"

/** An execution (`ExecutionView`). */
export interface Execution {
  readonly executionId: string
  readonly workflow: string
  readonly status: string
  readonly attributes: Record<string, string>
  readonly createdAt: number
  readonly updatedAt: number
  readonly progress?: { readonly phase: string; readonly attempt: number; readonly waitingFor: string }
  readonly report?: {
    readonly verdict: string
    readonly reconciled: boolean
    readonly summary: string
    readonly finStatus?: string
    readonly transactionReference?: string
    readonly amount?: string
  }
  readonly result?: unknown
  /** A terminal operation left unresolved, once an operator resolved it. */
  readonly resolution?: {
    readonly resolution: "applied" | "notApplied"
    readonly operator: string
    readonly reason: string
    readonly at: string
    readonly guid?: string
    readonly amount?: string
    readonly currency?: string
  }
}

/** A stored event (`EventView`). */
export interface StoredEvent {
  readonly position: string
  readonly streamId: string
  readonly version: number
  readonly type: string
  readonly recordedAt: string
  readonly data: unknown
  readonly metadata: unknown
}

/** Who moved an alert on, why, and when (`AlertStep`). */
export interface AlertStep {
  readonly operator: string
  readonly reason: string
  readonly at: number
}

/** An alert (`AlertView`). */
export interface Alert {
  readonly id: string
  readonly kind: "mismatch" | "late-result" | "unresolved" | "stuck" | "overdue" | "key-refused"
  readonly executionId: string
  readonly at: number
  readonly message: string
  readonly state: "open" | "acknowledged" | "resolved"
  readonly acknowledged?: AlertStep
  readonly resolved?: AlertStep
}

/** A live event of the log (`/v1/monitor/live`). */
export interface LiveEvent {
  readonly position: string
  readonly streamId: string
  readonly type: string
  readonly recordedAt: string
}

/** The zone the console shows times in: UTC (the default), or the viewer's own zone. */
export type Zone = "UTC" | "local"

const zoneKey = "tillflow.console.zone"

/** The viewer's choice of zone (kept in this browser), UTC unless they chose theirs. */
export const zone = (): Zone => {
  try {
    return window.localStorage.getItem(zoneKey) === "local" ? "local" : "UTC"
  } catch {
    return "UTC"
  }
}

/** Keeps the viewer's choice of zone. */
export const chooseZone = (choice: Zone): void => {
  try {
    window.localStorage.setItem(zoneKey, choice)
  } catch {
    // Storage refused (private mode): the choice lasts until the page is left.
  }
}

/** The viewer's own zone, as the browser names it (`America/New_York`). */
export const localZoneName = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || "local"

/** The name of the zone times are shown in: `UTC`, or the viewer's (`America/New_York`). */
export const zoneName = (): string => (zone() === "UTC" ? "UTC" : localZoneName())

/**
 * A date and time to the second, with its zone written: `2026-11-28 10:49:15 UTC`, or in
 * the viewer's zone when they chose it (`2026-11-28 05:49:15 America/New_York`).
 */
export const time = (millis: number): string => {
  const d = new Date(millis)
  const pad = (n: number) => String(n).padStart(2, "0")
  const utc = zone() === "UTC"
  const [y, mo, da, ho, mi, se] = utc
    ? [
        d.getUTCFullYear(),
        d.getUTCMonth() + 1,
        d.getUTCDate(),
        d.getUTCHours(),
        d.getUTCMinutes(),
        d.getUTCSeconds()
      ]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()]
  return `${y}-${pad(mo)}-${pad(da)} ${pad(ho)}:${pad(mi)}:${pad(se)} ${zoneName()}`
}

/** The amount of an execution in major units with its currency (its search attributes hold both). */
export const amountOf = (e: Execution): string =>
  e.attributes["amount"] !== undefined && e.attributes["currency"] !== undefined
    ? `${e.attributes["amount"]} ${e.attributes["currency"]}`
    : ""

/** A short word for where an execution stands: its verdict once ended, its phase while it runs. */
export const stateOf = (e: Execution): string => e.report?.verdict ?? e.progress?.phase ?? e.status

/** A badge whose class names its tone (approved green, declined red …). */
export const badge = (text: string): HTMLElement =>
  h("span", { class: `badge badge-${text.replace(/[^a-z-]/g, "")}` }, text)

/** A link to an execution's page. */
export const executionLink = (executionId: string, label: string = executionId.slice(0, 8)): HTMLElement =>
  h("a", { href: `#/executions/${encodeURIComponent(executionId)}`, title: executionId }, label)

/** The execution an event's stream belongs to (`payment-<id>`, `execution-<id>` …), if any. */
export const executionOfStream = (streamId: string): string | undefined => {
  const match = /^(?:execution|payment)-(.+)$/.exec(streamId)
  return match === null ? undefined : match[1]
}
