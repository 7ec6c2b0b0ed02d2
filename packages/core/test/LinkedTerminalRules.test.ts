/**
 * Linked operations sent to a terminal go through the money rules of their terminal-less
 * twins: decided from the original's history (refused before anything is sent when it
 * forbids them) and, once they end, folded into that history.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  Ledger,
  LifecycleEvent,
  LinkedTerminalRules,
  Money,
  OperationOutcome,
  OperationReport,
  PaymentProtocol,
  PreAuthorizationWorkflow,
  RemoteError,
  ReversalWorkflow,
  TerminalOperations,
  TransactionHistory,
  type PreAuthorization
} from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { advance, Cloud, layer, runToEnd, typesOf } from "./support/protocol.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const eur = (minor: bigint) => Money.make(minor, "EUR")
const preAuth = Identifiers.Guid.make("pa-1")
const rules = { mcc: Option.some("7011") }
const polling = (idempotencyKey: string) => ({ idempotencyKey, delivery: "polling" as const })

const refusalOf = <A, E>(exit: Exit.Exit<A, E>) => {
  if (Exit.isSuccess(exit)) return undefined
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure)
    ? (failure.value as { readonly _tag: string; readonly error?: string })
    : undefined
}

const openPreAuth = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  yield* TransactionHistory.openPreAuthorization(store, {
    guid: preAuth,
    amount: eur(10000n),
    authorisedAt: yield* DateTime.now,
    scheme: "Visa",
    mcc: "7011",
    transactionReference: "3f0c1f9e-6a3c-4d2b-9a41-0c8b7e2d5a10",
    serialNumber: terminal.serialNumber
  })
})

const record = (
  guid: string,
  kind: LifecycleEvent.TransactionKind,
  extra: { readonly batchNumber?: string } = {}
) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    yield* TransactionHistory.record(store, {
      guid,
      kind,
      amount: eur(5000n),
      at: yield* DateTime.now,
      serialNumber: terminal.serialNumber,
      ...extra
    })
  })

const sends = Effect.map(Cloud, (cloud) => cloud.recorded.sends.length)

const capture = (key: string, amount?: Money.Money) =>
  runToEnd(
    TerminalOperations.preAuthorizationCapture(
      { ...terminal, originalTransactionId: preAuth, ...(amount === undefined ? {} : { amount }) },
      polling(key)
    )
  )

const executionIdOf = (key: string, request: Parameters<typeof TerminalOperations.executionIdOf>[0]) =>
  TerminalOperations.executionIdOf(request, key)

describe("linked operations sent to a terminal go through the money rules", () => {
  it.effect(
    "a terminal capture is folded into the pre-authorization's history; a terminal-less capture of it is then refused, and so is a second terminal capture, nothing sent",
    () =>
      Effect.gen(function* () {
        yield* openPreAuth
        const first = yield* capture("c1", eur(9000n))
        expect(Exit.isSuccess(first) && first.value._tag).toBe("Approved")
        const executionId = yield* executionIdOf("c1", {
          operation: "preAuthorizationCapture",
          ...terminal,
          originalTransactionId: preAuth,
          amount: eur(9000n)
        } as Parameters<typeof TerminalOperations.executionIdOf>[0])
        const history = yield* typesOf(LifecycleEvent.transactionStream(preAuth))
        expect(history).toEqual(["PreAuthorizationOpened", "CaptureRequested", "PreAuthorizationCaptured"])
        const store = yield* EventStore.EventStore
        const loaded = yield* TransactionHistory.load(store, preAuth)
        const state = Option.getOrThrow(loaded.state)
        expect(state.preAuthorization?.capture?.requestId).toBe(LinkedTerminalRules.requestIdOf(executionId))
        expect(state.preAuthorization?.capture?.total).toEqual(eur(9000n))

        const terminalLess = yield* Effect.flip(
          PreAuthorizationWorkflow.Capture.execute({
            requestId: "tl-1",
            originalGuid: preAuth,
            amount: eur(9000n)
          })
        )
        expect(terminalLess._tag).toBe("CaptureAlreadyDone")

        // The capture is counted once in the ledger: by the terminal's outcome, not again by the fold.
        const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
        const { entries } = yield* Ledger.entriesOf(page.events)
        expect(entries.filter((e) => e.streamId.startsWith("txn-"))).toEqual([])
        expect(entries.filter((e) => e.amount?.minorUnits === 9000n)).toHaveLength(1)

        const second = yield* capture("c2", eur(9000n))
        expect(refusalOf(second)).toMatchObject({ _tag: "OperationRefused", error: "CaptureAlreadyDone" })
        expect(yield* sends).toBe(1)
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "after a terminal-less capture, a terminal capture of the same pre-authorization is refused, nothing sent",
    () =>
      Effect.gen(function* () {
        yield* openPreAuth
        const done = yield* PreAuthorizationWorkflow.Capture.execute({
          requestId: "tl-1",
          originalGuid: preAuth,
          amount: eur(9000n)
        })
        expect(done.captureGuid).toBe("cap-tl")
        const exit = yield* capture("c1")
        const refusal = refusalOf(exit)
        expect(refusal).toMatchObject({ _tag: "OperationRefused", error: "CaptureAlreadyDone" })
        expect((refusal as unknown as OperationOutcome.OperationRefused).message).toContain(
          "captured once only"
        )
        expect(yield* sends).toBe(0)
      }).pipe(
        Effect.provide(
          layer({
            linkedRules: rules,
            terminalLess: {
              preAuthorizationCapture: () =>
                Effect.succeed({
                  preAuthorizationCaptureGuid: "cap-tl"
                } as PreAuthorization.PreAuthorizationResponse)
            }
          })
        )
      )
  )

  it.effect(
    "a terminal capture above the scheme's tolerance or of an unknown transaction is refused, nothing sent",
    () =>
      Effect.gen(function* () {
        yield* openPreAuth
        // Visa lodging (MCC 7011): 15 % over the 100.00 held.
        const over = yield* capture("c1", eur(11600n))
        expect(refusalOf(over)).toMatchObject({ _tag: "OperationRefused", error: "CaptureOverTolerance" })
        // Reported as a terminal-less refusal is: rejected, with the rule's message.
        const report = OperationReport.ofError(refusalOf(over) as OperationOutcome.OperationRefused)
        expect(report.verdict).toBe("rejected")
        expect(report.summary).toContain("above the limit")
        const unknown = yield* runToEnd(
          TerminalOperations.preAuthorizationCapture(
            { ...terminal, originalTransactionId: Identifiers.Guid.make("never-seen") },
            polling("c2")
          )
        )
        expect(refusalOf(unknown)).toMatchObject({
          _tag: "OperationRefused",
          error: "TransactionNotRecorded"
        })
        expect(yield* sends).toBe(0)
        // Within the tolerance, without an amount (the whole hold): sent and folded.
        const whole = yield* capture("c3")
        expect(Exit.isSuccess(whole)).toBe(true)
        expect(yield* sends).toBe(1)
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "a declined terminal capture is recorded as failed: the pre-authorization can still be captured",
    () =>
      Effect.gen(function* () {
        const cloud = yield* Cloud
        yield* openPreAuth
        cloud.script({ result: { finStatus: "DECLINED", statusMessage: "Declined" } })
        const declined = yield* capture("c1", eur(5000n))
        expect(Exit.isSuccess(declined) && declined.value._tag).toBe("Declined")
        expect(yield* typesOf(LifecycleEvent.transactionStream(preAuth))).toEqual([
          "PreAuthorizationOpened",
          "CaptureRequested",
          "OperationFailed"
        ])
        const again = yield* capture("c2", eur(5000n))
        expect(Exit.isSuccess(again) && again.value._tag).toBe("Approved")
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "a terminal increase and decrease change the hold in the history; once captured the hold can no longer change",
    () =>
      Effect.gen(function* () {
        yield* openPreAuth
        const increase = (key: string, minor: bigint) =>
          runToEnd(
            TerminalOperations.preAuthorizationIncrease(
              { ...terminal, originalTransactionId: preAuth, amount: eur(minor) },
              polling(key)
            )
          )
        expect(Exit.isSuccess(yield* increase("i1", 2000n))).toBe(true)
        expect(Exit.isSuccess(yield* increase("i2", -1000n))).toBe(true)
        const store = yield* EventStore.EventStore
        const hold = Option.getOrThrow((yield* TransactionHistory.load(store, preAuth)).state)
          .preAuthorization?.hold
        expect(hold).toEqual(eur(11000n))
        expect(Exit.isSuccess(yield* capture("c1"))).toBe(true)
        expect(refusalOf(yield* increase("i3", 500n))).toMatchObject({
          _tag: "OperationRefused",
          error: "PreAuthorizationNotOpen"
        })
        expect(yield* sends).toBe(3)
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "sale, refund and pre-authorization reversals through the terminal are folded; a second one, or one of the wrong kind, is refused",
    () =>
      Effect.gen(function* () {
        yield* record("sale-1", "sale")
        yield* record("refund-1", "refund")
        yield* openPreAuth
        const saleReversal = (key: string, guid: string) =>
          runToEnd(
            TerminalOperations.saleReversal(
              { ...terminal, originalTransactionId: Identifiers.Guid.make(guid), amount: eur(5000n) },
              polling(key)
            )
          )
        expect(Exit.isSuccess(yield* saleReversal("r1", "sale-1"))).toBe(true)
        expect(yield* typesOf(LifecycleEvent.transactionStream("sale-1"))).toEqual([
          "TransactionRecorded",
          "ReversalRequested",
          "Reversed"
        ])
        expect(refusalOf(yield* saleReversal("r2", "sale-1"))).toMatchObject({
          _tag: "OperationRefused",
          error: "ReversalNotAllowed"
        })
        expect(refusalOf(yield* saleReversal("r3", "refund-1"))).toMatchObject({
          _tag: "OperationRefused",
          error: "OperationNotApplicable"
        })
        const refundReversal = yield* runToEnd(
          TerminalOperations.refundReversal(
            { ...terminal, originalTransactionId: Identifiers.Guid.make("refund-1"), amount: eur(5000n) },
            polling("r4")
          )
        )
        expect(Exit.isSuccess(refundReversal)).toBe(true)
        expect((yield* typesOf(LifecycleEvent.transactionStream("refund-1"))).at(-1)).toBe("Reversed")
        const refundAgain = yield* runToEnd(
          TerminalOperations.refundReversal(
            { ...terminal, originalTransactionId: Identifiers.Guid.make("refund-1"), amount: eur(5000n) },
            polling("r4b")
          )
        )
        expect(refusalOf(refundAgain)).toMatchObject({
          _tag: "OperationRefused",
          error: "ReversalNotAllowed"
        })
        const release = yield* runToEnd(
          TerminalOperations.preAuthorizationReversal(
            { ...terminal, originalTransactionId: preAuth },
            polling("r5")
          )
        )
        expect(Exit.isSuccess(release)).toBe(true)
        expect((yield* typesOf(LifecycleEvent.transactionStream(preAuth))).slice(-2)).toEqual([
          "ReversalRequested",
          "Reversed"
        ])
        const releaseAgain = yield* runToEnd(
          TerminalOperations.preAuthorizationReversal(
            { ...terminal, originalTransactionId: preAuth },
            polling("r6")
          )
        )
        expect(refusalOf(releaseAgain)).toMatchObject({ _tag: "OperationRefused", rule: "reverse-once" })
        expect(refusalOf(yield* capture("c1"))).toMatchObject({
          _tag: "OperationRefused",
          error: "PreAuthorizationNotOpen"
        })
        expect(yield* sends).toBe(3)
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  it.effect(
    "a partial sale reversal through the terminal is decided with the merchant's acquirer: sent for the one whose acquirer takes it, refused for the one left to the deployment's",
    () =>
      Effect.gen(function* () {
        yield* record("sale-split", "sale")
        yield* record("sale-whole", "sale")
        const partialReversal = (key: string, guid: string, merchant: string) =>
          runToEnd(
            TerminalOperations.saleReversal(
              { ...terminal, originalTransactionId: Identifiers.Guid.make(guid), amount: eur(1000n) },
              polling(key)
            )
          ).pipe(Tenant.within(merchant))
        const whole = yield* partialReversal("pr1", "sale-whole", "whole-inn")
        expect(refusalOf(whole)).toMatchObject({
          _tag: "OperationRefused",
          rule: "acquirer-partial-reversal"
        })
        expect(yield* sends).toBe(0)
        const split = yield* partialReversal("pr2", "sale-split", "split-bar")
        expect(Exit.isSuccess(split)).toBe(true)
        expect(yield* typesOf(LifecycleEvent.transactionStream("sale-split"))).toEqual([
          "TransactionRecorded",
          "ReversalRequested",
          "Reversed"
        ])
        expect(yield* sends).toBe(1)
      }).pipe(
        Effect.provide(
          layer({ linkedRules: rules }).pipe(
            Layer.provide(
              Layer.succeed(ReversalWorkflow.MerchantAcquirers, {
                of: (merchant) =>
                  Effect.succeed(
                    merchant === "split-bar"
                      ? Option.some({ partialReversal: true, captureReversal: undefined })
                      : Option.none()
                  )
              })
            )
          )
        )
      )
  )

  it.effect(
    "a MOTO reversal through the terminal: refused after 24 hours and after its terminal's batch closed, folded within them",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        yield* record("moto-old", "moToSale", { batchNumber: "6" })
        yield* advance("25 hours", "1 hour")
        yield* record("moto-batched", "moToSale", { batchNumber: "7" })
        yield* record("moto-open", "moToSale", { batchNumber: "8" })
        yield* store.append(LifecycleEvent.batchStream(terminal.serialNumber), EventStore.AnyVersion, [
          yield* LifecycleEvent.registry.encode(
            LifecycleEvent.BatchClosed.make({
              requestId: "close-7",
              at: yield* DateTime.now,
              batchNumber: "7",
              reconciled: false
            })
          )
        ])
        const reverse = (key: string, guid: string) =>
          runToEnd(
            TerminalOperations.motoReversal(
              { ...terminal, originalTransactionId: Identifiers.Guid.make(guid) },
              polling(key)
            )
          )
        expect(refusalOf(yield* reverse("m1", "moto-old"))).toMatchObject({
          _tag: "OperationRefused",
          error: "ReversalWindowClosed"
        })
        const batched = refusalOf(yield* reverse("m2", "moto-batched"))
        expect(batched).toMatchObject({ _tag: "OperationRefused", rule: "moto-reversal-before-batch" })
        expect(yield* sends).toBe(0)
        expect(Exit.isSuccess(yield* reverse("m3", "moto-open"))).toBe(true)
        expect((yield* typesOf(LifecycleEvent.transactionStream("moto-open"))).at(-1)).toBe("Reversed")
      }).pipe(Effect.provide(layer({ linkedRules: rules })))
  )

  describe("a linked operation whose answer is lost (issue 28, row 4)", () => {
    const reference = "3f0c1f9e-6a3c-4d2b-9a41-0c8b7e2d5a10"
    const serverError = new RemoteError.OutcomeUnknown({ message: "502", reason: "ServerError", status: 502 })
    const seedOriginal = Effect.map(Cloud, (cloud) =>
      cloud.seedStatus(reference, {
        finStatus: "AUTHORISED",
        efttransactionID: preAuth,
        type: "PRE_AUTHORIZATION"
      })
    )
    const pendingOf = Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      return Option.getOrThrow((yield* TransactionHistory.load(store, preAuth)).state).pending
    })

    it.effect(
      "is reconciled through the original's reference from its history (selector all) and concluded: applied, the original not locked",
      () =>
        Effect.gen(function* () {
          const cloud = yield* Cloud
          yield* openPreAuth
          yield* seedOriginal
          // The capture reaches the terminal, its answer is lost (a 502 after it was processed).
          cloud.script({
            answer: serverError,
            processed: true,
            underReference: reference,
            result: { type: "PRE_AUTHORIZATION_CAPTURE" }
          })
          // The caller gives only the original's guid, not its reference.
          const exit = yield* capture("c1", eur(9000n))
          expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
          if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("status")
          expect(cloud.recorded.statusQueries.length).toBeGreaterThan(0)
          expect(
            cloud.recorded.statusQueries.every((q) => q.reference === reference && q.selector === "all")
          ).toBe(true)
          expect(yield* typesOf(LifecycleEvent.transactionStream(preAuth))).toEqual([
            "PreAuthorizationOpened",
            "CaptureRequested",
            "PreAuthorizationCaptured"
          ])
          expect(yield* pendingOf).toBeUndefined()
          // What follows is decided by the money rules, not locked by an unknown outcome.
          const second = yield* capture("c2", eur(9000n))
          expect(refusalOf(second)).toMatchObject({ _tag: "OperationRefused", error: "CaptureAlreadyDone" })
          const release = yield* runToEnd(
            TerminalOperations.preAuthorizationReversal(
              { ...terminal, originalTransactionId: preAuth },
              polling("r1")
            )
          )
          expect(refusalOf(release)?.error).not.toBe("OperationInProgress")
          expect(cloud.recorded.sends).toHaveLength(Exit.isSuccess(release) ? 2 : 1)
        }).pipe(Effect.provide(layer({ linkedRules: rules })))
    )

    it.effect(
      "proved never charged by the status endpoint: concluded as not applied, the original can be captured again",
      () =>
        Effect.gen(function* () {
          const cloud = yield* Cloud
          yield* openPreAuth
          yield* seedOriginal
          cloud.script({ answer: serverError, processed: false })
          const lost = yield* capture("c1", eur(9000n))
          expect(refusalOf(lost)?._tag).toBe("NotCharged")
          expect(yield* typesOf(LifecycleEvent.transactionStream(preAuth))).toEqual([
            "PreAuthorizationOpened",
            "CaptureRequested",
            "OperationFailed"
          ])
          expect(yield* pendingOf).toBeUndefined()
          const again = yield* capture("c2", eur(9000n))
          expect(Exit.isSuccess(again) && again.value._tag).toBe("Approved")
        }).pipe(Effect.provide(layer({ linkedRules: rules, settings: { retryNotCharged: false } })))
    )

    it.effect(
      "an original without a reference in its history cannot be reconciled: the request stays in doubt",
      () =>
        Effect.gen(function* () {
          const cloud = yield* Cloud
          const store = yield* EventStore.EventStore
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
          expect(refusalOf(lost)?._tag).toBe("OutcomeUnresolved")
          expect((yield* typesOf(LifecycleEvent.transactionStream(preAuth))).at(-1)).toBe("OperationInDoubt")
          expect((yield* pendingOf)?.inDoubt).toBe(true)
          expect(cloud.recorded.statusQueries).toHaveLength(0)
        }).pipe(Effect.provide(layer({ linkedRules: rules })))
    )
  })

  it.effect("without the lifecycle's rules the payment protocol checks nothing (the rules are a layer)", () =>
    Effect.gen(function* () {
      const exit = yield* capture("c1", eur(9000n))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(yield* sends).toBe(1)
      expect(PaymentProtocol.TerminalOperation.name).toBe("TerminalOperation")
    }).pipe(Effect.provide(layer()))
  )
})
