/**
 * An operator resolves a request in doubt outside a transaction's stream (issue 28): a batch
 * close (which holds every later close of the terminal), a MOTO sale attempt (charged, maybe,
 * under a guid tillflow never saw) and a device reboot (never resent). Each is recorded as an
 * audited `InDoubtResolved` on its own stream, never by deleting history, and folded as the
 * request's ending.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  BatchWorkflow,
  DeviceCommandWorkflow,
  Identifiers,
  InDoubtResolution,
  Ledger,
  LifecycleEvent,
  Lifecycles,
  MotoWorkflow,
  RemoteError
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import { EventStore } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { atStart, environment, eur, inEnvironment, stepClock, typesOf } from "./support/lifecycle.js"

const run = inEnvironment(environment(Lifecycles.layer))
const control = ScriptedTerminalLessCloud.ScriptedControl
const terminal = {
  serialNumber: Identifiers.SerialNumber.make("T-1"),
  terminalType: Identifiers.TerminalType.make("A920"),
  batchNumber: Identifiers.BatchNumber.make("42")
}
const reference = Schema.decodeSync(Identifiers.TransactionReference)("6c1f7a0e-2b4d-4e8a-9f3c-1d2e3f4a5b6c")
const token = Identifiers.CardToken.make("tok_4f2a9c")
const unreachable = new RemoteError.OutcomeUnknown({ message: "502", reason: "ServerError", status: 502 })
const who = { operator: "alice", reason: "the acquirer's settlement report" }

/** Every check of `endpoint` fails for longer than the reconciliation budget. */
const failChecks = (endpoint: ScriptedTerminalLessCloud.Endpoint) =>
  Effect.gen(function* () {
    const c = yield* control
    for (let i = 0; i < 400; i++) yield* c.next(endpoint, { _tag: "Fail", error: unreachable })
  })

/** Runs `effect` until the reconciliation budget is spent; its failure's tag. */
const untilInDoubt = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.fork(Effect.flip(effect))
    yield* stepClock("200 seconds")
    return (yield* Fiber.join(fiber))._tag
  })

const closeInDoubt = Effect.gen(function* () {
  yield* atStart
  yield* (yield* control).next("batchClose", { _tag: "NotApplied503" })
  yield* failChecks("batchSummary")
  const tag = yield* untilInDoubt(BatchWorkflow.Close.execute({ requestId: "close-1", ...terminal }))
  expect(tag).toBe("OutcomeUnknown")
  expect(yield* typesOf(LifecycleEvent.batchStream("T-1"))).toEqual([
    "BatchCloseRequested",
    "OperationInDoubt"
  ])
  // Held: no later close of the terminal is sent while this one is in doubt.
  const held = yield* Effect.flip(BatchWorkflow.Close.execute({ requestId: "close-2", ...terminal }))
  expect(held).toMatchObject({ _tag: "OperationInProgress", rule: "one-operation-at-a-time" })
})

/** A MOTO sale of 42.00 (`sale-1`) left in doubt: its answer lost, every status check failing. */
const saleInDoubtOn = (serialNumber?: Identifiers.SerialNumber) =>
  Effect.gen(function* () {
    yield* atStart
    yield* (yield* control).next("motoSale", { _tag: "NotApplied503" })
    yield* failChecks("transactionStatus")
    const tag = yield* untilInDoubt(
      MotoWorkflow.Sale.execute({
        requestId: "sale-1",
        cardToken: token,
        amount: eur(4200n),
        transactionReference: reference,
        ...(serialNumber === undefined ? {} : { serialNumber })
      })
    )
    expect(tag).toBe("OutcomeUnknown")
  })
const saleInDoubt = saleInDoubtOn()

