/**
 * The admin controls a test drives the simulator with (served under /_sim): merchants,
 * keys and terminals added and changed, the cancel button, timings, what the service did
 * (state, callbacks, counters, transactions), the clock, `settle` and `reset`. Faults have
 * their own module.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Admin, Patch, TerminalView } from "./service.js"
import { CancelNotAllowed, invalid, NotFound, type ValidationFailed } from "../SimulatorError.js"
import * as Delivery from "./delivery.js"
import { type Counters, defaultTimings, type Terminal, type Timings, zeroCounters } from "./model.js"
import * as Results from "./results.js"
import type { Shared } from "./shared.js"
import * as TerminalMachine from "./terminalMachine.js"
import { right } from "./validate.js"

const defined = <T extends object>(patch: Patch<T> | undefined): Partial<T> => {
  const out: Partial<T> = {}
  if (patch === undefined) return out
  for (const key of Object.keys(patch) as Array<keyof T>) {
    const value = patch[key]
    if (value !== undefined) out[key] = value as T[keyof T]
  }
  return out
}

const view = (shared: Shared, t: Terminal): TerminalView => ({
  serial_number: t.serial,
  terminal_type: t.type,
  merchant_id_alpha: t.merchantId,
  virtual: t.virtual,
  online: t.online,
  listening: t.listening,
  busy: t.current !== undefined,
  step: t.current?.step ?? null,
  operation: t.current?.operation ?? null,
  batchNumber: t.batch,
  timings: shared.store.timingsOf(t),
  card: {
    maskedPan: Results.maskPan(t.card.pan),
    scheme: t.card.scheme,
    whitelisted: t.card.whitelisted
  },
  duplicateAnswer: t.duplicateAnswer,
  settings: { ...t.settings },
  counters: { ...t.counters }
})

const merchantOf = (shared: Shared, id: string) => {
  const merchant = shared.store.merchants.get(id)
  return merchant === undefined
    ? Effect.fail(new NotFound({ message: `Merchant ${id} not found` }))
    : Effect.succeed(merchant)
}
const terminalBySerial = (shared: Shared, serial: string) => {
  const terminal = shared.store.terminals.get(serial)
  return terminal === undefined
    ? Effect.fail(new NotFound({ message: `Terminal ${serial} not found` }))
    : Effect.succeed(terminal)
}

const checkTimings = (
  timings: Readonly<Record<string, number>>
): Either.Either<Partial<Timings>, ValidationFailed> => {
  for (const [key, value] of Object.entries(timings)) {
    if (!(key in defaultTimings)) return Either.left(invalid(`timings.${key}`, `Unknown timing ${key}`))
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
      return Either.left(invalid(`timings.${key}`, `${key} must be a non-negative number of milliseconds`))
  }
  return Either.right(timings)
}

/** Merchants, their keys and their terminals. */
const accounts = (
  shared: Shared
): Pick<
  Admin,
  | "defaultMerchantId"
  | "defaultApiKey"
  | "addMerchant"
  | "updateMerchant"
  | "addKey"
  | "revokeKey"
  | "addTerminal"
