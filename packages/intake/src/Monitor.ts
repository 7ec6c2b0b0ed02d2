/**
 * What an operator watches, beyond the intake's executions and audit: the terminals with
 * the operation each is running, executions searched a page at a time (the intake's
 * `search`: outcome, status, terminal, operation, workflow, date; an id prefix, idempotency
 * key, reference, guid, customer reference or card's last four digits), the alerts (result
 * mismatches, late results, unresolved outcomes, stuck executions and executions waiting
 * past a deadline), and the log's events as they are stored (a live feed for server-sent
 * events). One follower of the event log per process keeps the alerts and feeds the live
 * subscribers, so no request re-reads the log. The web console reads all of it through the intake API (`MonitorApi`).
 *
 * A request acting for a merchant (`Tillflow-Merchant`, or a credential limited to
 * merchants: `internal/Scope.ts`) watches that merchant's own: the terminals of its device
 * list with its operations running on them, and the alerts of its executions (an
 * execution's tenant is its merchant; an alert whose merchant cannot be told is not its),
 * which it alone of the merchants may acknowledge and resolve.
 */
import { Ledger, MerchantKeys, PaymentEvents, PaymentProtocol } from "@tillflow/core"
import { DurableEngine, EventStore, ExecutionQueue } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Clock from "effect/Clock"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Intake from "./Intake.js"
import * as Stack from "./Stack.js"
import { unavailable } from "./internal/Failures.js"
import { executionTenant } from "./internal/MerchantGate.js"
import * as Queries from "./internal/Queries.js"

// ---------------------------------------------------------------------------------------
// Views

/** The remote service this worker talks to, so a console can mark the simulator. */
export const ServiceView = Schema.Struct({
  kind: Schema.Literal("simulator", "remote"),
  terminals: Schema.Array(Schema.Struct({ serialNumber: Schema.String, terminalType: Schema.String }))
}).annotations({ identifier: "ServiceView" })
/** @see ServiceView */
export type ServiceView = typeof ServiceView.Type

/** A terminal, idle or running an operation (its newest unfinished one). */
export const TerminalView = Schema.Struct({
  serialNumber: Schema.String,
  terminalType: Schema.String,
  merchant: Schema.String,
  state: Schema.Literal("idle", "busy"),
  running: Schema.optional(Intake.ExecutionView),
  /** Unfinished operations queued for it beyond the running one. */
  queued: Schema.Int
}).annotations({ identifier: "TerminalView" })
/** @see TerminalView */
export type TerminalView = typeof TerminalView.Type

/** A search of executions (the intake's): filters, a search and a page cursor, all optional. */
export const SearchQuery = Intake.SearchQuery
/** @see SearchQuery */
export type SearchQuery = Intake.SearchQuery

/** A page of executions found, newest first, how many matched in all, the next page's cursor. */
export const SearchView = Intake.SearchView
/** @see SearchView */
export type SearchView = Intake.SearchView

/** What an alert is about. */
export const AlertKind = Schema.Literal(
  "mismatch",
  "late-result",
  "unresolved",
  "stuck",
  "overdue",
  "key-refused"
)
/** @see AlertKind */
export type AlertKind = typeof AlertKind.Type

/** Where an alert is in its lifecycle: open, then acknowledged (someone is on it), then resolved. */
export const AlertState = Schema.Literal("open", "acknowledged", "resolved")
/** @see AlertState */
export type AlertState = typeof AlertState.Type

/** Who moved an alert on, why, and when (epoch milliseconds). */
export const AlertStep = Schema.Struct({
  operator: Schema.String,
  reason: Schema.String,
  at: Schema.Number
}).annotations({ identifier: "AlertStep" })
/** @see AlertStep */
export type AlertStep = typeof AlertStep.Type

/**
 * One alert, most severe kinds first in a list. Its `id` is derived from what raised it
 * ({@link alertIdOf}), so every worker and every restart names it alike.
 */
