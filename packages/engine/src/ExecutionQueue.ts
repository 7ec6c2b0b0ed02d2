/**
 * The execution queue: the part of the workflow engine's state that an append-only log
 * cannot serve efficiently. One row per workflow execution says whether it is due to run
 * (`pending`), held by a worker under a lease (`running`), waiting for a timer or a
 * signal (`suspended`), or finished; workers claim due rows with a lease they renew by
 * heartbeat, and a row whose lease ran out is due again, so another worker takes it over.
 * A concurrency key (a device's id, say) is held by one unfinished execution
 * at a time across all workers. A row may name its tenant (`Tenant`): visibility can be
 * scoped to tenants, and a claim can hold each tenant to a fair share of the running
 * executions (`tenantLimit`). The rows also carry search attributes for visibility.
 * The event store stays the source of truth: this queue only schedules and indexes.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * Where an execution stands.
 *
 * - `pending`: due to run at `dueAt` (new, woken, or retrying after a crash of its run).
 * - `running`: claimed by `leaseOwner` until `dueAt`; past that it is due again.
 * - `suspended`: waiting for a signal, or for a durable timer due at `dueAt`.
 * - `succeeded` / `failed` / `interrupted`: finished; the result is in the event store.
 * - `stuck`: stopped by the engine (a determinism violation); `resume` makes it pending.
 */
export const ExecutionStatus = Schema.Literal(
  "pending",
  "running",
  "suspended",
  "succeeded",
  "failed",
  "interrupted",
  "stuck"
)
/** @see ExecutionStatus */
export type ExecutionStatus = typeof ExecutionStatus.Type

/** The statuses after which an execution never runs again by itself. */
export const finishedStatuses: ReadonlyArray<ExecutionStatus> = ["succeeded", "failed", "interrupted"]

/** Search attributes: flat string pairs (customer, device, reference, amount …). */
export const SearchAttributes = Schema.Record({ key: Schema.String, value: Schema.String })
/** @see SearchAttributes */
export type SearchAttributes = typeof SearchAttributes.Type

/** One execution as the queue sees it (times are epoch milliseconds). */
export class ExecutionInfo extends Schema.Class<ExecutionInfo>("tillflow/ExecutionInfo")({
  executionId: Schema.String,
  workflowName: Schema.String,
  status: ExecutionStatus,
  /** When the row is next claimable: run time, timer, or lease expiry. */
  dueAt: Schema.NullOr(Schema.Number),
  leaseOwner: Schema.NullOr(Schema.String),
  concurrencyKey: Schema.NullOr(Schema.String),
  parentId: Schema.NullOr(Schema.String),
  /** The tenant it was started for (`Tenant`); null when none was named. */
  tenant: Schema.NullOr(Schema.String),
  attributes: SearchAttributes,
  /** How many times a worker claimed it. */
  claims: Schema.Number,
  createdAt: Schema.Number,
  updatedAt: Schema.Number
}) {}

/** A claim handed to a worker: it may run the execution until its lease expires. */
export interface Claim {
  readonly executionId: string
  readonly workflowName: string
  readonly parentId: string | null
  readonly claims: number
  readonly leaseUntil: number
  /**
   * The version of the execution's event stream (see `enqueue`'s `stream`) as the claim
   * saw it, when the queue can read it consistently with the store: a SQL queue in the
   * store's own database reads it in the claiming statement, so every append committed
   * before the claim is counted. An engine whose cached history is at this version has
   * nothing to read. Absent (the memory queue, a queue told nothing of the store, an
   * execution enqueued without its stream): unknown, so the engine reads the stream.
   */
  readonly streamVersion?: number | undefined
}

/** What `claimWithNextDue` answers. */
export interface ClaimResult {
  readonly claims: ReadonlyArray<Claim>
  /** The earliest due time after the claim's `now`, if any execution has one. */
  readonly nextDueAt: Option.Option<number>
}

