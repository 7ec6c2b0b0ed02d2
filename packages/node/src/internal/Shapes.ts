/**
 * The intake's views made plain objects of the Promise API: an operation's result from its
 * finished execution, ledger rows in major units, the device list. Nothing here decides
 * anything: the values are the Effect API's, encoded, with amounts in major units.
 */
import { Money } from "@tillflow/core"
import { Intake } from "@tillflow/intake"
import * as Schema from "effect/Schema"
import * as Errors from "../Errors.js"
import * as Plain from "./Plain.js"

const encodeView = Schema.encodeSync(Intake.ExecutionView)
const encodeLedger = Schema.encodeSync(Intake.LedgerView)

/** An execution as JSON. */
export type ExecutionJson = typeof Intake.ExecutionView.Encoded

/** An execution view as JSON. */
export const viewJson = (view: Intake.ExecutionView): ExecutionJson => encodeView(view)

/** Whether an execution will not move on by itself. */
export const isFinished = (view: ExecutionJson): boolean =>
  ["succeeded", "failed", "interrupted", "stuck"].includes(view.status)

const verdicts: Readonly<Record<string, string>> = {
  Approved: "approved",
  PartiallyApproved: "partially-approved",
  Declined: "declined",
  Cancelled: "cancelled",
  Failed: "failed"
}

/**
 * The value of a finished execution, or its error thrown: the result, the Effect error as
 * its class, `ExecutionStuck` for a stuck one.
 */
export const settle = (view: ExecutionJson): Record<string, unknown> => {
  if (view.result === undefined) {
    throw view.status === "stuck"
      ? new Errors.ExecutionStuck(
          "ExecutionStuck",
          `execution ${view.executionId} is stuck and waits for an operator (tillflow executions show ${view.executionId})`,
          { executionId: view.executionId }
        )
      : new Errors.Defect("Defect", `execution ${view.executionId} ended ${view.status} without a result`)
  }
  const exit = Plain.exitOf(view.result)
  if (exit._tag === "Failure") throw exit.error
  const value = exit.value
  const common = {
    executionId: view.executionId,
    idempotencyKey: view.attributes["idempotencyKey"] ?? "",
    reconciled: view.report?.reconciled ?? false,
    summary: view.report?.summary ?? ""
  }
  if (typeof value !== "object" || value === null)
    return { outcome: view.report?.verdict ?? "approved", ...common, value }
  const record = value as Record<string, unknown>
  const tag = record["_tag"]
  const facts = record["facts"]
  // A terminal operation's outcome: its facts, flat.
  if (typeof tag === "string" && verdicts[tag] !== undefined && typeof facts === "object" && facts !== null) {
    return { outcome: verdicts[tag], ...common, ...(facts as Record<string, unknown>) }
  }
  return { outcome: view.report?.verdict ?? "approved", ...common, ...record }
}

/** A ledger view as JSON, every tally and net in major units of its row's currency. */
export const ledgerJson = (view: Intake.LedgerView): Record<string, unknown> => {
  const encoded = encodeLedger(view)
  const major = (minor: string, currency: string): string =>
    Money.toMajorUnitsString(Money.make(BigInt(minor), currency as Money.Money["currency"]))
  return {
    ...encoded,
    rows: encoded.rows.map((row) => ({
      ...row,
      tallies: Object.fromEntries(
        Object.entries(row.tallies).map(([kind, tally]) => [
          kind,
          tally === undefined ? tally : { count: tally.count, amount: major(tally.amount, row.currency) }
        ])
      ),
      net: major(row.net, row.currency)
    }))
  }
}
