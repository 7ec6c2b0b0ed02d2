/**
 * The time tillflow adds to a payment beyond the service's and the terminal's own, computed
 * from the events a sale leaves in the store (issue 20): (a) the operation started → the
 * POST sent, (b) the result received → the outcome recorded, and what lies between (the
 * service and the terminal). Shared by the `added` section (embedded defaults, one sale at a
 * time) and the e2e section (PostgreSQL), which read the events their own way and hand them
 * here as {@link StoredEvent}s.
 *
 * The instants, per execution (stream names as the payment protocol writes them):
 * - **started**: `WorkflowStarted` of `execution-<id>`, its `recordedAt`.
 * - **POST sent**: there is no event of its own (one more append before every POST would add
 *   the very time measured). The bound used is the `AttemptRegistered` of the first attempt
 *   (`attempt-<attemptId>`, whose `executionId` names the execution), its `recordedAt`: the
 *   protocol appends it immediately before the POST, and nothing but its own commit and the
 *   HTTP client's encoding lies between. So (a) is a lower bound by the registration append's
 *   own duration, which is counted in the middle part; `registeredToAccepted` (registration
 *   → the 202 read, `AttemptAccepted.at`) shows that part by itself, for comparison with a
 *   bare client's POST → 202 against the same service.
 * - **result received**: the first `ResultReceived` of the attempt that ended the operation
 *   (the last attempt that has one), its `receivedAt` (the receiver's clock when the
 *   callback's body was read, before its append).
 * - **outcome recorded**: `WorkflowCompleted` of the execution (the ending event: the
 *   execution's result is stored, and a caller waiting on it is answered).
 *
 * Times are epoch milliseconds (the store's `recordedAt` and the events' own clock fields
 * come from the same machine's clock here).
 */

/** One stored event, as the computation needs it. */
export interface StoredEvent {
  readonly streamId: string
  readonly type: string
  /** Epoch milliseconds (fractional allowed: PostgreSQL keeps microseconds). */
  readonly recordedAt: number
  readonly data: unknown
}

/** The split of one payment, in milliseconds. */
export interface Split {
  readonly executionId: string
  /** `WorkflowStarted`'s `recordedAt` (epoch ms). */
  readonly startedAt: number
  /** (a) `WorkflowStarted` → the first attempt's `AttemptRegistered`. */
  readonly startToPost: number
  /** (b) the deciding `ResultReceived.receivedAt` → `WorkflowCompleted`. */
  readonly resultToOutcome: number
  /** (a) + (b). */
  readonly added: number
  /** The rest: POST sent → result received (the service's and the terminal's own time). */
  readonly service: number
  /** Started → completed. */
  readonly total: number
  /** Intermediate instants, each relative to `WorkflowStarted`, for the profile by segment. */
  readonly marks: Readonly<Record<string, number>>
  /** Registration → the 202 read (`AttemptAccepted.at`), when accepted. */
  readonly registeredToAccepted: number | undefined
  /** How many attempts the operation took. */
  readonly attempts: number
}

/** Outcome events of a payment stream (the business fact that ends an operation). */
const outcomeTypes = new Set([
  "PaymentAuthorised",
  "PaymentPartiallyApproved",
  "PaymentDeclined",
  "PaymentCancelled",
  "PaymentFailed",
  "PaymentNotCharged",
  "OperationRejected",
  "TerminalUnavailable",
  "OutcomeUnresolved",
  "ReceiptPrinted",
  "CardTokenized",
  "DevicePinged",
  "CardPanRead"
])

const field = (data: unknown, key: string): unknown =>
  typeof data === "object" && data !== null ? (data as Record<string, unknown>)[key] : undefined