/** How a worker gives a claimed execution back. */
export type Release =
  /** Waiting: for a signal, and for a timer when `wakeAt` is set. */
  | { readonly _tag: "Suspended"; readonly wakeAt: number | undefined }
  /** Run again at `runAt` (the run crashed, or the worker is shutting down). */
  | { readonly _tag: "Retry"; readonly runAt: number }
  /** Finished; its concurrency key is released. */
  | { readonly _tag: "Finished"; readonly status: "succeeded" | "failed" | "interrupted" }
  /** Stopped by the engine until an operator resumes it; it keeps its concurrency key. */
  | { readonly _tag: "Stuck" }

/** How many executions of a workflow are in a status. */
export interface Tally {
  readonly workflowName: string
  readonly status: ExecutionStatus
  readonly count: number
}

/** The tenant tally of a list of executions at `now` (for a queue that cannot count them itself). */
export const tenantTallyOf = (
  executions: ReadonlyArray<ExecutionInfo>,
  now: number
): ReadonlyArray<TenantTally> => {
  const counts = new Map<string, { running: number; waiting: number }>()
  for (const e of executions) {
    if (e.tenant === null || e.dueAt === null) continue
    const running = e.status === "running" && e.dueAt > now
    const waiting = e.status === "pending" && e.dueAt <= now
    if (!running && !waiting) continue
    const counted = counts.get(e.tenant) ?? { running: 0, waiting: 0 }
    if (running) counted.running++
    else counted.waiting++
    counts.set(e.tenant, counted)
  }
  return Array.from(counts, ([tenant, counted]) => ({ tenant, ...counted }))
}

/** The tally of a list of executions (for a queue that cannot count them itself). */
export const tallyOf = (executions: ReadonlyArray<ExecutionInfo>): ReadonlyArray<Tally> => {
  const counts = new Map<string, Tally>()
  for (const e of executions) {
    const key = `${e.workflowName}\u0000${e.status}`
    const previous = counts.get(key)
    counts.set(key, { workflowName: e.workflowName, status: e.status, count: (previous?.count ?? 0) + 1 })
  }
  return Array.from(counts.values())
}

/** How many executions of a tenant run under an unexpired lease, and how many wait due. */
export interface TenantTally {
  readonly tenant: string
  readonly running: number
  /** Pending and due (at the tally's `now`). */
  readonly waiting: number
}

/** A visibility query; every given criterion must hold. */
export interface ListFilter {
  readonly workflowName?: string | undefined
  /**
   * Only executions of one of these tenants: an execution without a tenant matches no
   * list, and an empty list matches nothing (an operator scoped to no tenant sees none).
   */
  readonly tenants?: ReadonlyArray<string> | undefined
  readonly status?: ExecutionStatus | ReadonlyArray<ExecutionStatus> | undefined
  /** Every pair must be present among the execution's search attributes. */
  readonly attributes?: SearchAttributes | undefined
  /** Created at or after this time (epoch milliseconds). */
  readonly createdFrom?: number | undefined
  /** Created before this time (epoch milliseconds). */
  readonly createdBefore?: number | undefined
  /**
   * A search: at least one of these must hold — the execution id starts with `idPrefix`
   * (lower-case hexadecimal digits only; anything else matches no id), or one of
   * `attributes` is contained in the execution's search attributes.
   */
  readonly anyOf?:
    | {
        readonly idPrefix?: string | undefined
        readonly attributes?: ReadonlyArray<SearchAttributes> | undefined
      }
    | undefined
  /**
   * The order: `oldest` (the default: as enqueued) or `newest` (creation time, then
   * execution id, both descending: the order `after` pages through).
   */
  readonly order?: "oldest" | "newest" | undefined
  /**
   * Keyset paging in the `newest` order: only executions that come after this one (the
   * last of the previous page), whatever was enqueued since. Ignored in the `oldest` order.
   */
  readonly after?: ListPosition | undefined
  readonly limit?: number | undefined
}

/** Where a page of a `newest`-first list ended: the last execution's creation time and id. */
export interface ListPosition {
  readonly createdAt: number
  readonly executionId: string
}