export const AlertView = Schema.Struct({
  id: Schema.String,
  kind: AlertKind,
  executionId: Schema.String,
  at: Schema.Number,
  message: Schema.String,
  state: AlertState,
  acknowledged: Schema.optional(AlertStep),
  resolved: Schema.optional(AlertStep)
}).annotations({ identifier: "AlertView" })
/** @see AlertView */
export type AlertView = typeof AlertView.Type

/** The alerts, and whether the follower has read the whole log yet. */
export const AlertsView = Schema.Struct({
  alerts: Schema.Array(AlertView),
  caughtUp: Schema.Boolean
}).annotations({ identifier: "AlertsView" })
/** @see AlertsView */
export type AlertsView = typeof AlertsView.Type

/** An event as the live feed tells it: where it is and what it is, not its data. */
export interface LiveEvent {
  readonly position: string
  readonly streamId: string
  readonly type: string
  readonly recordedAt: string
  /**
   * Whose execution wrote it (the engine's `Tenant` in its metadata), if any: a credential
   * limited to merchants is sent only its own merchant's events (not written to the wire).
   */
  readonly tenant?: string | undefined
}

// ---------------------------------------------------------------------------------------
// The service

/** An unfinished execution untouched this long is reported as waiting past its deadline. */
export const overdueAfterMillis = 10 * 60 * 1000

/** The monitor's operations. */
export interface Service {
  readonly service: Effect.Effect<ServiceView>
  /**
   * The service as a credential limited to merchants sees it (`Scope`): the kind, and for
   * the simulator the terminals of the device list of the merchant the request acts for
   * (its own key's list), never another merchant's.
   */
  readonly ownService: Effect.Effect<ServiceView>
  /**
   * The terminals of the device list of the merchant the request acts for, each with its
   * oldest unfinished operation; for a request acting for a merchant, that merchant's
   * operations only (another's on a terminal both lists name is not counted).
   */
  readonly terminals: Effect.Effect<ReadonlyArray<TerminalView>, Intake.IntakeError>
  readonly search: (query: SearchQuery) => Effect.Effect<SearchView, Intake.IntakeError>
  /**
   * The alerts the query asks for (the unresolved ones by default), most severe first; for
   * a request acting for a merchant, those of its merchant's executions only.
   */
  readonly alerts: (query?: AlertsQuery) => Effect.Effect<AlertsView, Intake.IntakeError>
  /**
   * Acknowledges an open alert for `operator` (again: the same answer, nothing stored). A
   * request acting for a merchant may step only its merchant's alerts: another's is not
   * found, and nothing is stored.
   */
  readonly acknowledge: (
    alertId: string,
    operator: string,
    request: AlertStepRequest
  ) => Effect.Effect<AlertView, Intake.IntakeError | AlertStateConflict>
  /**
   * Resolves an open or acknowledged alert for `operator` (again: the same answer, nothing
   * stored); for a request acting for a merchant, its merchant's only, as {@link acknowledge}.
   */
  readonly resolve: (
    alertId: string,
    operator: string,
    request: AlertStepRequest
  ) => Effect.Effect<AlertView, Intake.IntakeError | AlertStateConflict>
  /** The events stored from now on, for as long as the stream is read. */
  readonly live: Stream.Stream<LiveEvent>
}

/** The monitor. */
export class Monitor extends Context.Tag("tillflow/intake/Monitor")<Monitor, Service>() {}

const executionOfStream = (streamId: string): string | undefined =>
  streamId.startsWith("payment-") ? streamId.slice("payment-".length) : undefined

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** An alert as raised, before its lifecycle is applied. */
export type RaisedAlert = Omit<AlertView, "state" | "acknowledged" | "resolved">

/**
 * An alert's id, from what raised it: the kind, the execution and, for an alert an event
 * of the payment's history raised, that event's version in the payment's stream (a second
 * mismatch on one payment is a second alert); for a stuck or overdue execution, the minute of
 * its last progress (one alert however often it is listed, a new one if it stalls again).
 */
