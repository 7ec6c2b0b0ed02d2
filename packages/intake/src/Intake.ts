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
import { JsonLimits, Ledger, LifecycleEvent, OperationReport } from "@tillflow/core"
import { ExecutionQueue } from "@tillflow/engine"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as ApiReference from "./internal/ApiReference.js"

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

// C0 controls, DEL and C1 controls: invisible in a log line, and CR LF would split it.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const control = /[\u0000-\u001f\u007f-\u009f]/

/**
 * An idempotency key (a request id of a terminal-less operation too): printable text of 1
 * to 200 characters. Control characters (ESC, CR, LF …) are refused: a key is shown in
 * logs, the console and listings, where they would forge or hide lines.
 */
export const IdempotencyKey = Text.pipe(
  Schema.minLength(1),
  Schema.maxLength(200),
  Schema.filter(
    (s) => !control.test(s) || "must not contain control characters (ESC, CR, LF, TAB …): use printable text"
  )
).annotations({ identifier: "IdempotencyKey", description: "printable text of 1 to 200 characters" })

/** Why `key` is no idempotency key, or `undefined` when it is one. */
export const idempotencyKeyProblem = (key: string): string | undefined => {
  if (key.length === 0) return "must not be empty"
  if (key.length > 200) return "must be at most 200 characters"
  if (unstorable(key)) return unstorableMessage
  if (control.test(key)) return "must not contain control characters (ESC, CR, LF, TAB …): use printable text"
  return undefined
}

/** A JSON object of a request (an operation, a workflow payload) whose every string is a `Text`. */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((o) => unstorableAt(o) ?? true)
)

/** Start a terminal operation. */
export const StartOperation = Schema.Struct({
  /** The same key is the same operation: asking again answers the same execution. */
  idempotencyKey: IdempotencyKey,
  /**
   * The operation in the service's own JSON form (`operation`, `serial_number`, `amount` in
   * minor units as a string, `currency` …). `transactionReference` is optional: a fresh
   * UUID v4 is used when absent; `terminal_type` too: it is looked up in the device list.
   * `callbackUrl` and `token` are not allowed: tillflow sets them per attempt.
   */
  request: ApiReference.documentedAs(JsonObject, ApiReference.OperationRequest),
  delivery: Schema.optional(Schema.Literal("callback", "polling")),
  /** How long a busy, offline or queued terminal may be waited for. */
  deadlineSeconds: Schema.optional(Schema.Int.pipe(Schema.between(1, 86_400))),
  retryNotCharged: Schema.optional(Schema.Boolean),
  /** For linked operations: the original's reference, through which they are reconciled. */
  originalTransactionReference: Schema.optional(Text),
  /** Answer once the operation ended, or after this many seconds, whichever comes first. */
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600)))
}).annotations({
  ...strict,
  identifier: "StartOperation",
  title: "Start a terminal operation",
  description: "A terminal operation under an idempotency key, and how to deliver and wait for its result.",
  examples: [
    {
      idempotencyKey: "order-1042",
      request: { operation: "sale", serial_number: "0821032398", amount: "1050", currency: "EUR" },
      waitSeconds: 120
    },
    {
      idempotencyKey: "order-1042-refund",
      request: {
        operation: "refund",
        serial_number: "0821032398",
        originalTransactionId: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
        amount: "1050",
        currency: "EUR"
      },
      originalTransactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
      delivery: "polling"
    }
  ]
})
/** @see StartOperation */
export type StartOperation = typeof StartOperation.Type

/** Stop the operation in flight on a terminal. */
export const StopOperation = Schema.Struct({
  serialNumber: Text.pipe(Schema.minLength(1)),
  terminalType: Schema.optional(Text.pipe(Schema.minLength(1))),
  /** Defaults to a fresh one: every stop is its own request. */
  idempotencyKey: Schema.optional(IdempotencyKey),
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600))),
  /**
   * The execution an operator stops (the terminal's operation in flight, as they saw it): the
   * stop is then recorded in its history with who asked and `reason`, which it then needs.
   */
  of: Schema.optional(Text.pipe(Schema.minLength(1), Schema.maxLength(128))),
  /** Why: recorded with the operator's name (with `of`). */
  reason: Schema.optional(Text.pipe(Schema.minLength(1)))
}).annotations({
  ...strict,
  identifier: "StopOperation",
  description: "Stop the operation in flight on a terminal.",
  examples: [{ serialNumber: "0821032398", waitSeconds: 30 }]
})
/** @see StopOperation */
export type StopOperation = typeof StopOperation.Type

