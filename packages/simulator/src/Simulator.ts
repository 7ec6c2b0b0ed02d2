/**
 * The simulated terminal cloud service: merchants with API keys, virtual terminals that
 * run operations step by step, the gateway with its business rules, result delivery by
 * polling or callback with the recovery loop, the status log, batches, device commands,
 * and the controls a test needs (admin operations, faults, the clock). The HTTP layer
 * (`SimulatorHttp`) is a thin translation of requests into calls of this service.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Delivery from "./internal/delivery.js"
import * as Gateway from "./internal/gateway.js"
import { isGuid } from "./internal/ids.js"
import {
  type Card,
  type Counters,
  defaultTimings,
  type Fault,
  type KeyKind,
  type Merchant,
  type MerchantFlags,
  type RunningOp,
  type Step,
  Store,
  stoppable,
  type Terminal,
  type Timings,
  type Txn,
  zeroCounters
} from "./internal/model.js"
import { exponentOf, formatMajor } from "./internal/money.js"
import * as Results from "./internal/results.js"
import * as Validate from "./internal/validate.js"
import * as SimClock from "./SimClock.js"
import {
  CancelNotAllowed,
  DeviceBusy,
  DeviceOffline,
  Forbidden,
  invalid,
  InvalidGuid,
  NotFound,
  rule,
  type SimulatorError,
  type ValidationFailed,
  type BusinessRule
} from "./SimulatorError.js"
import * as Triggers from "./Triggers.js"

export type { Card, Counters, Fault, KeyKind, MerchantFlags, Step, Timings }
export { defaultTimings }

/** Every field optional, `undefined` meaning "leave as is". */
export type Patch<T> = { readonly [K in keyof T]?: T[K] | undefined }

const defined = <T extends object>(patch: Patch<T> | undefined): Partial<T> => {
  const out: Partial<T> = {}
  if (patch === undefined) return out
  for (const key of Object.keys(patch) as Array<keyof T>) {
    const value = patch[key]
    if (value !== undefined) out[key] = value as T[keyof T]
  }
  return out
}

/** Who is calling: the merchant of the API key and the kind of key. */
export interface Caller {
  readonly merchant: Merchant
  readonly kind: KeyKind
}

/** Element of the device list (spec 2.1). */
export interface Device {
  readonly merchant_id_alpha: string
  readonly serial_number: string
  readonly ssk: string
  readonly terminal_type: string
}

/** The 202 body of POST /transactions. */
export interface Accepted {
  readonly transactionResultId?: string | undefined
  readonly statusMessage: string
  readonly transactionReference: string
}

/** A JSON object as the simulator answers it. */
export type Json = Record<string, unknown>

/** Options of a simulator. */
export interface Options {
  /** Seed of the identifier generator: the same seed gives the same keys, serials, guids. */
  readonly seed?: number | undefined
  /** API key of the default merchant (else generated). */
  readonly apiKey?: string | undefined
  /** Number of online terminals of the default merchant (default 3). */
  readonly terminals?: number | undefined
  /** Step timings (simulated ms) for every terminal. */
  readonly timings?: Partial<Timings> | undefined
  /** Start simulated time at this epoch (ms). */
  readonly startAt?: number | undefined
}

/** A terminal as the admin API shows it. */
export interface TerminalView {
  readonly serial_number: string
  readonly terminal_type: string
  readonly merchant_id_alpha: string
  readonly virtual: boolean
  readonly online: boolean
  readonly listening: boolean
  readonly busy: boolean
  readonly step: string | null
  readonly operation: string | null
  readonly batchNumber: number
  readonly timings: Timings
  readonly card: { readonly maskedPan: string; readonly scheme: string; readonly whitelisted: boolean }
  readonly duplicateAnswer: "cancel" | "continue"
  readonly settings: Json
  readonly counters: Counters
}

/** Changes an admin can make to a terminal. */
export interface TerminalPatch {
  readonly online?: boolean | undefined
  readonly listening?: boolean | undefined
  readonly timings?: Readonly<Record<string, number>> | undefined
  readonly card?: Patch<Card> | undefined
  readonly duplicateAnswer?: "cancel" | "continue" | undefined
  readonly tipMinor?: string | undefined
  readonly receiptsInline?: boolean | undefined
}

/** A fault to inject on the service routes. */
export interface FaultInput {
  readonly kind: Fault["kind"]
  readonly method?: string | undefined
  readonly path?: string | undefined
  readonly operation?: string | undefined
  readonly host?: "main" | "status" | undefined
  readonly status?: number | undefined
  readonly delayMs?: number | undefined
  /** How many matching requests it applies to (default 1); 0 means until cleared. */
  readonly times?: number | undefined
}

