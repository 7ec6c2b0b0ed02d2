/**
 * What a finished execution is found by, beyond what it was started with: its outcome in
 * an operator's words (`approved`, `declined`, `failed`, `unresolved`; `in-progress` is
 * its status, not an attribute), the verdict of its report, and the ids its result named
 * (the guid, the customer reference, the card's last four digits). Given to the engine as
 * `DurableEngine.Options.exitAttributes` (`Stack.engineLayer`), so each execution gains
 * them as it finishes and the executions' search filters on them in the queue's own
 * statement, however many executions are stored.
 */
import type { OperationReport } from "@tillflow/core"
import type { EngineEvent, ExecutionQueue } from "@tillflow/engine"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { reportOf } from "./ExecutionViews.js"

/** How an execution ended, as an operator filters it; `in-progress` while it runs. */
export const Outcome = Schema.Literal("approved", "declined", "failed", "unresolved", "in-progress")
/** @see Outcome */
export type Outcome = typeof Outcome.Type

/**
 * The outcome of a verdict: a partial approval moved money (approved), a cancellation
 * moved none (declined, as a decline), an unresolved one waits for an operator; every
 * other end (failed, refused, unavailable, not charged, error) is `failed`.
 */
export const outcomeOf = (verdict: OperationReport.Verdict): Exclude<Outcome, "in-progress"> => {
  switch (verdict) {
    case "approved":
    case "partially-approved":
      return "approved"
    case "declined":
    case "cancelled":
      return "declined"
    case "unresolved":
      return "unresolved"
    default:
      return "failed"
  }
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const text = (u: unknown): string | undefined =>
  typeof u === "string" && u.trim() !== "" ? u.trim() : undefined

/** The last four digits of a masked card number (`476173******0119` → `0119`), if it ends in four. */
export const lastFourOf = (masked: string | undefined): string | undefined => {
  const digits = masked === undefined ? undefined : /(\d{4})$/.exec(masked)?.[1]
  return digits
}

/** The ids a successful exit's value names: a terminal outcome's facts, or a lifecycle's result. */
const idsOf = (exit: EngineEvent.ExitJson): Record<string, string> => {
  if (exit._tag !== "Success" || !isRecord(exit.value)) return {}
  const value = exit.value
  const facts = isRecord(value["facts"]) ? value["facts"] : value
  const ids: Record<string, string> = {}
  const guid = text(facts["efttransactionID"]) ?? text(facts["guid"])
  if (guid !== undefined) ids["guid"] = guid
  const customerReference = text(facts["customerReference"])
  if (customerReference !== undefined) ids["customerReference"] = customerReference
  const lastFour = lastFourOf(text(facts["maskedCardNumber"]))
  if (lastFour !== undefined) ids["cardLast4"] = lastFour
  return ids
}

/** The search attributes a finished execution gains from its stored exit. */
export const exitAttributes = (
  workflowName: string,
  exit: EngineEvent.ExitJson
): ExecutionQueue.SearchAttributes => {
  const report = reportOf(workflowName, exit)
  return {
    ...(Option.isSome(report)
      ? { outcome: outcomeOf(report.value.verdict), verdict: report.value.verdict }
      : { outcome: "failed" }),
    ...idsOf(exit)
  }
}
