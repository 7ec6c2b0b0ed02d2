/**
 * Shared setup of the lifecycle workflow tests: the in-memory workflow engine, the memory
 * event store and the scripted TerminalCloud double, fresh for each test, and helpers to
 * open the histories the workflows read.
 */
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { LifecycleEvent, Money, type TerminalCloud, TransactionHistory } from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"

/** 2025-03-01T10:00:00Z: the tests' "now" when they start. */
export const start = DateTime.unsafeMake("2025-03-01T10:00:00Z")

/** Sets the TestClock to `start`. */
export const atStart = TestClock.setTime(DateTime.toEpochMillis(start))

/** Moves the TestClock forward at once (for code that is not sleeping meanwhile). */
export const advance = (duration: Duration.DurationInput) => TestClock.adjust(duration)

/**
 * @effect/workflow derives each execution's id with a WebCrypto SHA-256 (`makeHashDigest`),
 * which runs off the Effect scheduler (Node's thread pool): on a loaded machine a digest can still be pending after any number of `yieldNow`s, and a fiber
 * that has not reached its sleep when the TestClock moves would then sleep past the test's
 * last step and never wake. The digests in flight are counted here so that `settle` can wait
 * for them: the tests' timing stays deterministic however slow the machine is.
 */
const digestsInFlight = new Set<Promise<unknown>>()
const subtle = globalThis.crypto.subtle
const digest = subtle.digest.bind(subtle)
Object.defineProperty(subtle, "digest", {
  configurable: true,
  value: (algorithm: Parameters<typeof digest>[0], data: Parameters<typeof digest>[1]) => {
    const pending = digest(algorithm, data)
    digestsInFlight.add(pending)
    const forget = () => digestsInFlight.delete(pending)
    pending.then(forget, forget)
    return pending
  }
})

/** Lets every forked fiber run until it waits on the clock (or on nothing this test drives). */
export const settle = Effect.gen(function* () {
  for (;;) {
    for (let j = 0; j < 20; j++) yield* Effect.yieldNow()
    if (digestsInFlight.size === 0) return
    const pending = [...digestsInFlight]
    yield* Effect.promise(() => Promise.allSettled(pending))
  }
})

/**
 * Moves the TestClock forward one second at a time, letting forked fibers run between the
 * steps (see `settle`), so a fiber that starts sleeping midway still wakes at its due time.
 */
export const stepClock = (duration: Duration.DurationInput) =>
  Effect.gen(function* () {
    const seconds = Math.ceil(Duration.toSeconds(duration))
    for (let i = 0; i < seconds; i++) {
      yield* settle
      yield* TestClock.adjust("1 seconds")
    }
    yield* settle
  })

/** A fresh engine, memory store and scripted double, with the given workflow layers registered. */
export const environment = <ROut, E>(
  workflows: Layer.Layer<
    ROut,
    E,
    WorkflowEngine.WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
  >,
  options: { readonly wrapStore?: (store: EventStore.Service) => Effect.Effect<EventStore.Service> } = {}
) => {
  const wrap = options.wrapStore
  const store =
    wrap === undefined
      ? MemoryEventStore.layer()
      : Layer.effect(
          EventStore.EventStore,
          Effect.flatMap(MemoryEventStore.make(), ({ store }) => wrap(store))
        )
  return workflows.pipe(
    Layer.provideMerge(Layer.mergeAll(WorkflowEngine.layerMemory, store, ScriptedTerminalLessCloud.layer))
  )
}

/** Runs a test body in a fresh environment. */
export const inEnvironment =
  <ROut, E>(env: Layer.Layer<ROut, E>) =>
  <A, E2>(body: Effect.Effect<A, E2, ROut>): Effect.Effect<A, E | E2> =>
    Effect.provide(body, env)

/**
 * Holds the first `n` reads of `streamId` until all `n` have happened, so concurrent
 * deciders all read the same version before any of them appends.
 */
export const barrierOnFirstReads =
  (streamId: string, n: number) =>
  (store: EventStore.Service): Effect.Effect<EventStore.Service> =>
    Effect.gen(function* () {
      let waiting = 0
      const gate = yield* Effect.makeLatch(false)
      return {
        ...store,
        readStream: (id, options) =>
          Effect.gen(function* () {
            const events = yield* store.readStream(id, options)
            if (id === streamId && waiting < n) {
              waiting += 1
              if (waiting === n) yield* gate.open
              yield* gate.await
            }
            return events
          })
      }
    })

/** A pre-authorization opened in the history and known to the double's gateway. */
export const openPreAuth = (options: {
  readonly guid: string
  readonly amount: Money.Money
  readonly scheme: string
  readonly mcc: string
  readonly reference?: string
  readonly at?: DateTime.Utc
  readonly tenderType?: string
  readonly serialNumber?: string
  readonly batchNumber?: string
  readonly stayEndsAt?: DateTime.Utc
}) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const control = yield* ScriptedTerminalLessCloud.ScriptedControl
    const reference = options.reference ?? "3f0c1f9e-6a3c-4d2b-9a41-0c8b7e2d5a10"
    yield* control.seed({ guid: options.guid, kind: "preAuthorization", amount: options.amount, reference })
    return yield* TransactionHistory.openPreAuthorization(store, {
      guid: options.guid,
      amount: options.amount,
      authorisedAt: options.at ?? (yield* DateTime.now),
      scheme: options.scheme,
      mcc: options.mcc,
      transactionReference: reference,
      ...(options.tenderType === undefined ? {} : { tenderType: options.tenderType }),
      ...(options.serialNumber === undefined ? {} : { serialNumber: options.serialNumber }),
      ...(options.batchNumber === undefined ? {} : { batchNumber: options.batchNumber }),
      ...(options.stayEndsAt === undefined ? {} : { stayEndsAt: options.stayEndsAt })
    })
  })

/** A completed transaction recorded in the history and known to the double's gateway. */
export const recordTxn = (options: {
  readonly guid: string
  readonly kind: LifecycleEvent.TransactionKind
  readonly amount: Money.Money
  readonly reference?: string
  readonly at?: DateTime.Utc
  readonly serialNumber?: string
  readonly batchNumber?: string
}) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const control = yield* ScriptedTerminalLessCloud.ScriptedControl
    yield* control.seed({
      guid: options.guid,
      kind: options.kind,
      amount: options.amount,
      reference: options.reference
    })
    return yield* TransactionHistory.record(store, {
      guid: options.guid,
      kind: options.kind,
      amount: options.amount,
      at: options.at ?? (yield* DateTime.now),
      ...(options.reference === undefined ? {} : { transactionReference: options.reference }),
      ...(options.serialNumber === undefined ? {} : { serialNumber: options.serialNumber }),
      ...(options.batchNumber === undefined ? {} : { batchNumber: options.batchNumber })
    })
  })

/** The types of the events of a stream, in order. */
export const typesOf = (streamId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    return (yield* store.readStream(streamId)).map((e) => e.type)
  })

/** The decoded events of a stream. */
export const eventsOf = (streamId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    return yield* LifecycleEvent.registry.decodeAll(yield* store.readStream(streamId))
  })

/** Money in EUR from a minor-unit bigint. */
export const eur = (minor: bigint) => Money.make(minor, "EUR")
/** Money in USD from a minor-unit bigint. */
export const usd = (minor: bigint) => Money.make(minor, "USD")