/** The service's operations (what the HTTP routes call) and the controls. */
export interface SimulatorService {
  readonly authenticate: (apiKey: string | undefined) => Effect.Effect<Caller, Forbidden>
  readonly devices: (caller: Caller) => Effect.Effect<ReadonlyArray<Device>>
  readonly postTransaction: (caller: Caller, body: unknown) => Effect.Effect<Accepted, SimulatorError>
  /** None while the result is not delivered yet (204). */
  readonly transactionResult: (caller: Caller, id: string) => Effect.Effect<Option.Option<Json>, NotFound>
  readonly status: (
    caller: Caller,
    reference: string,
    selector: string | undefined
  ) => Effect.Effect<unknown, NotFound>
  readonly deviceCommand: (
    caller: Caller,
    deviceType: string,
    serial: string,
    command: string,
    body: unknown
  ) => Effect.Effect<void, SimulatorError>
  readonly tipAdjustment: (caller: Caller, guid: string, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly deferredToken: (caller: Caller, guid: string) => Effect.Effect<Json, SimulatorError>
  readonly reversal: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly preAuthIncrease: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly preAuthCapture: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly motoSale: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly motoRefund: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly motoReversal: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly batchClose: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly batchSummary: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  readonly batchDetail: (caller: Caller, body: unknown) => Effect.Effect<Json, SimulatorError>
  /** Receipt HTML behind the receipt URLs of results. */
  readonly receipt: (guid: string, copy: string) => Effect.Effect<string, NotFound>
  /** A fresh error guid for an error body. */
  readonly errorGuid: Effect.Effect<string>
  readonly admin: Admin
}

/** The controls (served under /_sim). */
export interface Admin {
  readonly defaultMerchantId: Effect.Effect<string>
  readonly defaultApiKey: Effect.Effect<string>
  readonly state: Effect.Effect<Json>
  readonly addMerchant: (input: {
    readonly id?: string | undefined
    readonly name?: string | undefined
    readonly mcc?: string | undefined
    readonly apiKey?: string | undefined
    readonly flags?: Patch<MerchantFlags> | undefined
  }) => Effect.Effect<{ readonly merchantId: string; readonly apiKey: string }, ValidationFailed>
  readonly updateMerchant: (
    merchantId: string,
    input: { readonly mcc?: string | undefined; readonly flags?: Patch<MerchantFlags> | undefined }
  ) => Effect.Effect<Json, NotFound>
  readonly addKey: (
    merchantId: string,
    kind: KeyKind,
    key?: string | undefined
  ) => Effect.Effect<{ readonly key: string; readonly kind: KeyKind }, NotFound | ValidationFailed>
  readonly revokeKey: (key: string) => Effect.Effect<void, NotFound>
  readonly addTerminal: (
    merchantId: string,
    input: {
      readonly serial_number?: string | undefined
      readonly terminal_type?: string | undefined
      readonly online?: boolean | undefined
    }
  ) => Effect.Effect<TerminalView, NotFound | ValidationFailed>
  readonly terminals: Effect.Effect<ReadonlyArray<TerminalView>>
  readonly terminal: (serial: string) => Effect.Effect<TerminalView, NotFound>
  readonly updateTerminal: (
    serial: string,
    patch: TerminalPatch
  ) => Effect.Effect<TerminalView, NotFound | ValidationFailed>
  /** The cancel button: succeeds at a stoppable step only. */
  readonly pressCancel: (serial: string) => Effect.Effect<void, NotFound | CancelNotAllowed>
  /** `startRecovery`: retry pending callback deliveries of a terminal (or all) now. */
  readonly startRecovery: (serial: string | undefined) => Effect.Effect<number>
  readonly setTimings: (timings: Readonly<Record<string, number>>) => Effect.Effect<Timings, ValidationFailed>
  readonly addFault: (fault: FaultInput) => Effect.Effect<Fault, ValidationFailed>
  readonly faults: Effect.Effect<ReadonlyArray<Fault>>
  readonly clearFaults: (id: string | undefined) => Effect.Effect<void>
  /** Matches and consumes the first fault rule for a request. */
  readonly takeFault: (request: {
    readonly host: "main" | "status"
    readonly method: string
    readonly path: string
    readonly operation: string | undefined
  }) => Effect.Effect<Option.Option<Fault>>
  /** Makes callback receivers unreachable for `ms` of simulated time (0 ends it). */
  readonly callbackOutage: (ms: number) => Effect.Effect<number | undefined>
  readonly deliveries: Effect.Effect<ReadonlyArray<Json>>
  readonly counters: Effect.Effect<Json>
  readonly transactions: Effect.Effect<ReadonlyArray<Json>>
  readonly advanceClock: (ms: number) => Effect.Effect<Json>
  readonly clock: Effect.Effect<Json>
  /** Waits until no terminal runs an operation (or the timeout passes); true when idle. */
  readonly settle: (timeoutMs: number) => Effect.Effect<boolean>
  readonly reset: Effect.Effect<void>
  /** The public base URL results' receipt links point to. */
  readonly setBaseUrl: (url: string) => Effect.Effect<void>
}

/** The simulated service. */
export class Simulator extends Context.Tag("tillflow/Simulator")<Simulator, SimulatorService>() {}

const CARD_INPUT_LIMIT_MS = 80_000
const UNKNOWN_WINDOW_MS = 90_000

const cardSteps: ReadonlyArray<Step> = [
  "WaitingForCard",
  "PinInput",
  "WaitingHostConnect",
  "WaitingHostSend",
  "WaitingHostReceive",
  "PrintingMerchantReceipt"
]
const hostSteps: ReadonlyArray<Step> = [
  "WaitingHostConnect",
  "WaitingHostSend",
  "WaitingHostReceive",
  "PrintingMerchantReceipt"
]

/** The steps an operation goes through on the terminal. */
export const stepsOf = (operation: Validate.Operation): ReadonlyArray<Step> => {
  switch (operation) {
    case "sale":
    case "saleAndTokenizeCard":
    case "refund":
    case "preAuthorization":
      return cardSteps
    case "moToSale":
    case "moToPreAuthorization":
      return ["WaitingForCard", ...hostSteps]
    case "tokenizeCard":
      return ["WaitingForCard", "WaitingHostConnect", "WaitingHostSend", "WaitingHostReceive"]
    case "cardPan":
      return ["WaitingForCard"]
    case "printReceipt":
      return ["PrintingMerchantReceipt"]
    case "pingDevice":
    case "stopCurrentTransaction":
      return []
    case "moToRefund":
    case "moToReversal":
    case "saleReversal":
    case "refundReversal":
    case "preAuthorizationIncrease":
    case "preAuthorizationCapture":
    case "preAuthorizationReversal":
      return hostSteps
  }
}

const typeOf: Record<Validate.Operation, string> = {
  sale: "SALE",
  saleAndTokenizeCard: "SALE",
  refund: "REFUND",
  refundReversal: "VOID_REFUND",
  saleReversal: "VOID_SALE",
  tokenizeCard: "TOKENIZE_CARD",
  printReceipt: "UNDEFINED",
  cardPan: "CARD_PAN",
  pingDevice: "UNDEFINED",
  stopCurrentTransaction: "CANCEL_TRX",
  moToSale: "MOTO_SALE",
  moToRefund: "MOTO_REFUND",
  moToReversal: "MOTO_REVERSAL",
  moToPreAuthorization: "PRE_AUTHORIZATION",
  preAuthorization: "PRE_AUTHORIZATION",
  preAuthorizationIncrease: "PRE_AUTHORIZATION_INCREASE",
  preAuthorizationCapture: "PRE_AUTHORIZATION_CAPTURE",
  preAuthorizationReversal: "PRE_AUTHORIZATION_REVERSAL"
}

/** Operations that open a status log under their own transactionReference. */
const originalOps: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "preAuthorization",
  "moToSale",
  "moToPreAuthorization",
  "refund",
  "moToRefund"
])

const chargeOps: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "preAuthorization",
  "moToSale",
  "moToPreAuthorization"
])

/** How an operation on a terminal ended. */
interface Ending {
  readonly finStatus: string
  readonly statusMessage: string
  readonly errorMessage: string
  readonly txn: Txn | undefined
  readonly card: Card | undefined
  readonly extra?: Json | undefined
}

const ended = (finStatus: string, statusMessage: string, errorMessage = "", card?: Card): Ending => ({
  finStatus,
  statusMessage,
  errorMessage,
  txn: undefined,
  card
})

const fromTxn = (txn: Txn, card: Card | undefined, extra?: Json): Ending => ({
  finStatus: txn.finStatus,
  statusMessage:
    txn.finStatus === "AUTHORISED"
      ? "Transaction approved"
      : txn.finStatus === "PARTIAL_APPROVAL"
        ? "PartialApproval"
        : txn.finStatus === "DECLINED"
          ? "Transaction declined"
          : "No answer from the gateway",
  errorMessage: txn.finStatus === "DECLINED" || txn.finStatus === "UNDEFINED" ? txn.issuerResponseText : "",
  txn,
  card,
  extra
})

const right = <A, E>(e: Either.Either<A, E>): Effect.Effect<A, E> =>
  Either.isRight(e) ? Effect.succeed(e.right) : Effect.fail(e.left)

