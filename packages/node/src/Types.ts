/**
 * The shapes of the Promise API's inputs and results: plain objects, amounts as
 * `{ amount: "10.50", currency: "EUR" }` (a decimal string of major units, never a number).
 */
import type { Amount } from "./internal/Plain.js"

export type { Amount }

/** Options of one call, as stripe-node takes them. */
export interface RequestOptions {
  /**
   * The same key is the same operation: calling again with it joins the first execution
   * (and answers its result) instead of charging again; a different request under a used
   * key is refused (`IdempotencyConflict`). A fresh key is generated when absent.
   */
  readonly idempotencyKey?: string | undefined
  /** How the result comes back for this call (the configured default otherwise). */
  readonly delivery?: "callback" | "polling" | undefined
  /** How long a busy, offline or queued terminal may be waited for, in seconds (1 to 86400). */
  readonly deadlineSeconds?: number | undefined
  /** Whether an attempt proved not charged may be followed by a new one. */
  readonly retryNotCharged?: boolean | undefined
  /** For a linked operation: the original's `transactionReference`, through which it is reconciled. */
  readonly originalTransactionReference?: string | undefined
}

/**
 * A terminal operation's input: the terminal, and the spec's other fields of the operation
 * (`customerReference`, `metadata`, `tipConfiguration` …) under their spec names.
 */
export interface TerminalInput {
  readonly serialNumber: string
  /** Looked up in the device list when absent. */
  readonly terminalType?: string
  /** A fresh UUID v4 for an original operation when absent. */
  readonly transactionReference?: string
  readonly customerReference?: string
  readonly metadata?: Readonly<Record<string, unknown>>
  readonly amount?: Amount
  readonly duplicateCheck?: boolean
  readonly [field: string]: unknown
}

/** A terminal operation with an amount. */
export interface AmountInput extends TerminalInput {
  readonly amount: Amount
}

/** A terminal operation linked to an original transaction. */
export interface LinkedInput extends TerminalInput {
  readonly originalTransactionId: string
}

/** A terminal, by serial number (its type looked up when absent). */
export interface TerminalRef {
  readonly serialNumber: string
  readonly terminalType?: string
}

/** A terminal's batch. */
export interface BatchRef extends TerminalRef {
  readonly batchNumber: string
}

/** A change of a pre-authorization's hold: through a terminal with `serialNumber`, else terminal-less. */
export interface PreAuthorizationChange {
  readonly originalTransactionId: string
  /** Negative to decrease the hold. */
  readonly amount: Amount
  readonly tip?: Amount
  readonly customerReference?: string
  readonly serialNumber?: string
  readonly terminalType?: string
  readonly [field: string]: unknown
}

/** A capture: through a terminal with `serialNumber`, else terminal-less. */
export interface PreAuthorizationCapture {
  readonly originalTransactionId: string
  readonly amount?: Amount
  readonly tip?: Amount
  readonly customerReference?: string
  /** Terminal-less only: `enforce` (default) or `warn` for the capture rules. */
  readonly enforcement?: string
  readonly serialNumber?: string
  readonly terminalType?: string
  readonly [field: string]: unknown
}

/** A MOTO sale: keyed on a terminal with `serialNumber`, else terminal-less on a `cardToken`. */
export interface MotoSale {
  readonly amount: Amount
  readonly serialNumber?: string
  readonly terminalType?: string
  readonly cardToken?: string
  readonly transactionReference?: string
  readonly customerReference?: string
  readonly [field: string]: unknown
}

/** A MOTO refund: on a terminal with `serialNumber`, else terminal-less on `originalTransactionId`. */
export interface MotoRefund {
  readonly amount: Amount
  readonly originalTransactionId?: string
  readonly serialNumber?: string
  readonly terminalType?: string
  readonly customerReference?: string
  readonly [field: string]: unknown
}

/** A MOTO reversal: on a terminal with `serialNumber`, else terminal-less. */
export interface MotoReversal {
  readonly originalTransactionId: string
  readonly serialNumber?: string
  readonly terminalType?: string
  readonly [field: string]: unknown
}