/** Start a terminal-less operation (a workflow of `Lifecycles`). */
export const StartLifecycle = Schema.Struct({
  /**
   * The workflow's payload in its JSON form (Money as `{amount, currency}` in minor units).
   * Its `requestId` is the idempotency key: a fresh one is used when absent.
   */
  payload: ApiReference.documentedAs(JsonObject, ApiReference.LifecyclePayload),
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600)))
}).annotations({
  ...strict,
  identifier: "StartLifecycle",
  title: "Start a terminal-less operation",
  description: "The payload of the workflow named in the path, and how long to wait for its end.",
  examples: [
    {
      payload: {
        requestId: "capture-order-1042",
        originalGuid: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
        amount: { amount: "1050", currency: "EUR" }
      },
      waitSeconds: 30
    },
    {
      payload: { serialNumber: "0821032398", terminalType: "ANDROID", batchNumber: "12" }
    }
  ]
})
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

/**
 * How an execution ended, as an operator filters it: `approved` (a partial approval too),
 * `declined` (a cancellation too: no money moved), `failed` (refused, unavailable, not
 * charged, an error), `unresolved` (waits for an operator), or `in-progress` (not ended).
 * Not the engine's status: a declined payment is a workflow that `succeeded`.
 */
export const ExecutionOutcome = Schema.Literal("approved", "declined", "failed", "unresolved", "in-progress")
/** @see ExecutionOutcome */
export type ExecutionOutcome = typeof ExecutionOutcome.Type

/** A search of executions, newest first, a page at a time: filters and a search, all optional. */
export const SearchQuery = Schema.Struct({
  outcome: Schema.optional(ExecutionOutcome),
  status: Schema.optional(ExecutionQueue.ExecutionStatus),
  serialNumber: Schema.optional(Text),
  operation: Schema.optional(Text),
  workflow: Schema.optional(Text),
  /** Created at or after this instant (ISO 8601 date or date-time, UTC unless it says). */
  from: Schema.optional(Text),
  /** Created before this instant (ISO 8601 date or date-time; a date means its end). */
  to: Schema.optional(Text),
  /**
   * The amount it asked for, in major units (`"10.50"`), with `currency`: operations that
   * name an amount (a sale, a refund, a capture …) of exactly that amount.
   */
  amount: Schema.optional(Text),
  /** The currency of `amount` (ISO 4217), required with it. */
  currency: Schema.optional(Text),
  /**
   * The merchant it was made for (a platform's credential; a credential limited to
   * merchants lists its own anyway and may name only the merchant it acts for).
   */
  merchant: Schema.optional(Text),
  /**
   * An execution id or its start (the 8 characters a table shows), idempotency key,
   * transaction reference, guid (efttransactionID), customer reference, or the card's
   * last four digits.
   */
  q: Schema.optional(Text),
  /** The page after this one: the `next` of the previous page. */
  after: Schema.optional(Text),
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 500)))
  // No identifier: URL parameters are written inline in the API's document, and a named
  // component nothing refers to would be a dangling entry.
})
/** @see SearchQuery */
export type SearchQuery = typeof SearchQuery.Type

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
  result: Schema.optional(Json),
  /**
   * A terminal operation that ended unresolved, once an operator resolved it
   * (`POST /v1/attempts/terminal/{executionId}/resolve`): what they said, who, when, why.
   */
  resolution: Schema.optional(
    Schema.Struct({
      resolution: Schema.Literal("applied", "notApplied"),
      operator: Schema.String,
      reason: Schema.String,
      /** When it was recorded (ISO 8601 UTC). */
      at: Schema.String,
      /** Applied: the transaction booked, what it moved and its currency. */
      guid: Schema.optional(Schema.String),
      amount: Schema.optional(Schema.String),
      currency: Schema.optional(Schema.String)
    }).annotations({ identifier: "TerminalResolutionView" })
  )
}).annotations({
  identifier: "ExecutionView",
  description: "An execution: where it stands and, once it ended, its verdict and stored result.",
  examples: [
    {
      executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
      workflow: "TerminalOperation",
      status: "succeeded",
      attributes: {
        operation: "sale",
        serialNumber: "0821032398",
        transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
        idempotencyKey: "order-1042"
      },
      createdAt: 1764000000000,
      updatedAt: 1764000012000,
      report: {
        verdict: "approved",
        reconciled: false,
        summary: "sale of 10.50 EUR approved",
        finStatus: "APPROVED",
        transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
        amount: "10.50 EUR"
      }
    }
  ]
})
/** @see ExecutionView */
export type ExecutionView = typeof ExecutionView.Type