/** Whether an id prefix can be searched: lower-case hexadecimal digits, 1 to 64 of them. */
export const isIdPrefix = (text: string): boolean => /^[0-9a-f]{1,64}$/.test(text)

/** True when `info` comes after `position` in the `newest` order. */
export const isAfter = (info: ExecutionInfo, position: ListPosition): boolean =>
  info.createdAt < position.createdAt ||
  (info.createdAt === position.createdAt && info.executionId < position.executionId)

/** The `newest` order: creation time, then execution id, both descending. */
export const newestFirst = (a: ExecutionInfo, b: ExecutionInfo): number =>
  b.createdAt - a.createdAt || (a.executionId < b.executionId ? 1 : a.executionId > b.executionId ? -1 : 0)

/** What a claim is asked (`claim`, `claimWithNextDue`). */
export interface ClaimOptions {
  readonly workerId: string
  readonly workflowNames: ReadonlyArray<string>
  readonly limit: number
  readonly leaseMs: number
  readonly now: number
  /** At most this many executions of one tenant running under an unexpired lease (see `claim`). */
  readonly tenantLimit?: number | undefined
  /**
   * With `tenantLimit`: the slots a tenant's fair part is taken of (a worker's concurrency).
   * A tenant's limit is then also at most its fair part of them (`tenantShare`).
   */
  readonly tenantSlots?: number | undefined
}

/**
 * The limit a tenant is held to: `tenantLimit`, and with `tenantSlots` at most its fair part
 * of them among `tenants` with work (a running or due execution): `ceil(slots ÷ tenants)`,
 * at least 1. Rounded up, the parts of all tenants together never leave a slot idle while
 * every tenant has more to run. A worker of 64 slots among 100 busy merchants gives each 1,
 * among 4 gives each 16 (then `tenantLimit` caps it).
 */
export const tenantShare = (
  options: { readonly tenantLimit?: number | undefined; readonly tenantSlots?: number | undefined },
  tenants: number
): number | undefined =>
  options.tenantLimit === undefined
    ? undefined
    : options.tenantSlots === undefined
      ? options.tenantLimit
      : Math.min(options.tenantLimit, Math.max(1, Math.ceil(options.tenantSlots / Math.max(1, tenants))))

/** What `enqueue` is given: a new execution. */
export interface EnqueueInput {
  readonly executionId: string
  readonly workflowName: string
  readonly concurrencyKey: string | undefined
  readonly parentId: string | undefined
  readonly attributes: SearchAttributes
  /** The execution's event stream, for `Claim.streamVersion` (queues that can read it). */
  readonly stream?: string | undefined
  /** The tenant it is started for (`Tenant`), for `tenants` filters and `tenantLimit`. */
  readonly tenant?: string | undefined
  /**
   * For an execution with a concurrency key: when it must have started by. Still
   * waiting for its key then, `expireStartDeadlines` takes it out of the key's line.
   */
  readonly startBy?: number | undefined
  readonly now: number
}

/** What `enqueueLeased` answers: whether it inserted the row, and its claim when leased. */
export interface EnqueueLeased {
  readonly inserted: boolean
  /** The claim of the row inserted leased; undefined when it waits for its key or existed. */
  readonly claim: Claim | undefined
}

/** An infrastructure failure of the queue's storage. */
export class ExecutionQueueError extends Schema.TaggedError<ExecutionQueueError>()("ExecutionQueueError", {
  operation: Schema.String,
  message: Schema.String
}) {}

/**
 * The execution queue port. Every time is epoch milliseconds taken from Effect's `Clock`
 * by the caller, so the memory queue follows `TestClock` and workers on several machines
 * only need synchronised clocks (NTP) for leases and timers.
 */