/** Builds a simulator over the clock and an HTTP client for callbacks. */
export const make = (
  options: Options = {}
): Effect.Effect<SimulatorService, never, SimClock.SimClock | HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* SimClock.SimClock
    const client = yield* HttpClient.HttpClient
    const fibers = yield* FiberSet.make<unknown, never>()
    const runFork = yield* FiberSet.runtime(fibers)<never>()
    let store = new Store(options.seed)
    let defaultMerchantId = ""
    let defaultApiKey = ""
    // Settled when the last running operation ends; replaced when one starts.
    let idle = Deferred.unsafeMake<void>(FiberId.none)
    Deferred.unsafeDone(idle, Effect.void)

    const populate = () => {
      store = new Store(options.seed)
      store.timings = { ...defaultTimings, ...options.timings }
      const merchant = store.addMerchant({ name: "Simulated Merchant" })
      defaultMerchantId = merchant.id
      defaultApiKey = store.addKey(merchant, "merchant", options.apiKey)
      const types = ["PAXA920", "PAXA80", "PAXIM30", "VERIFONEP400"]
      for (let i = 0; i < (options.terminals ?? 3); i++) {
        store.addTerminal(merchant, { type: types[i % types.length] })
      }
    }
    populate()

    const now = () => clock.unsafeNow()
    const running = () => Array.from(store.terminals.values()).some((t) => t.current !== undefined)

    // ---------------------------------------------------------------- auth and devices

    const authenticate = (apiKey: string | undefined) =>
      Effect.suspend(() => {
        const entry = apiKey === undefined ? undefined : store.keys.get(apiKey)
        const merchant = entry === undefined ? undefined : store.merchants.get(entry.merchantId)
        return entry === undefined || merchant === undefined
          ? Effect.fail(new Forbidden({ message: "Authentication failed" }))
          : Effect.succeed<Caller>({ merchant, kind: entry.kind })
      })

    const devices = (caller: Caller) =>
      Effect.sync(() =>
        Array.from(store.terminals.values())
          .filter((t) => t.merchantId === caller.merchant.id && !t.virtual)
          .map((t): Device => ({
            merchant_id_alpha: t.merchantId,
            serial_number: t.serial,
            ssk: t.ssk,
            terminal_type: t.type
          }))
      )

    const terminalOf = (caller: Caller, serial: string, type: string | undefined) => {
      const terminal = store.terminals.get(serial)
      return terminal !== undefined &&
        terminal.merchantId === caller.merchant.id &&
        !terminal.virtual &&
        (type === undefined || terminal.type === type)
        ? terminal
        : undefined
    }

    // ---------------------------------------------------------------- terminal operations

    /** Waits out a step; a stop, the cancel button or a forced reboot cut it short. */
    const waitStep = (op: RunningOp, terminal: Terminal, step: Step): Effect.Effect<"done" | "limit"> =>
      Effect.suspend(() => {
        const duration = store.timingsOf(terminal)[step]
        const end = now() + duration
        const limited = stoppable.has(step) ? Math.min(end, op.startedAt + CARD_INPUT_LIMIT_MS) : end
        return Effect.raceFirst(clock.sleepUntil(limited), Deferred.await(op.wake)).pipe(
          Effect.map(() => (limited < end && now() >= limited ? "limit" : "done"))
        )
      })

    /** The gateway half of an operation, applied when the host answers. */
    const atHost = (
      terminal: Terminal,
      merchant: Merchant,
      req: Validate.TransactionRequest,
      card: Card,
      guid: string,
      reference: string | undefined
    ): Ending => {
      const at = now()
      const body = req.raw
      const op = req.operation
      const amount = req.amount ?? 0n
      const currency = req.currency ?? ""
      const exponent = req.exponent ?? 2
      const decline = (error: BusinessRule): Ending => {
        const original =
          req.originalTransactionId === undefined ? undefined : store.txns.get(req.originalTransactionId)
        const txn = Gateway.record(store, {
          terminal,
          operation: op,
          type: typeOf[op],
          reference,
          amount: amount < 0n ? -amount : amount,
          currency: currency === "" ? (original?.currency ?? "") : currency,
          exponent: original?.exponent ?? exponent,
          card: original?.card,
          cardPresent: false,
          now: at,
          originalGuid: req.originalTransactionId,
          finStatus: "DECLINED",
          approved: 0n,
          guid
        })
        txn.issuerResponseText = error.message
        terminal.counters.declined++
        Gateway.freeze(store, txn)
        return { ...fromTxn(txn, txn.card), errorMessage: error.message }
      }
      const settle = (outcome: Either.Either<Txn, BusinessRule>, usedCard: Card | undefined): Ending =>
        Either.match(outcome, { onLeft: decline, onRight: (txn) => fromTxn(txn, usedCard) })
      switch (op) {
        case "sale":
        case "saleAndTokenizeCard":
        case "preAuthorization":
        case "moToSale":
        case "moToPreAuthorization": {
          const txn = Gateway.authorize(store, merchant, {
            terminal,
            operation: op,
            type: typeOf[op],
            reference,
            amount,
            currency,
            exponent,
            card,
            cardPresent: !op.startsWith("moTo"),
            now: at,
            customerReference: body.customerReference,
            guid
          })
          if (req.tipConfiguration && txn.approved > 0n) txn.tipAmount = terminal.tipMinor
          if ((op === "saleAndTokenizeCard" || req.tokenize) && txn.approved > 0n)
            txn.cardToken = Gateway.tokenFor(store, merchant.id, card)
          Gateway.freeze(store, txn)
          return fromTxn(txn, card)
        }
        case "refund":
        case "moToRefund": {
          if (req.originalTransactionId !== undefined) {
            return settle(
              Gateway.refundLinked(store, {
                originalGuid: req.originalTransactionId,
                merchantId: merchant.id,
                terminal,
                operation: op,
                amount,
                currency,
                now: at,
                customerReference: body.customerReference,
                guid
              }),
              card
            )
          }
          const txn = Gateway.record(store, {
            terminal,
            operation: op,
            type: typeOf[op],
            reference,
            amount,
            currency,
            exponent,
            card,
            cardPresent: op === "refund",
            now: at,
            customerReference: body.customerReference,
            finStatus: "AUTHORISED",
            approved: amount,
            guid
          })
          terminal.counters.refunds++
          Gateway.freeze(store, txn)
          return fromTxn(txn, card)
        }
        case "saleReversal":
        case "refundReversal":
        case "moToReversal":
        case "preAuthorizationReversal": {
          const expect =
            op === "saleReversal"
              ? "charge"
              : op === "refundReversal"
                ? "refund"
                : op === "preAuthorizationReversal"
                  ? "preAuthorization"
                  : undefined
          const original = store.txns.get(req.originalTransactionId ?? "")
          return settle(
            Gateway.reverse(store, {
              originalGuid: req.originalTransactionId ?? "",
              merchant,
              terminal,
              operation: op,
              type: typeOf[op],
              amount: req.amount,
              currency: req.currency,
              now: at,
              expect,
              guid
            }),
            original?.card
          )
        }
        case "preAuthorizationIncrease":
          return settle(
            Either.map(
              Gateway.increase(store, {
                merchant,
                originalGuid: req.originalTransactionId ?? "",
                delta: amount,
                tip: 0n,
                now: at,
                terminal,
                operation: op,
                guid
              }),
              (r) => r.txn
            ),
            undefined
          )
        case "preAuthorizationCapture":
          return settle(
            Either.map(
              Gateway.capture(store, {
                merchant,
                originalGuid: req.originalTransactionId ?? "",
                // Without an amount the whole hold is captured.
                amount:
                  req.amount ?? Gateway.find(store, merchant.id, req.originalTransactionId ?? "")?.hold ?? 0n,
                tip: 0n,
                now: at,
                terminal,
                operation: op,
                guid
              }),
              (r) => r.txn
            ),
            undefined
          )
        case "tokenizeCard": {
          const token = Gateway.tokenFor(store, merchant.id, card)
          return { ...ended("AUTHORISED", "Card tokenized", "", card), extra: { cardToken: token } }
        }
        default:
          return ended("PROCESSED", "Success", "", card)
      }
    }

    /** Runs an operation on a terminal, step by step, then delivers its result. */
    const runOperation = (
      terminal: Terminal,
      merchant: Merchant,
      op: RunningOp,
      req: Validate.TransactionRequest,
      reference: string | undefined,
      deliver: (result: Json) => Effect.Effect<void>
    ): Effect.Effect<void> =>
      Effect.gen(function* () {
        let card: Card = { ...terminal.card }
        let ending: Ending | undefined
        const isCharge = chargeOps.has(req.operation)
        const timeoutPending =
          isCharge &&
          req.amount !== undefined &&
          Triggers.outcomeFor(req.amount, req.exponent ?? 2)._tag === "AcquirerTimeout"
        const guid = store.ids.uuidV1()
        // Linked operations are logged under their original's reference.
        const logReference =
          reference ??
          (req.originalTransactionId === undefined
            ? undefined
            : Gateway.find(store, merchant.id, req.originalTransactionId)?.reference)
        for (const step of stepsOf(req.operation)) {
          op.step = step
          if (step === "WaitingHostSend") {
            // The gateway learns of the operation here; never after 90 s from the start,
            // so "NOT FOUND after 90 s" reliably means "never charged".
            if (now() - op.startedAt > UNKNOWN_WINDOW_MS) {
              ending = ended("FAILED", "InputTimeout", "The terminal did not reach the host in time")
              break
            }
            terminal.counters.processed++
            const entry = store.log(logReference, guid, merchant.id)
            if (entry !== undefined && logReference !== undefined) {
              entry.snapshot = Results.inProgressRow({
                reference: logReference,
                guid,
                type: typeOf[req.operation],
                startedAt: op.startedAt,
                amount: req.amount,
                currency: req.currency
              })
            }
          }
          const waited =
            step === "WaitingHostReceive" && timeoutPending
              ? yield* Effect.raceFirst(
                  clock.sleep(store.timingsOf(terminal).AcquirerTimeout),
                  Deferred.await(op.wake)
                ).pipe(Effect.as("done" as const))
              : yield* waitStep(op, terminal, step)
          if (op.cancelRequested && stoppable.has(step)) {
            ending = ended("CANCELLED", "UserCancelled", "The operation was cancelled", card)
            break
          }
          if (op.aborted && (stoppable.has(step) || step !== "PrintingMerchantReceipt")) {
            ending = ended("FAILED", "Rebooting", "The terminal rebooted during the operation", card)
            break
          }
          if (waited === "limit") {
            ending = ended("FAILED", "InputTimeout", "No card was presented in time", card)
            break
          }
          if (step === "WaitingForCard") {
            card = { ...terminal.card }
            const kind = req.operation === "refund" ? "refund" : "charge"
            if (
              req.duplicateCheck &&
              req.amount !== undefined &&
              (isCharge || req.operation === "refund") &&
              Gateway.isDuplicate(store, merchant.id, card, kind, req.amount, req.currency ?? "", now()) &&
              terminal.duplicateAnswer === "cancel"
            ) {
              ending = ended(
                "CANCELLED",
                "DuplicatePayment",
                "Duplicate payment cancelled at the terminal",
                card
              )
              break
            }
          }
          if (step === "WaitingHostReceive") {
            ending = atHost(terminal, merchant, req, card, guid, logReference)
          }
        }
        if (ending === undefined) {
          ending = atHost(terminal, merchant, req, card, guid, logReference)
        }
        const extra: Json = { ...ending.extra }
        if (req.operation === "pingDevice") {
          if (req.returnDeviceInfo) extra.deviceStatus = Results.deviceStatus(terminal, true)
        }
        if (req.operation === "cardPan" && card.whitelisted) extra.unMaskedPan = card.pan
        if (ending.finStatus === "CANCELLED") terminal.counters.cancelled++
        if (ending.finStatus === "FAILED") terminal.counters.failed++
        terminal.current = undefined
        Deferred.unsafeDone(op.done, Effect.void)
        if (!running()) Deferred.unsafeDone(idle, Effect.void)
        const result = Results.terminalResult({
          store,
          terminal,
          request: req.raw,
          operation: req.operation,
          type: typeOf[req.operation],
          finStatus: ending.finStatus,
          statusMessage: ending.statusMessage,
          errorMessage: ending.errorMessage,
          completedAt: now(),
          reference,
          txn: ending.txn,
          card: ending.card,
          extra
        })
        yield* deliver(result)
      }).pipe(Effect.withSpan("Simulator.runOperation", { attributes: { operation: req.operation } }))

    /** Delivers a result: to the polling store, or by callback with the recovery loop. */
    const deliverer =
      (
        terminal: Terminal,
        slotId: string | undefined,
        callback: { url: string; token: string } | undefined
      ) =>
      (result: Json): Effect.Effect<void> =>
        Effect.suspend(() => {
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
            completedAt: now(),
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
          return Effect.sync(() => void runFork(Delivery.run(client, store, clock, delivery)))
        })

    const resultIdFor = (terminal: Terminal): string => {
      let id = `${terminal.serial}-${now()}`
      let n = 1
      while (store.results.has(id)) id = `${terminal.serial}-${now() + n++}`
      return id
    }

    const stop = (caller: Caller, terminal: Terminal, req: Validate.TransactionRequest) =>
      Effect.suspend((): Effect.Effect<Accepted, SimulatorError> => {
        const op = terminal.current
        if (op === undefined || op.step === undefined || !stoppable.has(op.step)) {
          return Effect.fail(
            new CancelNotAllowed({ message: "stopCurrentTransaction is not possible at the present step" })
          )
        }
        op.cancelRequested = true
        Deferred.unsafeDone(op.wake, Effect.void)
        terminal.counters.accepted++
        const slotId = req.callbackUrl === undefined ? resultIdFor(terminal) : undefined
        if (slotId !== undefined)
          store.results.set(slotId, { id: slotId, merchantId: caller.merchant.id, result: undefined })
        const result = Results.terminalResult({
          store,
          terminal,
          request: req.raw,
          operation: req.operation,
          type: typeOf[req.operation],
          finStatus: "PROCESSED",
          statusMessage: "Success",
          errorMessage: "",
          completedAt: now(),
          reference: undefined,
          txn: undefined,
          card: undefined
        })
        const callback =
          req.callbackUrl === undefined || req.token === undefined
            ? undefined
            : { url: req.callbackUrl, token: req.token }
        return Effect.as(deliverer(terminal, slotId, callback)(result), {
          ...(slotId === undefined ? {} : { transactionResultId: slotId }),
          statusMessage: "Stop request accepted",
          transactionReference: "00000000-0000-0000-0000-000000000000"
        })
      })

    const postTransaction = Effect.fn("Simulator.postTransaction")(function* (caller: Caller, body: unknown) {
      const req = yield* right(Validate.transactionRequest(body))
      const terminal = terminalOf(caller, req.serial, req.terminalType)
      if (terminal === undefined) return yield* new NotFound({ message: `Device ${req.serial} not found` })
      if (!terminal.online) return yield* new DeviceOffline({ message: "Terminal is offline" })
      if (req.operation === "stopCurrentTransaction") return yield* stop(caller, terminal, req)
      if (terminal.current !== undefined) return yield* new DeviceBusy({ message: "Terminal is busy" })
      const reference =
        originalOps.has(req.operation) && req.originalTransactionId === undefined
          ? req.transactionReference
          : undefined
      const slotId = req.callbackUrl === undefined ? resultIdFor(terminal) : undefined
      const op: RunningOp = {
        id: slotId ?? store.ids.uuidV4(),
        operation: req.operation,
        startedAt: now(),
        step: undefined,
        cancelRequested: false,
        aborted: false,
        wake: Deferred.unsafeMake<void>(FiberId.none),
        done: Deferred.unsafeMake<void>(FiberId.none)
      }
      terminal.current = op
      terminal.counters.accepted++
      if (yield* Deferred.isDone(idle)) idle = Deferred.unsafeMake<void>(FiberId.none)
      if (slotId !== undefined)
        store.results.set(slotId, { id: slotId, merchantId: caller.merchant.id, result: undefined })
      const callback =
        req.callbackUrl === undefined || req.token === undefined
          ? undefined
          : { url: req.callbackUrl, token: req.token }
      // Forked, not joined: the operation runs on after the 202.
      yield* Effect.sync(
        () =>
          void runFork(
            runOperation(terminal, caller.merchant, op, req, reference, deliverer(terminal, slotId, callback))
          )
      )
      return {
        ...(slotId === undefined ? {} : { transactionResultId: slotId }),
        statusMessage: "Transaction request accepted",
        transactionReference: req.transactionReference ?? "00000000-0000-0000-0000-000000000000"
      } satisfies Accepted
    })

    const transactionResult = (caller: Caller, id: string) =>
      Effect.suspend(() => {
        const slot = store.results.get(id)
        if (slot === undefined || slot.merchantId !== caller.merchant.id)
          return Effect.fail(new NotFound({ message: `Transaction result ${id} not found` }))
        return Effect.succeed(Option.fromNullable(slot.result))
      })

    // ---------------------------------------------------------------- status endpoint

    const statusRowOf = (
      index: number,
      entry: { readonly guid: string; readonly snapshot: Json | undefined }
    ) => {
      const txn = store.txns.get(entry.guid)
      if (index === 0 && txn !== undefined) return Results.statusRow(txn)
      return entry.snapshot ?? (txn === undefined ? {} : Results.statusRow(txn))
    }

    const status = (caller: Caller, reference: string, selector: string | undefined) =>
      Effect.suspend((): Effect.Effect<unknown, NotFound> => {
        const entries = store.statusLog.get(reference) ?? []
        const visible = entries.filter((e) => e.merchantId === caller.merchant.id)
        if (visible.length === 0)
          return Effect.fail(new NotFound({ message: `Transaction ${reference} not found` }))
        const rows = visible.map((entry, index) => statusRowOf(index, entry))
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

    // ---------------------------------------------------------------- device commands

    const deviceCommand = Effect.fn("Simulator.deviceCommand")(function* (
      caller: Caller,
      deviceType: string,
      serial: string,
      command: string,
      body: unknown
    ) {
      const terminal = terminalOf(caller, serial, deviceType)
      if (terminal === undefined) return yield* new NotFound({ message: `Device ${serial} not found` })
      const b = Validate.isObject(body) ? body : undefined
      const bool = (field: string) =>
        b !== undefined && typeof b[field] === "boolean"
          ? Effect.succeed(b[field] as boolean)
          : Effect.fail(invalid(field, `${field} must be a boolean`))
      const integer = (field: string) =>
        b !== undefined && typeof b[field] === "number" && Number.isInteger(b[field])
          ? Effect.succeed(b[field] as number)
          : Effect.fail(invalid(field, `${field} must be an integer`))
      const inRange = (field: string, value: number, low: number, high: number) =>
        value >= low && value <= high
          ? Effect.void
          : Effect.fail(rule("VALUE_OUT_OF_RANGE", `${field} must be between ${low} and ${high}`, "2001"))
      // Validate before the listening check: a malformed command is a 422 whatever the device does.
      let apply: () => Effect.Effect<void, SimulatorError>
      switch (command) {
        case "set-unattended-mode": {
          const status = yield* bool("status")
          apply = () => Effect.sync(() => void (terminal.settings.unattended = status))
          break
        }
        case "set-password-protected": {
          const status = yield* bool("status")
          apply = () => Effect.sync(() => void (terminal.settings.passwordProtected = status))
          break
        }
        case "set-locale": {
          const locale = b?.locale
          if (typeof locale !== "string" || !/^[a-z]{2}_[A-Z]{2}$/.test(locale))
            return yield* invalid("locale", "locale must be a language tag like en_US")
          apply = () => Effect.sync(() => void (terminal.settings.locale = locale))
          break
        }
        case "set-screen-brightness": {
          const min = yield* integer("minimumBrightnessLevel")
          const max = yield* integer("maximumBrightnessLevel")
          yield* inRange("minimumBrightnessLevel", min, 0, 100)
          yield* inRange("maximumBrightnessLevel", max, 0, 100)
          if (min > max)
            return yield* rule(
              "VALUE_OUT_OF_RANGE",
              "minimumBrightnessLevel is above maximumBrightnessLevel",
              "2001"
            )
          apply = () =>
            Effect.sync(() => {
              terminal.settings.minimumBrightnessLevel = min
              terminal.settings.maximumBrightnessLevel = max
            })
          break
        }
        case "set-reboot-time": {
          const hour = yield* integer("hour")
          yield* inRange("hour", hour, 0, 23)
          apply = () => Effect.sync(() => void (terminal.settings.rebootHour = hour))
          break
        }
        case "reboot": {
          const force = yield* bool("force")
          apply = () => reboot(terminal, force)
          break
        }
        default:
          return yield* new NotFound({ message: `Unknown command ${command}` })
      }
      if (!terminal.online || !terminal.listening)
        return yield* rule("DEVICE_NOT_LISTENING", "The device is not listening for commands", "2002")
      yield* apply()
    })

    const reboot = (terminal: Terminal, force: boolean): Effect.Effect<void, SimulatorError> =>
      Effect.suspend(() => {
        const op = terminal.current
        if (op !== undefined && !force)
          return Effect.fail(rule("DEVICE_BUSY", "The terminal is busy: reboot not forced", "2003"))
        if (op !== undefined) {
          op.aborted = true
          Deferred.unsafeDone(op.wake, Effect.void)
        }
        const rebootMs = store.timingsOf(terminal).Reboot
        const current = store
        const restart = Effect.gen(function* () {
          // Let an aborted operation finish before the terminal goes down.
          if (op !== undefined) yield* Deferred.await(op.done)
          terminal.online = false
          yield* clock.sleep(rebootMs)
          if (store !== current) return
          terminal.online = true
          // The recovery loop restarts when the terminal application restarts.
          Delivery.kickAll(store, terminal.serial)
        })
        return Effect.sync(() => void runFork(restart))
      })

    // ---------------------------------------------------------------- terminal-less

    const bodyObject = (body: unknown): Either.Either<Record<string, unknown>, ValidationFailed> =>
      Validate.isObject(body)
        ? Either.right(body)
        : Either.left(invalid("body", "The request body must be a JSON object"))

    const txnFor = (caller: Caller, guid: string) => {
      const txn = Gateway.find(store, caller.merchant.id, guid)
      return txn === undefined
        ? Effect.fail(rule("ORIGINAL_NOT_FOUND", `Transaction ${guid} not found`, "1010"))
        : Effect.succeed(txn)
    }

    const virtualTerminal = (caller: Caller) => {
      const terminal = store.terminals.get(caller.merchant.virtualTerminal)
      return terminal === undefined
        ? Effect.die(new Error("merchant without virtual terminal"))
        : Effect.succeed(terminal)
    }

    const requireMerchantKey = (caller: Caller) =>
      caller.kind === "merchant"
        ? Effect.void
        : Effect.fail(new Forbidden({ message: "A merchant API key is required: partner keys are refused" }))

    const gatewayObject = (original: Txn, txn: Txn): Json => ({
      httpStatus: 200,
      customFields: {},
      acquirerTid: store.terminals.get(original.terminalSerial)?.tid ?? "",
      actionCode: "000",
      agreementNumber: original.terminalSerial,
      approvalCode: original.approvalCode,
      batchNumber: String(original.batch),
      cardTypeName: original.card?.scheme ?? "",
      currency: original.currency,
      expiryDateMMYY: original.card?.expiryMMYY ?? "",
      holdAmount: formatMajor(original.hold, original.exponent),
      issuerResponseCode: "00",
      issuerResponseText: "Approved",
      maskedCardNumber: original.card === undefined ? "" : Results.maskPan(original.card.pan),
      nonce: store.ids.hex(16),
      originalAmount: formatMajor(original.amount, original.exponent),
      preAuthorizationGuid: original.guid,
      serverDateTime: Results.compactTimestamp(now()),
      terminalDateTime: Results.compactTimestamp(now()),
      transNumber: txn.rrn
    })

    const tipAdjustment = Effect.fn("Simulator.tipAdjustment")(function* (
      caller: Caller,
      guid: string,
      body: unknown
    ) {
      if (!isGuid(guid)) return yield* new InvalidGuid({ guid })
      const txn = Gateway.find(store, caller.merchant.id, guid)
      if (txn === undefined) return yield* new InvalidGuid({ guid })
      // Every tip adjustment rejection is a 400 (spec 7), a malformed body or amount included.
      const asRule = (e: ValidationFailed) => rule("INVALID_AMOUNT", e.message, "1043")
      const b = yield* right(bodyObject(body)).pipe(Effect.mapError(asRule))
      const tip = yield* right(
        Validate.majorAmount(b, "amount", txn.exponent, { required: true, allowNumber: true })
      ).pipe(Effect.mapError(asRule))
      yield* right(Gateway.adjustTip(store, txn, tip ?? 0n))
      return { statusMessage: "Tip adjusted" }
    })

    const deferredToken = Effect.fn("Simulator.deferredToken")(function* (caller: Caller, guid: string) {
      const txn = yield* txnFor(caller, guid)
      const token = yield* right(Gateway.deferredToken(store, txn, now()))
      return Results.tokenizationResponse(txn, token, now(), store.ids.uuidV4())
    })

    const reversal = Effect.fn("Simulator.reversal")(function* (caller: Caller, body: unknown) {
      const b = yield* right(bodyObject(body))
      const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
      const original = yield* txnFor(caller, originalGuid)
      const amount = yield* right(Validate.majorAmount(b, "amount", original.exponent, { required: false }))
      let currency: string | undefined
      if (amount !== undefined) currency = (yield* right(Validate.currencyField(b, "currency"))).code
      const terminal = store.terminals.get(original.terminalSerial) ?? (yield* virtualTerminal(caller))
      const type = Gateway.preAuthLike.has(original.operation)
        ? "PRE_AUTHORIZATION_REVERSAL"
        : original.operation.startsWith("moTo")
          ? "MOTO_REVERSAL"
          : original.operation === "refund"
            ? "VOID_REFUND"
            : "CANCEL_SALE"
      const txn = yield* right(
        Gateway.reverse(store, {
          originalGuid,
          merchant: caller.merchant,
          terminal,
          operation: "reversal",
          type,
          amount,
          currency,
          now: now()
        })
      )
      const token =
        original.card === undefined ? "" : Gateway.tokenFor(store, caller.merchant.id, original.card)
      return { ...Results.tokenizationResponse(original, token, now(), txn.guid), reversalGuid: txn.guid }
    })

    const preAuthIncrease = Effect.fn("Simulator.preAuthIncrease")(function* (caller: Caller, body: unknown) {
      yield* requireMerchantKey(caller)
      const b = yield* right(bodyObject(body))
      const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
      if (b.increaseAmount === undefined || b.increaseAmount === null || b.increaseAmount === "")
        return yield* invalid("increaseAmount", "increaseAmount is required")
      const original = yield* txnFor(caller, originalGuid)
      const delta = yield* right(
        Validate.majorAmount(b, "increaseAmount", original.exponent, { required: true })
      )
      const tip = yield* right(Validate.majorAmount(b, "tipAmount", original.exponent, { required: false }))
      const subtract = b.subtract === "1" || b.subtract === 1
      const signed = subtract ? -(delta ?? 0n) : (delta ?? 0n)
      const { txn } = yield* right(
        Gateway.increase(store, {
          merchant: caller.merchant,
          originalGuid,
          delta: signed,
          tip: tip ?? 0n,
          now: now(),
          operation: "preAuthorizationIncrease"
        })
      )
      return {
        ...gatewayObject(original, txn),
        ...(b.customerReference === undefined ? {} : { customerReference: b.customerReference }),
        increaseAmount: formatMajor(signed, original.exponent),
        preAuthorizationIncreaseGuid: txn.guid
      }
    })

    const preAuthCapture = Effect.fn("Simulator.preAuthCapture")(function* (caller: Caller, body: unknown) {
      yield* requireMerchantKey(caller)
      const b = yield* right(bodyObject(body))
      const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
      if (b.capturedAmount === undefined || b.capturedAmount === null || b.capturedAmount === "")
        return yield* invalid("capturedAmount", "capturedAmount is required")
      const original = yield* txnFor(caller, originalGuid)
      const amount = yield* right(
        Validate.majorAmount(b, "capturedAmount", original.exponent, { required: true })
      )
      const tip = yield* right(Validate.majorAmount(b, "tipAmount", original.exponent, { required: false }))
      const { txn } = yield* right(
        Gateway.capture(store, {
          merchant: caller.merchant,
          originalGuid,
          amount: amount ?? 0n,
          tip: tip ?? 0n,
          now: now(),
          operation: "preAuthorizationCapture"
        })
      )
      return {
        ...gatewayObject(original, txn),
        ...(b.customerReference === undefined ? {} : { customerReference: b.customerReference }),
        capturedAmount: formatMajor(txn.approved, original.exponent),
        preAuthorizationCaptureGuid: txn.guid
      }
    })

    const motoResponse = (txn: Txn, original: Txn | undefined): Json => ({
      guid: txn.guid,
      ...(original === undefined ? {} : { originalGuid: original.guid }),
      transactionReference: txn.reference ?? "",
      type: txn.type,
      finStatus: txn.finStatus,
      authorisationResult: txn.finStatus === "DECLINED" ? "DECLINED" : "APPROVED",
      amount: formatMajor(txn.amount, txn.exponent),
      approvedAmount: formatMajor(txn.approved, txn.exponent),
      currency: txn.currency,
      maskedCardNumber: txn.card === undefined ? "" : Results.maskPan(txn.card.pan),
      cardSchemeName: txn.card?.scheme ?? "",
      approvalCode: txn.approvalCode,
      issuerResponseCode: txn.issuerResponseCode,
      issuerResponseText: txn.issuerResponseText,
      acquirerTid: store.terminals.get(txn.terminalSerial)?.tid ?? "",
      batchNumber: String(txn.batch),
      serverDateTime: Results.compactTimestamp(txn.createdAt),
      customerReference: typeof txn.customerReference === "string" ? txn.customerReference : ""
    })

    const motoReference = (b: Record<string, unknown>) => {
      const reference = b.transactionReference
      if (reference === undefined || reference === null) return Either.right(undefined)
      return typeof reference === "string" && /^[0-9a-f-]{36}$/i.test(reference)
        ? Either.right(reference)
        : Either.left(invalid("transactionReference", "transactionReference must be a UUID"))
    }

    const motoSale = Effect.fn("Simulator.motoSale")(function* (caller: Caller, body: unknown) {
      const b = yield* right(bodyObject(body))
      const tokenValue = b.cardToken
      if (typeof tokenValue !== "string" || tokenValue === "")
        return yield* invalid("cardToken", "cardToken is required")
      const { code, exponent } = yield* right(Validate.currencyField(b, "currency"))
      const amount = yield* right(Validate.majorAmount(b, "amount", exponent, { required: true }))
      if (amount === undefined || amount <= 0n) return yield* invalid("amount", "amount must be positive")
      const reference = yield* right(motoReference(b))
      if (
        b.billing !== undefined &&
        b.billing !== null &&
        (!Validate.isObject(b.billing) || typeof b.billing.zipCode !== "string")
      )
        return yield* invalid("billing.zipCode", "billing.zipCode is required inside billing")
      const token = store.tokens.get(tokenValue)
      if (token === undefined || token.merchantId !== caller.merchant.id)
        return yield* rule("UNKNOWN_TOKEN", "The card token is unknown", "3001")
      if (caller.merchant.flags.securityCodeRequired)
        return yield* rule(
          "SECURITY_CODE_REQUIRED",
          "Security code is required for card-not-present payments",
          "3107"
        )
      const terminal = yield* virtualTerminal(caller)
      if (
        b.duplicate_check !== false &&
        Gateway.isDuplicate(store, caller.merchant.id, token.card, "charge", amount, code, now())
      )
        return yield* rule(
          "DUPLICATE_TRANSACTION",
          "Duplicate transaction: same card and amount within 5 minutes",
          "3002"
        )
      terminal.counters.processed++
      const txn = Gateway.authorize(store, caller.merchant, {
        terminal,
        operation: "moToSale",
        type: "MOTO_SALE",
        reference,
        amount,
        currency: code,
        exponent,
        card: token.card,
        cardPresent: false,
        now: now(),
        customerReference: b.customerReference
      })
      txn.cardToken = tokenValue
      Gateway.freeze(store, txn)
      return motoResponse(txn, undefined)
    })

    const motoRefund = Effect.fn("Simulator.motoRefund")(function* (caller: Caller, body: unknown) {
      const b = yield* right(bodyObject(body))
      const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
      const { code, exponent } = yield* right(Validate.currencyField(b, "currency"))
      const amount = yield* right(Validate.majorAmount(b, "amount", exponent, { required: true }))
      if (amount === undefined || amount <= 0n) return yield* invalid("amount", "amount must be positive")
      yield* right(motoReference(b))
      const original = yield* txnFor(caller, originalGuid)
      const terminal = yield* virtualTerminal(caller)
      const txn = yield* right(
        Gateway.refundLinked(store, {
          originalGuid,
          merchantId: caller.merchant.id,
          terminal,
          operation: "moToRefund",
          amount,
          currency: code,
          now: now(),
          customerReference: b.customerReference
        })
      )
      return motoResponse(txn, original)
    })

    const motoReversal = Effect.fn("Simulator.motoReversal")(function* (caller: Caller, body: unknown) {
      const b = yield* right(bodyObject(body))
      const originalGuid = yield* right(Validate.requiredString(b, "originalGuid"))
      const original = yield* txnFor(caller, originalGuid)
      const terminal = yield* virtualTerminal(caller)
      const txn = yield* right(
        Gateway.reverse(store, {
          originalGuid,
          merchant: caller.merchant,
          terminal,
          operation: "moToReversal",
          type: "MOTO_REVERSAL",
          amount: undefined,
          currency: undefined,
          now: now()
        })
      )
      return motoResponse(txn, original)
    })

    const batchTerminal = (caller: Caller, b: Record<string, unknown>) => {
      const serial = typeof b.serialNumber === "string" ? b.serialNumber : b.serial_number
      const type = typeof b.deviceType === "string" ? b.deviceType : b.terminal_type
      if (typeof serial !== "string" || serial === "")
        return Effect.fail(invalid("serialNumber", "serialNumber is required"))
      if (typeof type !== "string" || type === "")
        return Effect.fail(invalid("deviceType", "deviceType is required"))
      const terminal = store.terminals.get(serial)
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
    const closedAtOf = (terminal: Terminal, n: number) =>
      store.closedBatches.find((c) => c.terminalSerial === terminal.serial && c.number === n)?.closedAt

    const batchClose = Effect.fn("Simulator.batchClose")(function* (caller: Caller, body: unknown) {
      const b = yield* right(bodyObject(body))
      const terminal = yield* batchTerminal(caller, b)
      const n = yield* batchNumberOf(terminal, b, false)
      if (n !== terminal.batch)
        return yield* rule("BATCH_ALREADY_CLOSED", `Batch ${n} is already closed`, "4003")
      const closed = Gateway.closeBatch(store, terminal, now())
      return {
        httpStatus: "200",
        batchNumber: String(closed),
        batchStatus: "CLOSED",
        closedAt: Results.compactTimestamp(now()),
        issuerResponseCode: "00",
        issuerResponseText: "Batch closed",
        batchCloseGuid: store.ids.uuidV4()
      }
    })

    const batchSummary = Effect.fn("Simulator.batchSummary")(function* (caller: Caller, body: unknown) {
      const b = yield* right(bodyObject(body))
      const terminal = yield* batchTerminal(caller, b)
      const n = yield* batchNumberOf(terminal, b, false)
      const txns = Gateway.batchTxns(store, terminal, n)
      const approved = txns.filter((t) => t.approved > 0n)
      const count = (pred: (t: Txn) => boolean) => String(approved.filter(pred).length)
      const exponent = approved[0]?.exponent ?? 2
      return {
        httpStatus: "200",
        batchNumber: String(n),
        batchStatus: batchStatusOf(terminal, n),
        batchSummaryGuid: store.ids.uuidV4(),
        transactionCount: String(approved.length),
        netAmount: formatMajor(Gateway.netAmount(store, approved), exponent),
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

    const batchDetail = Effect.fn("Simulator.batchDetail")(function* (caller: Caller, body: unknown) {
      const b = yield* right(bodyObject(body))
      const terminal = yield* batchTerminal(caller, b)
      const n = yield* batchNumberOf(terminal, b, true)
      const rrn = typeof b.rrn === "string" && b.rrn !== "" ? b.rrn : undefined
      const txns = Gateway.batchTxns(store, terminal, n).filter(
        (t) => t.approved > 0n && (rrn === undefined || t.rrn === rrn)
      )
      const closedAt = closedAtOf(terminal, n)
      return {
        httpStatus: "200",
        batchNumber: String(n),
        batchStatus: batchStatusOf(terminal, n),
        closedAt: closedAt === undefined ? "" : Results.compactTimestamp(closedAt),
        issuerResponseCode: "00",
        issuerResponseText: "Approved",
        batchDetailGuid: store.ids.uuidV4(),
        ...(b.customerReference === undefined ? {} : { customerReference: b.customerReference }),
        details: txns.map((t) => ({
          transactionType: t.type,
          retrievalReferenceNumber: t.rrn,
          amount: formatMajor(t.approved + t.tipAmount, t.exponent),
          batchDetailElementGuid: t.guid
        }))
      }
    })

    const receipt = (guid: string, copy: string) =>
      Effect.suspend(() => {
        const txn = store.txns.get(guid)
        const merchant = txn === undefined ? undefined : store.merchants.get(txn.merchantId)
        if (txn === undefined || merchant === undefined || (copy !== "merchant" && copy !== "customer"))
          return Effect.fail(new NotFound({ message: "Receipt not found" }))
        const title = copy === "merchant" ? "MERCHANT COPY" : "CUSTOMER COPY"
        return Effect.succeed(
          `<html><body><h1>${title}</h1><pre>${Results.receiptText(merchant, txn)}</pre></body></html>`
        )
      })

    // ---------------------------------------------------------------- admin

    const view = (t: Terminal): TerminalView => ({
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
      timings: store.timingsOf(t),
      card: {
        maskedPan: Results.maskPan(t.card.pan),
        scheme: t.card.scheme,
        whitelisted: t.card.whitelisted
      },
      duplicateAnswer: t.duplicateAnswer,
      settings: { ...t.settings },
      counters: { ...t.counters }
    })

    const merchantOf = (id: string) => {
      const merchant = store.merchants.get(id)
      return merchant === undefined
        ? Effect.fail(new NotFound({ message: `Merchant ${id} not found` }))
        : Effect.succeed(merchant)
    }
    const terminalBySerial = (serial: string) => {
      const terminal = store.terminals.get(serial)
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
          return Either.left(
            invalid(`timings.${key}`, `${key} must be a non-negative number of milliseconds`)
          )
      }
      return Either.right(timings)
    }

    const faultKinds: ReadonlyArray<Fault["kind"]> = ["drop-response", "error-after", "error-before", "delay"]

    const admin: Admin = {
      defaultMerchantId: Effect.sync(() => defaultMerchantId),
      defaultApiKey: Effect.sync(() => defaultApiKey),
      state: Effect.sync(() => ({
        now: now(),
        timings: store.timings,
        merchants: Array.from(store.merchants.values()).map((m) => ({
          merchant_id_alpha: m.id,
          name: m.name,
          mcc: m.mcc,
          flags: m.flags,
          virtualTerminal: m.virtualTerminal,
          keys: Array.from(store.keys.entries())
            .filter(([, k]) => k.merchantId === m.id)
            .map(([key, k]) => ({ key, kind: k.kind }))
        })),
        terminals: Array.from(store.terminals.values()).map(view),
        callbackOutageUntil: store.callbackOutageUntil ?? null,
        faults: store.faults
      })),
      addMerchant: (input) =>
        Effect.suspend(() => {
          if (input.id !== undefined && store.merchants.has(input.id))
            return Effect.fail(invalid("id", `Merchant ${input.id} exists`))
          if (input.apiKey !== undefined && store.keys.has(input.apiKey))
            return Effect.fail(invalid("apiKey", "The key is already in use"))
          const merchant = store.addMerchant({ ...input, flags: defined(input.flags) })
          const apiKey = store.addKey(merchant, "merchant", input.apiKey)
          return Effect.succeed({ merchantId: merchant.id, apiKey })
        }),
      updateMerchant: (merchantId, input) =>
        Effect.map(merchantOf(merchantId), (merchant) => {
          if (input.mcc !== undefined) merchant.mcc = input.mcc
          merchant.flags = { ...merchant.flags, ...defined(input.flags) }
          return { merchant_id_alpha: merchant.id, mcc: merchant.mcc, flags: merchant.flags }
        }),
      addKey: (merchantId, kind, key) =>
        Effect.flatMap(merchantOf(merchantId), (merchant) =>
          key !== undefined && store.keys.has(key)
            ? Effect.fail(invalid("key", "The key is already in use"))
            : Effect.succeed({ key: store.addKey(merchant, kind, key), kind })
        ),
      revokeKey: (key) =>
        Effect.suspend(() =>
          store.keys.delete(key) ? Effect.void : Effect.fail(new NotFound({ message: "Key not found" }))
        ),
      addTerminal: (merchantId, input) =>
        Effect.flatMap(merchantOf(merchantId), (merchant) =>
          input.serial_number !== undefined && store.terminals.has(input.serial_number)
            ? Effect.fail(invalid("serial_number", `Terminal ${input.serial_number} exists`))
            : Effect.sync(() =>
                view(
                  store.addTerminal(merchant, {
                    serial: input.serial_number,
                    type: input.terminal_type,
                    online: input.online
                  })
                )
              )
        ),
      terminals: Effect.sync(() => Array.from(store.terminals.values()).map(view)),
      terminal: (serial) => Effect.map(terminalBySerial(serial), view),
      updateTerminal: (serial, patch) =>
        Effect.gen(function* () {
          const terminal = yield* terminalBySerial(serial)
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
          return view(terminal)
        }),
      pressCancel: (serial) =>
        Effect.flatMap(terminalBySerial(serial), (terminal) => {
          const op = terminal.current
          if (op === undefined || op.step === undefined || !stoppable.has(op.step))
            return Effect.fail(new CancelNotAllowed({ message: "Nothing to cancel at the present step" }))
          op.cancelRequested = true
          Deferred.unsafeDone(op.wake, Effect.void)
          return Effect.void
        }),
      startRecovery: (serial) => Effect.sync(() => Delivery.kickAll(store, serial)),
      setTimings: (timings) =>
        Effect.map(right(checkTimings(timings)), (checked) => {
          store.timings = { ...store.timings, ...checked }
          return store.timings
        }),
      addFault: (input) =>
        Effect.suspend(() => {
          if (!faultKinds.includes(input.kind))
            return Effect.fail(invalid("kind", `kind must be one of ${faultKinds.join(", ")}`))
          const status = input.status ?? (input.kind === "error-after" ? 502 : 503)
          if (!Number.isInteger(status) || status < 500 || status > 599)
            return Effect.fail(invalid("status", "status must be a 5xx code"))
          const fault: Fault = {
            id: store.ids.uuidV4(),
            kind: input.kind,
            method: input.method?.toUpperCase(),
            path: input.path,
            operation: input.operation,
            host: input.host,
            status,
            delayMs: input.delayMs ?? 0,
            remaining: input.times === 0 ? undefined : (input.times ?? 1)
          }
          store.faults.push(fault)
          return Effect.succeed(fault)
        }),
      faults: Effect.sync(() => [...store.faults]),
      clearFaults: (id) =>
        Effect.sync(() => {
          if (id === undefined) {
            store.faults.splice(0, store.faults.length)
            store.callbackOutageUntil = undefined
          } else {
            const index = store.faults.findIndex((f) => f.id === id)
            if (index >= 0) store.faults.splice(index, 1)
          }
        }),
      takeFault: (request) =>
        Effect.sync(() => {
          const index = store.faults.findIndex(
            (f) =>
              (f.host === undefined || f.host === request.host) &&
              (f.method === undefined || f.method === request.method.toUpperCase()) &&
              (f.path === undefined ||
                request.path === f.path ||
                request.path.startsWith(f.path.endsWith("/") ? f.path : `${f.path}/`)) &&
              (f.operation === undefined || f.operation === request.operation)
          )
          if (index < 0) return Option.none()
          const fault = store.faults[index]
          if (fault === undefined) return Option.none()
          if (fault.remaining !== undefined) {
            fault.remaining--
            if (fault.remaining <= 0) store.faults.splice(index, 1)
          }
          return Option.some(fault)
        }),
      callbackOutage: (ms) =>
        Effect.sync(() => {
          store.callbackOutageUntil = ms > 0 ? now() + ms : undefined
          return store.callbackOutageUntil
        }),
      deliveries: Effect.sync(() =>
        Array.from(store.deliveries.values()).map((d) => ({
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
        for (const t of store.terminals.values()) {
          terminals[t.serial] = { ...t.counters }
          const sum = merchants[t.merchantId] ?? zeroCounters()
          for (const key of Object.keys(sum) as Array<keyof Counters>) sum[key] += t.counters[key]
          merchants[t.merchantId] = sum
        }
        return { terminals, merchants }
      }),
      transactions: Effect.sync(() =>
        Array.from(store.txns.values()).map((t) => ({
          ...Results.statusRow(t),
          operation: t.operation,
          terminal: t.terminalSerial,
          merchant: t.merchantId
        }))
      ),
      advanceClock: (ms) =>
        Effect.gen(function* () {
          const at = yield* clock.advance(ms)
          // Let the sleepers the jump woke run before answering.
          for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
          return { now: at, offset: yield* clock.offset }
        }),
      clock: Effect.gen(function* () {
        return { now: yield* clock.now, offset: yield* clock.offset }
      }),
      settle: (timeoutMs) =>
        Effect.suspend(() => (running() ? Deferred.await(idle) : Effect.void)).pipe(
          Effect.as(true),
          Effect.timeoutTo({ duration: timeoutMs, onTimeout: () => false, onSuccess: (b) => b })
        ),
      reset: Effect.gen(function* () {
        yield* FiberSet.clear(fibers)
        const baseUrl = store.baseUrl
        populate()
        store.baseUrl = baseUrl
        yield* clock.reset
        idle = Deferred.unsafeMake<void>(FiberId.none)
        Deferred.unsafeDone(idle, Effect.void)
      }),
      setBaseUrl: (url) =>
        Effect.sync(() => {
          store.baseUrl = url
        })
    }

    return {
      authenticate,
      devices,
      postTransaction,
      transactionResult,
      status,
      deviceCommand,
      tipAdjustment,
      deferredToken,
      reversal,
      preAuthIncrease,
      preAuthCapture,
      motoSale,
      motoRefund,
      motoReversal,
      batchClose,
      batchSummary,
      batchDetail,
      receipt,
      errorGuid: Effect.sync(() => store.ids.uuidV4()),
      admin
    } satisfies SimulatorService
  })

/** The simulator as a layer (needs the clock and an HTTP client for callbacks). */
export const layer = (
  options: Options = {}
): Layer.Layer<Simulator, never, SimClock.SimClock | HttpClient.HttpClient> =>
  Layer.scoped(Simulator, make(options))

/** Exponent of a currency as the simulator knows it (undefined for an unknown code). */
export const currencyExponent = exponentOf
