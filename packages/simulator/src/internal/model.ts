/**
 * The state of the simulated service: merchants and their keys, terminals, the gateway's
 * transaction records, the status log per `transactionReference`, the polling store and
 * the batches. Plain mutable data, only ever changed inside synchronous sections so that
 * every change is atomic with respect to other fibers.
 */
import type * as Deferred from "effect/Deferred"
import { Ids } from "./ids.js"

/** The kind of an API key. Partner keys are refused by the pre-authorization endpoints. */
export type KeyKind = "merchant" | "partner"

/** Steps of an operation on a terminal whose duration can be set. */
export const steps = [
  "WaitingForCard",
  "PinInput",
  "WaitingHostConnect",
  "WaitingHostSend",
  "WaitingHostReceive",
  "PrintingMerchantReceipt"
] as const
export type Step = (typeof steps)[number]

/** Steps at which stopCurrentTransaction or the cancel button succeeds. */
export const stoppable: ReadonlySet<Step> = new Set<Step>(["WaitingForCard", "PinInput"])

/** Durations in simulated milliseconds: one per step, plus the acquirer timeout and a reboot. */
export type Timings = { [K in Step | "AcquirerTimeout" | "Reboot"]: number }

/** Default timings: short enough for tests, long enough to observe a busy terminal. */
export const defaultTimings: Timings = {
  WaitingForCard: 200,
  PinInput: 200,
  WaitingHostConnect: 50,
  WaitingHostSend: 50,
  WaitingHostReceive: 100,
  PrintingMerchantReceipt: 100,
  AcquirerTimeout: 30_000,
  Reboot: 1_000
}

/** The card a terminal reads next. */
export interface Card {
  pan: string
  scheme: string
  expiryMMYY: string
  holder: string
  tender: "CREDIT" | "DEBIT"
  /** A non-payment card whose full number may be returned by cardPan. */
  whitelisted: boolean
}

export const defaultCard = (): Card => ({
  pan: "4761739001010010",
  scheme: "VISA",
  expiryMMYY: "1230",
  holder: "SIM CARDHOLDER",
  tender: "CREDIT",
  whitelisted: false
})

export interface MerchantFlags {
  /** MOTO payments need a security code: terminal-less MOTO sales fail with 3107. */
  securityCodeRequired: boolean
  /** The acquirer supports partial reversals (POST /reversal with an amount). */
  partialReversalAllowed: boolean
  /** The acquirer supports reversing a capture before settlement. */
  captureReversalAllowed: boolean
}

export interface Merchant {
  readonly id: string
  name: string
  mid: string
  mcc: string
  address: string
  flags: MerchantFlags
  /** Serial of the merchant's virtual terminal, which books terminal-less MOTO payments. */
  virtualTerminal: string
}

/** Counters per terminal; "exactly one charge" assertions read `charges`. */
export interface Counters {
  /** Operations accepted with 202. */
  accepted: number
  /** Operations that reached the gateway. */
  processed: number
  /** Approved sale-like authorizations (sale, saleAndTokenizeCard, pre-authorization, MOTO sale), partial approvals included. */
  charges: number
  declined: number
  refunds: number
  reversals: number
  captures: number
  cancelled: number
  failed: number
}

export const zeroCounters = (): Counters => ({
  accepted: 0,
  processed: 0,
  charges: 0,
  declined: 0,
  refunds: 0,
  reversals: 0,
  captures: 0,
  cancelled: 0,
  failed: 0
})

export interface DeviceSettings {
  unattended: boolean
  locale: string
  passwordProtected: boolean
  minimumBrightnessLevel: number
  maximumBrightnessLevel: number
  rebootHour: number | undefined
}

/** An operation running on a terminal. */
export interface RunningOp {
  readonly id: string
  readonly operation: string
  readonly startedAt: number
  step: Step | undefined
  /** Set by a stop request or the cancel button at a stoppable step. */
  cancelRequested: boolean
  /** Set by a forced reboot. */
  aborted: boolean
  readonly wake: Deferred.Deferred<void>
  /** Completed when the operation has ended (its result built). */
  readonly done: Deferred.Deferred<void>
}

