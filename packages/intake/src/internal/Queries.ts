/**
 * The intake's queries: the device list, one execution (waiting for its end if asked),
 * its history, executions listed by workflow, status and attributes, a transaction's
 * status at the service, a page of the global event log, and whether this process is
 * ready (its store, its engine and the workflows it registered, the service taking its key).
 */
import { PaymentEvents, Ledger, LedgerProjection, TerminalCloud, TransactionResult } from "@tillflow/core"
import { DurableEngine, EventStore } from "@tillflow/engine"
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
  "devices" | "execution" | "history" | "list" | "transactionStatus" | "events" | "ready"
>

const encodeStatus = Schema.encodeSync(TransactionResult.TransactionStatusResult)

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
            attributes
          })
          .pipe(Effect.mapError(unavailable("execution queue")))
        // Newest first, the most recent `limit`.
        const newest = [...found].reverse().slice(0, query.limit ?? 50)
        return yield* Effect.forEach(newest, views.view)
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

    const events = (after: string | undefined, limit: number) =>
      Effect.gen(function* () {
        const from = yield* checkpointOf(after)
        const page = yield* store
          .readAll(from, { maxCount: Math.max(1, Math.min(limit, 10_000)) })
          .pipe(Effect.mapError(unavailable("event store")))
        return {
          events: page.events.map(eventView),
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
      devices: devices.devices,
      execution: (executionId: string, waitSeconds?: number) => views.awaitView(executionId, waitSeconds),
      history,
      list,
      transactionStatus,
      events,
      ready
    }
  })
