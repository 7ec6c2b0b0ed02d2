/**
 * The terminal-less workflows the intake starts by name (`Reversal.Reverse`,
 * `Batch.Close` …), each listed by its name, its request id as the idempotency key, and
 * the guid, terminal or reference its payload names.
 */
import type * as Workflow from "@effect/workflow/Workflow"
import { Lifecycles, Money } from "@tillflow/core"
import { DurableEngine } from "@tillflow/engine"
import type * as Schema from "effect/Schema"

/** A workflow whose payload and results are only known by their schemas. */
export type AnyWorkflow = Workflow.Workflow<
  string,
  Workflow.AnyStructSchema,
  Schema.Schema.Any,
  Schema.Schema.All
>

/** The terminal-less workflows by name, with the attributes they are listed by. */
export const byName: ReadonlyMap<string, AnyWorkflow> = new Map(
  Lifecycles.workflows.map((workflow): readonly [string, AnyWorkflow] => [
    workflow.name,
    DurableEngine.withSearchAttributes(workflow as unknown as AnyWorkflow, (payload) => {
      const p = payload as Readonly<Record<string, unknown>>
      const attributes: Record<string, string> = { operation: workflow.name }
      for (const key of ["requestId", "originalGuid", "serialNumber", "transactionReference"]) {
        const value = p[key]
        if (typeof value === "string") attributes[key === "requestId" ? "idempotencyKey" : key] = value
      }
      // The amount it names, as a terminal operation's (`TerminalOperations.searchAttributes`).
      const amount = ["amount", "tip"].map((key) => p[key]).find((v) => v instanceof Money.Money)
      if (amount instanceof Money.Money) {
        attributes["amount"] = Money.toMajorUnitsString(amount)
        attributes["currency"] = amount.currency
      }
      return attributes
    })
  ])
)