export interface Terminal {
  readonly serial: string
  readonly type: string
  readonly merchantId: string
  readonly ssk: string
  readonly tid: string
  readonly virtual: boolean
  online: boolean
  /** The payments application listens for commands (integrated mode). */
  listening: boolean
  /** Timings overriding the simulator-wide ones. */
  timings: Partial<Timings>
  card: Card
  /** What the cashier answers when the duplicate check prompts. */
  duplicateAnswer: "cancel" | "continue"
  /** Tip the customer enters when a tipConfiguration is sent (minor units). */
  tipMinor: bigint
  /** Deliver receipts as inline HTML instead of URLs. */
  receiptsInline: boolean
  settings: DeviceSettings
  /** The open batch number. */
  batch: number
  current: RunningOp | undefined
  counters: Counters
}

/** A transaction known to the gateway. */
export interface Txn {
  readonly guid: string
  readonly merchantId: string
  readonly terminalSerial: string
  readonly batch: number
  /** The OperationType (or terminal-less endpoint name) that created it. */
  readonly operation: string
  readonly type: string
  /** The status log key: its own reference, or its original's for linked operations. */
  readonly reference: string | undefined
  readonly amount: bigint
  readonly currency: string
  readonly exponent: number
  readonly card: Card | undefined
  readonly cardPresent: boolean
  readonly createdAt: number
  readonly originalGuid: string | undefined
  readonly customerReference: unknown
  readonly approvalCode: string
  readonly rrn: string
  issuerResponseCode: string
  issuerResponseText: string
  finStatus: string
  /** Authorised amount (less than `amount` after a partial approval). */
  approved: bigint
  dueAmount: bigint
  tipAmount: bigint
  refunded: bigint
  reversedAmount: bigint
  reversed: boolean
  cardToken: string | undefined
  /** The address verification data (`billing`) the request carried, as received. */
  billing: unknown
  /** Pre-authorizations: amount currently held, sum of increases, captured amount. */
  hold: bigint
  increased: bigint
  captured: bigint | undefined
  released: boolean
}

/** One row of the status log; row 0 is rendered live, later rows are frozen when processed. */
export interface StatusEntry {
  readonly guid: string
  readonly merchantId: string
  snapshot: Record<string, unknown> | undefined
}

/** A result kept for polling. */
export interface ResultSlot {
  readonly id: string
  readonly merchantId: string
  result: Record<string, unknown> | undefined
}

/** A closed batch. */
export interface ClosedBatch {
  readonly terminalSerial: string
  readonly number: number
  readonly closedAt: number
}

/** A callback delivery and its recovery loop. */
export interface Delivery {
  readonly id: string
  readonly terminalSerial: string
  readonly url: string
  /** Never logged, never shown by the admin API. */
  readonly token: string
  readonly result: Record<string, unknown>
  readonly completedAt: number
  attempts: number
  delivered: boolean
  deliveredAt: number | undefined
  nextAttemptAt: number | undefined
  lastError: string | undefined
  gaveUp: boolean
  recovered: boolean
  kick: Deferred.Deferred<void> | undefined
}

/** An injected fault on the service routes. */
export interface Fault {
  readonly id: string
  readonly kind: "drop-response" | "error-after" | "error-before" | "delay" | "misreport"
  readonly method: string | undefined
  readonly path: string | undefined
  readonly operation: string | undefined
  readonly host: "main" | "status" | undefined
  readonly status: number
  readonly delayMs: number
  /** `misreport`: the finStatus the answer says instead of the truth. */
  readonly finStatus: string | undefined
  /** Remaining matches; undefined means until cleared. */
  remaining: number | undefined
}

/** The key of a card at a merchant in `Store.lastOfCard`. */
export const cardKey = (merchantId: string, pan: string): string => `${merchantId}\n${pan}`

