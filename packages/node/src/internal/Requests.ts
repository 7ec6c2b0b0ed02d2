/**
 * The intake's requests from the Promise API's inputs: terminal operations in the
 * service's JSON (camelCase terminal fields renamed, amounts in minor units), lifecycle
 * payloads with their amounts in minor units.
 */
import type * as Types from "../Types.js"
import * as Plain from "./Plain.js"

/** The intake request of a terminal operation: camelCase terminal fields and major-unit amounts. */
export const requestOf = (operation: string, input: Types.TerminalInput): Record<string, unknown> => {
  const { serialNumber, terminalType, amount, duplicateCheck, ...rest } = input
  return {
    ...rest,
    operation,
    serial_number: serialNumber,
    ...(terminalType === undefined ? {} : { terminal_type: terminalType }),
    ...(duplicateCheck === undefined ? {} : { duplicate_check: duplicateCheck }),
    ...(amount === undefined ? {} : Plain.toMinor(amount, "amount"))
  }
}

/** A lifecycle payload with every `{amount, currency}` in minor units. */
export const payloadOf = (payload: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(payload).map(([key, value]) => [
      key,
      typeof value === "object" && value !== null && "amount" in value && "currency" in value
        ? Plain.toMinor(value, key)
        : value
    ])
  )
