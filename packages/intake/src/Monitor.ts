/**
 * What an operator watches, beyond the intake's executions and audit: the terminals with
 * the operation each is running, executions searched a page at a time (the intake's
 * `search`: outcome, status, terminal, operation, workflow, date; an id prefix, idempotency
 * key, reference, guid, customer reference or card's last four digits), the alerts (result
 * mismatches, late results, unresolved outcomes, stuck executions and executions waiting
 * past a deadline), and the log's events as they are stored (a live feed for server-sent
 * events). One follower of the event log per process keeps the alerts and feeds the live
 * subscribers, so no request re-reads the log. The web console reads all of it through the intake API (`MonitorApi`).
 */
import { Ledger, PaymentEvents, PaymentProtocol } from "@tillflow/core"
import { DurableEngine, EventStore, ExecutionQueue } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Intake from "./Intake.js"
import * as Stack from "./Stack.js"
import { unavailable } from "./internal/Failures.js"
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
export const AlertKind = Schema.Literal("mismatch", "late-result", "unresolved", "stuck", "overdue")
/** @see AlertKind */
export type AlertKind = typeof AlertKind.Type

/** One alert, most severe kinds first in a list. */
export const AlertView = Schema.Struct({
  kind: AlertKind,
  executionId: Schema.String,
  at: Schema.Number,
  message: Schema.String
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
}

// ---------------------------------------------------------------------------------------
// The service

/** An unfinished execution untouched this long is reported as waiting past its deadline. */
export const overdueAfterMillis = 10 * 60 * 1000

/** The monitor's operations. */
export interface Service {
  readonly service: Effect.Effect<ServiceView>
  readonly terminals: Effect.Effect<ReadonlyArray<TerminalView>, Intake.IntakeError>
  readonly search: (query: SearchQuery) => Effect.Effect<SearchView, Intake.IntakeError>
  readonly alerts: Effect.Effect<AlertsView, Intake.IntakeError>
  /** The events stored from now on, for as long as the stream is read. */
  readonly live: Stream.Stream<LiveEvent>
}

/** The monitor. */
export class Monitor extends Context.Tag("tillflow/intake/Monitor")<Monitor, Service>() {}

const executionOfStream = (streamId: string): string | undefined =>
  streamId.startsWith("payment-") ? streamId.slice("payment-".length) : undefined

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The alert an event raises, if any. */
export const alertOf = (event: EventStore.RecordedEvent): AlertView | undefined => {
  const executionId = executionOfStream(event.streamId)
  const data = event.data
  if (executionId === undefined || !isObject(data)) return undefined
  const at = typeof data["at"] === "number" ? data["at"] : event.recordedAt.epochMillis
  const text = (key: string) => (typeof data[key] === "string" ? data[key] : "?")
  switch (event.type) {
    case PaymentEvents.ResultMismatch.type:
      return {
        kind: "mismatch",
        executionId,
        at,
        message: `a result says ${text("received")} but ${text("recorded")} was recorded (${text("source")}, attempt ${text("attemptId")})`
      }
    case PaymentEvents.LateResultRecorded.type:
      return {
        kind: "late-result",
        executionId,
        at,
        message: `a result (${typeof data["finStatus"] === "string" ? data["finStatus"] : "no finStatus"}) arrived after the outcome was recorded`
      }
    case PaymentEvents.OutcomeUnresolved.type:
      return { kind: "unresolved", executionId, at, message: `the outcome is unresolved: ${text("message")}` }
    default:
      return undefined
  }
}

const severity: Record<AlertKind, number> = {
  mismatch: 0,
  unresolved: 1,
  stuck: 2,
  overdue: 3,
  "late-result": 4
}

/** Parses a date or date-time of a query (UTC unless it says); a bare date as `to` means the end of that day. */
export const instantOf = Queries.instantOf

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

  const logAlerts = yield* Ref.make<ReadonlyArray<AlertView>>([])
  // Guids named by the log before their execution ended (an ended one is found by its `guid`
  // attribute): a search for one of them looks for its execution.
  const guids = new Map<string, string>()
  const caughtUp = yield* Ref.make(false)
  const feed = yield* PubSub.sliding<LiveEvent>(4096)

  const note = (event: EventStore.RecordedEvent) =>
    Effect.gen(function* () {
      const alert = alertOf(event)
      if (alert !== undefined) yield* Ref.update(logAlerts, (all) => [...all, alert])
      const executionId = executionOfStream(event.streamId)
      const data = event.data
      if (executionId !== undefined && isObject(data) && isObject(data["facts"])) {
        const guid = data["facts"]["efttransactionID"]
        if (typeof guid === "string" && guid !== "") guids.set(guid, executionId)
      }
    })

  // The follower: the stored log first (no live feed for it), then every new event.
  const follow = Effect.gen(function* () {
    let checkpoint = EventStore.Checkpoint.start
    while (true) {
      const page = yield* store.readAll(checkpoint, { maxCount: 2000 })
      for (const event of page.events) yield* note(event)
      checkpoint = page.next
      if (page.caughtUp) break
    }
    yield* Ref.set(caughtUp, true)
    yield* store.subscribe(checkpoint).pipe(
      Stream.runForEach((event) =>
        Effect.zipRight(
          note(event),
          PubSub.publish(feed, {
            position: Ledger.positionOf(event.checkpoint),
            streamId: event.streamId,
            type: event.type,
            recordedAt: new Date(event.recordedAt.epochMillis).toISOString()
          })
        )
      )
    )
  }).pipe(
    Effect.tapError((error) =>
      Effect.logWarning(`monitor: the log follower stopped (${error.message}); restarting`)
    ),
    Effect.retry(Schedule.spaced("2 seconds")),
    Effect.catchAllCause((cause) => Effect.logError("monitor: the log follower ended", cause))
  )
  yield* Effect.forkScoped(follow)

  const service: Effect.Effect<ServiceView> = Effect.succeed({
    kind: cloud.kind,
    terminals: cloud.kind === "simulator" ? cloud.terminals : []
  })

  const unfinished: ReadonlyArray<ExecutionQueue.ExecutionStatus> = ["pending", "running", "suspended"]

  const terminals = Effect.gen(function* () {
    const devices = yield* intake.devices
    const open = yield* engine
      .list({ workflowName: PaymentProtocol.TerminalOperation.name, status: unfinished })
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

  const alerts = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const open = yield* engine
      .list({ status: [...unfinished, "stuck"] })
      .pipe(Effect.mapError(unavailable("execution queue")))
    const fromExecutions: Array<AlertView> = []
    for (const e of open) {
      if (e.status === "stuck") {
        fromExecutions.push({
          kind: "stuck",
          executionId: e.executionId,
          at: e.updatedAt,
          message: `${e.workflowName} is stuck: it waits for an operator (see its history)`
        })
      } else if (now - e.updatedAt > overdueAfterMillis) {
        fromExecutions.push({
          kind: "overdue",
          executionId: e.executionId,
          at: e.updatedAt,
          message: `${e.workflowName} has been ${e.status} without progress for ${Math.round((now - e.updatedAt) / 60_000)} minutes`
        })
      }
    }
    const all = [...(yield* Ref.get(logAlerts)), ...fromExecutions].sort(
      (a, b) => severity[a.kind] - severity[b.kind] || b.at - a.at
    )
    return { alerts: all, caughtUp: yield* Ref.get(caughtUp) }
  })

  const live = Stream.fromPubSub(feed)

  return { service, terminals, search, alerts, live }
})

/** The monitor over the intake, engine, store and service in context, following the log while it lives. */
export const layer: Layer.Layer<
  Monitor,
  never,
  Intake.Intake | DurableEngine.DurableEngine | EventStore.EventStore | Stack.Cloud
> = Layer.scoped(Monitor, make)