/** A page of executions found, newest first, how many matched in all, and the next page's cursor. */
export const SearchView = Schema.Struct({
  executions: Schema.Array(ExecutionView),
  total: Schema.Int,
  /** Pass as `after` for the next page; absent on the last page. */
  next: Schema.optional(Schema.String)
}).annotations({ identifier: "SearchView" })
/** @see SearchView */
export type SearchView = typeof SearchView.Type

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
}).annotations({
  identifier: "EventView",
  description: "One stored event.",
  examples: [
    {
      position: "1:42",
      streamId: "payment-3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
      version: 1,
      type: "PaymentAttemptRecorded",
      schemaVersion: 1,
      recordedAt: "2025-11-24T10:00:00.000Z",
      data: { attempt: 1 },
      metadata: { executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f" },
      hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    }
  ]
})
/** @see EventView */
export type EventView = typeof EventView.Type

/** An execution's history: its engine stream and its business (payment) stream. */
export const HistoryView = Schema.Struct({
  executionId: Schema.String,
  engine: Schema.Array(EventView),
  business: Schema.Array(EventView)
}).annotations({
  identifier: "HistoryView",
  description: "An execution's engine stream and its business (payment) stream.",
  examples: [
    {
      executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
      engine: [],
      business: [
        {
          position: "1:42",
          streamId: "payment-3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
          version: 1,
          type: "PaymentAttemptRecorded",
          schemaVersion: 1,
          recordedAt: "2025-11-24T10:00:00.000Z",
          data: { attempt: 1 },
          metadata: { executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f" },
          hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
        }
      ]
    }
  ]
})
/** @see HistoryView */
export type HistoryView = typeof HistoryView.Type

/** A page of the global log. */
export const EventsPage = Schema.Struct({
  events: Schema.Array(EventView),
  /** Pass as `after` to read on. */
  next: Schema.String,
  caughtUp: Schema.Boolean
}).annotations({
  identifier: "EventsPage",
  description: "A page of the global event log; pass next as after to read on.",
  examples: [
    {
      events: [
        {
          position: "1:42",
          streamId: "payment-3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
          version: 1,
          type: "PaymentAttemptRecorded",
          schemaVersion: 1,
          recordedAt: "2025-11-24T10:00:00.000Z",
          data: { attempt: 1 },
          metadata: { executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f" },
          hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
        }
      ],
      next: "1:42",
      caughtUp: true
    }
  ]
})
/** @see EventsPage */
export type EventsPage = typeof EventsPage.Type

/** A terminal of the merchant (never its shared secret). */
export const DeviceView = Schema.Struct({
  serialNumber: Schema.String,
  terminalType: Schema.String,
  merchant: Schema.String
}).annotations({
  identifier: "DeviceView",
  description: "A terminal of the merchant.",
  examples: [{ serialNumber: "0821032398", terminalType: "ANDROID", merchant: "merchant-1" }]
})
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
  ),
  conservation: Schema.optional(
    Schema.Struct({
      transactionsChecked: Schema.Int,
      broken: Schema.Array(
        Schema.Struct({
          guid: Schema.String,
          currency: Schema.String,
          charged: Schema.String.annotations({ description: "minor units charged in the currency" }),
          credited: Schema.String.annotations({
            description: "minor units credited back in the currency (refunds and reversals)"
          }),
          message: Schema.String
        })
      ),
      disagreements: Schema.optional(
        Schema.Array(
          Schema.Struct({
            guid: Schema.String,
            version: Schema.Int,
            eventType: Schema.String,
            what: Schema.String,
            stated: Schema.String.annotations({ description: "the amount the fact states, major units" }),
            folded: Schema.optional(
              Schema.String.annotations({ description: "what the transaction's history says, major units" })
            ),
            currency: Schema.String,
            message: Schema.String
          })
        ).annotations({
          description:
            "Facts whose stated amount differs from what the transaction's history says they moved (a release or capture reversal of another amount than the hold or capture, a hold change whose delta is not the holds' difference, a tip replacing another than the standing one): the ledger books the history's figure."
        })
      ),
      undecodable: Schema.Array(Schema.String)
    }).annotations({
      description:
        "Money conservation per transaction: what each original credited back never exceeds what it charged, per currency."
    })
  )
}).annotations({
  identifier: "VerifyView",
  description:
    "The hash chains checked, and the first broken link of each broken stream; each transaction's money conservation (credited ≤ charged, per currency) and every transaction that breaks it.",
  examples: [
    {
      ok: true,
      streamsChecked: 12,
      eventsChecked: 148,
      broken: [],
      conservation: { transactionsChecked: 5, broken: [], undecodable: [] }
    }
  ]
})
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
}).annotations({
  identifier: "LedgerRow",
  description: "A day's tallies of one terminal and currency, amounts in minor units."
})