/** What every result carries. */
export interface ResultBase {
  /** `approved`, `partially-approved`, `declined`, `cancelled`, `failed` (terminal operations) … */
  readonly outcome: string
  readonly executionId: string
  readonly idempotencyKey: string
  /** True when the outcome was unknown first and learnt from the status endpoint. */
  readonly reconciled: boolean
  /** One line, for a person. */
  readonly summary: string
}

/**
 * A terminal operation's result: the outcome and the facts of the Effect API's outcome
 * (`finStatus`, `transactionReference`, `totalAmount`, `maskedCardNumber`, `authorisationCode` …).
 */
export interface OperationResult extends ResultBase {
  readonly outcome: "approved" | "partially-approved" | "declined" | "cancelled" | "failed"
  readonly operation: string
  readonly serialNumber: string
  readonly terminalType: string
  readonly attempt: number
  readonly attemptId: string
  readonly finStatus: string
  readonly source: "callback" | "polling" | "status"
  readonly transactionReference?: string
  readonly originalTransactionId?: string
  readonly requestedAmount?: Amount
  readonly totalAmount?: Amount
  readonly tipAmount?: Amount
  readonly dueAmount?: Amount
  readonly maskedCardNumber?: string
  readonly cardSchemeName?: string
  readonly cardToken?: string
  readonly authorisationCode?: string
  readonly issuerResponseCode?: string
  readonly efttransactionID?: string
  readonly transactionType?: string
  readonly rrn?: string
  readonly [fact: string]: unknown
}

/** A terminal-less operation's result: the Effect workflow's result, flat. */
export interface LifecycleResult extends ResultBase {
  readonly [field: string]: unknown
}

/** A terminal of the merchant. */
export interface Device {
  readonly serialNumber: string
  readonly terminalType: string
  readonly merchant: string
}

/** An execution as it stands. */
export interface Execution {
  readonly executionId: string
  readonly workflow: string
  readonly status: string
  readonly attributes: Readonly<Record<string, string>>
  readonly createdAt: number
  readonly updatedAt: number
  readonly progress?: { readonly phase: string; readonly attempt: number; readonly waitingFor: string }
  readonly report?: {
    readonly verdict: string
    readonly reconciled: boolean
    readonly summary: string
    readonly finStatus?: string
    readonly transactionReference?: string
    readonly amount?: string
  }
  /** The stored exit, amounts in major units. */
  readonly result?: unknown
}

/** What an instance runs on. */
export interface InstanceInfo {
  readonly store: "postgres" | "embedded"
  readonly dataDir?: string
  /** The embedded store's durability caveat, if any. */
  readonly storeWarning?: string
  readonly service: "simulator" | "remote"
  readonly baseUrl: string
  readonly transactionsUrl: string
  /** The built-in simulator's admin API (faults, terminals, clock). */
  readonly simulatorAdminUrl?: string
}

/** The audit. */
export interface Audit {
  /** One operation's story, by execution id, transaction reference or idempotency key. */
  readonly timeline: (
    reference: string
  ) => Promise<{ readonly executionId: string; readonly lines: ReadonlyArray<string> }>
  /** The ledger summary: folded from the log now (`replay`, default) or the live projection's (`live`). */
  readonly ledger: (options?: {
    readonly source?: "replay" | "live"
    readonly from?: string
  }) => Promise<Record<string, unknown>>
  /** Ledger entries, one per business fact, after the checkpoint `from`. */
  readonly entries: (options?: { readonly from?: string; readonly limit?: number }) => Promise<unknown>
  /** Checks the hash chains (of one stream, or all). */
  readonly verify: (streamId?: string) => Promise<{
    readonly ok: boolean
    readonly streamsChecked: number
    readonly eventsChecked: number
    readonly broken: ReadonlyArray<Record<string, unknown>>
  }>
  /** Rebuilds the ledger from the log and compares it with the live projection. */
  readonly rebuild: () => Promise<unknown>
}