> => ({
  defaultMerchantId: Effect.sync(() => shared.defaultMerchantId),
  defaultApiKey: Effect.sync(() => shared.defaultApiKey),
  addMerchant: (input) =>
    Effect.suspend(() => {
      if (input.id !== undefined && shared.store.merchants.has(input.id))
        return Effect.fail(invalid("id", `Merchant ${input.id} exists`))
      if (input.apiKey !== undefined && shared.store.keys.has(input.apiKey))
        return Effect.fail(invalid("apiKey", "The key is already in use"))
      const merchant = shared.store.addMerchant({ ...input, flags: defined(input.flags) })
      const apiKey = shared.store.addKey(merchant, "merchant", input.apiKey)
      return Effect.succeed({ merchantId: merchant.id, apiKey })
    }),
  updateMerchant: (merchantId, input) =>
    Effect.map(merchantOf(shared, merchantId), (merchant) => {
      if (input.mcc !== undefined) merchant.mcc = input.mcc
      merchant.flags = { ...merchant.flags, ...defined(input.flags) }
      return { merchant_id_alpha: merchant.id, mcc: merchant.mcc, flags: merchant.flags }
    }),
  addKey: (merchantId, kind, key) =>
    Effect.flatMap(merchantOf(shared, merchantId), (merchant) =>
      key !== undefined && shared.store.keys.has(key)
        ? Effect.fail(invalid("key", "The key is already in use"))
        : Effect.succeed({ key: shared.store.addKey(merchant, kind, key), kind })
    ),
  revokeKey: (key) =>
    Effect.suspend(() =>
      shared.store.keys.delete(key) ? Effect.void : Effect.fail(new NotFound({ message: "Key not found" }))
    ),
  addTerminal: (merchantId, input) =>
    Effect.flatMap(merchantOf(shared, merchantId), (merchant) =>
      input.serial_number !== undefined && shared.store.terminals.has(input.serial_number)
        ? Effect.fail(invalid("serial_number", `Terminal ${input.serial_number} exists`))
        : Effect.sync(() =>
            view(
              shared,
              shared.store.addTerminal(merchant, {
                serial: input.serial_number,
                type: input.terminal_type,
                online: input.online
              })
            )
          )
    )
})

/** Terminals as a test sees and changes them. */
const terminals = (
  shared: Shared
): Pick<
  Admin,
  "terminals" | "terminal" | "updateTerminal" | "pressCancel" | "startRecovery" | "setTimings"
> => ({
  terminals: Effect.sync(() => Array.from(shared.store.terminals.values()).map((t) => view(shared, t))),
  terminal: (serial) => Effect.map(terminalBySerial(shared, serial), (t) => view(shared, t)),
  updateTerminal: (serial, patch) =>
    Effect.gen(function* () {
      const terminal = yield* terminalBySerial(shared, serial)
      const timings = patch.timings === undefined ? undefined : yield* right(checkTimings(patch.timings))
      let tip: bigint | undefined
      if (patch.tipMinor !== undefined) {
        if (!/^[0-9]{1,15}$/.test(patch.tipMinor))
          return yield* invalid("tipMinor", "tipMinor must be an integer string")
        tip = BigInt(patch.tipMinor)
      }
      if (patch.card?.pan !== undefined && !/^[0-9]{12,19}$/.test(patch.card.pan))
        return yield* invalid("card.pan", "pan must have 12 to 19 digits")
      if (patch.online !== undefined) terminal.online = patch.online
      if (patch.listening !== undefined) terminal.listening = patch.listening
      if (timings !== undefined) terminal.timings = { ...terminal.timings, ...timings }
      terminal.card = { ...terminal.card, ...defined(patch.card) }
      if (patch.duplicateAnswer !== undefined) terminal.duplicateAnswer = patch.duplicateAnswer
      if (tip !== undefined) terminal.tipMinor = tip
      if (patch.receiptsInline !== undefined) terminal.receiptsInline = patch.receiptsInline
      return view(shared, terminal)
    }),
  pressCancel: (serial) =>
    Effect.flatMap(terminalBySerial(shared, serial), (terminal) =>
      TerminalMachine.requestStop(terminal)
        ? Effect.void
        : Effect.fail(new CancelNotAllowed({ message: "Nothing to cancel at the present step" }))
    ),
  startRecovery: (serial) => Effect.sync(() => Delivery.kickAll(shared.store, serial)),
  setTimings: (timings) =>
    Effect.map(right(checkTimings(timings)), (checked) => {
      shared.store.timings = { ...shared.store.timings, ...checked }
      return shared.store.timings
    })
})