const exampleTallies = Object.fromEntries(
  Ledger.Kind.literals.map((kind) => [
    kind,
    { count: kind === "sale" ? 3 : 0, amount: kind === "sale" ? 3150n : 0n }
  ])
) as Record<Ledger.Kind, { readonly count: number; readonly amount: bigint }>

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
}).annotations({
  identifier: "LedgerView",
  description: "A ledger summary: one row per day, terminal, merchant and currency.",
  examples: [
    {
      source: "replay",
      from: "0:0",
      checkpoint: "1:42",
      eventsRead: 42,
      entries: 3,
      undecodable: [],
      rows: [
        {
          day: "2025-11-24",
          terminal: "0821032398",
          merchant: "merchant-1",
          currency: "EUR",
          tallies: exampleTallies,
          net: 3150n
        }
      ]
    }
  ]
})
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
}).annotations({
  identifier: "EntriesView",
  description: "Ledger entries, one per business fact, and where the read stopped.",
  examples: [
    {
      entries: [
        {
          position: "1:42",
          at: 1764000012000,
          day: "2025-11-24",
          kind: "sale",
          operation: "sale",
          finStatus: "APPROVED",
          amount: "1050",
          currency: "EUR",
          terminal: "0821032398",
          merchant: "merchant-1",
          transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
          reconciled: false,
          streamId: "payment-3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b",
          eventType: "PaymentAuthorised"
        }
      ],
      checkpoint: "1:42"
    }
  ]
})
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
}).annotations({
  identifier: "RebuildView",
  description: "The ledger rebuilt from the log, compared with the live projection.",
  examples: [
    {
      compared: true,
      equal: true,
      checkpoint: "1:42",
      eventsRead: 42,
      liveDigest: "5d41402abc4b2a76b9719d911017c592",
      rebuiltDigest: "5d41402abc4b2a76b9719d911017c592",
      differences: []
    }
  ]
})
/** @see RebuildView */
export type RebuildView = typeof RebuildView.Type

/** One operation's story. */
export const TimelineView = Schema.Struct({
  executionId: Schema.String,
  lines: Schema.Array(Schema.String)
}).annotations({
  identifier: "TimelineView",
  description: "One operation's story, a line per step.",
  examples: [
    {
      executionId: "3c1e0f4e2b7d4f0a9d6e5b4a3c2d1e0f",
      lines: [
        "10:00:00.000 attempt 1 recorded",
        "10:00:00.120 accepted (202)",
        "10:00:12.000 APPROVED 10.50 EUR"
      ]
    }
  ]
})
/** @see TimelineView */
export type TimelineView = typeof TimelineView.Type

/**
 * What `/ready` checks: the store, the engine, and whether the remote service takes this
 * worker's API key (`service`: `ok`; `refused: …` makes the worker not ready; `unreachable:
 * …` does not, for no other worker would reach it better).
 */
export const ReadyView = Schema.Struct({
  ready: Schema.Boolean,
  store: Schema.String,
  engine: Schema.String,
  service: Schema.String
}).annotations({
  identifier: "ReadyView",
  description: "Whether the store and the engine are ready, and the service takes this worker's API key.",
  examples: [{ ready: true, store: "ok", engine: "ok", service: "ok" }]
})
/** @see ReadyView */
export type ReadyView = typeof ReadyView.Type

