/**
 * An operator resolves a request whose outcome stayed unknown: recorded as an audited
 * `InDoubtResolved` on the transaction's stream (never by deleting history), folded as the
 * request's ending — applied as its approval, not applied as nothing changed — and refused,
 * naming the rule, when nothing is in doubt.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  InDoubtResolution,
  Ledger,
  LifecycleEvent,
  Money,
  MoneyRules,
  RemoteError,
  TerminalOperations,
  TransactionHistory
} from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { Cloud, layer, runToEnd, typesOf } from "./support/protocol.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const eur = (minor: bigint) => Money.make(minor, "EUR")
const preAuth = Identifiers.Guid.make("pa-doubt")
const rules = { mcc: Option.some("7011") }
const serverError = new RemoteError.OutcomeUnknown({ message: "502", reason: "ServerError", status: 502 })

const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit) ? undefined : Option.getOrUndefined(Cause.failureOption(exit.cause))

const stateOf = (guid: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(TransactionHistory.load(store, guid), (loaded) => Option.getOrThrow(loaded.state))
  )

const capture = (key: string, amount: Money.Money) =>
  runToEnd(
    TerminalOperations.preAuthorizationCapture(
      { ...terminal, originalTransactionId: preAuth, amount },
      { idempotencyKey: key, delivery: "polling" }
    )
  )

/** A pre-authorization without a reference (cannot be reconciled) whose terminal capture's answer is lost. */
const captureInDoubt = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const cloud = yield* Cloud
  yield* TransactionHistory.openPreAuthorization(store, {
    guid: preAuth,
    amount: eur(10000n),
    authorisedAt: yield* DateTime.now,
    scheme: "Visa",
    mcc: "7011",
    serialNumber: terminal.serialNumber
  })
  cloud.script({ answer: serverError, processed: true })
  const lost = yield* capture("c1", eur(9000n))
  expect((failureOf(lost) as { readonly _tag: string })._tag).toBe("OutcomeUnresolved")
  const pending = (yield* stateOf(preAuth)).pending
  expect(pending?.inDoubt).toBe(true)
  // Locked: the next capture is refused while the first is in doubt.
  const locked = yield* capture("c2", eur(9000n))
  expect(failureOf(locked)).toMatchObject({ _tag: "OperationRefused", error: "CaptureAlreadyDone" })
  return pending!.requestId
})