export class ExecutionQueue extends Context.Tag("tillflow/ExecutionQueue")<
  ExecutionQueue,
  {
    /** Adds an execution, due at `now`; does nothing (returns false) if it exists. */
    readonly enqueue: (input: EnqueueInput) => Effect.Effect<boolean, ExecutionQueueError>

    /**
     * `enqueue`, the new row inserted already claimed by `workerId` until `now + leaseMs`
     * (one statement): a start in a process whose worker has a free slot runs there at
     * once, no claim needed. A row with a concurrency key another unfinished execution
     * holds is inserted pending, as `enqueue` inserts it, and waits for its key; otherwise
     * the execution becomes the key's holder, as a claim makes it. Answers whether the row
     * was inserted and, when it was inserted leased, its claim (`claims` 1). Nothing is
     * done to an execution that exists. Optional: a queue without it is asked `enqueue`.
     * With `tenantLimit`, a row whose tenant already has that many executions running under
     * an unexpired lease is inserted pending too, and waits for a claim.
     */
    readonly enqueueLeased?: (
      input: EnqueueInput & {
        readonly workerId: string
        readonly leaseMs: number
        /**
         * As a claim's `tenantLimit`: a tenant at its limit gets the row pending, not leased.
         * Not its fair part of the slots (`tenantSlots`): a start leased takes a slot of this
         * worker that is free now, one no other tenant's due execution is waiting for (a
         * claim would have taken it), so holding it back would leave the slot idle.
         */
        readonly tenantLimit?: number | undefined
      }
    ) => Effect.Effect<EnqueueLeased, ExecutionQueueError>

    /**
     * Takes every execution never claimed whose `startBy` has passed while it waited for
     * its concurrency key out of that key's line: its key is dropped and it is due now, so
     * the next claim runs it at once, beside the key's holder. Such a workflow must check
     * its deadline first and touch nothing the key guards once it has passed (it ends
     * itself). Returns the ids moved. Optional: a queue without it keeps them waiting.
     */
    readonly expireStartDeadlines?: (options: {
      readonly now: number
    }) => Effect.Effect<ReadonlyArray<string>, ExecutionQueueError>

    /**
     * Claims up to `limit` due executions of the given workflows for `workerId` until
     * `now + leaseMs`: pending ones, suspended ones whose timer is due, and running ones
     * whose lease expired. An execution with a concurrency key is skipped while another
     * unfinished execution holds that key; claiming it makes it the holder.
     *
     * Executions already started (claimed before: woken, timer due, retrying, resumed,
     * lease expired) come before executions never claimed, each group oldest due first:
     * in a burst of new executions, one woken by its callback does not wait behind every
     * first run of the burst, so work in progress finishes before more is started.
     *
     * Fair shares: with `tenantLimit`, an execution whose tenant already has that many
     * executions running under an unexpired lease is skipped (it stays due), and one claim
     * takes no tenant past the limit, so a flood of one tenant's executions cannot keep
     * another tenant's waiting. Executions without a tenant are never limited. With
     * `tenantSlots` too, the limit shrinks as more tenants have work (`tenantShare`: the
     * distinct tenants of the executions running or due), so among many busy tenants a
     * flooding one runs about its fair part of the slots, not `tenantLimit`.
     */
    readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<Claim>, ExecutionQueueError>

    /**
     * `claim`, answering with the claims the earliest time AFTER `now` at which an
     * execution of these workflows falls due by the clock alone (a timer, a retry's run
     * time, a lease expiry: due after its row last changed), as the claim saw the queue.
     * Rows made due when they changed (enqueued, woken) are left out: their change is
     * announced (`changes`) and signalled by the engine that made it. A worker whose claim
     * took fewer than `limit` sleeps until that time (or a signal) without asking
     * `nextDueAt`. Optional: a queue without it is asked `claim` and `nextDueAt`.
     */
    readonly claimWithNextDue?: (options: ClaimOptions) => Effect.Effect<ClaimResult, ExecutionQueueError>

    /** Renews the leases `workerId` still holds; returns the ids it still holds. */
    readonly heartbeat: (options: {
      readonly workerId: string
      readonly executionIds: ReadonlyArray<string>
      readonly leaseMs: number
      readonly now: number
    }) => Effect.Effect<ReadonlyArray<string>, ExecutionQueueError>

    /**
     * Gives a claimed execution back. Ignored (false) when `workerId` no longer holds it.
     * A suspension requested to wake while it ran (see `wake`) becomes `pending` at once.
     */
    readonly release: (options: {
      readonly executionId: string
      readonly workerId: string
      readonly release: Release
      readonly now: number
    }) => Effect.Effect<boolean, ExecutionQueueError>

    /**
     * Makes an execution due now: a suspended one becomes pending, a running one is
     * flagged so that its next suspension does not sleep. `stuck` ones only move when
     * `resumeStuck` is set (an operator's resume after a fix).
     */
    readonly wake: (options: {
      readonly executionId: string
      readonly now: number
      readonly resumeStuck?: boolean | undefined
    }) => Effect.Effect<void, ExecutionQueueError>

    /** Merges search attributes into an execution's. */
    readonly setAttributes: (
      executionId: string,
      attributes: SearchAttributes
    ) => Effect.Effect<void, ExecutionQueueError>

    /** One execution. */
    readonly get: (executionId: string) => Effect.Effect<Option.Option<ExecutionInfo>, ExecutionQueueError>

    /** Executions matching a filter, oldest first unless it asks for the newest first. */
    readonly list: (filter: ListFilter) => Effect.Effect<ReadonlyArray<ExecutionInfo>, ExecutionQueueError>

    /**
     * How many executions match a filter (its `after`, `order` and `limit` aside).
     * Optional: a queue without it is asked `list` and the answer counted.
     */
    readonly count?: (filter: ListFilter) => Effect.Effect<number, ExecutionQueueError>

    /**
     * How many executions there are of each workflow in each status (what a metrics scrape
     * reads), counted by the storage. Optional: a queue without it is asked `list`.
     */
    readonly tally?: Effect.Effect<ReadonlyArray<Tally>, ExecutionQueueError>

    /**
     * Per tenant (executions without one left out), how many run under an unexpired lease
     * and how many wait, pending and due, at `now` (what a metrics scrape reads for fair
     * shares). Optional: a queue without it is asked `list`, counted by {@link tenantTallyOf}.
     */
    readonly tallyByTenant?: (options: {
      readonly now: number
    }) => Effect.Effect<ReadonlyArray<TenantTally>, ExecutionQueueError>

    /**
     * Ids of executions that other processes made due (pending, or suspended with a timer)
     * or finished, as the storage reports them (PostgreSQL's LISTEN/NOTIFY), so waiting
     * workers and callers wake at once. Best effort: polling stays the floor. The memory
     * queue reports nothing, as everyone using it shares the process and its signals.
     */
    readonly changes: Stream.Stream<string, ExecutionQueueError>

    /** The earliest time any execution of these workflows becomes due (to sleep until). */
    readonly nextDueAt: (
      workflowNames: ReadonlyArray<string>
    ) => Effect.Effect<Option.Option<number>, ExecutionQueueError>
  }