// ---------------------------------------------------------------------------------------
// An operator's resolution of a request in doubt

/** What an operator says of a request whose outcome stayed unknown (`InDoubtResolution`). */
export const ResolveInDoubt = Schema.Struct({
  /** The request in doubt: its `requestId` in the transaction's history. */
  requestId: Text.pipe(Schema.minLength(1)),
  resolution: Schema.Literal("applied", "notApplied"),
  /** Who resolves it. */
  operator: Text.pipe(Schema.minLength(1)),
  /** Why: what the operator knows. */
  reason: Text.pipe(Schema.minLength(1)),
  /** What the status endpoint said, if the operator asked it. */
  statusEndpoint: Schema.optional(Text)
}).annotations({
  identifier: "ResolveInDoubt",
  examples: [
    {
      requestId: "terminal-5f1c0e3a",
      resolution: "notApplied",
      operator: "alice",
      reason: "the acquirer's settlement report shows no capture",
      statusEndpoint: "NOT FOUND"
    }
  ]
})
/** @see ResolveInDoubt */
export type ResolveInDoubt = typeof ResolveInDoubt.Type

/** The resolution recorded (`InDoubtResolved`). */
export const ResolutionView = Schema.Struct({
  guid: Schema.String,
  requestId: Schema.String,
  operation: Schema.String,
  resolution: Schema.Literal("applied", "notApplied"),
  /** When it was recorded (ISO 8601 UTC). */
  at: Schema.String,
  /** What the applied request moved, in major units, with its currency. */
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String)
}).annotations({
  identifier: "ResolutionView",
  examples: [
    {
      guid: "4f8e2a10-9c1b-4d7e-8a5f-2b3c4d5e6f70",
      requestId: "terminal-5f1c0e3a",
      operation: "capture",
      resolution: "notApplied",
      at: "2026-03-01T10:00:00.000Z"
    }
  ]
})
/** @see ResolutionView */
export type ResolutionView = typeof ResolutionView.Type

// ---------------------------------------------------------------------------------------
// An operator's resolution of a request in doubt outside a transaction

/**
 * The streams a request can stay in doubt on besides a transaction's history: a terminal's
 * batch close (`batch`, keyed by serial: it holds every later close of the terminal), a MOTO
 * sale attempt (`moto-sale`, keyed by its transactionReference: charged, maybe, under a guid
 * tillflow never saw), a device command (`device`, keyed by serial: never resent), and a
 * terminal operation whose outcome stayed unresolved (`terminal`, keyed by its execution id:
 * `TerminalResolution`).
 */
export const AttemptKind = Schema.Literal("batch", "moto-sale", "device", "terminal").annotations({
  identifier: "AttemptKind",
  description:
    "batch (key: the terminal's serial), moto-sale (key: its transactionReference), device (key: serial), terminal (key: the execution id of a terminal operation that ended unresolved)"
})
/** @see AttemptKind */
export type AttemptKind = typeof AttemptKind.Type

/** What an operator says of a request in doubt on an attempt's stream. */
export const ResolveAttempt = Schema.Struct({
  ...ResolveInDoubt.fields,
  /**
   * An applied MOTO sale, or an applied terminal operation that moves money: the guid the
   * gateway gave it (its history opens under it).
   */
  guid: Schema.optional(Text.pipe(Schema.minLength(1), Schema.maxLength(128))),
  /**
   * An applied terminal operation (kind `terminal`): what it moved, in major units, when not
   * the amount asked (a partial approval, a tip at the terminal); with `currency`.
   */
  amount: Schema.optional(Text.pipe(Schema.minLength(1), Schema.maxLength(32))),
  /** The currency of `amount`: must be the one the operation asked in. */
  currency: Schema.optional(Text.pipe(Schema.minLength(1), Schema.maxLength(3)))
}).annotations({
  identifier: "ResolveAttempt",
  examples: [
    {
      requestId: "sale-7",
      resolution: "applied",
      operator: "alice",
      reason: "the acquirer's report shows the sale",
      guid: "4f8e2a10-9c1b-4d7e-8a5f-2b3c4d5e6f70",
      statusEndpoint: "MOTO_SALE AUTHORISED"
    }
  ]
})
/** @see ResolveAttempt */
export type ResolveAttempt = typeof ResolveAttempt.Type