export const alertIdOf = (kind: AlertKind, executionId: string, version?: number): string =>
  version === undefined ? `${kind}.${executionId}` : `${kind}.${executionId}.${version}`

/**
 * The alert an unfinished execution raises now, if any: stuck (it waits for an operator), or
 * overdue (no progress for `overdueAfterMillis`). Its id carries the minute of the
 * execution's last progress, so an execution that moves on and stalls again raises a NEW
 * alert, open, rather than coming back under one an operator already resolved.
 */
export const executionAlertOf = (
  e: {
    readonly executionId: string
    readonly workflowName: string
    readonly status: string
    readonly updatedAt: number
  },
  now: number
): RaisedAlert | undefined => {
  const episode = Math.floor(e.updatedAt / 60_000)
  if (e.status === "stuck")
    return {
      id: alertIdOf("stuck", e.executionId, episode),
      kind: "stuck",
      executionId: e.executionId,
      at: e.updatedAt,
      message: `${e.workflowName} is stuck: it waits for an operator (see its history)`
    }
  if (now - e.updatedAt > overdueAfterMillis)
    return {
      id: alertIdOf("overdue", e.executionId, episode),
      kind: "overdue",
      executionId: e.executionId,
      at: e.updatedAt,
      message: `${e.workflowName} has been ${e.status} without progress for ${Math.round((now - e.updatedAt) / 60_000)} minutes`
    }
  return undefined
}

/** An alert id as a route takes it: a kind, an execution id and perhaps a version, dot-separated. */
export const AlertId = Schema.String.pipe(
  Schema.pattern(
    /^(mismatch|late-result|unresolved|stuck|overdue|key-refused)\.[A-Za-z0-9_-]{1,64}(\.[0-9]{1,9})?$/,
    {
      message: () =>
        "an alert id is <kind>.<executionId or keyId>[.<version>] as GET /v1/monitor/alerts lists it, kind one of mismatch, late-result, unresolved, stuck, overdue, key-refused"
    }
  )
)

/**
 * The alert a merchant's key refused by the service raises (`MerchantKeys.MerchantKeyRefused`,
 * in the merchant's stream): one per refusal, named by the key and the event's version; its
 * execution is the one whose call was refused (`-` for a call of no execution).
 */
const keyRefusedAlertOf = (event: EventStore.RecordedEvent): RaisedAlert | undefined => {
  const data = event.data
  if (!isObject(data)) return undefined
  const text = (key: string) => (typeof data[key] === "string" ? data[key] : "?")
  const keyId = text("keyId")
  const merchant = text("merchant")
  return {
    id: alertIdOf("key-refused", keyId, event.version),
    kind: "key-refused",
    executionId: typeof data["executionId"] === "string" ? data["executionId"] : "-",
    at: typeof data["at"] === "number" ? data["at"] : event.recordedAt.epochMillis,
    message: `the service refused key ${keyId} of merchant ${merchant} (${text("endpoint")}): the merchant's next key was used; revoked? retire it (tillflow merchants retire-key ${merchant} ${keyId})`
  }
}