>() {}

const statusFilter = (status: ListFilter["status"]): ReadonlyArray<ExecutionStatus> | undefined =>
  status === undefined ? undefined : typeof status === "string" ? [status] : status

/** True when `info` satisfies `filter` (shared by implementations and tests). */
export const matches = (info: ExecutionInfo, filter: ListFilter): boolean => {
  const statuses = statusFilter(filter.status)
  if (filter.workflowName !== undefined && info.workflowName !== filter.workflowName) return false
  if (filter.tenants !== undefined && (info.tenant === null || !filter.tenants.includes(info.tenant)))
    return false
  if (statuses !== undefined && !statuses.includes(info.status)) return false
  if (filter.attributes !== undefined && !contains(info.attributes, filter.attributes)) return false
  if (filter.createdFrom !== undefined && info.createdAt < filter.createdFrom) return false
  if (filter.createdBefore !== undefined && info.createdAt >= filter.createdBefore) return false
  if (filter.anyOf !== undefined) {
    const prefix = filter.anyOf.idPrefix
    const byId = prefix !== undefined && isIdPrefix(prefix) && info.executionId.startsWith(prefix)
    const byAttributes = (filter.anyOf.attributes ?? []).some((wanted) => contains(info.attributes, wanted))
    if (!byId && !byAttributes) return false
  }
  if (filter.order === "newest" && filter.after !== undefined && !isAfter(info, filter.after)) return false
  return true
}

