/**
 * The main host's terminal endpoints: API keys, the device list, `POST /transactions`
 * (which answers 202 at once and leaves the operation running on the terminal), the stop
 * request, and the results — kept for polling under a `transactionResultId`, or posted to
 * a callback address with the recovery loop — with the receipt pages their links point to.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type { Accepted, Caller, Device, Json, SimulatorService } from "./service.js"
import {
  CancelNotAllowed,
  DeviceBusy,
  DeviceOffline,
  Forbidden,
  NotFound,
  type SimulatorError
} from "../SimulatorError.js"
import * as Delivery from "./delivery.js"
import { terminalOf } from "./lookups.js"
import type { RunningOp, Terminal } from "./model.js"
import { originalOps, typeOf } from "./operations.js"
import * as Results from "./results.js"
import type { Shared } from "./shared.js"
import * as TerminalMachine from "./terminalMachine.js"
import * as Validate from "./validate.js"

const authenticate = (shared: Shared) => (apiKey: string | undefined) =>
  Effect.suspend(() => {
    const entry = apiKey === undefined ? undefined : shared.store.keys.get(apiKey)
    const merchant = entry === undefined ? undefined : shared.store.merchants.get(entry.merchantId)
    return entry === undefined || merchant === undefined
      ? Effect.fail(new Forbidden({ message: "Authentication failed" }))
      : Effect.succeed<Caller>({ merchant, kind: entry.kind })
  })

const devices = (shared: Shared) => (caller: Caller) =>
  Effect.sync(() =>
    Array.from(shared.store.terminals.values())
      .filter((t) => t.merchantId === caller.merchant.id && !t.virtual)
      .map((t): Device => ({
        merchant_id_alpha: t.merchantId,
        serial_number: t.serial,
        ssk: t.ssk,
        terminal_type: t.type
      }))
  )

const callbackOf = (req: Validate.TransactionRequest) =>
  req.callbackUrl === undefined || req.token === undefined
    ? undefined
    : { url: req.callbackUrl, token: req.token }

/** Delivers a result: to the polling store, or by callback with the recovery loop. */
const deliverer =
  (
    shared: Shared,
    terminal: Terminal,
    slotId: string | undefined,
    callback: { url: string; token: string } | undefined
  ) =>
  (result: Json): Effect.Effect<void> =>
    Effect.suspend(() => {
      const store = shared.store
      if (slotId !== undefined) {
        const slot = store.results.get(slotId)
        if (slot !== undefined) slot.result = result
      }
      if (callback === undefined) return Effect.void
      const delivery = {
        id: store.ids.uuidV4(),
        terminalSerial: terminal.serial,
        url: callback.url,
        token: callback.token,
        result,
        completedAt: shared.now(),
        attempts: 0,
        delivered: false,
        deliveredAt: undefined,
        nextAttemptAt: undefined,
        lastError: undefined,
        gaveUp: false,
        recovered: false,
        kick: undefined
      }
      store.deliveries.set(delivery.id, delivery)
      // Forked, not joined: the recovery loop outlives the operation.
      return Effect.sync(() => shared.fork(Delivery.run(shared.client, store, shared.clock, delivery)))
    })

const resultIdFor = (shared: Shared, terminal: Terminal): string => {
  let id = `${terminal.serial}-${shared.now()}`
  let n = 1
  while (shared.store.results.has(id)) id = `${terminal.serial}-${shared.now() + n++}`
  return id
}

const stop = (shared: Shared, caller: Caller, terminal: Terminal, req: Validate.TransactionRequest) =>
  Effect.suspend((): Effect.Effect<Accepted, SimulatorError> => {
    if (!TerminalMachine.requestStop(terminal)) {
      return Effect.fail(
        new CancelNotAllowed({ message: "stopCurrentTransaction is not possible at the present step" })
      )
    }
    terminal.counters.accepted++
    const slotId = req.callbackUrl === undefined ? resultIdFor(shared, terminal) : undefined
    if (slotId !== undefined)
      shared.store.results.set(slotId, { id: slotId, merchantId: caller.merchant.id, result: undefined })
    const result = Results.terminalResult({
      store: shared.store,
      terminal,
      request: req.raw,
      operation: req.operation,
      type: typeOf[req.operation],
      finStatus: "PROCESSED",
      statusMessage: "Success",
      errorMessage: "",
      completedAt: shared.now(),
      reference: undefined,
      txn: undefined,
      card: undefined
    })
    return Effect.as(deliverer(shared, terminal, slotId, callbackOf(req))(result), {
      ...(slotId === undefined ? {} : { transactionResultId: slotId }),
      statusMessage: "Stop request accepted",
      transactionReference: "00000000-0000-0000-0000-000000000000"
    })
  })