describe("an operator resolves a request in doubt outside a transaction", () => {
  it.effect("a batch close resolved as not applied releases the terminal: the close is sent again", () =>
    run(
      Effect.gen(function* () {
        yield* closeInDoubt
        const resolved = yield* InDoubtResolution.resolveAttempt({
          on: { _tag: "batch", serialNumber: "T-1" },
          requestId: "close-1",
          resolution: "notApplied",
          ...who
        })
        expect(resolved).toMatchObject({
          operation: "batchClose",
          resolution: "notApplied",
          streamId: "batch-T-1"
        })
        const closed = yield* BatchWorkflow.Close.execute({ requestId: "close-3", ...terminal })
        expect(closed.batchNumber).toBe("42")
        expect(yield* (yield* control).count("batchClose")).toBe(2)
        expect(yield* typesOf(LifecycleEvent.batchStream("T-1"))).toEqual([
          "BatchCloseRequested",
          "OperationInDoubt",
          "OperationRefused",
          "InDoubtResolved",
          "BatchCloseRequested",
          "BatchClosed"
        ])
      })
    )
  )

  it.effect(
    "a batch close resolved as applied counts as closed: the batch closes once, its sales are batched out",
    () =>
      run(
        Effect.gen(function* () {
          yield* closeInDoubt
          yield* InDoubtResolution.resolveAttempt({
            on: { _tag: "batch", serialNumber: "T-1" },
            requestId: "close-1",
            resolution: "applied",
            ...who
          })
          const again = yield* Effect.flip(BatchWorkflow.Close.execute({ requestId: "close-3", ...terminal }))
          expect(again).toMatchObject({ _tag: "OperationNotApplicable", rule: "batch-closes-once" })
          expect(yield* (yield* control).count("batchClose")).toBe(1)
          const store = yield* EventStore.EventStore
          const events = yield* LifecycleEvent.registry.decodeAll(
            yield* store.readStream(LifecycleEvent.batchStream("T-1"))
          )
          expect(BatchWorkflow.closedBatches(events).map((c) => c.batchNumber)).toEqual(["42"])
          // The request's re-run is never sent again.
          yield* Effect.flip(BatchWorkflow.Close.execute({ requestId: "close-1", ...terminal }))
          expect(yield* (yield* control).count("batchClose")).toBe(1)
        })
      )
  )

  it.effect("a resolution names the request in doubt: an ended or unknown request is refused by rule", () =>
    run(
      Effect.gen(function* () {
        yield* closeInDoubt
        const resolve = (requestId: string, extra: Partial<InDoubtResolution.AttemptInput> = {}) =>
          Effect.flip(
            InDoubtResolution.resolveAttempt({
              on: { _tag: "batch", serialNumber: "T-1" },
              requestId,
              resolution: "notApplied",
              ...who,
              ...extra
            })
          )
        expect(yield* resolve("close-9")).toMatchObject({ rule: "resolve-only-in-doubt" })
        expect(yield* resolve("close-1", { operator: " " })).toMatchObject({
          rule: "operator-and-reason-required"
        })
        yield* InDoubtResolution.resolveAttempt({
          on: { _tag: "batch", serialNumber: "T-1" },
          requestId: "close-1",
          resolution: "notApplied",
          ...who
        })
        expect(yield* resolve("close-1")).toMatchObject({ rule: "resolve-only-in-doubt" })
      })
    )
  )

  it.effect(
    "a MOTO sale resolved as applied opens its history under the guid the operator names, booked once in the ledger",
    () =>
      run(
        Effect.gen(function* () {
          yield* saleInDoubt
          const on = { _tag: "motoSale", transactionReference: reference } as const
          const noGuid = yield* Effect.flip(
            InDoubtResolution.resolveAttempt({ on, requestId: "sale-1", resolution: "applied", ...who })
          )
          expect(noGuid).toMatchObject({ rule: "applied-moto-sale-needs-guid" })
          const resolved = yield* InDoubtResolution.resolveAttempt({
            on,
            requestId: "sale-1",
            resolution: "applied",
            guid: "moto-found-in-report",
            ...who
          })
          expect(resolved).toMatchObject({ guid: "moto-found-in-report", amount: eur(4200n) })
          expect(yield* typesOf(LifecycleEvent.transactionStream("moto-found-in-report"))).toEqual([
            "TransactionRecorded"
          ])
          // The sale's history decides what follows: a refund above it is refused, nothing sent.
          const over = yield* Effect.flip(
            MotoWorkflow.Refund.execute({
              requestId: "refund-1",
              originalGuid: Identifiers.Guid.make("moto-found-in-report"),
              amount: eur(4201n)
            })
          )
          expect(over).toMatchObject({ _tag: "RefundExceedsSale" })
          expect(yield* (yield* control).count("motoRefund")).toBe(0)
          // The ledger books the sale once: its approval, not also the resolution.
          const store = yield* EventStore.EventStore
          const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 1000 })
          const { entries } = yield* Ledger.entriesOf(page.events)
          expect(entries.filter((e) => e.kind === "sale").map((e) => e.amount?.minorUnits)).toEqual([4200n])
        })
      )
  )

  it.effect(
    "a merchant's MOTO sale resolved by the platform's operator is the merchant's: the resolution, the history it opens and the ledger's entry name its tenant",
    () =>
      run(
        Effect.gen(function* () {
          // The sale was made for cafe-sol (its execution's tenant); the operator acts for no merchant.
          yield* saleInDoubt.pipe(Tenant.within("cafe-sol"))
          const on = { _tag: "motoSale", transactionReference: reference } as const
          expect(yield* InDoubtResolution.attemptOwner(on, "sale-1")).toBe("cafe-sol")
          expect(yield* InDoubtResolution.attemptOwner(on, "never-asked")).toBeUndefined()
          yield* InDoubtResolution.resolveAttempt({
            on,
            requestId: "sale-1",
            resolution: "applied",
            guid: "moto-of-cafe",
            ...who
          })
          const store = yield* EventStore.EventStore
          const tenants = (streamId: string) =>
            Effect.map(store.readStream(streamId), (events) =>
              events.map((e) => [e.type, Tenant.ofMetadata(e.metadata)])
            )
          expect(yield* tenants(LifecycleEvent.motoSaleStream(reference))).toEqual([
            ["MotoSaleRequested", "cafe-sol"],
            ["OperationInDoubt", "cafe-sol"],
            ["InDoubtResolved", "cafe-sol"],
            ["MotoSaleApproved", "cafe-sol"]
          ])
          expect(yield* tenants(LifecycleEvent.transactionStream("moto-of-cafe"))).toEqual([
            ["TransactionRecorded", "cafe-sol"]
          ])
          // cafe-sol's ledger books it once; another merchant's holds nothing of it.
          const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 1000 })
          const cafe = yield* Ledger.entriesOf(page.events, undefined, "cafe-sol")
          expect(cafe.entries.map((e) => [e.kind, e.amount?.minorUnits])).toEqual([["sale", 4200n]])
          const tea = yield* Ledger.entriesOf(page.events, undefined, "tea-house")
          expect(tea.entries).toEqual([])
        })
      )
  )

  it.effect(
    "a MOTO sale resolved as applied is recorded on the merchant's virtual terminal: its reversal is refused once that terminal's batch closed",
    () =>
      run(
        Effect.gen(function* () {
          const virtual = Identifiers.SerialNumber.make("V-9")
          yield* saleInDoubt
          const guid = Identifiers.Guid.make("moto-on-virtual")
          yield* InDoubtResolution.resolveAttempt({
            on: { _tag: "motoSale", transactionReference: reference },
            requestId: "sale-1",
            resolution: "applied",
            guid,
            ...who
          })
          const [opened] = yield* Effect.flatMap(EventStore.EventStore, (store) =>
            store.readStream(LifecycleEvent.transactionStream(guid))
          )
          expect(opened?.data).toMatchObject({ serialNumber: "V-9" })
          yield* BatchWorkflow.Close.execute({
            requestId: "close-v",
            serialNumber: virtual,
            terminalType: Identifiers.TerminalType.make("VIRTUAL"),
            batchNumber: Identifiers.BatchNumber.make("1")
          })
          const refused = yield* Effect.flip(
            MotoWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid })
          )
          expect(refused).toMatchObject({ _tag: "ReversalNotAllowed", rule: "moto-reversal-before-batch" })
          expect(yield* (yield* control).count("motoReversal")).toBe(0)
          // The ledger books the sale on that terminal.
          const store = yield* EventStore.EventStore
          const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 1000 })
          const { entries } = yield* Ledger.entriesOf(page.events)
          expect(entries.filter((e) => e.kind === "sale").map((e) => e.terminal)).toEqual(["V-9"])
        }).pipe(
          Effect.provideService(
            MotoWorkflow.VirtualTerminal,
            Option.some(Identifiers.SerialNumber.make("V-9"))
          )
        )
      )
  )

  it.effect(
    "a MOTO sale sent on a terminal the caller named is resolved onto that terminal, not the virtual one",
    () =>
      run(
        Effect.gen(function* () {
          yield* saleInDoubtOn(Identifiers.SerialNumber.make("T-7"))
          const guid = Identifiers.Guid.make("moto-on-named")
          yield* InDoubtResolution.resolveAttempt({
            on: { _tag: "motoSale", transactionReference: reference },
            requestId: "sale-1",
            resolution: "applied",
            guid,
            ...who
          })
          const store = yield* EventStore.EventStore
          const [opened] = yield* store.readStream(LifecycleEvent.transactionStream(guid))
          expect(opened?.data).toMatchObject({ serialNumber: "T-7" })
          const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 1000 })
          const { entries } = yield* Ledger.entriesOf(page.events)
          expect(entries.filter((e) => e.kind === "sale").map((e) => e.terminal)).toEqual(["T-7"])
        }).pipe(
          Effect.provideService(
            MotoWorkflow.VirtualTerminal,
            Option.some(Identifiers.SerialNumber.make("V-9"))
          )
        )
      )
  )

  it.effect("a reboot in doubt resolved as not applied is recorded on the device's stream", () =>
    run(
      Effect.gen(function* () {
        yield* atStart
        yield* (yield* control).next("deviceCommand", { _tag: "NotApplied503" })
        const device = { serialNumber: terminal.serialNumber, terminalType: terminal.terminalType }
        const reboot = yield* Effect.flip(
          DeviceCommandWorkflow.Send.execute({
            requestId: "r-1",
            ...device,
            command: "reboot",
            body: { force: false }
          })
        )
        expect(reboot._tag).toBe("OutcomeUnknown")
        yield* InDoubtResolution.resolveAttempt({
          on: { _tag: "device", serialNumber: "T-1" },
          requestId: "r-1",
          resolution: "notApplied",
          ...who
        })
        expect(yield* typesOf(LifecycleEvent.deviceStream("T-1"))).toEqual([
          "DeviceCommandRequested",
          "OperationInDoubt",
          "InDoubtResolved"
        ])
      })
    )
  )
})
