/**
 * How the service endpoints find a caller's records: its terminals, its transactions and
 * its virtual terminal. Another merchant's record is not found, as if it did not exist.
 */
import * as Effect from "effect/Effect"
import type { Caller } from "./service.js"
import { rule } from "../SimulatorError.js"
import * as Gateway from "./gateway.js"
import type { Terminal } from "./model.js"
import type { Shared } from "./shared.js"

/** A physical terminal of the caller (of the given type, when one is given). */
export const terminalOf = (
  shared: Shared,
  caller: Caller,
  serial: string,
  type: string | undefined
): Terminal | undefined => {
  const terminal = shared.store.terminals.get(serial)
  return terminal !== undefined &&
    terminal.merchantId === caller.merchant.id &&
    !terminal.virtual &&
    (type === undefined || terminal.type === type)
    ? terminal
    : undefined
}

/** The caller's transaction a terminal-less endpoint refers to. */
export const txnFor = (shared: Shared, caller: Caller, guid: string) => {
  const txn = Gateway.find(shared.store, caller.merchant.id, guid)
  return txn === undefined
    ? Effect.fail(rule("ORIGINAL_NOT_FOUND", `Transaction ${guid} not found`, "1010"))
    : Effect.succeed(txn)
}

/** The terminal that records the caller's card-not-present transactions. */
export const virtualTerminal = (shared: Shared, caller: Caller) => {
  const terminal = shared.store.terminals.get(caller.merchant.virtualTerminal)
  return terminal === undefined
    ? Effect.die(new Error("merchant without virtual terminal"))
    : Effect.succeed(terminal)
}