/** The alert an event raises, if any. */
export const alertOf = (event: EventStore.RecordedEvent): RaisedAlert | undefined => {
  if (event.type === MerchantKeys.MerchantKeyRefused.type) return keyRefusedAlertOf(event)
  const executionId = executionOfStream(event.streamId)
  const data = event.data
  if (executionId === undefined || !isObject(data)) return undefined
  const at = typeof data["at"] === "number" ? data["at"] : event.recordedAt.epochMillis
  const text = (key: string) => (typeof data[key] === "string" ? data[key] : "?")
  const raised = (kind: AlertKind, message: string): RaisedAlert => ({
    id: alertIdOf(kind, executionId, event.version),
    kind,
    executionId,
    at,
    message
  })
  switch (event.type) {
    case PaymentEvents.ResultMismatch.type:
      return raised(
        "mismatch",
        `a result says ${text("received")} but ${text("recorded")} was recorded (${text("source")}, attempt ${text("attemptId")})`
      )
    case PaymentEvents.LateResultRecorded.type:
      return raised(
        "late-result",
        `a result (${typeof data["finStatus"] === "string" ? data["finStatus"] : "no finStatus"}) arrived after the outcome was recorded`
      )
    case PaymentEvents.OutcomeUnresolved.type:
      return raised("unresolved", `the outcome is unresolved: ${text("message")}`)
    default:
      return undefined
  }
}

// ---------------------------------------------------------------------------------------
// The alerts' lifecycle

/**
 * An alert's lifecycle is kept in a stream of its own, `alert-<id>`: one event per step,
 * appended at the stream's version read just before (so two workers racing on one alert
 * cannot both move it), and read back by every worker's log follower.
 */
export const alertStreamOf = (alertId: string): string => `alert-${alertId}`

/** What a stored step holds: the alert, and who moved it on, why and when. */
const stepFields = { alertId: Schema.String, ...AlertStep.fields }
/** An operator acknowledged an alert: someone is on it. */
export const AlertAcknowledged = Schema.TaggedStruct("AlertAcknowledged", stepFields)
/** An operator resolved an alert: nothing is left to do about it. */
export const AlertResolved = Schema.TaggedStruct("AlertResolved", stepFields)
/** A step of an alert's lifecycle, as stored (`_tag` is the event's type). */
export const AlertEvent = Schema.Union(AlertAcknowledged, AlertResolved)
/** @see AlertEvent */
export type AlertEvent = typeof AlertEvent.Type

/** Where an alert's steps leave it. */
export interface Lifecycle {
  readonly state: AlertState
  readonly acknowledged?: AlertStep
  readonly resolved?: AlertStep
}

const fresh: Lifecycle = { state: "open" }

/** One step applied: an acknowledgement of an open alert, a resolution of an unresolved one; anything else changes nothing. */
export const evolve = (lifecycle: Lifecycle, event: AlertEvent): Lifecycle => {
  const step = { operator: event.operator, reason: event.reason, at: event.at }
  switch (event._tag) {
    case "AlertAcknowledged":
      return lifecycle.state === "open" ? { state: "acknowledged", acknowledged: step } : lifecycle
    case "AlertResolved":
      return lifecycle.state === "resolved" ? lifecycle : { ...lifecycle, state: "resolved", resolved: step }
  }
}

const decodeAlertEvent = Schema.decodeUnknownOption(AlertEvent)

/**
 * A step as it is stored: the tag is the event's type, the other fields its data (schema
 * version 1). The stored form is pinned by the golden files under
 * `packages/intake/test/goldens/alert`: a change to it fails their test.
 */
export const storedAlertEvent = (event: AlertEvent): EventStore.NewEvent => {
  const { _tag, ...data } = event
  return { type: _tag, data }
}

/** A stored step read back, if the type and data are one (the inverse of {@link storedAlertEvent}). */
export const readAlertEvent = (type: string, data: unknown): AlertEvent | undefined =>
  isObject(data) ? Option.getOrUndefined(decodeAlertEvent({ ...data, _tag: type })) : undefined

/** The lifecycle step a stored event is, if it is one. */
export const alertEventOf = (event: EventStore.RecordedEvent): AlertEvent | undefined =>
  event.streamId.startsWith("alert-") ? readAlertEvent(event.type, event.data) : undefined