const postTransaction = (shared: Shared) =>
  Effect.fn("Simulator.postTransaction")(function* (caller: Caller, body: unknown) {
    const req = yield* Validate.right(Validate.transactionRequest(body))
    const terminal = terminalOf(shared, caller, req.serial, req.terminalType)
    if (terminal === undefined) return yield* new NotFound({ message: `Device ${req.serial} not found` })
    if (!terminal.online) return yield* new DeviceOffline({ message: "Terminal is offline" })
    if (req.operation === "stopCurrentTransaction") return yield* stop(shared, caller, terminal, req)
    if (terminal.current !== undefined) return yield* new DeviceBusy({ message: "Terminal is busy" })
    const reference =
      originalOps.has(req.operation) && req.originalTransactionId === undefined
        ? req.transactionReference
        : undefined
    const slotId = req.callbackUrl === undefined ? resultIdFor(shared, terminal) : undefined
    const op: RunningOp = {
      id: slotId ?? shared.store.ids.uuidV4(),
      operation: req.operation,
      startedAt: shared.now(),
      step: undefined,
      cancelRequested: false,
      aborted: false,
      wake: Deferred.unsafeMake<void>(FiberId.none),
      done: Deferred.unsafeMake<void>(FiberId.none)
    }
    terminal.current = op
    terminal.counters.accepted++
    yield* shared.operationStarted()
    if (slotId !== undefined)
      shared.store.results.set(slotId, { id: slotId, merchantId: caller.merchant.id, result: undefined })
    const deliver = deliverer(shared, terminal, slotId, callbackOf(req))
    // Forked, not joined: the operation runs on after the 202.
    yield* Effect.sync(() =>
      shared.fork(TerminalMachine.run(shared, terminal, caller.merchant, op, req, reference, deliver))
    )
    return {
      ...(slotId === undefined ? {} : { transactionResultId: slotId }),
      statusMessage: "Transaction request accepted",
      transactionReference: req.transactionReference ?? "00000000-0000-0000-0000-000000000000"
    } satisfies Accepted
  })

const transactionResult = (shared: Shared) => (caller: Caller, id: string) =>
  Effect.suspend(() => {
    const slot = shared.store.results.get(id)
    if (slot === undefined || slot.merchantId !== caller.merchant.id)
      return Effect.fail(new NotFound({ message: `Transaction result ${id} not found` }))
    return Effect.succeed(Option.fromNullable(slot.result))
  })

const receipt = (shared: Shared) => (guid: string, copy: string) =>
  Effect.suspend(() => {
    const txn = shared.store.txns.get(guid)
    const merchant = txn === undefined ? undefined : shared.store.merchants.get(txn.merchantId)
    if (txn === undefined || merchant === undefined || (copy !== "merchant" && copy !== "customer"))
      return Effect.fail(new NotFound({ message: "Receipt not found" }))
    const title = copy === "merchant" ? "MERCHANT COPY" : "CUSTOMER COPY"
    return Effect.succeed(
      `<html><body><h1>${title}</h1><pre>${Results.receiptText(merchant, txn)}</pre></body></html>`
    )
  })

/** The main host's terminal endpoints. */
export const make = (
  shared: Shared
): Pick<
  SimulatorService,
  "authenticate" | "devices" | "postTransaction" | "transactionResult" | "receipt" | "errorGuid"
> => ({
  authenticate: authenticate(shared),
  devices: devices(shared),
  postTransaction: postTransaction(shared),
  transactionResult: transactionResult(shared),
  receipt: receipt(shared),
  errorGuid: Effect.sync(() => shared.store.ids.uuidV4())
})
