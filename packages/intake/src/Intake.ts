/**
 * The intake: what an operator's program or the command line asks of tillflow — start an
 * operation under an idempotency key, read an execution, its history, list executions,
 * stop a terminal's operation, the device list, a transaction's status, the event log,
 * and the audit (ledger, rebuild, chain verification, timelines). One port, two
 * implementations: `IntakeLocal` runs the library in this process, `IntakeClient` calls a
 * worker's intake API over HTTP. `IntakeApi` serves it. The views here are the JSON the
 * API answers: amounts are strings, never numbers of major units.
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { JsonLimits, Ledger, OperationReport } from "@tillflow/core"
import { ExecutionQueue } from "@tillflow/engine"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------
// Inputs

const Json = Schema.Unknown.annotations({ identifier: "Json" })

/** Strict at the edge: a field a request does not take is refused with a 400 naming it. */
const strict = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

/** The deepest nesting a request may have: core's `JsonLimits.maxDepth`, shared with the callback receiver. */
export const maxDepth = JsonLimits.maxDepth

// Half of a surrogate pair without its other half: it has no UTF-8 form.
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** A NUL or a lone surrogate: neither can be stored as text. */
const unstorable = (s: string): boolean => s.includes("\u0000") || loneSurrogate.test(s)

const unstorableMessage = "must not contain a NUL character or a lone surrogate"

/**
 * A string that can be stored and hashed as given: PostgreSQL refuses NUL in text and
 * JSON, and a lone surrogate has no UTF-8 form. Every string an intake request carries is
 * one, so such input is refused with a 400 naming the field instead of failing the store.
 */
export const Text = Schema.String.pipe(Schema.filter((s) => !unstorable(s) || unstorableMessage)).annotations(
  { identifier: "Text", description: "a string without NUL characters or lone surrogates" }
)

/** Where `value` holds an unstorable string (as a key or a value) or nests too deep. */
const unstorableAt = (
  value: unknown
): { readonly path: Array<PropertyKey>; readonly message: string } | undefined => {
  // Iterative: a hostile body may nest far deeper than the call stack allows.
  const pending: Array<{ readonly value: unknown; readonly path: Array<PropertyKey> }> = [{ value, path: [] }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { path } = next
    if (typeof next.value === "string") {
      if (unstorable(next.value)) return { path, message: unstorableMessage }
    } else if (typeof next.value === "object" && next.value !== null) {
      if (path.length >= maxDepth) return { path, message: `nests deeper than ${maxDepth} levels` }
      for (const [key, item] of Object.entries(next.value)) {
        const at = Array.isArray(next.value) ? [...path, Number(key)] : [...path, key]
        if (unstorable(key)) return { path: at, message: `key ${unstorableMessage}` }
        pending.push({ value: item, path: at })
      }
    }
  }
  return undefined
}

/** A JSON object of a request (an operation, a workflow payload) whose every string is a `Text`. */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((o) => unstorableAt(o) ?? true)
)

/** Start a terminal operation. */
export const StartOperation = Schema.Struct({
  /** The same key is the same operation: asking again answers the same execution. */
  idempotencyKey: Text.pipe(Schema.minLength(1), Schema.maxLength(200)),
  /**
   * The operation in the service's own JSON form (`operation`, `serial_number`, `amount` in
   * minor units as a string, `currency` …). `transactionReference` is optional: a fresh
   * UUID v4 is used when absent; `terminal_type` too: it is looked up in the device list.
   * `callbackUrl` and `token` are not allowed: tillflow sets them per attempt.
   */
  request: JsonObject.annotations({
    description: "a TransactionRequest of the spec (transactionReference and terminal_type optional)"
  }),
  delivery: Schema.optional(Schema.Literal("callback", "polling")),
  /** How long a busy, offline or queued terminal may be waited for. */
  deadlineSeconds: Schema.optional(Schema.Int.pipe(Schema.between(1, 86_400))),
  retryNotCharged: Schema.optional(Schema.Boolean),
  /** For linked operations: the original's reference, through which they are reconciled. */
  originalTransactionReference: Schema.optional(Text),
  /** Answer once the operation ended, or after this many seconds, whichever comes first. */
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600)))
}).annotations({ identifier: "StartOperation", ...strict })
/** @see StartOperation */
export type StartOperation = typeof StartOperation.Type

/** Stop the operation in flight on a terminal. */
export const StopOperation = Schema.Struct({
  serialNumber: Text.pipe(Schema.minLength(1)),
  terminalType: Schema.optional(Text.pipe(Schema.minLength(1))),
  /** Defaults to a fresh one: every stop is its own request. */
  idempotencyKey: Schema.optional(Text.pipe(Schema.minLength(1), Schema.maxLength(200))),
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600)))
}).annotations({ identifier: "StopOperation", ...strict })
/** @see StopOperation */
export type StopOperation = typeof StopOperation.Type