/** A step the alert's state does not allow (acknowledging a resolved alert): 409 with its state. */
export class AlertStateConflict extends Schema.TaggedError<AlertStateConflict>()(
  "AlertStateConflict",
  { alertId: Schema.String, state: AlertState, message: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {}

/** A step of an alert: why (what the operator did or found), said in words. */
export const AlertStepRequest = Schema.Struct({
  reason: Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "reason: say why (what was done or found), 1 to 500 characters" }),
    Schema.maxLength(500, { message: () => "reason: at most 500 characters" })
  )
}).annotations({ identifier: "AlertStepRequest" })
/** @see AlertStepRequest */
export type AlertStepRequest = typeof AlertStepRequest.Type

/** Which alerts a list shows: the unresolved ones unless it says (one state, or all). */
export const AlertsQuery = Schema.Struct({
  state: Schema.optional(Schema.Literal("open", "acknowledged", "resolved", "all"))
  // No identifier: URL parameters are written inline in the API's document, and a named
  // component nothing refers to would be a dangling entry.
})
/** @see AlertsQuery */
export type AlertsQuery = typeof AlertsQuery.Type

const severity: Record<AlertKind, number> = {
  mismatch: 0,
  unresolved: 1,
  stuck: 2,
  overdue: 3,
  "late-result": 4,
  "key-refused": 1
}

/** Parses a date or date-time of a query (UTC unless it says); a bare date as `to` means the end of that day. */
export const instantOf = Queries.instantOf

/**
 * Follows the log: every event stored, then every new one as it commits, each handed to
 * `handle` once and in order (`live` false for what was stored when it started, true
 * after; `caughtUp` runs once, between the two). When the store fails it logs, waits
 * (`retry`, 2 s by default) and goes on from the last event handled — never from the
 * start, which would raise every alert of the log again and replay the whole log to the
 * live feed's subscribers.
 */
export const followLog = (
  store: EventStore.Service,
  options: {
    readonly handle: (event: EventStore.RecordedEvent, live: boolean) => Effect.Effect<void>
    readonly caughtUp?: Effect.Effect<void> | undefined
    readonly retry?: Schedule.Schedule<unknown, EventStore.EventStoreError> | undefined
  }
): Effect.Effect<void> =>
  Effect.suspend(() => {
    let checkpoint = EventStore.Checkpoint.start
    let live = false
    const handled = (event: EventStore.RecordedEvent) =>
      Effect.zipRight(
        options.handle(event, live),
        Effect.sync(() => {
          checkpoint = event.checkpoint
        })
      )
    return Effect.gen(function* () {
      while (!live) {
        const page = yield* store.readAll(checkpoint, { maxCount: 2000 })
        for (const event of page.events) yield* handled(event)
        checkpoint = page.next
        if (page.caughtUp) {
          live = true
          if (options.caughtUp !== undefined) yield* options.caughtUp
        }
      }
      yield* store.subscribe(checkpoint).pipe(Stream.runForEach(handled))
    }).pipe(
      Effect.tapError((error) =>
        Effect.logWarning(`monitor: the log follower stopped (${error.message}); going on from where it was`)
      ),
      Effect.retry(options.retry ?? Schedule.spaced("2 seconds")),
      Effect.catchAllCause((cause) => Effect.logError("monitor: the log follower ended", cause))
    )
  })

/** The monitor over the intake, the engine, the store and the service in context. */
export const make: Effect.Effect<
  Service,
  never,
  Intake.Intake | DurableEngine.DurableEngine | EventStore.EventStore | Stack.Cloud | Scope.Scope