/** What the service holds and did. */
const inspection = (shared: Shared): Pick<Admin, "state" | "deliveries" | "counters" | "transactions"> => ({
  state: Effect.sync(() => ({
    now: shared.now(),
    timings: shared.store.timings,
    merchants: Array.from(shared.store.merchants.values()).map((m) => ({
      merchant_id_alpha: m.id,
      name: m.name,
      mcc: m.mcc,
      flags: m.flags,
      virtualTerminal: m.virtualTerminal,
      keys: Array.from(shared.store.keys.entries())
        .filter(([, k]) => k.merchantId === m.id)
        .map(([key, k]) => ({ key, kind: k.kind }))
    })),
    terminals: Array.from(shared.store.terminals.values()).map((t) => view(shared, t)),
    callbackOutageUntil: shared.store.callbackOutageUntil ?? null,
    faults: shared.store.faults
  })),
  deliveries: Effect.sync(() =>
    Array.from(shared.store.deliveries.values()).map((d) => ({
      id: d.id,
      terminal: d.terminalSerial,
      url: d.url,
      transactionReference: d.result.transactionReference ?? "",
      efttransactionID: d.result.efttransactionID ?? "",
      finStatus: d.result.finStatus ?? "",
      completedAt: d.completedAt,
      attempts: d.attempts,
      delivered: d.delivered,
      deliveredAt: d.deliveredAt ?? null,
      recovered: d.recovered,
      nextAttemptAt: d.nextAttemptAt ?? null,
      lastError: d.lastError ?? null,
      gaveUp: d.gaveUp
    }))
  ),
  counters: Effect.sync(() => {
    const terminals: Record<string, Counters> = {}
    const merchants: Record<string, Counters> = {}
    for (const t of shared.store.terminals.values()) {
      terminals[t.serial] = { ...t.counters }
      const sum = merchants[t.merchantId] ?? zeroCounters()
      for (const key of Object.keys(sum) as Array<keyof Counters>) sum[key] += t.counters[key]
      merchants[t.merchantId] = sum
    }
    return { terminals, merchants }
  }),
  transactions: Effect.sync(() =>
    Array.from(shared.store.txns.values()).map((t) => ({
      ...Results.statusRow(t),
      ...(t.billing === undefined || t.billing === null ? {} : { billing: t.billing }),
      operation: t.operation,
      terminal: t.terminalSerial,
      merchant: t.merchantId,
      // The balances the gateway keeps, in minor units: what was approved, refunded and
      // reversed of it, and whether it was reversed or released in full.
      approvedMinor: t.approved.toString(),
      refundedMinor: t.refunded.toString(),
      reversedMinor: t.reversedAmount.toString(),
      reversed: t.reversed,
      released: t.released
    }))
  )
})

/** The clock, waiting for the terminals, reset. */
const lifecycle = (
  shared: Shared
): Pick<Admin, "advanceClock" | "clock" | "settle" | "reset" | "setBaseUrl"> => ({
  advanceClock: (ms) =>
    Effect.gen(function* () {
      const at = yield* shared.clock.advance(ms)
      // Let the sleepers the jump woke run before answering.
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
      return { now: at, offset: yield* shared.clock.offset }
    }),
  clock: Effect.gen(function* () {
    return { now: yield* shared.clock.now, offset: yield* shared.clock.offset }
  }),
  settle: (timeoutMs) =>
    Effect.as(shared.awaitIdle(), true).pipe(
      Effect.timeoutTo({ duration: timeoutMs, onTimeout: () => false, onSuccess: (b) => b })
    ),
  reset: shared.reset(),
  setBaseUrl: (url) =>
    Effect.sync(() => {
      shared.store.baseUrl = url
    })
})

/** The admin controls but the faults. */
export const make = (
  shared: Shared
): Omit<Admin, "addFault" | "faults" | "clearFaults" | "takeFault" | "callbackOutage"> => ({
  ...accounts(shared),
  ...terminals(shared),
  ...inspection(shared),
  ...lifecycle(shared)
})
