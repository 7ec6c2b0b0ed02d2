/**
 * An operator resolves a terminal operation whose outcome stayed unknown (its payment
 * stream ended `OutcomeUnresolved`): recorded as an audited `TerminalOutcomeResolved` in
 * the execution's actions stream; applied, the ledger books it as the sale it stands for
 * and its transaction's history opens, so a refund follows it through the money rules;
 * not applied, nothing moves. Refused, naming the rule, when there is nothing to resolve,
 * when the guid is missing or booked already, and a second time.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Enumerations,
  Identifiers,
  Ledger,
  LifecycleEvent,
  Money,
  MoneyRules,
  PaymentEvents,
  PaymentProtocol,
  RemoteError,
  TerminalOperations,
  TerminalOutcomeRecorder,
  TerminalResolution,
  TransactionHistory
} from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { Cloud, everything, layer, runToEnd } from "./support/protocol.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const eur = (minor: bigint) => Money.make(minor, "EUR")
const guid = "4f8e2a10-9c1b-4d7e-8a5f-2b3c4d5e6f70"

const executionIdOf = (key: string) =>
  PaymentProtocol.TerminalOperation.executionId({
    idempotencyKey: key,
    request: {
      operation: "pingDevice",
      serialNumber: terminal.serialNumber,
      terminalType: terminal.terminalType
    },
    requestedAt: 0
  })

/** A sale whose polled result and status answers never decode: it ends OutcomeUnresolved. */
const unresolvedSale = (key: string, minor: bigint) =>
  Effect.gen(function* () {
    const exit = yield* runToEnd(
      TerminalOperations.sale(
        { ...terminal, amount: eur(minor) },
        { idempotencyKey: key, delivery: "polling" }
      ),
      { step: "5 seconds", max: "2 hours" }
    )
    expect(Exit.isFailure(exit) && (Cause.squash(exit.cause) as { _tag: string })._tag).toBe(
      "OutcomeUnresolved"
    )
    return yield* executionIdOf(key)
  })

const undecodable = { result: { totalAmount: Number.MAX_SAFE_INTEGER + 2 }, takes: "2 seconds" } as const

const refusalOf = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore>) =>
  Effect.map(
    Effect.flip(effect),
    (e) => e as unknown as { readonly _tag: string; readonly rule: string; readonly message: string }
  )

const ledgerEntries = Effect.gen(function* () {
  const events = yield* everything
  return (yield* Ledger.entriesOf(events)).entries
})