> = Effect.gen(function* () {
  const intake = yield* Intake.Intake
  const engine = yield* DurableEngine.DurableEngine
  const store = yield* EventStore.EventStore
  const cloud = yield* Stack.Cloud

  const logAlerts = yield* Ref.make<ReadonlyArray<RaisedAlert>>([])
  // Each alert's lifecycle as the log tells it (and as this worker last stored it).
  const lifecycles = new Map<string, Lifecycle>()
  const apply = (event: AlertEvent) =>
    lifecycles.set(event.alertId, evolve(lifecycles.get(event.alertId) ?? fresh, event))
  // Guids named by the log before their execution ended (an ended one is found by its `guid`
  // attribute): a search for one of them looks for its execution.
  const guids = new Map<string, string>()
  const caughtUp = yield* Ref.make(false)
  const feed = yield* PubSub.sliding<LiveEvent>(4096)

  const note = (event: EventStore.RecordedEvent) =>
    Effect.gen(function* () {
      const alert = alertOf(event)
      if (alert !== undefined) yield* Ref.update(logAlerts, (all) => [...all, alert])
      const step = alertEventOf(event)
      if (step !== undefined) apply(step)
      // An operator resolved a terminal operation left unresolved (`TerminalResolution`): its
      // unresolved alert is resolved by the same person, for the same reason.
      if (event.type === "TerminalOutcomeResolved" && isObject(event.data)) {
        const resolution = event.data
        const of = resolution["executionId"]
        const unresolved = (yield* Ref.get(logAlerts)).filter(
          (a) => a.kind === "unresolved" && a.executionId === of
        )
        for (const alert of unresolved)
          apply(
            AlertResolved.make({
              alertId: alert.id,
              operator: typeof resolution["operator"] === "string" ? resolution["operator"] : "?",
              reason: `the outcome was resolved as ${resolution["resolution"] === "applied" ? "applied" : "not applied"}: ${typeof resolution["reason"] === "string" ? resolution["reason"] : ""}`,
              at: event.recordedAt.epochMillis
            })
          )
      }
      const executionId = executionOfStream(event.streamId)
      const data = event.data
      if (executionId !== undefined && isObject(data) && isObject(data["facts"])) {
        const guid = data["facts"]["efttransactionID"]
        if (typeof guid === "string" && guid !== "") guids.set(guid, executionId)
      }
    })

  // The follower: the stored log first (no live feed for it), then every new event.
  const follow = followLog(store, {
    handle: (event, live) =>
      live
        ? Effect.zipRight(
            note(event),
            PubSub.publish(feed, {
              position: Ledger.positionOf(event.checkpoint),
              streamId: event.streamId,
              type: event.type,
              recordedAt: new Date(event.recordedAt.epochMillis).toISOString(),
              ...(typeof event.metadata["tenant"] === "string" ? { tenant: event.metadata["tenant"] } : {})
            })
          )
        : note(event),
    caughtUp: Ref.set(caughtUp, true)
  })
  yield* Effect.forkScoped(follow)

  const service: Effect.Effect<ServiceView> = Effect.succeed({
    kind: cloud.kind,
    terminals: cloud.kind === "simulator" ? cloud.terminals : []
  })

  // A device list that cannot be read (the merchant's key refused, say) lists no terminal:
  // the merchant's console still opens, and its executions stay readable.
  const ownService: Effect.Effect<ServiceView> =
    cloud.kind === "simulator"
      ? Effect.map(
          Effect.orElseSucceed(intake.devices, (): ReadonlyArray<Intake.DeviceView> => []),
          (devices) => ({
            kind: cloud.kind,
            terminals: devices.map((d) => ({ serialNumber: d.serialNumber, terminalType: d.terminalType }))
          })
        )
      : Effect.succeed({ kind: cloud.kind, terminals: [] })

  const unfinished: ReadonlyArray<ExecutionQueue.ExecutionStatus> = ["pending", "running", "suspended"]

  const terminals = Effect.gen(function* () {
    // The device list is the merchant's the request acts for (`intake.devices`), and so are
    // the operations counted on it: a terminal two merchants' lists name shows each its own.
    const merchant = yield* MerchantKeys.currentMerchant
    const devices = yield* intake.devices
    const open = yield* engine
      .list({
        workflowName: PaymentProtocol.TerminalOperation.name,
        status: unfinished,
        ...(merchant === undefined ? {} : { tenants: [merchant] })
      })
      .pipe(Effect.mapError(unavailable("execution queue")))
    return yield* Effect.forEach(devices, (device) =>
      Effect.gen(function* () {
        const mine = open.filter((e) => e.attributes["serialNumber"] === device.serialNumber)
        // The one that holds the terminal was claimed first: the oldest.
        const first = [...mine].sort((a, b) => a.createdAt - b.createdAt)[0]
        const running = first === undefined ? undefined : yield* intake.execution(first.executionId)
        return {
          ...device,
          state: running === undefined ? ("idle" as const) : ("busy" as const),
          ...(running === undefined ? {} : { running }),
          queued: Math.max(0, mine.length - 1)
        }
      })
    )
  })

  const search = (query: SearchQuery) => {
    const owner = query.q === undefined ? undefined : guids.get(query.q.trim())
    return intake.search(owner === undefined ? query : { ...query, q: owner })
  }

  // The tenant of each execution an alert was asked about (null: none), read once: an
  // execution's tenant never changes. As many entries as executions with alerts.
  const tenants = new Map<string, string | null>()

  // Every alert raised now, before its lifecycle: the log's, and the stuck and overdue executions.
  const raised = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const open = yield* engine
      .list({ status: [...unfinished, "stuck"] })
      .pipe(Effect.mapError(unavailable("execution queue")))
    const fromExecutions: Array<RaisedAlert> = []
    for (const e of open) {
      const alert = executionAlertOf(e, now)
      if (alert === undefined) continue
      fromExecutions.push(alert)
      tenants.set(e.executionId, e.tenant)
    }
    return [...(yield* Ref.get(logAlerts)), ...fromExecutions]
  })

  /**
   * Whose an alert is: the merchant its execution was started for (`Tenant`, in its
   * `WorkflowStarted` metadata and queue row), whichever event raised it — a late result's
   * notes are written by the receiver, outside the execution, and name no tenant themselves.
   * None for an execution of the deployment's own merchant or one started before tenants;
   * none for `key-refused`: the keys are the registry's, which is the platform's (its remedy,
   * retiring the key, is refused to a merchant's credential), and a merchant's operator
   * resolving it would close it for the platform that must act on it.
   */
  const merchantOf = (alert: RaisedAlert): Effect.Effect<string | undefined, Intake.IntakeError> => {
    if (alert.kind === "key-refused") return Effect.succeed(undefined)
    const known = tenants.get(alert.executionId)
    if (known !== undefined) return Effect.succeed(known ?? undefined)
    return Effect.tap(executionTenant(store, alert.executionId), (tenant) =>
      Effect.sync(() => tenants.set(alert.executionId, tenant ?? null))
    )
  }

  /** The alerts a request may see: every one for the platform's; for one acting for a merchant, its own (deny by default). */
  const visible = (all: ReadonlyArray<RaisedAlert>) =>
    Effect.gen(function* () {
      const merchant = yield* MerchantKeys.currentMerchant
      if (merchant === undefined) return all
      return yield* Effect.filter(
        all,
        (alert) => Effect.map(merchantOf(alert), (owner) => owner === merchant),
        {
          concurrency: 8
        }
      )
    })

  const withLifecycle = (
    alert: RaisedAlert,
    lifecycle: Lifecycle = lifecycles.get(alert.id) ?? fresh
  ): AlertView => ({
    ...alert,
    ...lifecycle
  })

  const alerts = (query: AlertsQuery = {}) =>
    Effect.gen(function* () {
      const wanted = query.state ?? "unresolved"
      const all = (yield* visible(yield* raised))
        .map((alert) => withLifecycle(alert))
        .filter((a) =>
          wanted === "all" ? true : wanted === "unresolved" ? a.state !== "resolved" : a.state === wanted
        )
        .sort((a, b) => severity[a.kind] - severity[b.kind] || b.at - a.at)
      return { alerts: all, caughtUp: yield* Ref.get(caughtUp) }
    })

  /**
   * One step of an alert's lifecycle: the alert must be raised now; its stream is read (not
   * the follower's copy, which may lag) and the step appended at the version read, so of
   * two workers racing on one alert one stores and the other re-reads and answers from
   * what was stored. A step already taken answers the alert as it is; one the state does
   * not allow is refused. Another merchant's alert is not found by a request acting for a
   * merchant; the step is stored naming the alert's merchant as its tenant, so that
   * merchant's log and live feed carry it.
   */
  const step = (tag: AlertEvent["_tag"], alertId: string, operator: string, request: AlertStepRequest) =>
    Effect.gen(function* () {
      const alert = (yield* raised).find((a) => a.id === alertId)
      if (alert === undefined) {
        return yield* Effect.fail(
          new Intake.NotFound({
            message: `no alert ${alertId} is raised now (GET /v1/monitor/alerts?state=all lists them)`
          })
        )
      }
      const merchant = yield* MerchantKeys.currentMerchant
      const owner = yield* merchantOf(alert)
      if (merchant !== undefined && owner !== merchant) {
        return yield* new Intake.NotFound({
          message: `no alert ${alertId} of merchant ${merchant} is raised now (GET /v1/monitor/alerts?state=all lists its merchant's)`
        })
      }
      const streamId = alertStreamOf(alertId)
      const stored = yield* store.readStream(streamId).pipe(Effect.mapError(unavailable("event store")))
      let lifecycle = fresh
      for (const event of stored) {
        const known = alertEventOf(event)
        if (known !== undefined) lifecycle = evolve(lifecycle, known)
      }
      const done =
        tag === "AlertAcknowledged" ? lifecycle.state === "acknowledged" : lifecycle.state === "resolved"
      if (done) return withLifecycle(alert, lifecycle)
      if (tag === "AlertAcknowledged" && lifecycle.state === "resolved") {
        return yield* Effect.fail(
          new AlertStateConflict({
            alertId,
            state: lifecycle.state,
            message: `alert ${alertId} is resolved (by ${lifecycle.resolved?.operator ?? "?"}): a resolved alert is not acknowledged`
          })
        )
      }
      const at = yield* Clock.currentTimeMillis
      const event: AlertEvent =
        tag === "AlertAcknowledged"
          ? AlertAcknowledged.make({ alertId, operator, reason: request.reason, at })
          : AlertResolved.make({ alertId, operator, reason: request.reason, at })
      const version = stored.at(-1)?.version ?? 0
      yield* store.append(streamId, version === 0 ? EventStore.NoStream : EventStore.exactVersion(version), [
        {
          ...storedAlertEvent(event),
          ...(owner === undefined ? {} : { metadata: { [Tenant.metadataKey]: owner } })
        }
      ])
      apply(event)
      return withLifecycle(alert, evolve(lifecycle, event))
    }).pipe(
      // A lost race: read again, and answer from what the winner stored.
      Effect.retry({ while: (error) => error._tag === "ConcurrencyConflict", times: 3 }),
      Effect.catchTags({
        ConcurrencyConflict: unavailable("event store"),
        DuplicateEventId: unavailable("event store"),
        InvalidEvent: unavailable("event store"),
        SensitiveDataRefused: unavailable("event store"),
        EventStoreError: unavailable("event store")
      })
    )

  const live = Stream.fromPubSub(feed)

  return {
    service,
    ownService,
    terminals,
    search,
    alerts,
    acknowledge: (alertId, operator, request) => step("AlertAcknowledged", alertId, operator, request),
    resolve: (alertId, operator, request) => step("AlertResolved", alertId, operator, request),
    live
  }
})

/** The monitor over the intake, engine, store and service in context, following the log while it lives. */
export const layer: Layer.Layer<
  Monitor,
  never,
  Intake.Intake | DurableEngine.DurableEngine | EventStore.EventStore | Stack.Cloud
> = Layer.scoped(Monitor, make)
