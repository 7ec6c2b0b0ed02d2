/**
 * What the simulated service is, as types: its operations (`SimulatorService`), its admin
 * controls (`Admin`), who calls (`Caller`) and the shapes they take and give. A leaf below
 * the parts in `internal/` and the composition in `Simulator.ts`, which re-exports them.
 */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Card, Counters, Fault, KeyKind, Merchant, MerchantFlags, Timings } from "./model.js"
import type {
  CancelNotAllowed,
  Forbidden,
  NotFound,
  SimulatorError,
  ValidationFailed
} from "../SimulatorError.js"

/** Every field optional, `undefined` meaning "leave as is". */
export type Patch<T> = { readonly [K in keyof T]?: T[K] | undefined }

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
  /**
   * Seed of the ids handed out once started (guids, approval codes, RRNs, tokens, result
   * ids): `seed` when absent, so a seeded simulator repeats a run exactly; `"random"` keeps
   * the seeded keys and serials but gives fresh ids on every start, as a simulator serving a
   * store that outlives it needs (a guid seen before a restart must not come again).
   */
  readonly transactionSeed?: number | "random" | undefined
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
  /** `misreport`: the finStatus to answer instead of the truth. */
  readonly finStatus?: string | undefined
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