const numberField = (data: unknown, key: string): number | undefined => {
  const value = field(data, key)
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

const stringField = (data: unknown, key: string): string | undefined => {
  const value = field(data, key)
  return typeof value === "string" ? value : undefined
}

interface Attempt {
  readonly attemptId: string
  readonly attempt: number
  registeredAt: number | undefined
  resultAt: number | undefined
}

interface Execution {
  started: number | undefined
  completed: number | undefined
  readonly attempts: Map<string, Attempt>
  readonly payment: Array<StoredEvent>
  readonly engine: Array<StoredEvent>
}

/**
 * The split of every execution in `events` that ran a terminal operation to its end with a
 * result by callback; `skipped` counts the executions that lack one of the instants (still
 * running, polled, no attempt), with the first reason seen.
 */
export const compute = (
  events: Iterable<StoredEvent>
): {
  readonly splits: ReadonlyArray<Split>
  readonly skipped: number
  readonly reasons: ReadonlyArray<string>
} => {
  const executions = new Map<string, Execution>()
  const execution = (id: string): Execution => {
    let found = executions.get(id)
    if (found === undefined) {
      found = { started: undefined, completed: undefined, attempts: new Map(), payment: [], engine: [] }
      executions.set(id, found)
    }
    return found
  }
  // Attempt streams name their execution only in their first event: collect them apart.
  const attemptEvents = new Map<string, Array<StoredEvent>>()
  for (const event of events) {
    const { streamId } = event
    if (streamId.startsWith("execution-")) {
      const target = execution(streamId.slice("execution-".length))
      target.engine.push(event)
      if (event.type === "WorkflowStarted") target.started = event.recordedAt
      else if (event.type === "WorkflowCompleted") target.completed = event.recordedAt
    } else if (streamId.startsWith("payment-")) {
      execution(streamId.slice("payment-".length)).payment.push(event)
    } else if (streamId.startsWith("attempt-")) {
      const list = attemptEvents.get(streamId) ?? []
      list.push(event)
      attemptEvents.set(streamId, list)
    }
  }
  for (const list of attemptEvents.values()) {
    const registration = list.find((e) => e.type === "AttemptRegistered")
    const executionId = registration === undefined ? undefined : stringField(registration.data, "executionId")
    if (registration === undefined || executionId === undefined) continue
    const attemptId = stringField(registration.data, "attemptId") ?? ""
    const result = list.find((e) => e.type === "ResultReceived")
    execution(executionId).attempts.set(attemptId, {
      attemptId,
      attempt: numberField(registration.data, "attempt") ?? 0,
      registeredAt: registration.recordedAt,
      resultAt:
        result === undefined ? undefined : (numberField(result.data, "receivedAt") ?? result.recordedAt)
    })
  }

  const splits: Array<Split> = []
  const reasons = new Set<string>()
  let skipped = 0
  for (const [executionId, e] of executions) {
    const attempts = [...e.attempts.values()].sort((x, y) => x.attempt - y.attempt)
    const first = attempts[0]
    const deciding = [...attempts].reverse().find((a) => a.resultAt !== undefined)
    const reason =
      e.started === undefined
        ? "no WorkflowStarted"
        : e.completed === undefined
          ? "not completed"
          : first?.registeredAt === undefined
            ? "no attempt registered"
            : deciding?.resultAt === undefined
              ? "no result by callback"
              : undefined
    if (
      reason !== undefined ||
      e.started === undefined ||
      e.completed === undefined ||
      first?.registeredAt === undefined ||
      deciding?.resultAt === undefined
    ) {
      // Executions of other workflows (lifecycles) have no attempt: not a payment to split.
      if (e.payment.length > 0 || e.attempts.size > 0) {
        skipped++
        if (reason !== undefined) reasons.add(reason)
      }
      continue
    }
    const started = e.started
    const marks: Record<string, number> = {}
    const mark = (name: string, at: number | undefined) => {
      if (at !== undefined && !(name in marks)) marks[name] = at - started
    }
    for (const event of e.payment) {
      if (event.type === "OperationRequested") mark("OperationRequested", event.recordedAt)
      else if (event.type === "AttemptRecorded") mark("AttemptRecorded", event.recordedAt)
      else if (event.type === "AttemptAccepted")
        mark("AttemptAccepted (202 read)", numberField(event.data, "at"))
      else if (outcomeTypes.has(event.type)) mark("outcome event (payment stream)", event.recordedAt)
    }
    mark("AttemptRegistered (POST sent)", first.registeredAt)
    mark("ResultReceived (receivedAt)", deciding.resultAt)
    let deferred = 0
    for (const event of e.engine) {
      if (event.type === "DeferredResolved" && event.recordedAt >= deciding.resultAt) {
        deferred++
        mark(`DeferredResolved #${deferred}`, event.recordedAt)
      }
      if (event.type === "ActivityCompleted" && event.recordedAt >= deciding.resultAt) {
        mark(`ActivityCompleted ${stringField(event.data, "name") ?? "?"}`, event.recordedAt)
      }
    }
    mark("WorkflowCompleted", e.completed)
    const accepted = marks["AttemptAccepted (202 read)"]
    const startToPost = first.registeredAt - started
    const resultToOutcome = e.completed - deciding.resultAt
    splits.push({
      executionId,
      startedAt: started,
      startToPost,
      resultToOutcome,
      added: startToPost + resultToOutcome,
      service: deciding.resultAt - first.registeredAt,
      total: e.completed - started,
      marks,
      registeredToAccepted: accepted === undefined ? undefined : accepted + started - first.registeredAt,
      attempts: attempts.length
    })
  }
  return { splits, skipped, reasons: [...reasons] }
}

/** An event as the intake's `/v1/events` and history answer it (`recordedAt` as ISO text). */
export const fromView = (view: {
  readonly streamId: string
  readonly type: string
  readonly recordedAt: string
  readonly data: unknown
}): StoredEvent => ({
  streamId: view.streamId,
  type: view.type,
  recordedAt: Date.parse(view.recordedAt),
  data: view.data
})