/** The resolution recorded on an attempt's stream (`InDoubtResolved`). */
export const AttemptResolutionView = Schema.Struct({
  /**
   * The stream it was recorded on (`batch-<serial>`, `moto-sale-<reference>`, `device-<serial>`;
   * a terminal operation's: `execution-actions-<executionId>`).
   */
  streamId: Schema.String,
  requestId: Schema.String,
  operation: Schema.String,
  resolution: Schema.Literal("applied", "notApplied"),
  /** When it was recorded (ISO 8601 UTC). */
  at: Schema.String,
  /** An applied MOTO sale or terminal operation: the transaction opened, what it moved and its currency. */
  guid: Schema.optional(Schema.String),
  amount: Schema.optional(Schema.String),
  currency: Schema.optional(Schema.String)
}).annotations({
  identifier: "AttemptResolutionView",
  examples: [
    {
      streamId: "batch-PAX-A920-0042",
      requestId: "close-7",
      operation: "batchClose",
      resolution: "notApplied",
      at: "2026-03-01T10:00:00.000Z"
    }
  ]
})
/** @see AttemptResolutionView */
export type AttemptResolutionView = typeof AttemptResolutionView.Type

// ---------------------------------------------------------------------------------------
// An operator's action on a transaction

/**
 * An action on a transaction (`POST /v1/transactions/{guid}/actions`): refund (full or
 * partial), reverse, capture or increase a pre-authorization, release it, adjust the tip.
 * The amount is confirmed with its currency, which must be the transaction's; the reason is
 * recorded with the operator in the transaction's history (`OperatorActionRequested`).
 */
export const ActOnTransaction = Schema.Struct({
  action: LifecycleEvent.OperatorAction,
  /**
   * In major units (`"10.50"`): required for refund, capture, increase and tip; optional for
   * reverse (a partial reversal); refused for release (a release undoes the whole hold).
   */
  amount: Schema.optional(Text.pipe(Schema.minLength(1))),
  /** The currency the operator confirmed: must be the transaction's. */
  currency: Schema.optional(Text.pipe(Schema.minLength(1))),
  /** Why: recorded with the operator's name. */
  reason: Text.pipe(Schema.filter((s) => s.trim().length > 0 || "must say why (not blank)")),
  /**
   * The same action (kind, transaction, amount, currency) is one action: asked again it
   * answers the first's execution. A second identical action on purpose (a second refund of
   * the same amount) says `repeat: 2`, a third `3` …
   */
  repeat: Schema.optional(Schema.Int.pipe(Schema.between(1, 1000))),
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600)))
}).annotations({
  ...strict,
  identifier: "ActOnTransaction",
  description: "An operator's action on a transaction, with the amount and currency confirmed and a reason.",
  examples: [
    { action: "refund", amount: "15.00", currency: "EUR", reason: "the customer returned the goods" },
    { action: "release", reason: "the guest checked out without charges" }
  ]
})
/** @see ActOnTransaction */
export type ActOnTransaction = typeof ActOnTransaction.Type

/** An operator's retry of an operation that charged nothing (`POST /v1/executions/{id}/retry`). */
export const RetryExecution = Schema.Struct({
  /** Why: recorded with the operator's name. */
  reason: Text.pipe(Schema.minLength(1)),
  /** How long to wait for the new execution to end (0–600 s; at once without). */
  waitSeconds: Schema.optional(Schema.Number.pipe(Schema.between(0, 600)))
}).annotations({
  ...strict,
  identifier: "RetryExecution",
  examples: [{ reason: "the terminal is back online", waitSeconds: 60 }]
})
/** @see RetryExecution */
export type RetryExecution = typeof RetryExecution.Type

/** Who asks for an action: a named operator, or the intake's bearer token. */
export interface Actor {
  readonly name: string
  readonly via: "operator" | "token"
}

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

/** A money rule refuses the action: `rule` names it, `message` says why; nothing was started or recorded. */
export class ActionRefused extends Schema.TaggedError<ActionRefused>()(
  "ActionRefused",
  { message: Schema.String, rule: Schema.String },
  HttpApiSchema.annotations({ status: 422 })
) {}

