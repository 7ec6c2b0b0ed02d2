import { describe, expect, it } from "@effect/vitest"
import {
  LifecycleEvent,
  Money,
  OperationOutcome,
  TransactionHistory,
  TransactionResult
} from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const result = Schema.decodeUnknownSync(TransactionResult.TransactionResult)({
  efttransactionID: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
  transactionReference: "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f",
  cardSchemeName: "Visa",
  tenderType: "CREDIT",
  currency: "EUR",
  totalAmount: 15000,
  requestedAmount: 15000,
  efttimestamp: 1740823200000,
  batchNumber: "7",
  finStatus: "AUTHORISED",
  type: "SALE",
  mid: ""
})

const facts = (operation: string): OperationOutcome.Facts => ({
  operation,
  serialNumber: "0821032398",
  terminalType: "PAXA920",
  attempt: 1,
  attemptId: "a-1",
  transactionReference: "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f",
  finStatus: "AUTHORISED",
  source: "polling",
  totalAmount: Money.make(15000n, "EUR"),
  cardSchemeName: "MasterCard",
  efttransactionID: "guid-from-outcome"
})

describe("TransactionHistory", () => {
  it.effect("a pre-authorization opens from its terminal result, once; a second open is a no-op", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const authorised = yield* TransactionHistory.preAuthorizationFromResult(result, {
        mcc: "7011",
        serialNumber: "0821032398"
      })
      expect(authorised).toMatchObject({
        guid: "01236fc0-8192-11eb-9aca-ad4b0e95f241",
        amount: Money.make(15000n, "EUR"),
        scheme: "Visa",
        tenderType: "CREDIT",
        batchNumber: "7",
        serialNumber: "0821032398"
      })
      expect(DateTime.formatIso(authorised.authorisedAt)).toBe("2025-03-01T10:00:00.000Z")
      expect(yield* TransactionHistory.openPreAuthorization(store, authorised)).toBe(true)
      expect(yield* TransactionHistory.openPreAuthorization(store, authorised)).toBe(false)
      const { state, version } = yield* TransactionHistory.load(store, authorised.guid)
      expect(version).toBe(1)
      expect(Option.getOrThrow(state).preAuthorization).toMatchObject({
        hold: Money.make(15000n, "EUR"),
        status: "AUTHORISED"
      })
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect(
    "a status result's local wall-clock time (zone unknown) opens the window at the earliest instant it can be, not as UTC",
    () =>
      Effect.gen(function* () {
        const fromStatus = Schema.decodeUnknownSync(TransactionResult.TransactionStatusResult)({
          ...Schema.encodeSync(TransactionResult.TransactionResult)(result),
          efttimestamp: "20250301100000000"
        })
        const authorised = yield* TransactionHistory.preAuthorizationFromResult(fromStatus, {
          mcc: "7011",
          serialNumber: "0821032398"
        })
        // 10:00 local at UTC+14 is 20:00 UTC the day before: a window from it closes early, never late.
        expect(DateTime.formatIso(authorised.authorisedAt)).toBe("2025-02-28T20:00:00.000Z")
      })
  )

  it("a result without guid, amount or time cannot open a history, and says what it lacks", () => {
    const noTime = Schema.decodeUnknownSync(TransactionResult.TransactionResult)({
      efttransactionID: "g",
      currency: "EUR",
      totalAmount: 1
    })
    const error = TransactionHistory.completedFromResult(noTime, { kind: "sale" })
    expect(Either.isLeft(error) && error.left.message).toBe("the sale result g carries no efttimestamp")
  })

  it("a pre-authorization opened from a terminal's outcome carries the tender type (its capture window depends on it) and the batch the result gave", () => {
    const at = DateTime.unsafeMake("2025-03-01T10:00:00Z")
    const context = {
      operation: "preAuthorization",
      serialNumber: "0821032398",
      terminalType: "PAXA920",
      attempt: 1,
      attemptId: "a-1",
      financial: true
    }
    const fromResult = OperationOutcome.factsOf(result, context, "polling")
    expect(fromResult).toMatchObject({ tenderType: "CREDIT", batchNumber: "7" })
    const opened = Either.getOrThrow(
      TransactionHistory.preAuthorizationFromOutcome(new OperationOutcome.Approved({ facts: fromResult }), {
        mcc: "7011",
        authorisedAt: at
      })
    )
    expect(opened).toMatchObject({ tenderType: "CREDIT", batchNumber: "7" })
    const sale = Either.getOrThrow(
      TransactionHistory.completedFromOutcome(
        new OperationOutcome.Approved({ facts: { ...fromResult, operation: "sale" } }),
        { at }
      )
    )
    expect(sale.batchNumber).toBe("7")
  })

  it("approved outcomes of the terminal flows open a pre-authorization or record a sale; others do not", () => {
    const at = DateTime.unsafeMake("2025-03-01T10:00:00Z")
    const preAuth = TransactionHistory.preAuthorizationFromOutcome(
      new OperationOutcome.Approved({ facts: facts("preAuthorization") }),
      { mcc: "7011", authorisedAt: at }
    )
    expect(Either.getOrThrow(preAuth)).toMatchObject({
      guid: "guid-from-outcome",
      via: "preAuthorization",
      scheme: "MasterCard"
    })
    const sale = TransactionHistory.completedFromOutcome(
      new OperationOutcome.Approved({ facts: facts("sale") }),
      { at }
    )
    expect(Either.getOrThrow(sale)).toMatchObject({ kind: "sale", amount: Money.make(15000n, "EUR") })
    const declined = TransactionHistory.preAuthorizationFromOutcome(
      new OperationOutcome.Declined({ facts: facts("preAuthorization") }),
      { mcc: "7011", authorisedAt: at }
    )
    expect(Either.isLeft(declined)).toBe(true)
    const printed = TransactionHistory.completedFromOutcome(
      new OperationOutcome.Approved({ facts: facts("printReceipt") }),
      { at }
    )
    expect(Either.isLeft(printed)).toBe(true)
    expect(LifecycleEvent.transactionStream("g")).toBe("txn-g")
  })
})