describe("TerminalResolution", () => {
  it.effect(
    "applied: recorded with who and why, booked once as a sale by the ledger, its history opened so a refund follows within the money rules",
    () =>
      Effect.gen(function* () {
        const executionId = yield* unresolvedSale("t1", 1050n)
        expect((yield* ledgerEntries).filter((e) => e.kind === "sale")).toHaveLength(0)

        const resolved = yield* TerminalResolution.resolve({
          executionId,
          resolution: "applied",
          guid,
          operator: "alice",
          reason: "the terminal's journal shows the sale approved",
          statusEndpoint: "SALE AUTHORISED"
        })
        expect(resolved).toMatchObject({ operation: "sale", resolution: "applied", guid })
        expect(resolved.amount).toEqual(eur(1050n))

        const store = yield* EventStore.EventStore
        const actions = yield* LifecycleEvent.registry.decodeAll(
          yield* store.readStream(LifecycleEvent.executionActionsStream(executionId))
        )
        expect(actions.map((e) => e.type)).toEqual(["TerminalOutcomeResolved"])
        expect(actions[0]?.data).toMatchObject({
          operator: "alice",
          reason: "the terminal's journal shows the sale approved",
          statusEndpoint: "SALE AUTHORISED",
          serialNumber: terminal.serialNumber
        })
        // The payment stream is not touched: it still ends unresolved.
        const payment = yield* store.readStream(PaymentEvents.paymentStream(executionId))
        expect(payment.at(-1)?.type).toBe("OutcomeUnresolved")

        // The ledger books it once, as the sale it stands for.
        const sales = (yield* ledgerEntries).filter((e) => e.kind === "sale")
        expect(sales).toHaveLength(1)
        expect(sales[0]).toMatchObject({
          amount: eur(1050n),
          terminal: terminal.serialNumber,
          original: guid
        })

        // The recorder opens its history (once, however often it runs), so a refund can follow it.
        expect(yield* TerminalOutcomeRecorder.catchUp({ mcc: Option.none() })).toBe(1)
        expect(yield* TerminalOutcomeRecorder.catchUp({ mcc: Option.none() })).toBe(0)
        const history = yield* TransactionHistory.load(store, guid)
        const state = Option.getOrThrow(history.state)
        expect(MoneyRules.left(state)).toEqual(eur(1050n))
        expect((yield* ledgerEntries).filter((e) => e.kind === "sale")).toHaveLength(1)

        // Resolved once: a second resolution is refused, naming who resolved it.
        const again = yield* refusalOf(
          TerminalResolution.resolve({
            executionId,
            resolution: "notApplied",
            operator: "bob",
            reason: "second look"
          })
        )
        expect(again.rule).toBe("resolve-only-in-doubt")
        expect(again.message).toContain("resolved as applied by alice")
      }).pipe(Effect.provide(layer({ scripts: [undecodable] })))
  )

  it.effect("not applied: recorded, nothing booked, no history opened", () =>
    Effect.gen(function* () {
      const executionId = yield* unresolvedSale("t2", 2050n)
      const resolved = yield* TerminalResolution.resolve({
        executionId,
        resolution: "notApplied",
        operator: "alice",
        reason: "the terminal's journal shows no transaction"
      })
      expect(resolved).toMatchObject({ resolution: "notApplied", guid: undefined, amount: undefined })
      expect((yield* ledgerEntries).filter((e) => e.kind === "sale")).toHaveLength(0)
      expect(yield* TerminalOutcomeRecorder.catchUp({ mcc: Option.none() })).toBe(0)
    }).pipe(Effect.provide(layer({ scripts: [undecodable] })))
  )

  it.effect(
    "refused, naming the rule: no guid for an applied sale, a blank reason, a zero or foreign amount, a guid already booked",
    () =>
      Effect.gen(function* () {
        const executionId = yield* unresolvedSale("t3", 3050n)
        const base = { executionId, resolution: "applied" as const, operator: "alice", reason: "journal" }
        expect((yield* refusalOf(TerminalResolution.resolve(base))).rule).toBe("applied-terminal-needs-guid")
        expect((yield* refusalOf(TerminalResolution.resolve({ ...base, guid, reason: " " }))).rule).toBe(
          "operator-and-reason-required"
        )
        expect((yield* refusalOf(TerminalResolution.resolve({ ...base, guid, amount: eur(0n) }))).rule).toBe(
          "resolved-amount-positive"
        )
        expect(
          (yield* refusalOf(TerminalResolution.resolve({ ...base, guid, amount: Money.make(3050n, "USD") })))
            .rule
        ).toBe("resolved-amount-positive")
        // A guid whose transaction is booked already (its history open) is not booked again.
        const store = yield* EventStore.EventStore
        const opened = yield* TransactionHistory.record(store, {
          guid,
          kind: "sale",
          amount: eur(3050n),
          at: yield* DateTime.now
        })
        expect(opened).toBe(true)
        const booked = yield* refusalOf(TerminalResolution.resolve({ ...base, guid }))
        expect(booked.rule).toBe("guid-already-recorded")
        // Nothing recorded by any refusal.
        expect(yield* store.readStream(LifecycleEvent.executionActionsStream(executionId))).toHaveLength(0)
      }).pipe(Effect.provide(layer({ scripts: [undecodable] })))
  )

  it.effect("an operation that did not end unresolved is not resolved (resolve-only-in-doubt)", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(
        TerminalOperations.sale(
          { ...terminal, amount: eur(4050n) },
          { idempotencyKey: "t4", delivery: "polling" }
        )
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      const refused = yield* refusalOf(
        TerminalResolution.resolve({
          executionId: yield* executionIdOf("t4"),
          resolution: "applied",
          guid,
          operator: "alice",
          reason: "journal"
        })
      )
      expect(refused.rule).toBe("resolve-only-in-doubt")
      expect(refused.message).toContain("ended PaymentAuthorised")
      const unknown = yield* refusalOf(
        TerminalResolution.resolve({
          executionId: "no-such",
          resolution: "notApplied",
          operator: "a",
          reason: "b"
        })
      )
      expect(unknown.rule).toBe("resolve-only-in-doubt")
    }).pipe(Effect.provide(layer({ scripts: [{ result: { finStatus: "AUTHORISED" } }] })))
  )

  it.effect(
    "a linked capture left in doubt on its pre-authorization is resolved there, not here (resolve-linked-on-original): booked once",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const cloud = yield* Cloud
        const preAuth = "pa-linked"
        yield* TransactionHistory.openPreAuthorization(store, {
          guid: preAuth,
          amount: eur(10000n),
          authorisedAt: yield* DateTime.now,
          scheme: "Visa",
          mcc: "7011",
          serialNumber: terminal.serialNumber
        })
        cloud.script({
          answer: new RemoteError.OutcomeUnknown({ message: "502", reason: "ServerError", status: 502 }),
          processed: true
        })
        const exit = yield* runToEnd(
          TerminalOperations.preAuthorizationCapture(
            { ...terminal, originalTransactionId: Identifiers.Guid.make(preAuth), amount: eur(9000n) },
            { idempotencyKey: "c1", delivery: "polling" }
          )
        )
        expect(Exit.isFailure(exit) && (Cause.squash(exit.cause) as { _tag: string })._tag).toBe(
          "OutcomeUnresolved"
        )
        const refused = yield* refusalOf(
          TerminalResolution.resolve({
            executionId: yield* executionIdOf("c1"),
            resolution: "applied",
            guid,
            operator: "alice",
            reason: "the acquirer's report shows the capture"
          })
        )
        expect(refused.rule).toBe("resolve-linked-on-original")
        expect(refused.message).toContain(`tillflow transactions resolve ${preAuth}`)
        expect((yield* ledgerEntries).filter((e) => e.kind === "capture")).toHaveLength(0)
      }).pipe(Effect.provide(layer({ linkedRules: { mcc: Option.some("7011") } })))
  )

  it("the operations it books are the ledger's", () => {
    for (const operation of Enumerations.OperationType.literals)
      expect([operation, TerminalResolution.movesMoney(operation)]).toEqual([
        operation,
        Ledger.kindOfOperation(operation) !== undefined
      ])
  })
})