const contains = (attributes: SearchAttributes, wanted: SearchAttributes): boolean =>
  Object.entries(wanted).every(([key, value]) => attributes[key] === value)

interface Row {
  executionId: string
  workflowName: string
  status: ExecutionStatus
  dueAt: number | null
  leaseOwner: string | null
  wakeRequested: boolean
  concurrencyKey: string | null
  startBy: number | null
  parentId: string | null
  tenant: string | null
  attributes: Record<string, string>
  claims: number
  createdAt: number
  updatedAt: number
  seq: number
}

// The rows hold checked values: the class is built without validating them again.
const toInfo = (row: Row): ExecutionInfo =>
  new ExecutionInfo(
    {
      executionId: row.executionId,
      workflowName: row.workflowName,
      status: row.status,
      dueAt: row.dueAt,
      leaseOwner: row.leaseOwner,
      concurrencyKey: row.concurrencyKey,
      parentId: row.parentId,
      tenant: row.tenant,
      attributes: { ...row.attributes },
      claims: row.claims,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt
    },
    true
  )

const isFinished = (status: ExecutionStatus) => finishedStatuses.includes(status)

/** The claim order's first key: executions claimed before (in progress) sort first. */
const startedFirst = (row: Row): number => (row.claims > 0 ? 0 : 1)

/**
 * An in-memory queue for unit tests and single-process use: the same rules as the SQL
 * queue, with every operation atomic because it runs synchronously.
 */
