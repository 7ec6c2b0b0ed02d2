/**
 * The status host: the log of every transaction under its `transactionReference`, read
 * through the selectors `first`, `last`, `all` or a 1-based index. Row 1 is always current,
 * later rows are frozen when processed. An operation enters the log when the gateway learns
 * of it, which is never later than 90 s after the terminal received it, so "NOT FOUND after
 * 90 s" reliably means "never charged".
 */
import * as Effect from "effect/Effect"
import type { Caller, Json, SimulatorService } from "./service.js"
import { NotFound } from "../SimulatorError.js"
import * as Results from "./results.js"
import type { Shared } from "./shared.js"

const UNKNOWN_WINDOW_MS = 90_000

/** Whether an operation the terminal received at `startedAt` may still reach the gateway. */
export const mayReachGateway = (shared: Shared, startedAt: number): boolean =>
  shared.now() - startedAt <= UNKNOWN_WINDOW_MS

/** The gateway learns of an operation: an IN_PROGRESS row under its reference, if it has one. */
export const logInProgress = (
  shared: Shared,
  input: {
    readonly reference: string | undefined
    readonly guid: string
    readonly merchantId: string
    readonly type: string
    readonly startedAt: number
    readonly amount: bigint | undefined
    readonly currency: string | undefined
  }
): void => {
  const entry = shared.store.log(input.reference, input.guid, input.merchantId)
  if (entry !== undefined && input.reference !== undefined) {
    entry.snapshot = Results.inProgressRow({
      reference: input.reference,
      guid: input.guid,
      type: input.type,
      startedAt: input.startedAt,
      amount: input.amount,
      currency: input.currency
    })
  }
}

const statusRowOf = (
  shared: Shared,
  index: number,
  entry: { readonly guid: string; readonly snapshot: Json | undefined }
) => {
  const txn = shared.store.txns.get(entry.guid)
  if (index === 0 && txn !== undefined) return Results.statusRow(txn)
  return entry.snapshot ?? (txn === undefined ? {} : Results.statusRow(txn))
}

const status =
  (shared: Shared) =>
  (caller: Caller, reference: string, selector: string | undefined): Effect.Effect<unknown, NotFound> =>
    Effect.suspend((): Effect.Effect<unknown, NotFound> => {
      const entries = shared.store.statusLog.get(reference) ?? []
      const visible = entries.filter((e) => e.merchantId === caller.merchant.id)
      if (visible.length === 0)
        return Effect.fail(new NotFound({ message: `Transaction ${reference} not found` }))
      const rows = visible.map((entry, index) => statusRowOf(shared, index, entry))
      const sel = selector ?? "first"
      if (sel === "all") return Effect.succeed(rows)
      if (sel === "first") return Effect.succeed(rows[0])
      if (sel === "last") return Effect.succeed(rows[rows.length - 1])
      if (/^[1-9][0-9]{0,5}$/.test(sel)) {
        const row = rows[Number.parseInt(sel, 10) - 1]
        if (row !== undefined) return Effect.succeed(row)
      }
      return Effect.fail(new NotFound({ message: `Selector ${sel} not found for ${reference}` }))
    })

/** The status host's endpoint. */
export const make = (shared: Shared): Pick<SimulatorService, "status"> => ({ status: status(shared) })
