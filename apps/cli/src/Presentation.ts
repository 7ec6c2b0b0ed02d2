/**
 * What the command line shows of what the intake answers, in lines and in `--json`: one
 * amount form everywhere (major units as a string beside the currency, `"10.50"` `"EUR"`,
 * as the options take them), no Effect encodings (`{"_id":"Exit",…}`), an execution's
 * `status` that says how the payment ended (a decline is `"declined"`, never `"succeeded"`),
 * and no card number or follow-up guid for an operation that involved no payment card.
 */
import { Currency, Money } from "@tillflow/core"
import type * as Intake from "@tillflow/intake/Intake"
import * as Either from "effect/Either"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Operations that read no payment card: their results show no card and no guid to follow up. */
const cardless = new Set(["pingDevice", "printReceipt"])

/** Fields of a card that an operation without one has no business showing. */
const cardFields = new Set(["maskedCardNumber", "cardSchemeName", "cardToken", "efttransactionID"])

/** Minor units (a digit string or a number) of a currency as major units: 1050 EUR → "10.50". */
export const majorUnits = (minor: unknown, currency: unknown): string | undefined => {
  if (typeof currency !== "string" || !Currency.isCurrency(currency)) return undefined
  const text = typeof minor === "number" && Number.isSafeInteger(minor) ? String(minor) : minor
  if (typeof text !== "string") return undefined
  const money = Money.fromMinorUnitsString(text, currency)
  return Either.isRight(money) ? Money.toMajorUnitsString(money.right) : undefined
}

/** `10.50 EUR` from minor units and a currency, or undefined when they are not that. */
export const moneyText = (minor: unknown, currency: unknown): string | undefined => {
  const major = majorUnits(minor, currency)
  return major === undefined ? undefined : `${major} ${String(currency)}`
}

/** The first failure of an encoded Cause, or what kind of end it was. */
const causeFailure = (cause: unknown): Json => {
  if (!isRecord(cause)) return { message: "failed" }
  switch (cause["_tag"]) {
    case "Fail":
      // `error` in the stored encoding (`Schema.Cause`), `failure` in the runtime's `toJSON`.
      return plain(cause["error"] ?? cause["failure"])
    case "Die":
      return { message: `defect: ${JSON.stringify(plain(cause["defect"]))}` }
    case "Interrupt":
      return { message: "interrupted" }
    case "Sequential":
    case "Parallel": {
      const left = causeFailure(cause["left"])
      return isRecord(left) && left["message"] === "failed" ? causeFailure(cause["right"]) : left
    }
    default:
      return { message: "failed" }
  }
}

/**
 * A stored value as a script reads it: an encoded `Exit` is its value (or `{ error }`), an
 * `Option` its value or null, `_id` markers go, money (`{ amount: "1050", currency }`, or a
 * field ending in `Amount` beside a `currency`) is in major units.
 */
export const plain = (value: unknown, drop: ReadonlySet<string> = new Set()): Json => {
  if (Array.isArray(value)) return value.map((item) => plain(item, drop))
  if (typeof value === "bigint") return value.toString()
  if (!isRecord(value)) {
    return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : null
  }
  if (value["_id"] === "Exit") {
    return value["_tag"] === "Success" ? plain(value["value"], drop) : { error: causeFailure(value["cause"]) }
  }
  if (value["_id"] === "Option") return value["_tag"] === "Some" ? plain(value["value"], drop) : null
  const keys = Object.keys(value)
  if (keys.length === 2 && keys.includes("amount") && keys.includes("currency")) {
    const major = majorUnits(value["amount"], value["currency"])
    if (major !== undefined) return { amount: major, currency: String(value["currency"]) }
  }
  const out: Record<string, Json> = {}
  for (const [key, field] of Object.entries(value)) {
    if (key === "_id" || drop.has(key)) continue
    const major = key.endsWith("Amount") ? majorUnits(field, value["currency"]) : undefined
    out[key] =
      major === undefined ? plain(field, drop) : { amount: major, currency: String(value["currency"]) }
  }
  return out
}

/**
 * An execution's stored exit (`{ _tag: "Success", value }` or `{ _tag: "Failure", cause }`) as
 * a script reads it: the value, or `{ error }` with the first failure.
 */
export const resultJson = (result: unknown, drop: ReadonlySet<string> = new Set()): Json => {
  if (!isRecord(result)) return plain(result, drop)
  if (result["_tag"] === "Success") return plain(result["value"], drop)
  if (result["_tag"] === "Failure") return { error: causeFailure(result["cause"]) }
  return plain(result, drop)
}

/** The facts of a terminal operation's stored result, if it has them. */
export const resultFacts = (view: Intake.ExecutionView): Readonly<Record<string, unknown>> => {
  const result = view.result
  const value = isRecord(result) && result["_tag"] === "Success" ? result["value"] : undefined
  const facts = isRecord(value) ? value["facts"] : undefined
  return isRecord(facts) ? facts : {}
}