/** Start a terminal-less operation (a workflow of `Lifecycles`). */
export const StartLifecycle = Schema.Struct({
  /**
   * The workflow's payload in its JSON form (Money as `{amount, currency}` in minor units).
   * Its `requestId` is the idempotency key: a fresh one is used when absent.
   */
  payload: JsonObject,
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600)))
}).annotations({ identifier: "StartLifecycle", ...strict })
/** @see StartLifecycle */
export type StartLifecycle = typeof StartLifecycle.Type

/** A visibility query. */
export const ListQuery = Schema.Struct({
  workflow: Schema.optional(Text),
  status: Schema.optional(ExecutionQueue.ExecutionStatus),
  serialNumber: Schema.optional(Text),
  operation: Schema.optional(Text),
  transactionReference: Schema.optional(Text),
  idempotencyKey: Schema.optional(Text),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 10_000)))
})
/** @see ListQuery */
export type ListQuery = typeof ListQuery.Type

// ---------------------------------------------------------------------------------------
// Views

/** An execution: where it stands and, once finished, its report and stored result. */
export const ExecutionView = Schema.Struct({
  executionId: Schema.String,
  workflow: Schema.String,
  status: ExecutionQueue.ExecutionStatus,
  attributes: Schema.Record({ key: Schema.String, value: Schema.String }),
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  /** While it runs: its phase and what it waits for. */
  progress: Schema.optional(OperationReport.Progress),
  /** Once it ended: its verdict and a one-line summary. */
  report: Schema.optional(OperationReport.Report),
  /** Once it ended: the exit as stored (encoded by the workflow's schemas). */
  result: Schema.optional(Json)
}).annotations({ identifier: "ExecutionView" })
/** @see ExecutionView */
export type ExecutionView = typeof ExecutionView.Type

/** One stored event, as the API shows it. */
export const EventView = Schema.Struct({
  position: Schema.String,
  streamId: Schema.String,
  version: Schema.Int,
  type: Schema.String,
  schemaVersion: Schema.Int,
  recordedAt: Schema.String,
  data: Json,
  metadata: Json,
  hash: Schema.String
}).annotations({ identifier: "EventView" })
/** @see EventView */
export type EventView = typeof EventView.Type

/** An execution's history: its engine stream and its business (payment) stream. */
export const HistoryView = Schema.Struct({
  executionId: Schema.String,
  engine: Schema.Array(EventView),
  business: Schema.Array(EventView)
}).annotations({ identifier: "HistoryView" })
/** @see HistoryView */
export type HistoryView = typeof HistoryView.Type

/** A page of the global log. */
export const EventsPage = Schema.Struct({
  events: Schema.Array(EventView),
  /** Pass as `after` to read on. */
  next: Schema.String,
  caughtUp: Schema.Boolean
}).annotations({ identifier: "EventsPage" })
/** @see EventsPage */
export type EventsPage = typeof EventsPage.Type

/** A terminal of the merchant (never its shared secret). */
export const DeviceView = Schema.Struct({
  serialNumber: Schema.String,
  terminalType: Schema.String,
  merchant: Schema.String
}).annotations({ identifier: "DeviceView" })
/** @see DeviceView */
export type DeviceView = typeof DeviceView.Type

/** The hash chains checked and the first broken link of each broken stream. */
export const VerifyView = Schema.Struct({
  ok: Schema.Boolean,
  streamsChecked: Schema.Int,
  eventsChecked: Schema.Int,
  broken: Schema.Array(
    Schema.Struct({
      streamId: Schema.String,
      version: Schema.Int,
      kind: Schema.String,
      expected: Schema.String,
      found: Schema.String
    })
  )
}).annotations({ identifier: "VerifyView" })
/** @see VerifyView */
export type VerifyView = typeof VerifyView.Type

/** A row of a ledger summary, amounts as integer strings of minor units. */
export const SummaryRow = Schema.Struct({
  day: Schema.String,
  terminal: Schema.String,
  merchant: Schema.String,
  currency: Schema.String,
  tallies: Schema.Record({
    key: Ledger.Kind,
    value: Schema.Struct({ count: Schema.Int, amount: Schema.BigInt })
  }),
  net: Schema.BigInt
}).annotations({ identifier: "LedgerRow" })

/** A ledger summary. */
export const LedgerView = Schema.Struct({
  /** `replay`: folded from the log now; `live`: the live projection's latest snapshot. */
  source: Schema.Literal("replay", "live"),
  from: Schema.String,
  checkpoint: Schema.String,
  eventsRead: Schema.Int,
  entries: Schema.Int,
  undecodable: Schema.Array(Schema.String),
  rows: Schema.Array(SummaryRow)
}).annotations({ identifier: "LedgerView" })
/** @see LedgerView */
export type LedgerView = typeof LedgerView.Type

