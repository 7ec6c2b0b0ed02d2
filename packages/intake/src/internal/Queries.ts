/**
 * The intake's queries: the device list, one execution (waiting for its end if asked),
 * its history, executions listed by workflow, status and attributes, executions searched a
 * page at a time (newest first, keyset paging in the queue's statement), a transaction's
 * status at the service, a page of the global event log, and whether this process is
 * ready (its store, its engine and the workflows it registered, the service taking its key).
 */
import {
  Currency,
  Ledger,
  LedgerProjection,
  MerchantKeys,
  Money,
  PaymentEvents,
  TerminalCloud,
  TransactionResult
} from "@tillflow/core"
import { DurableEngine, EventStore, ExecutionQueue } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Intake from "../Intake.js"
import type * as Devices from "./Devices.js"
import type * as ExecutionViews from "./ExecutionViews.js"
import { remoteFailure, unavailable } from "./Failures.js"
import { checkpointOf, eventView } from "./StoredEvents.js"
import * as TerminalRequests from "./TerminalRequests.js"

/** What the queries are. */
export type Queries = Pick<
  Intake.Service,
  "devices" | "execution" | "history" | "list" | "search" | "transactionStatus" | "events" | "ready"
>

const encodeStatus = Schema.encodeSync(TransactionResult.TransactionStatusResult)

/** Parses a date or date-time of a query (UTC unless it says); a bare date as `to` means the end of that day. */
export const instantOf = (
  text: string | undefined,
  field: "from" | "to"
): Effect.Effect<number | undefined, Intake.InvalidRequest> => {
  if (text === undefined || text === "") return Effect.succeed(undefined)
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text)
  // A date-time without a zone is UTC, as every time tillflow shows.
  const zoned = dateOnly || /(Z|[+-]\d{2}:?\d{2})$/i.test(text) ? text : `${text}Z`
  const millis = Date.parse(dateOnly ? `${text}T00:00:00Z` : zoned)
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(millis)) {
    return Effect.fail(
      new Intake.InvalidRequest({
        message: `${field} "${text}" is not a date: use ISO 8601, e.g. 2026-11-24 or 2026-11-24T09:30:00Z`
      })
    )
  }
  return Effect.succeed(dateOnly && field === "to" ? millis + 86_400_000 : millis)
}

/** A page's cursor: where it ended (`<created at>.<execution id>`), opaque to callers. */
export const cursorOf = (position: ExecutionQueue.ListPosition): string =>
  `${position.createdAt}.${position.executionId}`

const parseCursor = (
  text: string | undefined
): Effect.Effect<ExecutionQueue.ListPosition | undefined, Intake.InvalidRequest> => {
  if (text === undefined || text === "") return Effect.succeed(undefined)
  const match = /^(\d{1,15})\.([0-9A-Za-z_-]{1,128})$/.exec(text)
  return match === null
    ? Effect.fail(
        new Intake.InvalidRequest({
          message: `after "${text}" is not a page cursor: pass the next of a previous page`
        })
      )
    : Effect.succeed({ createdAt: Number(match[1]), executionId: match[2] ?? "" })
}

const unfinished: ReadonlyArray<ExecutionQueue.ExecutionStatus> = ["pending", "running", "suspended"]

/**
 * The queue's filter of a search: its outcome as a status (`in-progress`) or as the
 * attribute an execution gains when it ends (`internal/ExitAttributes`), its search `q` as
 * any of an id prefix and the attributes that name an execution.
 */
