/**
 * The terminal-less lifecycle workflows of @tillflow/core on the SQL event store: two
 * "workers" — each with its own workflow engine and its own connection pool to one fresh
 * PostgreSQL database — capture the same pre-authorization at once, and exactly one
 * capture reaches the gateway; and a pre-authorization's full story reads back from the
 * database as the same timeline as from memory.
 *
 * The workers are two engines in one process (the durable multi-process engine is the
 * `engine` branch's); what makes capture-once hold is the store's expected-version check,
 * which the two pools exercise exactly as two processes would.
 */
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  LifecycleEvent,
  LedgerProjection,
  Lifecycles,
  Money,
  PreAuthorizationWorkflow,
  ReversalWorkflow,
  TerminalCloud,
  Timeline,
  TransactionHistory
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import { EventStore } from "@tillflow/engine"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventArchive, PgEventStore, TestDatabase } from "@tillflow/store-sql"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const start = DateTime.unsafeMake("2025-03-01T10:00:00Z")
const reference = "3f0c1f9e-6a3c-4d2b-9a41-0c8b7e2d5a10"

/** One worker: a workflow engine with the lifecycle workflows, on `store`, talking to `cloud`. */
const worker = (store: EventStore.Service, cloud: TerminalCloud.Service) =>
  Layer.build(
    Lifecycles.layer.pipe(
      Layer.provideMerge(
        Layer.mergeAll(
          WorkflowEngine.layerMemory,
          Layer.succeed(EventStore.EventStore, store),
          Layer.succeed(TerminalCloud.TerminalCloud, cloud)
        )
      )
    )
  )

/** Holds the first `n` reads of a stream, across every store it wraps, until all `n` happened. */
const sharedBarrier = (streamId: string, n: number) =>
  Effect.gen(function* () {
    let waiting = 0
    const gate = yield* Effect.makeLatch(false)
    return (store: EventStore.Service): EventStore.Service => ({
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
    })
  })

/** A second, separate connection pool and event store on the test's database (PostgreSQL only). */
const secondStore = Effect.gen(function* () {
  const info = yield* TestDatabase.TestDatabase
  const first = yield* EventStore.EventStore
  if (Option.isNone(info.url)) {
    yield* Effect.logWarning("PGlite: both workers share one connection (set DATABASE_URL for two pools)")
    return first
  }
  const context = yield* Layer.build(
    PgEventStore.layer({ url: info.url.value, maxConnections: 2, applicationName: "worker-b" })
  )
  return Context.get(context, EventStore.EventStore)
})