export const makeMemory: Effect.Effect<ExecutionQueue["Type"]> = Effect.sync(() => {
  const rows = new Map<string, Row>()
  // concurrency key -> the unfinished execution holding it
  const holders = new Map<string, string>()
  let seq = 0

  const isClaimable = (row: Row, names: ReadonlyArray<string>, now: number) =>
    names.includes(row.workflowName) &&
    (row.status === "pending" || row.status === "suspended" || row.status === "running") &&
    row.dueAt !== null &&
    row.dueAt <= now

  /** How many executions of each tenant run under a lease unexpired at `now`. */
  const runningByTenant = (now: number): Map<string, number> => {
    const counts = new Map<string, number>()
    for (const row of rows.values()) {
      if (row.tenant === null || row.status !== "running" || row.dueAt === null || row.dueAt <= now) continue
      counts.set(row.tenant, (counts.get(row.tenant) ?? 0) + 1)
    }
    return counts
  }

  /** The distinct tenants of the executions running and of those due (`tenantShare`). */
  const tenantsWithWork = (running: ReadonlyMap<string, number>, due: ReadonlyArray<Row>): number => {
    const tenants = new Set(running.keys())
    for (const row of due) if (row.tenant !== null) tenants.add(row.tenant)
    return tenants.size
  }

  const claimNow = (options: ClaimOptions): Array<Claim> => {
    const due = Array.from(rows.values())
      .filter((row) => isClaimable(row, options.workflowNames, options.now))
      .sort((a, b) => startedFirst(a) - startedFirst(b) || (a.dueAt ?? 0) - (b.dueAt ?? 0) || a.seq - b.seq)
    const running = options.tenantLimit === undefined ? undefined : runningByTenant(options.now)
    const tenantLimit =
      running === undefined ? undefined : tenantShare(options, tenantsWithWork(running, due))
    const claimed: Array<Claim> = []
    for (const row of due) {
      if (claimed.length >= options.limit) break
      if (row.concurrencyKey !== null) {
        const holder = holders.get(row.concurrencyKey)
        if (holder !== undefined && holder !== row.executionId) continue
      }
      if (running !== undefined && tenantLimit !== undefined && row.tenant !== null) {
        const share = running.get(row.tenant) ?? 0
        if (share >= tenantLimit) continue
        running.set(row.tenant, share + 1)
      }
      if (row.concurrencyKey !== null) holders.set(row.concurrencyKey, row.executionId)
      const leaseUntil = options.now + options.leaseMs
      row.status = "running"
      row.leaseOwner = options.workerId
      row.dueAt = leaseUntil
      row.wakeRequested = false
      row.claims += 1
      row.updatedAt = options.now
      claimed.push({
        executionId: row.executionId,
        workflowName: row.workflowName,
        parentId: row.parentId,
        claims: row.claims,
        leaseUntil
      })
    }
    return claimed
  }

  const insert = (input: EnqueueInput): Row => {
    const row: Row = {
      executionId: input.executionId,
      workflowName: input.workflowName,
      status: "pending",
      dueAt: input.now,
      leaseOwner: null,
      wakeRequested: false,
      concurrencyKey: input.concurrencyKey ?? null,
      startBy: input.concurrencyKey === undefined ? null : (input.startBy ?? null),
      parentId: input.parentId ?? null,
      tenant: input.tenant ?? null,
      attributes: { ...input.attributes },
      claims: 0,
      createdAt: input.now,
      updatedAt: input.now,
      seq: seq++
    }
    rows.set(input.executionId, row)
    return row
  }

  return ExecutionQueue.of({
    enqueue: (input) =>
      Effect.sync(() => {
        if (rows.has(input.executionId)) return false
        insert(input)
        return true
      }),

    enqueueLeased: (input) =>
      Effect.sync((): EnqueueLeased => {
        if (rows.has(input.executionId)) return { inserted: false, claim: undefined }
        const { tenantLimit } = input
        const atLimit =
          tenantLimit !== undefined &&
          input.tenant !== undefined &&
          (runningByTenant(input.now).get(input.tenant) ?? 0) >= tenantLimit
        const row = insert(input)
        if (atLimit) return { inserted: true, claim: undefined }
        if (row.concurrencyKey !== null) {
          const holder = holders.get(row.concurrencyKey)
          if (holder !== undefined && holder !== row.executionId) return { inserted: true, claim: undefined }
          holders.set(row.concurrencyKey, row.executionId)
        }
        const leaseUntil = input.now + input.leaseMs
        row.status = "running"
        row.leaseOwner = input.workerId
        row.dueAt = leaseUntil
        row.claims = 1
        return {
          inserted: true,
          claim: {
            executionId: row.executionId,
            workflowName: row.workflowName,
            parentId: row.parentId,
            claims: 1,
            leaseUntil
          }
        }
      }),

    claim: (options) => Effect.sync(() => claimNow(options)),

    expireStartDeadlines: ({ now }) =>
      Effect.sync(() => {
        const moved: Array<string> = []
        for (const row of rows.values()) {
          if (row.status !== "pending" || row.claims > 0 || row.concurrencyKey === null) continue
          if (row.startBy === null || row.startBy > now) continue
          row.concurrencyKey = null
          row.dueAt = Math.min(row.dueAt ?? now, now)
          row.updatedAt = now
          moved.push(row.executionId)
        }
        return moved
      }),

    claimWithNextDue: (options) =>
      Effect.sync(() => {
        const claims = claimNow(options)
        const claimed = new Set(claims.map((claim) => claim.executionId))
        let next: number | undefined
        for (const row of rows.values()) {
          if (!options.workflowNames.includes(row.workflowName) || row.dueAt === null) continue
          if (row.status !== "pending" && row.status !== "suspended" && row.status !== "running") continue
          // Not the leases just granted: the claim's own view is of the queue before it.
          if (claimed.has(row.executionId)) continue
          // Only what falls due by the clock (timers, retries, leases): a row made due when it
          // changed is announced by its change.
          if (row.dueAt <= row.updatedAt) continue
          if (row.dueAt > options.now && (next === undefined || row.dueAt < next)) next = row.dueAt
        }
        return { claims, nextDueAt: Option.fromNullable(next) }
      }),

    heartbeat: (options) =>
      Effect.sync(() => {
        const held: Array<string> = []
        for (const id of options.executionIds) {
          const row = rows.get(id)
          if (row === undefined || row.status !== "running" || row.leaseOwner !== options.workerId) continue
          row.dueAt = options.now + options.leaseMs
          row.updatedAt = options.now
          held.push(id)
        }
        return held
      }),

    release: (options) =>
      Effect.sync(() => {
        const row = rows.get(options.executionId)
        if (row === undefined || row.status !== "running" || row.leaseOwner !== options.workerId) return false
        const release = options.release
        row.leaseOwner = null
        row.updatedAt = options.now
        switch (release._tag) {
          case "Suspended": {
            if (row.wakeRequested) {
              row.status = "pending"
              row.dueAt = options.now
            } else {
              row.status = "suspended"
              row.dueAt = release.wakeAt ?? null
            }
            break
          }
          case "Retry": {
            row.status = "pending"
            row.dueAt = row.wakeRequested ? Math.min(options.now, release.runAt) : release.runAt
            break
          }
          case "Finished": {
            row.status = release.status
            row.dueAt = null
            if (row.concurrencyKey !== null && holders.get(row.concurrencyKey) === row.executionId) {
              holders.delete(row.concurrencyKey)
            }
            break
          }
          case "Stuck": {
            row.status = "stuck"
            row.dueAt = null
            break
          }
        }
        row.wakeRequested = false
        return true
      }),

    wake: (options) =>
      Effect.sync(() => {
        const row = rows.get(options.executionId)
        if (row === undefined || isFinished(row.status)) return
        if (row.status === "running") {
          row.wakeRequested = true
        } else if (row.status === "suspended" || (row.status === "stuck" && options.resumeStuck === true)) {
          row.status = "pending"
          row.dueAt = options.now
        } else if (row.status === "pending") {
          row.dueAt = Math.min(row.dueAt ?? options.now, options.now)
        }
        row.updatedAt = options.now
      }),

    setAttributes: (executionId, attributes) =>
      Effect.sync(() => {
        const row = rows.get(executionId)
        if (row !== undefined) row.attributes = { ...row.attributes, ...attributes }
      }),

    get: (executionId) => Effect.sync(() => Option.map(Option.fromNullable(rows.get(executionId)), toInfo)),

    list: (filter) =>
      Effect.sync(() => {
        const inOrder = Array.from(rows.values())
          .sort((a, b) => a.seq - b.seq)
          .map(toInfo)
          .filter((info) => matches(info, filter))
        const found = filter.order === "newest" ? inOrder.sort(newestFirst) : inOrder
        return filter.limit === undefined ? found : found.slice(0, filter.limit)
      }),

    count: (filter) =>
      Effect.sync(() => {
        let n = 0
        for (const row of rows.values()) if (matches(toInfo(row), { ...filter, after: undefined })) n++
        return n
      }),

    tally: Effect.sync(() => tallyOf(Array.from(rows.values()).map(toInfo))),

    tallyByTenant: ({ now }) => Effect.sync(() => tenantTallyOf(Array.from(rows.values()).map(toInfo), now)),

    changes: Stream.never,

    nextDueAt: (workflowNames) =>
      Effect.sync(() => {
        let next: number | undefined
        for (const row of rows.values()) {
          if (!workflowNames.includes(row.workflowName) || row.dueAt === null) continue
          if (row.status !== "pending" && row.status !== "suspended" && row.status !== "running") continue
          if (next === undefined || row.dueAt < next) next = row.dueAt
        }
        return Option.fromNullable(next)
      })
  })
})

/** The in-memory queue as a layer (one queue per layer build). */
export const layerMemory: Layer.Layer<ExecutionQueue> = Layer.effect(ExecutionQueue, makeMemory)