export const filterOf = (
  query: Intake.SearchQuery
): Effect.Effect<ExecutionQueue.ListFilter, Intake.InvalidRequest> =>
  Effect.gen(function* () {
    const from = yield* instantOf(query.from, "from")
    const to = yield* instantOf(query.to, "to")
    const after = yield* parseCursor(query.after)
    const attributes: Record<string, string> = {}
    const given = (text: string | undefined) =>
      text === undefined || text.trim() === "" ? undefined : text.trim()
    const serialNumber = given(query.serialNumber)
    const operation = given(query.operation)
    const workflow = given(query.workflow)
    if (serialNumber !== undefined) attributes["serialNumber"] = serialNumber
    if (operation !== undefined) attributes["operation"] = operation
    let status: ReadonlyArray<ExecutionQueue.ExecutionStatus> | undefined =
      query.status === undefined ? undefined : [query.status]
    if (query.outcome === "in-progress") {
      status = (status ?? unfinished).filter((s) => unfinished.includes(s))
    } else if (query.outcome !== undefined) {
      attributes["outcome"] = query.outcome
    }
    const amount = given(query.amount)
    const currency = given(query.currency)?.toUpperCase()
    if (amount !== undefined || currency !== undefined) {
      if (amount === undefined || currency === undefined)
        return yield* new Intake.InvalidRequest({
          message: `amount and currency: an amount is searched with its currency (e.g. amount=10.50&currency=EUR)`
        })
      if (!Currency.isCurrency(currency))
        return yield* new Intake.InvalidRequest({
          message: `currency: ${JSON.stringify(currency)} is not an ISO 4217 currency code (e.g. EUR)`
        })
      const parsed = Money.fromMajorUnitsString(amount, currency)
      if (Either.isLeft(parsed))
        return yield* new Intake.InvalidRequest({ message: `amount: ${parsed.left.message}` })
      // As the operation names it (`TerminalOperations.searchAttributes`): "10.5" finds "10.50".
      attributes["amount"] = Money.toMajorUnitsString(parsed.right)
      attributes["currency"] = currency
    }
    const q = given(query.q)
    const anyOf =
      q === undefined
        ? undefined
        : {
            idPrefix: ExecutionQueue.isIdPrefix(q.toLowerCase()) ? q.toLowerCase() : undefined,
            attributes: [
              { idempotencyKey: q },
              { transactionReference: q },
              { guid: q },
              { customerReference: q },
              ...(/^\d{4}$/.test(q) ? [{ cardLast4: q }] : [])
            ]
          }
    return {
      ...(workflow === undefined ? {} : { workflowName: workflow }),
      ...(status === undefined ? {} : { status }),
      attributes,
      ...(from === undefined ? {} : { createdFrom: from }),
      ...(to === undefined ? {} : { createdBefore: to }),
      ...(anyOf === undefined ? {} : { anyOf }),
      order: "newest" as const,
      ...(after === undefined ? {} : { after })
    }
  })