/** The whole state. */
export class Store {
  readonly ids: Ids
  readonly merchants = new Map<string, Merchant>()
  readonly keys = new Map<string, { readonly merchantId: string; readonly kind: KeyKind }>()
  readonly terminals = new Map<string, Terminal>()
  readonly txns = new Map<string, Txn>()
  /**
   * The latest transaction of each card at each merchant (`cardKey`), kept by `record`: the
   * duplicate payment check looks there instead of through every transaction, which made
   * each sale cost more than the last (6,000 transactions into a load run, 0.8 % of the
   * simulator's CPU and growing).
   */
  readonly lastOfCard = new Map<string, Txn>()
  readonly statusLog = new Map<string, Array<StatusEntry>>()
  readonly results = new Map<string, ResultSlot>()
  readonly closedBatches: Array<ClosedBatch> = []
  readonly tokens = new Map<string, { readonly merchantId: string; readonly card: Card }>()
  readonly deliveries = new Map<string, Delivery>()
  readonly faults: Array<Fault> = []
  timings: Timings = { ...defaultTimings }
  callbackOutageUntil: number | undefined = undefined
  baseUrl: string | undefined = undefined

  constructor(seed: number | undefined) {
    this.ids = new Ids(seed)
  }

  timingsOf(terminal: Terminal): Timings {
    return { ...this.timings, ...terminal.timings }
  }

  addMerchant(input: {
    readonly id?: string | undefined
    readonly name?: string | undefined
    readonly mcc?: string | undefined
    readonly flags?: Partial<MerchantFlags> | undefined
  }): Merchant {
    const id = input.id ?? `SIM${this.ids.digits(9)}`
    const merchant: Merchant = {
      id,
      name: input.name ?? "Simulated Merchant",
      mid: this.ids.digits(15),
      mcc: input.mcc ?? "7011",
      address: "1 Sandbox Street, Testville",
      flags: {
        securityCodeRequired: false,
        partialReversalAllowed: false,
        captureReversalAllowed: true,
        ...input.flags
      },
      virtualTerminal: ""
    }
    this.merchants.set(id, merchant)
    const virtual = this.addTerminal(merchant, { type: "VIRTUAL", virtual: true })
    merchant.virtualTerminal = virtual.serial
    return merchant
  }

  addKey(merchant: Merchant, kind: KeyKind, key?: string | undefined): string {
    const value = key ?? this.ids.apiKey()
    this.keys.set(value, { merchantId: merchant.id, kind })
    return value
  }

  addTerminal(
    merchant: Merchant,
    input: {
      readonly serial?: string | undefined
      readonly type?: string | undefined
      readonly online?: boolean | undefined
      readonly virtual?: boolean | undefined
    }
  ): Terminal {
    const terminal: Terminal = {
      serial: input.serial ?? this.ids.digits(10),
      type: input.type ?? "PAXA920",
      merchantId: merchant.id,
      ssk: this.ids.hex(32),
      tid: this.ids.digits(8),
      virtual: input.virtual ?? false,
      online: input.online ?? true,
      listening: true,
      timings: {},
      card: defaultCard(),
      duplicateAnswer: "cancel",
      tipMinor: 0n,
      receiptsInline: false,
      settings: {
        unattended: false,
        locale: "en_US",
        passwordProtected: false,
        minimumBrightnessLevel: 10,
        maximumBrightnessLevel: 100,
        rebootHour: undefined
      },
      batch: 1,
      current: undefined,
      counters: zeroCounters()
    }
    this.terminals.set(terminal.serial, terminal)
    return terminal
  }

  /** Appends a row to the status log of a reference. */
  log(reference: string | undefined, guid: string, merchantId: string): StatusEntry | undefined {
    if (reference === undefined) return undefined
    const entries = this.statusLog.get(reference) ?? []
    const entry: StatusEntry = { guid, merchantId, snapshot: undefined }
    entries.push(entry)
    this.statusLog.set(reference, entries)
    return entry
  }

  /** Whether the batch a transaction belongs to is still open. */
  batchOpen(txn: Txn): boolean {
    const terminal = this.terminals.get(txn.terminalSerial)
    return terminal !== undefined && terminal.batch === txn.batch
  }
}