/** Ledger entries (one per business fact). */
export const EntriesView = Schema.Struct({
  entries: Schema.Array(
    Schema.Struct({
      position: Schema.String,
      at: Schema.Number,
      day: Schema.String,
      kind: Ledger.Kind,
      operation: Schema.String,
      finStatus: Schema.String,
      amount: Schema.optional(Schema.String),
      currency: Schema.optional(Schema.String),
      terminal: Schema.String,
      merchant: Schema.String,
      transactionReference: Schema.optional(Schema.String),
      reconciled: Schema.Boolean,
      streamId: Schema.String,
      eventType: Schema.String
    })
  ),
  checkpoint: Schema.String
}).annotations({ identifier: "EntriesView" })
/** @see EntriesView */
export type EntriesView = typeof EntriesView.Type

/** A rebuild compared with the live projection. */
export const RebuildView = Schema.Struct({
  /** False when no live snapshot exists yet (the worker writes one within seconds). */
  compared: Schema.Boolean,
  equal: Schema.Boolean,
  checkpoint: Schema.String,
  eventsRead: Schema.Int,
  liveDigest: Schema.String,
  rebuiltDigest: Schema.String,
  differences: Schema.Array(
    Schema.Struct({ row: Schema.String, live: Schema.String, rebuilt: Schema.String })
  )
}).annotations({ identifier: "RebuildView" })
/** @see RebuildView */
export type RebuildView = typeof RebuildView.Type

/** One operation's story. */
export const TimelineView = Schema.Struct({
  executionId: Schema.String,
  lines: Schema.Array(Schema.String)
}).annotations({ identifier: "TimelineView" })
/** @see TimelineView */
export type TimelineView = typeof TimelineView.Type

/** What `/ready` checks. */
export const ReadyView = Schema.Struct({
  ready: Schema.Boolean,
  store: Schema.String,
  engine: Schema.String
}).annotations({ identifier: "ReadyView" })
/** @see ReadyView */
export type ReadyView = typeof ReadyView.Type

// ---------------------------------------------------------------------------------------
// Errors

/** The request is not acceptable: the message says what was wrong and what is allowed. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()(
  "InvalidRequest",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {}

/** No such execution, event or transaction. */
export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

/** The idempotency key was used for a different request. */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()(
  "IdempotencyConflict",
  { message: Schema.String, executionId: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {}

/** The store or the remote service did not answer. */
export class Unavailable extends Schema.TaggedError<Unavailable>()(
  "Unavailable",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {}

/** Every error of the intake. */
export type IntakeError = InvalidRequest | NotFound | IdempotencyConflict | Unavailable

// ---------------------------------------------------------------------------------------
// The port

/** The intake's operations. */
export interface Service {
  readonly devices: Effect.Effect<ReadonlyArray<DeviceView>, IntakeError>
  readonly start: (input: StartOperation) => Effect.Effect<ExecutionView, IntakeError>
  readonly stop: (input: StopOperation) => Effect.Effect<ExecutionView, IntakeError>
  /** Starts a terminal-less workflow by name (`PreAuthorization.Capture`, `Moto.Sale` …). */
  readonly lifecycle: (workflow: string, input: StartLifecycle) => Effect.Effect<ExecutionView, IntakeError>
  /** An execution; with `waitSeconds`, once it ended or when the wait is over. */
  readonly execution: (executionId: string, waitSeconds?: number) => Effect.Effect<ExecutionView, IntakeError>
  readonly history: (executionId: string) => Effect.Effect<HistoryView, IntakeError>
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<ExecutionView>, IntakeError>
  /** The status endpoint, through the service: `first`, `last`, `all` or a position. */
  readonly transactionStatus: (
    reference: string,
    selector: string
  ) => Effect.Effect<ReadonlyArray<unknown>, IntakeError>
  /** A page of the global log after `after` (`transactionId:position`; from the start when absent). */
  readonly events: (after: string | undefined, limit: number) => Effect.Effect<EventsPage, IntakeError>
  readonly verify: (streamId: string | undefined) => Effect.Effect<VerifyView, IntakeError>
  readonly ledger: (options: {
    readonly source: "replay" | "live"
    readonly from?: string | undefined
  }) => Effect.Effect<LedgerView, IntakeError>
  readonly entries: (from: string | undefined, limit: number) => Effect.Effect<EntriesView, IntakeError>
  readonly rebuild: Effect.Effect<RebuildView, IntakeError>
  /** One operation's story, by execution id, transaction reference or idempotency key. */
  readonly timeline: (reference: string) => Effect.Effect<TimelineView, IntakeError>
  readonly ready: Effect.Effect<ReadyView>
}

/** The intake. */
export class Intake extends Context.Tag("tillflow/intake/Intake")<Intake, Service>() {}