/** The queries over the engine, store and remote service in context, answering with `views`. */
export const make = (
  views: ExecutionViews.ExecutionViews,
  devices: Devices.Devices
): Effect.Effect<
  Queries,
  never,
  DurableEngine.DurableEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> =>
  Effect.gen(function* () {
    const engine = yield* DurableEngine.DurableEngine
    const store = yield* EventStore.EventStore
    const cloud = yield* TerminalCloud.TerminalCloud

    const history = (executionId: string) =>
      Effect.gen(function* () {
        yield* views.info(executionId)
        const engineEvents = yield* engine
          .history(executionId)
          .pipe(Effect.mapError(unavailable("event store")))
        const business = yield* store
          .readStream(PaymentEvents.paymentStream(executionId))
          .pipe(Effect.mapError(unavailable("event store")))
        return {
          executionId,
          engine: engineEvents.map((entry) => eventView(entry.recorded)),
          business: business.map(eventView)
        }
      })

    // A request acting for a merchant lists that merchant's executions only (`Tenant`).
    const merchantScope = Effect.map(MerchantKeys.currentMerchant, (merchant) =>
      merchant === undefined ? {} : { tenants: [merchant] }
    )

    /**
     * The merchants a search names: the one the request acts for (`Tillflow-Merchant`, or a
     * limited credential's own), else the one `merchant=` names; both, and different, is a
     * contradiction said as such rather than an empty page.
     */
    const merchantFilter = (named: string | undefined) =>
      Effect.gen(function* () {
        const merchant = named?.trim() === "" ? undefined : named?.trim()
        const scope = yield* MerchantKeys.currentMerchant
        if (merchant !== undefined && !Tenant.isTenant(merchant))
          return yield* new Intake.InvalidRequest({
            message: `merchant: ${JSON.stringify(merchant)} is not a merchant id (letters, digits, dot, dash, underscore; at most 64)`
          })
        if (scope !== undefined && merchant !== undefined && merchant !== scope)
          return yield* new Intake.InvalidRequest({
            message: `merchant: this request acts for merchant ${scope}; it cannot search merchant ${merchant}'s executions`
          })
        const tenant = scope ?? merchant
        return tenant === undefined ? {} : { tenants: [tenant] }
      })

    const list = (query: Intake.ListQuery) =>
      Effect.gen(function* () {
        const attributes: Record<string, string> = {}
        if (query.serialNumber !== undefined) attributes["serialNumber"] = query.serialNumber
        if (query.operation !== undefined) attributes["operation"] = query.operation
        if (query.transactionReference !== undefined)
          attributes["transactionReference"] = query.transactionReference
        if (query.idempotencyKey !== undefined) attributes["idempotencyKey"] = query.idempotencyKey
        const found = yield* engine
          .list({
            ...(query.workflow === undefined ? {} : { workflowName: query.workflow }),
            ...(query.status === undefined ? {} : { status: query.status }),
            ...(yield* merchantScope),
            attributes
          })
          .pipe(Effect.mapError(unavailable("execution queue")))
        // Newest first, the most recent `limit`.
        const newest = [...found].reverse().slice(0, query.limit ?? 50)
        return yield* Effect.forEach(newest, views.view)
      })

    const search = (query: Intake.SearchQuery) =>
      Effect.gen(function* () {
        const filter = { ...(yield* filterOf(query)), ...(yield* merchantFilter(query.merchant)) }
        const limit = query.limit ?? 50
        // One more than the page: whether a next page exists, without counting.
        const [found, total] = yield* Effect.all(
          [engine.list({ ...filter, limit: limit + 1 }), engine.count(filter)],
          { concurrency: 2 }
        ).pipe(Effect.mapError(unavailable("execution queue")))
        const page = found.slice(0, limit)
        const last = page[page.length - 1]
        const executions = yield* Effect.forEach(page, views.view, { concurrency: 8 })
        return {
          executions,
          total,
          ...(found.length > limit && last !== undefined
            ? { next: cursorOf({ createdAt: last.createdAt, executionId: last.executionId }) }
            : {})
        }
      })

    const transactionStatus = (reference: string, selector: string) =>
      Effect.gen(function* () {
        const ref = yield* TerminalRequests.transactionReference(reference)
        const parsed =
          selector === "first" || selector === "last" || selector === "all"
            ? selector
            : /^[1-9][0-9]*$/.test(selector)
              ? Number(selector)
              : undefined
        if (parsed === undefined) {
          return yield* new Intake.InvalidRequest({
            message: `selector "${selector}" is not allowed: use first, last, all or a position from 1`
          })
        }
        const entries = yield* cloud
          .transactionStatus(ref, parsed)
          .pipe(Effect.mapError(remoteFailure(`status of ${reference}`)))
        return entries.map((e) => encodeStatus(e) as unknown)
      })

    // A request acting for a merchant reads its events only: those whose metadata names it
    // as their tenant (deny by default: an event naming none is no merchant's). A page may
    // then hold fewer than asked, even none, before the log is caught up: read on from `next`.
    const events = (after: string | undefined, limit: number) =>
      Effect.gen(function* () {
        const merchant = yield* MerchantKeys.currentMerchant
        const from = yield* checkpointOf(after)
        const page = yield* store
          .readAll(from, { maxCount: Math.max(1, Math.min(limit, 10_000)), settle: EventStore.reportSettle })
          .pipe(Effect.mapError(unavailable("event store")))
        const shown =
          merchant === undefined
            ? page.events
            : page.events.filter((event) => Tenant.ofMetadata(event.metadata) === merchant)
        return {
          events: shown.map(eventView),
          next: Ledger.positionOf(page.next),
          caughtUp: page.caughtUp
        }
      })

    const ready = Effect.gen(function* () {
      const storeOk = yield* Effect.either(store.streamVersion(LedgerProjection.snapshotStream))
      const names = yield* engine.workflowNames
      const engineOk = yield* Effect.either(engine.list({ limit: 1 }))
      const storeText = Either.isRight(storeOk) ? "ok" : storeOk.left.message
      const engineText = Either.isLeft(engineOk)
        ? engineOk.left.message
        : names.length === 0
          ? "no workflow registered"
          : `ok (${names.join(", ")})`
      const service = yield* devices.service
      return {
        ready:
          Either.isRight(storeOk) &&
          Either.isRight(engineOk) &&
          names.length > 0 &&
          !service.startsWith("refused"),
        store: storeText,
        engine: engineText,
        service
      }
    })

    return {
      search,
      devices: devices.devices,
      execution: (executionId: string, waitSeconds?: number) => views.awaitView(executionId, waitSeconds),
      history,
      list,
      transactionStatus,
      events,
      ready
    }
  })
