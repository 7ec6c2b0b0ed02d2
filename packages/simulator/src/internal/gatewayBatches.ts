/**
 * The gateway's batch endpoints: closing a terminal's open batch, and the summary and
 * detail of any of its batches, open or closed.
 */
import * as Effect from "effect/Effect"
import type { Caller, SimulatorService } from "./service.js"
import { invalid, rule } from "../SimulatorError.js"
import * as Gateway from "./gateway.js"
import type { Terminal, Txn } from "./model.js"
import { formatMajor } from "./money.js"
import * as Results from "./results.js"
import type { Shared } from "./shared.js"
import * as Validate from "./validate.js"
import { bodyObject, right } from "./validate.js"

const batchTerminal = (shared: Shared, caller: Caller, b: Record<string, unknown>) => {
  const serial = typeof b.serialNumber === "string" ? b.serialNumber : b.serial_number
  const type = typeof b.deviceType === "string" ? b.deviceType : b.terminal_type
  if (typeof serial !== "string" || serial === "")
    return Effect.fail(invalid("serialNumber", "serialNumber is required"))
  if (typeof type !== "string" || type === "")
    return Effect.fail(invalid("deviceType", "deviceType is required"))
  const terminal = shared.store.terminals.get(serial)
  return terminal === undefined || terminal.merchantId !== caller.merchant.id || terminal.type !== type
    ? Effect.fail(rule("DEVICE_NOT_FOUND", `Device ${serial} not found`, "4001"))
    : Effect.succeed(terminal)
}

const batchNumberOf = (terminal: Terminal, b: Record<string, unknown>, required: boolean) => {
  const raw = b.batchNumber
  if (raw === undefined || raw === null || raw === "")
    return required
      ? Effect.fail(invalid("batchNumber", "batchNumber is required"))
      : Effect.succeed(terminal.batch)
  const text = String(raw)
  const n = /^[0-9]{1,9}$/.test(text) ? Number.parseInt(text, 10) : NaN
  if (Number.isNaN(n) || n < 1 || n > terminal.batch)
    return Effect.fail(rule("BATCH_NOT_FOUND", `Batch ${text} not found`, "4002"))
  return Effect.succeed(n)
}

const batchStatusOf = (terminal: Terminal, n: number) => (n < terminal.batch ? "CLOSED" : "OPEN")
const closedAtOf = (shared: Shared, terminal: Terminal, n: number) =>
  shared.store.closedBatches.find((c) => c.terminalSerial === terminal.serial && c.number === n)?.closedAt

const batchClose = (shared: Shared) =>
  Effect.fn("Simulator.batchClose")(function* (caller: Caller, body: unknown) {
    const b = yield* right(bodyObject(body))
    const terminal = yield* batchTerminal(shared, caller, b)
    const n = yield* batchNumberOf(terminal, b, false)
    if (n !== terminal.batch)
      return yield* rule("BATCH_ALREADY_CLOSED", `Batch ${n} is already closed`, "4003")
    const closed = Gateway.closeBatch(shared.store, terminal, shared.now())
    return {
      httpStatus: "200",
      batchNumber: String(closed),
      batchStatus: "CLOSED",
      closedAt: Results.compactTimestamp(shared.now()),
      issuerResponseCode: "00",
      issuerResponseText: "Batch closed",
      batchCloseGuid: shared.store.ids.uuidV4()
    }
  })

const batchSummary = (shared: Shared) =>
  Effect.fn("Simulator.batchSummary")(function* (caller: Caller, body: unknown) {
    const b = yield* right(bodyObject(body))
    const terminal = yield* batchTerminal(shared, caller, b)
    const n = yield* batchNumberOf(terminal, b, false)
    const txns = Gateway.batchTxns(shared.store, terminal, n)
    const approved = txns.filter((t) => t.approved > 0n)
    const count = (pred: (t: Txn) => boolean) => String(approved.filter(pred).length)
    const exponent = approved[0]?.exponent ?? 2
    return {
      httpStatus: "200",
      batchNumber: String(n),
      batchStatus: batchStatusOf(terminal, n),
      batchSummaryGuid: shared.store.ids.uuidV4(),
      transactionCount: String(approved.length),
      netAmount: formatMajor(Gateway.netAmount(shared.store, approved), exponent),
      customFields: {
        entry: [
          { key: "saleCount", value: count((t) => Gateway.saleLike.has(t.operation)) },
          { key: "refundCount", value: count((t) => t.type === "REFUND" || t.type === "MOTO_REFUND") },
          { key: "reversalCount", value: count(Gateway.isReversal) },
          { key: "captureCount", value: count((t) => t.type === "PRE_AUTHORIZATION_CAPTURE") }
        ]
      },
      customerReference: Validate.isObject(b.customerReference) ? b.customerReference : {},
      issuerResponseCode: "00",
      issuerResponseText: "Approved"
    }
  })

const batchDetail = (shared: Shared) =>
  Effect.fn("Simulator.batchDetail")(function* (caller: Caller, body: unknown) {
    const b = yield* right(bodyObject(body))
    const terminal = yield* batchTerminal(shared, caller, b)
    const n = yield* batchNumberOf(terminal, b, true)
    const rrn = typeof b.rrn === "string" && b.rrn !== "" ? b.rrn : undefined
    const txns = Gateway.batchTxns(shared.store, terminal, n).filter(
      (t) => t.approved > 0n && (rrn === undefined || t.rrn === rrn)
    )
    const closedAt = closedAtOf(shared, terminal, n)
    return {
      httpStatus: "200",
      batchNumber: String(n),
      batchStatus: batchStatusOf(terminal, n),
      closedAt: closedAt === undefined ? "" : Results.compactTimestamp(closedAt),
      issuerResponseCode: "00",
      issuerResponseText: "Approved",
      batchDetailGuid: shared.store.ids.uuidV4(),
      ...(b.customerReference === undefined ? {} : { customerReference: b.customerReference }),
      details: txns.map((t) => ({
        transactionType: Results.wireType(t.type),
        retrievalReferenceNumber: t.rrn,
        amount: formatMajor(t.approved + t.tipAmount, t.exponent),
        batchDetailElementGuid: t.guid
      }))
    }
  })

/** The batch endpoints. */
export const make = (
  shared: Shared
): Pick<SimulatorService, "batchClose" | "batchSummary" | "batchDetail"> => ({
  batchClose: batchClose(shared),
  batchSummary: batchSummary(shared),
  batchDetail: batchDetail(shared)
})