describe("an operator resolves a request in doubt", () => {
  it.effect(
    "not applied: recorded with who, why and what the status endpoint said; the transaction is released and can be captured",
    () =>
      Effect.gen(function* () {
        const requestId = yield* captureInDoubt
        const resolved = yield* InDoubtResolution.resolve({
          guid: preAuth,
          requestId,
          resolution: "notApplied",
          operator: "alice",
          reason: "the acquirer's report shows no capture",
          statusEndpoint: "NOT FOUND"
        })
        expect(resolved).toMatchObject({ operation: "capture", resolution: "notApplied" })
        const types = yield* typesOf(LifecycleEvent.transactionStream(preAuth))
        // Nothing deleted: the request, its doubt and the refusal it caused stay in the history.
        expect(types).toEqual([
          "PreAuthorizationOpened",
          "CaptureRequested",
          "OperationInDoubt",
          "OperationRefused",
          "InDoubtResolved"
        ])
        const store = yield* EventStore.EventStore
        const events = yield* LifecycleEvent.registry.decodeAll(
          yield* store.readStream(LifecycleEvent.transactionStream(preAuth))
        )
        const last = events.at(-1)!
        expect(last.data).toMatchObject({
          requestId,
          operation: "capture",
          resolution: "notApplied",
          operator: "alice",
          reason: "the acquirer's report shows no capture",
          statusEndpoint: "NOT FOUND"
        })
        const state = yield* stateOf(preAuth)
        expect(state.pending).toBeUndefined()
        expect(state.preAuthorization?.status).toBe("AUTHORISED")
        const again = yield* capture("c3", eur(9000n))
        expect(Exit.isSuccess(again) && again.value._tag).toBe("Approved")
        expect((yield* stateOf(preAuth)).preAuthorization?.capture?.total).toEqual(eur(9000n))
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect("applied: folded like the approval; a second capture is refused as captured once", () =>
    Effect.gen(function* () {
      const requestId = yield* captureInDoubt
      const resolved = yield* InDoubtResolution.resolve({
        guid: preAuth,
        requestId,
        resolution: "applied",
        operator: "bob",
        reason: "the cardholder's statement shows 90.00 captured"
      })
      expect(resolved.amount).toEqual(eur(9000n))
      const state = yield* stateOf(preAuth)
      expect(state.pending).toBeUndefined()
      expect(state.preAuthorization?.status).toBe("CAPTURED")
      expect(state.preAuthorization?.capture).toMatchObject({ requestId, total: eur(9000n) })
      const second = yield* capture("c3", eur(9000n))
      expect(failureOf(second)).toMatchObject({ _tag: "OperationRefused", error: "CaptureAlreadyDone" })
      // Resolved once: a second resolution finds nothing in doubt.
      const twice = yield* Effect.flip(
        InDoubtResolution.resolve({
          guid: preAuth,
          requestId,
          resolution: "notApplied",
          operator: "bob",
          reason: "changed my mind"
        })
      )
      expect(twice).toMatchObject({ _tag: "ResolutionRefused", rule: "resolve-only-in-doubt" })
    }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect("an applied refund in doubt counts against what the sale can still credit", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const at = yield* DateTime.now
      yield* TransactionHistory.record(store, {
        guid: "sale-doubt",
        kind: "sale",
        amount: eur(5000n),
        at,
        serialNumber: terminal.serialNumber
      })
      yield* store.append(
        LifecycleEvent.transactionStream("sale-doubt"),
        EventStore.AnyVersion,
        yield* LifecycleEvent.registry.encodeAll([
          LifecycleEvent.RefundRequested.make({ requestId: "terminal-r1", at, amount: eur(2000n) }),
          LifecycleEvent.OperationInDoubt.make({
            requestId: "terminal-r1",
            at,
            operation: "refund",
            message: "reconciliation inconclusive"
          })
        ])
      )
      yield* InDoubtResolution.resolve({
        guid: "sale-doubt",
        requestId: "terminal-r1",
        resolution: "applied",
        operator: "carol",
        reason: "the terminal's receipt shows the refund"
      })
      const state = yield* stateOf("sale-doubt")
      expect(state.pending).toBeUndefined()
      expect(TransactionHistory.refunded(state)).toEqual(eur(2000n))
      expect(MoneyRules.left(state)).toEqual(eur(3000n))
    }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "the ledger books an applied resolution as the fact it stands for, on the original's terminal and merchant; a not-applied one books nothing",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const at = yield* DateTime.now
        const inDoubt = (guid: string, requestId: string) =>
          Effect.gen(function* () {
            yield* TransactionHistory.record(store, {
              guid,
              kind: "sale",
              amount: eur(5000n),
              at,
              serialNumber: terminal.serialNumber,
              merchant: "MID-7"
            })
            yield* store.append(
              LifecycleEvent.transactionStream(guid),
              EventStore.AnyVersion,
              yield* LifecycleEvent.registry.encodeAll([
                LifecycleEvent.RefundRequested.make({ requestId, at, amount: eur(2000n) }),
                LifecycleEvent.OperationInDoubt.make({
                  requestId,
                  at,
                  operation: "refund",
                  message: "unknown"
                })
              ])
            )
          })
        yield* inDoubt("sale-a", "terminal-a")
        yield* inDoubt("sale-b", "terminal-b")
        const resolve = (guid: string, requestId: string, resolution: "applied" | "notApplied") =>
          InDoubtResolution.resolve({ guid, requestId, resolution, operator: "dana", reason: "the receipt" })
        yield* resolve("sale-a", "terminal-a", "applied")
        yield* resolve("sale-b", "terminal-b", "notApplied")
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
        const { entries } = yield* Ledger.entriesOf(page.events)
        const resolved = entries.filter((e) => e.eventType === "InDoubtResolved")
        expect(resolved).toHaveLength(1)
        expect(resolved[0]).toMatchObject({
          kind: "refund",
          amount: eur(2000n),
          terminal: terminal.serialNumber,
          merchant: "MID-7",
          streamId: LifecycleEvent.transactionStream("sale-a")
        })
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "refused naming the rule: nothing in doubt, a request in flight, no operator or reason, an unknown transaction",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const at = yield* DateTime.now
        yield* TransactionHistory.record(store, { guid: "sale-ok", kind: "sale", amount: eur(5000n), at })
        const attempt = (input: Partial<InDoubtResolution.Input>) =>
          Effect.flip(
            InDoubtResolution.resolve({
              guid: "sale-ok",
              requestId: "r1",
              resolution: "applied",
              operator: "alice",
              reason: "seen on the report",
              ...input
            })
          )
        expect(yield* attempt({})).toMatchObject({ _tag: "ResolutionRefused", rule: "resolve-only-in-doubt" })
        yield* store.append(
          LifecycleEvent.transactionStream("sale-ok"),
          EventStore.AnyVersion,
          yield* LifecycleEvent.registry.encodeAll([
            LifecycleEvent.RefundRequested.make({ requestId: "r1", at, amount: eur(100n) })
          ])
        )
        const inFlight = yield* attempt({})
        expect(inFlight).toMatchObject({ _tag: "ResolutionRefused", rule: "resolve-only-in-doubt" })
        expect(inFlight.message).toContain("in flight")
        expect(yield* attempt({ operator: " " })).toMatchObject({ rule: "operator-and-reason-required" })
        expect(yield* attempt({ reason: "" })).toMatchObject({ rule: "operator-and-reason-required" })
        expect(yield* attempt({ guid: "never-seen" })).toMatchObject({ _tag: "TransactionNotRecorded" })
        expect(yield* typesOf(LifecycleEvent.transactionStream("sale-ok"))).toEqual([
          "TransactionRecorded",
          "RefundRequested"
        ])
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )
})
