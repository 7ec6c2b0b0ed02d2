/**
 * The `TerminalCloud` operation on the status host: a transaction's status by its
 * reference, the read that reconciliation rests on (retried while its outcome is unknown).
 */
import { type Identifiers, type RemoteApi, type TerminalCloud, TransactionResult } from "@tillflow/core"
import * as Effect from "effect/Effect"
import type { Call } from "./Call.js"
import type { StatusHost } from "./Hosts.js"

/** The status operation over the status host's client. */
export const make = (
  status: StatusHost,
  { read }: { readonly read: Call }
): Pick<TerminalCloud.Service, "transactionStatus"> => {
  const transactionStatus = Effect.fn("TerminalCloud.transactionStatus")(function* (
    reference: Identifiers.TransactionReference,
    selector?: RemoteApi.StatusSelector
  ) {
    yield* Effect.annotateCurrentSpan({
      "tillflow.endpoint": "transactionStatus",
      "tillflow.transaction_reference": reference,
      "tillflow.status_selector": selector === undefined ? "first (default)" : String(selector)
    })
    // The shape for `all` is not shown in the spec: the contract reads a list or one
    // object, and the port always answers a list.
    const answer = yield* read(
      "transactionStatus",
      selector === undefined
        ? status.transactionStatus({ path: { transactionReference: reference } })
        : status.transactionStatusAt({ path: { transactionReference: reference, selector } })
    )
    return TransactionResult.statusResults(answer)
  })

  return { transactionStatus }
}