it.layer(TestDatabase.layer)("lifecycles on the SQL event store", (it) => {
  describe("capture once across two workers", () => {
    it.scoped(
      "two workers capturing the same pre-authorization at once: exactly one reaches the gateway",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(DateTime.toEpochMillis(start))
          const guid = Identifiers.Guid.make("pa-two-workers")
          const stream = LifecycleEvent.transactionStream(guid)
          const storeA = yield* EventStore.EventStore
          const storeB = yield* secondStore
          const { control, service: cloud } = yield* ScriptedTerminalLessCloud.make
          yield* control.seed({ guid, kind: "preAuthorization", amount: eur(10000n), reference })
          yield* TransactionHistory.openPreAuthorization(storeA, {
            guid,
            amount: eur(10000n),
            authorisedAt: start,
            scheme: "MasterCard",
            mcc: "7011",
            transactionReference: reference
          })
          // Both workers read the stream at the same version before either records its capture.
          const wrap = yield* sharedBarrier(stream, 2)
          const workerA = yield* worker(wrap(storeA), cloud)
          const workerB = yield* worker(wrap(storeB), cloud)
          const capture = (requestId: string, amount: Money.Money) =>
            PreAuthorizationWorkflow.Capture.execute({ requestId, originalGuid: guid, amount })
          const [a, b] = yield* Effect.all(
            [
              Effect.either(Effect.provide(capture("cap-a", eur(5000n)), workerA)),
              Effect.either(Effect.provide(capture("cap-b", eur(6000n)), workerB))
            ],
            { concurrency: "unbounded" }
          )
          const outcomes = [a, b].map((r) => (r._tag === "Right" ? "Captured" : r.left._tag)).sort()
          expect(outcomes).toEqual(["CaptureAlreadyDone", "Captured"])
          expect(yield* control.count("preAuthorizationCapture")).toBe(1)
          const types = (yield* storeA.readStream(stream)).map((e) => e.type)
          expect(types.filter((t) => t === "CaptureRequested")).toHaveLength(1)
          expect(types.filter((t) => t === "PreAuthorizationCaptured")).toHaveLength(1)
          expect(types).toContain("OperationRefused")
        })
    )

    it.scoped("ten captures spread over two workers, no coordination but the store: one gateway call", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(DateTime.toEpochMillis(start))
        const guid = Identifiers.Guid.make("pa-ten-captures")
        const storeA = yield* EventStore.EventStore
        const storeB = yield* secondStore
        const { control, service: cloud } = yield* ScriptedTerminalLessCloud.make
        yield* control.seed({ guid, kind: "preAuthorization", amount: eur(10000n), reference })
        yield* TransactionHistory.openPreAuthorization(storeA, {
          guid,
          amount: eur(10000n),
          authorisedAt: start,
          scheme: "Visa",
          mcc: "7011",
          transactionReference: reference
        })
        const workerA = yield* worker(storeA, cloud)
        const workerB = yield* worker(storeB, cloud)
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) =>
            Effect.either(
              Effect.provide(
                PreAuthorizationWorkflow.Capture.execute({
                  requestId: `cap-${i}`,
                  originalGuid: guid,
                  amount: eur(9000n)
                }),
                i % 2 === 0 ? workerA : workerB
              )
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r._tag === "Right")).toHaveLength(1)
        expect(
          results.filter((r) => r._tag === "Left").map((r) => (r._tag === "Left" ? r.left._tag : ""))
        ).toEqual(Array.from({ length: 9 }, () => "CaptureAlreadyDone"))
        expect(yield* control.count("preAuthorizationCapture")).toBe(1)
      })
    )
  })

  it.scoped("a pre-authorization's full story reads back from PostgreSQL as a timeline", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(DateTime.toEpochMillis(start))
      const guid = Identifiers.Guid.make("pa-story-sql")
      const store = yield* EventStore.EventStore
      const { control, service: cloud } = yield* ScriptedTerminalLessCloud.make
      yield* control.seed({ guid, kind: "preAuthorization", amount: eur(10000n), reference })
      yield* TransactionHistory.openPreAuthorization(store, {
        guid,
        amount: eur(10000n),
        authorisedAt: start,
        scheme: "MasterCard",
        mcc: "7011",
        transactionReference: reference
      })
      const context = yield* worker(store, cloud)
      yield* Effect.gen(function* () {
        yield* TestClock.adjust("1 hours")
        yield* PreAuthorizationWorkflow.Increase.execute({
          requestId: "inc-1",
          originalGuid: guid,
          amount: eur(2500n)
        })
        yield* TestClock.adjust("22 hours")
        yield* PreAuthorizationWorkflow.Decrease.execute({
          requestId: "dec-1",
          originalGuid: guid,
          amount: eur(500n)
        })
        yield* TestClock.adjust("1 days")
        yield* PreAuthorizationWorkflow.Capture.execute({
          requestId: "cap-1",
          originalGuid: guid,
          amount: eur(13000n)
        })
        yield* TestClock.adjust("9 hours")
        yield* ReversalWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid })
      }).pipe(Effect.provide(context))
      const lines = yield* Timeline.read(LifecycleEvent.transactionStream(guid))
      expect(lines).toEqual([
        "2025-03-01 10:00:00 UTC  pre-authorization pa-story-sql opened (preAuthorization): 100.00 EUR held; MasterCard, MCC 7011: capture within 30 days, up to 20% over the hold (rule mastercard)",
        "2025-03-01 11:00:00 UTC  [inc-1] increase of 25.00 EUR requested",
        "2025-03-01 11:00:00 UTC  [inc-1] hold increased by 25.00 EUR to 125.00 EUR",
        "2025-03-02 09:00:00 UTC  [dec-1] decrease of 5.00 EUR requested",
        "2025-03-02 09:00:00 UTC  [dec-1] hold decreased by 5.00 EUR to 120.00 EUR",
        "2025-03-03 09:00:00 UTC  [cap-1] capture of 130.00 EUR requested: limit 144.00 EUR by rule mastercard",
        "2025-03-03 09:00:00 UTC  [cap-1] captured 130.00 EUR: status CAPTURED",
        "2025-03-03 18:00:00 UTC  [rev-1] reversal of the capture requested (CUSTOMER_CANCELLATION)",
        "2025-03-03 18:00:00 UTC  [rev-1] capture of 130.00 EUR reversed: status AUTHORISED, withheld funds released"
      ])
      const verified = yield* store.verify(LifecycleEvent.transactionStream(guid))
      expect(verified.broken).toEqual([])
      expect(verified.eventsChecked).toBe(9)
    })
  )
  it.scoped(
    "archived (issue 31): an open pre-authorization's money rules, timeline and ledger answer as before",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(DateTime.toEpochMillis(start))
        const guid = Identifiers.Guid.make("pa-archived")
        const stream = LifecycleEvent.transactionStream(guid)
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        const { control, service: cloud } = yield* ScriptedTerminalLessCloud.make
        yield* control.seed({ guid, kind: "preAuthorization", amount: eur(10000n), reference })
        yield* TransactionHistory.openPreAuthorization(store, {
          guid,
          amount: eur(10000n),
          authorisedAt: start,
          scheme: "MasterCard",
          mcc: "7011",
          transactionReference: reference
        })
        const context = yield* worker(store, cloud)
        yield* TestClock.adjust("1 hours")
        yield* PreAuthorizationWorkflow.Increase.execute({
          requestId: "inc-1",
          originalGuid: guid,
          amount: eur(2500n)
        }).pipe(Effect.provide(context))
        const timelineBefore = yield* Timeline.read(stream)
        const ledgerBefore = yield* LedgerProjection.rebuild()
        expect(ledgerBefore.entries).toBeGreaterThan(0)

        // Every stream idle before tomorrow (the database's clock): all of this history.
        const report = yield* EventArchive.run({ before: new Date(Date.now() + 86_400_000) })
        expect(report.streams).toBeGreaterThan(0)
        const [hot] = yield* sql<{ readonly n: string }>`
          SELECT count(*)::text AS n FROM events WHERE stream_id = ${stream}`
        expect(hot?.n).toBe("0")

        expect(yield* Timeline.read(stream)).toEqual(timelineBefore)
        expect(yield* LedgerProjection.rebuild()).toEqual(ledgerBefore)
        // The capture limit is 120 % of the hold as increased (125.00 EUR): read from the archive.
        yield* TestClock.adjust("1 hours")
        const over = yield* PreAuthorizationWorkflow.Capture.execute({
          requestId: "cap-over",
          originalGuid: guid,
          amount: eur(15001n)
        }).pipe(Effect.provide(context), Effect.flip)
        expect(over._tag).toBe("CaptureOverTolerance")
        yield* PreAuthorizationWorkflow.Capture.execute({
          requestId: "cap-1",
          originalGuid: guid,
          amount: eur(15000n)
        }).pipe(Effect.provide(context))
        const again = yield* PreAuthorizationWorkflow.Capture.execute({
          requestId: "cap-2",
          originalGuid: guid,
          amount: eur(100n)
        }).pipe(Effect.provide(context), Effect.flip)
        expect(again._tag).toBe("CaptureAlreadyDone")
        expect(yield* control.count("preAuthorizationCapture")).toBe(1)
        const verified = yield* store.verify(stream)
        expect(verified.broken).toEqual([])
        expect((yield* store.verify()).ok).toBe(true)
      })
  )
})
