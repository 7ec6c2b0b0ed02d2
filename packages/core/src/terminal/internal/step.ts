/**
 * What every step of the payment protocol shares: the clock it reads, how it appends its
 * events to the payment's stream (with ids derived from the execution and the step, so a
 * step run again after a crash appends nothing twice), how it retries the store, and how
 * it sleeps durably.
 */
import * as DurableClock from "@effect/workflow/DurableClock"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { uuidFrom } from "@tillflow/engine/DeterministicId"
import type * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as EventStore from "@tillflow/engine/EventStore"
import * as StoreRetry from "@tillflow/engine/StoreRetry"
import * as Tenant from "@tillflow/engine/Tenant"
import * as PaymentEvents from "../PaymentEvents.js"

/** The clock a step reads (the workflow's, so `TestClock` drives it in tests). */
export const now = Clock.currentTimeMillis

/** An event of the payment's stream. */
export type PaymentEvent = EventRegistry.Event<(typeof PaymentEvents.events.definitions)[number]>

/** How a step appends its events: `emit(step, events)`. */
export type Emit = (step: string, events: ReadonlyArray<PaymentEvent>) => Effect.Effect<void>

/**
 * Appends domain events with ids derived from the execution and the step, so a step run
 * again after a crash appends nothing twice. Transient store failures are retried; a
 * store that stays down is a defect of the step (the engine runs it again).
 */
export const appendPaymentEvents = (
  store: EventStore.Service,
  executionId: string,
  step: string,
  events: ReadonlyArray<PaymentEvent>
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const withIds = yield* withStepIds(executionId, step, events, {})
    yield* store.append(PaymentEvents.paymentStream(executionId), EventStore.AnyVersion, withIds).pipe(
      Effect.asVoid,
      Effect.catchTag("DuplicateEventId", () => Effect.void),
      retryStore
    )
  }).pipe(Effect.orDie)

/** A step's events encoded, with ids derived from the execution, the step and their place. */
export const withStepIds = (
  executionId: string,
  step: string,
  events: ReadonlyArray<PaymentEvent>,
  metadata: EventStore.JsonObject
): Effect.Effect<ReadonlyArray<EventStore.NewEvent>> =>
  Effect.gen(function* () {
    const encoded = yield* PaymentEvents.events.encodeAll(events)
    // Whose payment it is (the execution's tenant: a merchant of the deployment), when any.
    const tenant = yield* Tenant.current
    return yield* Effect.forEach(encoded, (event, index) =>
      Effect.map(uuidFrom(`${executionId}/${step}/${index}`), (eventId) => ({
        ...event,
        eventId,
        metadata: { ...metadata, executionId, ...(tenant === undefined ? {} : { tenant }) }
      }))
    )
  }).pipe(Effect.orDie)

/**
 * Retries what the store may answer transiently, at its patient pace: a payment's own
 * events must land, and an append at any version may also lose a race with another writer.
 */
export const retryStore = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  StoreRetry.retry(
    effect,
    StoreRetry.patient,
    (e) => StoreRetry.isTransient(e) || e._tag === "ConcurrencyConflict"
  )

/** A durable pause of at least 1 ms, named so a replay finds it. */
export const durableSleep = (name: string, millis: number) =>
  DurableClock.sleep({ name, duration: Duration.millis(Math.max(1, Math.ceil(millis))) })