/** The store or the remote service did not answer. */
export class Unavailable extends Schema.TaggedError<Unavailable>()(
  "Unavailable",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {}

/**
 * The caller's role does not allow the request (a viewer's session asking to act): 403,
 * `role` naming the caller's. Only a worker's intake answers it (its authentication,
 * `IntakeApi.IntakeAuth`); the library in this process has no roles and never fails with it.
 */
export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { message: Schema.String, role: Schema.String },
  HttpApiSchema.annotations({ status: 403, description: "The operator's role does not allow this request." })
) {}

/**
 * The merchant the request acts for started more operations than its rate limit allows
 * (`TILLFLOW_MERCHANT_RATE_LIMIT`): 429, nothing was started; `retryAfterSeconds` (also the
 * `Retry-After` header) says when one more will be taken.
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  { message: Schema.String, merchant: Schema.String, retryAfterSeconds: Schema.Int },
  HttpApiSchema.annotations({
    status: 429,
    description: "The merchant's rate limit of operations started is reached (see Retry-After)."
  })
) {}

/** Every error of the intake. */
export type IntakeError =
  InvalidRequest | NotFound | IdempotencyConflict | ActionRefused | Unavailable | Forbidden | RateLimited

// ---------------------------------------------------------------------------------------
// The port

/** The intake's operations. */
export interface Service {
  readonly devices: Effect.Effect<ReadonlyArray<DeviceView>, IntakeError>
  readonly start: (input: StartOperation) => Effect.Effect<ExecutionView, IntakeError>
  /**
   * Stops a terminal's operation in flight. With `of` (the execution stopped) and a reason,
   * recorded in that execution's history with who asked (`actor`; the library's own caller
   * when absent).
   */
  readonly stop: (input: StopOperation, actor?: Actor) => Effect.Effect<ExecutionView, IntakeError>
  /** Starts a terminal-less workflow by name (`PreAuthorization.Capture`, `Moto.Sale` …). */
  readonly lifecycle: (workflow: string, input: StartLifecycle) => Effect.Effect<ExecutionView, IntakeError>
  /** An execution; with `waitSeconds`, once it ended or when the wait is over. */
  readonly execution: (executionId: string, waitSeconds?: number) => Effect.Effect<ExecutionView, IntakeError>
  readonly history: (executionId: string) => Effect.Effect<HistoryView, IntakeError>
  readonly list: (query: ListQuery) => Effect.Effect<ReadonlyArray<ExecutionView>, IntakeError>
  /** Executions searched and filtered, newest first, one page at a time (keyset: `after`). */
  readonly search: (query: SearchQuery) => Effect.Effect<SearchView, IntakeError>
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
  /**
   * An operator resolves a request in doubt on a transaction (`InDoubtResolution`): 400
   * naming the rule when nothing is in doubt under it, 404 for an unknown transaction.
   */
  readonly resolve: (guid: string, input: ResolveInDoubt) => Effect.Effect<ResolutionView, IntakeError>
  /**
   * An operator resolves a request in doubt on a batch, MOTO sale attempt or device stream
   * (`InDoubtResolution.resolveAttempt`): 400 naming the rule when nothing is in doubt under
   * it; an applied MOTO sale needs the guid the gateway gave it and opens its history.
   */
  readonly resolveAttempt: (
    kind: AttemptKind,
    key: string,
    input: ResolveAttempt
  ) => Effect.Effect<AttemptResolutionView, IntakeError>
  /**
   * An operator's action on a transaction, through the operation any caller would start
   * (`start` or `lifecycle`) under an idempotency key derived from the action: 400 naming
   * the field for an amount or currency that does not fit, 422 with the rule a money rule
   * refuses it by, 404 for an unknown transaction.
   */
  readonly act: (
    guid: string,
    input: ActOnTransaction,
    actor: Actor
  ) => Effect.Effect<ExecutionView, IntakeError>
  /**
   * An operator tries again a terminal operation that charged nothing (unavailable, not
   * charged): the same request under `retry-<executionId>`, with a fresh reference, recorded
   * with the operator and reason; 422 naming the rule for any other execution.
   */
  readonly retry: (
    executionId: string,
    input: RetryExecution,
    actor: Actor
  ) => Effect.Effect<ExecutionView, IntakeError>
  readonly ready: Effect.Effect<ReadyView>
}

/** The intake. */
export class Intake extends Context.Tag("tillflow/intake/Intake")<Intake, Service>() {}