/** The stored result's value (an encoded `Exit`'s success), if it ended with one. */
export const resultValue = (view: Intake.ExecutionView): Readonly<Record<string, unknown>> | undefined => {
  const result = view.result
  const value = isRecord(result) && result["_tag"] === "Success" ? result["value"] : undefined
  return isRecord(value) ? value : undefined
}

/** Whether the execution's operation read a payment card (ping and print do not). */
export const involvesCard = (view: Intake.ExecutionView): boolean =>
  !cardless.has(view.attributes["operation"] ?? view.workflow)

/**
 * How an execution stands, in one word: its verdict once it ended with one (`approved`,
 * `declined`, `unresolved` …), else what the engine says (`running`, `suspended`, `failed` …).
 */
export const statusOf = (view: Intake.ExecutionView): string => view.report?.verdict ?? view.status

/** The guid later operations take (`--original-transaction-id`), when the execution has one. */
export const transactionIdOf = (view: Intake.ExecutionView): string | undefined => {
  if (!involvesCard(view)) return undefined
  const facts = resultFacts(view)
  const guid = facts["efttransactionID"] ?? resultValue(view)?.["gatewayGuid"]
  return typeof guid === "string" ? guid : undefined
}

/** An execution as one `--json` document. */
export const executionJson = (view: Intake.ExecutionView): Json => {
  const a = view.attributes
  const guid = transactionIdOf(view)
  const amount = a["amount"]
  return {
    executionId: view.executionId,
    workflow: view.workflow,
    status: statusOf(view),
    // The engine's word for an execution that ran to its end, whatever the payment did.
    execution: view.status === "succeeded" ? "completed" : view.status,
    ...(view.report === undefined ? {} : { reconciled: view.report.reconciled, summary: summaryOf(view) }),
    ...(view.report?.reason === undefined ? {} : { reason: view.report.reason }),
    operation: a["operation"] ?? view.workflow,
    ...(a["serialNumber"] === undefined ? {} : { serialNumber: a["serialNumber"] }),
    ...(amount === undefined ? {} : { amount: { amount, currency: a["currency"] ?? "" } }),
    ...(guid === undefined ? {} : { transactionId: guid }),
    ...(a["transactionReference"] === undefined ? {} : { transactionReference: a["transactionReference"] }),
    ...(a["originalGuid"] === undefined ? {} : { originalTransactionId: a["originalGuid"] }),
    ...(a["idempotencyKey"] === undefined ? {} : { idempotencyKey: a["idempotencyKey"] }),
    createdAt: new Date(view.createdAt).toISOString(),
    updatedAt: new Date(view.updatedAt).toISOString(),
    ...(view.progress === undefined ? {} : { progress: plain(view.progress) }),
    ...(view.result === undefined
      ? {}
      : { result: resultJson(view.result, involvesCard(view) ? new Set() : cardFields) })
  }
}

/** The report's one line, without the card for an operation that read none. */
export const summaryOf = (view: Intake.ExecutionView): string => {
  const summary = view.report?.summary ?? ""
  if (involvesCard(view)) return summary
  const facts = resultFacts(view)
  return facts["finStatus"] === undefined
    ? summary.replace(/, card [^,]*/, "")
    : `${String(facts["operation"] ?? view.attributes["operation"] ?? view.workflow)} on ${String(
        facts["serialNumber"] ?? view.attributes["serialNumber"] ?? "?"
      )}: ${String(facts["finStatus"])}`
}

/** Rows as aligned columns under a header (the last column is not padded). */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>
): ReadonlyArray<string> => {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)]
}

/** The transactions of a batch detail's result, as rows of a table (none when it has none). */
export const batchLines = (view: Intake.ExecutionView): ReadonlyArray<string> => {
  const lines = resultValue(view)?.["lines"]
  if (!Array.isArray(lines)) return []
  if (lines.length === 0) return ["  no transaction in this batch"]
  const rows = lines.filter(isRecord).map((line) => {
    const amount = isRecord(line["amount"]) ? line["amount"] : {}
    return [
      String(line["transactionType"] ?? ""),
      moneyText(amount["amount"], amount["currency"]) ?? "",
      String(line["retrievalReferenceNumber"] ?? ""),
      String(line["batchDetailElementGuid"] ?? "")
    ]
  })
  return table(["type", "amount", "rrn", "guid"], rows).map((row) => `  ${row}`)
}

/**
 * An `efttimestamp` as what it is: the terminal's wall clock (`20261124015151307` →
 * `2026-11-24 01:51:51.307`), in the terminal's own time zone, which the service does not say.
 */
export const terminalTime = (efttimestamp: unknown): string | undefined => {
  if (typeof efttimestamp !== "string") return undefined
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{3})?$/.exec(efttimestamp)
  if (m === null) return efttimestamp
  return `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${m[6]}${m[7] === undefined ? "" : `.${m[7]}`} terminal time`
}
