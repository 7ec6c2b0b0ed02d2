import { describe, expect, it } from "@effect/vitest"
import {
  CallbackRegistration,
  PaymentEvents,
  Identifiers,
  Money,
  OperationOutcome,
  PaymentProtocol,
  RemoteError,
  TerminalOperations,
  TransactionRequest
} from "@tillflow/core"
import { EventStore, HashChain, Redaction } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Fiber from "effect/Fiber"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { advance, advanceUntil, Cloud, everything, layer, runToEnd, typesOf } from "./support/protocol.js"

const terminal = {
  serialNumber: Identifiers.SerialNumber.make("0821032398"),
  terminalType: Identifiers.TerminalType.make("A920")
}
const eur = (minor: bigint) => Money.make(minor, "EUR")

const executionOf = (key: string) =>
  Effect.map(
    PaymentProtocol.TerminalOperation.executionId({
      idempotencyKey: key,
      request: {
        operation: "pingDevice",
        serialNumber: terminal.serialNumber,
        terminalType: terminal.terminalType
      },
      requestedAt: 0
    }),
    (id) => PaymentEvents.paymentStream(id)
  )

describe("PaymentProtocol, requests out of bounds", () => {
  it.effect(
    "a sale above the amount limit fails InvalidRequest naming the limit, and nothing is sent or recorded",
    () =>
      Effect.gen(function* () {
        // 2^53 + 1 minor units: was sent, charged, and its result could not be decoded.
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: eur(9_007_199_254_740_993n) },
            { idempotencyKey: "huge", delivery: "polling" }
          )
        )
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = Cause.squash(exit.cause)
          expect(error).toBeInstanceOf(OperationOutcome.InvalidRequest)
          expect(String((error as { readonly message: string }).message)).toContain(
            "at most 999999999999 minor units (9999999999.99 EUR)"
          )
        }
        const cloud = yield* Cloud
        expect(cloud.recorded.sends).toHaveLength(0)
        expect(yield* everything).toEqual([])
      }).pipe(Effect.provide(layer()))
  )
})

describe("PaymentProtocol, polling", () => {
  it.effect("a sale polled 204 then 200 AUTHORISED ends Approved, with one POST", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(
        TerminalOperations.sale(
          { ...terminal, amount: eur(1050n) },
          { idempotencyKey: "k1", delivery: "polling" }
        )
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      if (Exit.isSuccess(exit)) {
        expect(exit.value._tag).toBe("Approved")
        expect(exit.value.facts.finStatus).toBe("AUTHORISED")
        expect(exit.value.facts.requestedAmount).toEqual(eur(1050n))
        expect(exit.value.facts.source).toBe("polling")
      }
      const cloud = yield* Cloud
      expect(cloud.recorded.sends).toHaveLength(1)
      expect(cloud.recorded.polls.length).toBeGreaterThan(1)
      const types = yield* typesOf(yield* executionOf("k1"))
      expect(types).toEqual(["OperationRequested", "AttemptRecorded", "AttemptAccepted", "PaymentAuthorised"])
    }).pipe(Effect.provide(layer()))
  )

  it.effect("403 is a typed failure, sent once, never retried", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(
        TerminalOperations.sale(
          { ...terminal, amount: eur(1050n) },
          { idempotencyKey: "k2", delivery: "polling" }
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const cloud = yield* Cloud
      expect(cloud.recorded.sends).toHaveLength(1)
    }).pipe(
      Effect.provide(
        layer({ scripts: [{ answer: new RemoteError.Forbidden({ message: "no", status: 403, body: "" }) }] })
      )
    )
  )
})

describe("PaymentProtocol, callback", () => {
  it.effect(
    "callback mode: the receiver's delivery settles the sale; the token is checked against its stored hash",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: eur(1050n) },
            { idempotencyKey: "c1", delivery: "callback" }
          )
        )
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("callback")
        const cloud = yield* Cloud
        expect(cloud.recorded.sends).toHaveLength(1)
        expect(cloud.recorded.polls).toHaveLength(0)
        expect(cloud.recorded.statusQueries).toHaveLength(0)
        expect(cloud.recorded.deliveries).toHaveLength(1)
      }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "callback mode without a callback: the fallback timer fires and the status endpoint settles it",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: eur(1050n) },
            { idempotencyKey: "c2", delivery: "callback" }
          )
        )
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("status")
        const cloud = yield* Cloud
        expect(cloud.recorded.sends).toHaveLength(1)
        expect(cloud.recorded.statusQueries.length).toBeGreaterThan(0)
      }).pipe(Effect.provide(layer({ scripts: [{ deliver: false }] })))
  )
})

const isUuidV4 = Schema.is(Identifiers.TransactionReference)
const referenceOf = (request: TransactionRequest.TransactionRequest) =>
  Option.getOrUndefined(TransactionRequest.transactionReference(request))
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit)
    ? Option.getOrUndefined(
        Exit.causeOption(exit).pipe(Option.flatMap((c) => Option.fromNullable((c as { error?: E }).error)))
      )
    : undefined
const sale = (key: string, minor = 1050n, delivery: "callback" | "polling" = "polling", extra = {}) =>
  TerminalOperations.sale({ ...terminal, amount: eur(minor) }, { idempotencyKey: key, delivery, ...extra })

describe("PaymentProtocol, outcomes", () => {
  const cases = [
    { finStatus: "DECLINED", tag: "Declined", event: "PaymentDeclined", extra: { issuerResponseCode: "05" } },
    {
      finStatus: "PARTIAL_APPROVAL",
      tag: "PartiallyApproved",
      event: "PaymentPartiallyApproved",
      extra: { dueAmount: 1890, totalAmount: 1889 }
    },
    { finStatus: "CANCELLED", tag: "Cancelled", event: "PaymentCancelled", extra: {} },
    { finStatus: "FAILED", tag: "Failed", event: "PaymentFailed", extra: { errorMessage: "card unreadable" } }
  ] as const
  for (const c of cases) {
    for (const delivery of ["polling", "callback"] as const) {
      it.effect(`finStatus ${c.finStatus} by ${delivery} ends ${c.tag} with ${c.event}`, () =>
        Effect.gen(function* () {
          const key = `o-${c.finStatus}-${delivery}`
          const exit = yield* runToEnd(sale(key, 3779n, delivery))
          expect(Exit.isSuccess(exit) && exit.value._tag).toBe(c.tag)
          if (Exit.isSuccess(exit) && c.tag === "PartiallyApproved") {
            expect(exit.value.facts.dueAmount).toEqual(eur(1890n))
          }
          if (Exit.isSuccess(exit) && c.tag === "Declined")
            expect(exit.value.facts.issuerResponseCode).toBe("05")
          const types = yield* typesOf(yield* executionOf(key))
          expect(types.at(-1)).toBe(c.event)
          expect((yield* Cloud).recorded.sends).toHaveLength(1)
        }).pipe(Effect.provide(layer({ scripts: [{ result: { finStatus: c.finStatus, ...c.extra } }] })))
      )
    }
  }
})

describe("PaymentProtocol, busy and offline", () => {
  it.effect(
    "1001 busy twice: new attempts with fresh UUID v4 references on the recovery rhythm, then charged once",
    () =>
      Effect.gen(function* () {
        const first = Schema.decodeSync(Identifiers.TransactionReference)(
          "3f2b8c1e-9d4a-4b6f-8e2d-1a2b3c4d5e6f"
        )
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...terminal, amount: eur(1050n), transactionReference: first },
            { idempotencyKey: "b1", delivery: "polling" }
          )
        )
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
        const cloud = yield* Cloud
        const refs = cloud.recorded.sends.map((s) => referenceOf(s.request))
        expect(refs).toHaveLength(3)
        expect(refs[0]).toBe(first)
        expect(new Set(refs).size).toBe(3)
        for (const ref of refs) expect(isUuidV4(ref)).toBe(true)
        const at = cloud.recorded.sends.map((s) => s.at)
        expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(5_000)
        expect((at[2] ?? 0) - (at[1] ?? 0)).toBeGreaterThanOrEqual(5_000)
        expect(cloud.recorded.processed).toHaveLength(1)
        if (Exit.isSuccess(exit)) expect(exit.value.facts.attempt).toBe(3)
        const types = yield* typesOf(yield* executionOf("b1"))
        expect(types.filter((t) => t === "AttemptNotProcessed")).toHaveLength(2)
      }).pipe(
        Effect.provide(
          layer({
            scripts: [
              { answer: new RemoteError.DeviceBusy({ message: "busy", body: "" }) },
              { answer: new RemoteError.DeviceBusy({ message: "busy", body: "" }) },
              {}
            ]
          })
        )
      )
  )

  it.effect(
    "1002 offline until the caller's deadline: TerminalUnavailable, never more sends than the deadline allows",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(sale("off", 1050n, "polling", { deadline: "30 seconds" }))
        const error = failureOf(exit)
        expect(error?._tag).toBe("TerminalUnavailable")
        const cloud = yield* Cloud
        // Sends on the recovery rhythm (at least 5 s apart), each strictly before the
        // deadline: at most 0, 5, 10, 15, 20, 25 s. The test clock moves in 1 s steps while
        // the workflow settles, so the instants (and the count) drift with the machine's
        // load; the rule does not.
        const sendsAt = cloud.recorded.sends.map((send) => send.at)
        expect(cloud.recorded.processed).toHaveLength(0)
        const execution = yield* executionOf("off")
        const types = yield* typesOf(execution)
        expect(types.at(-1)).toBe("TerminalUnavailable")
        const store = yield* EventStore.EventStore
        const last = (yield* store.readStream(execution)).at(-1)
        const deadlineAt = (last?.data as { readonly deadlineAt: number }).deadlineAt
        expect(sendsAt.length).toBeGreaterThanOrEqual(2)
        expect(sendsAt.length).toBeLessThanOrEqual(6)
        for (const at of sendsAt) expect(at).toBeLessThan(deadlineAt)
        for (let i = 1; i < sendsAt.length; i++)
          expect((sendsAt[i] ?? 0) - (sendsAt[i - 1] ?? 0)).toBeGreaterThanOrEqual(5_000)
      }).pipe(
        Effect.provide(
          layer({
            scripts: Array.from({ length: 20 }, () => ({
              answer: new RemoteError.DeviceOffline({ message: "offline", body: "" })
            }))
          })
        )
      )
  )

  it.effect("a caller queued past its deadline sends nothing", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(
        PaymentProtocol.TerminalOperation.execute({
          idempotencyKey: "late",
          request: {
            operation: "pingDevice",
            serialNumber: terminal.serialNumber,
            terminalType: terminal.terminalType
          },
          requestedAt: 0,
          deadlineAt: -1
        })
      )
      expect(failureOf(exit)?._tag).toBe("TerminalUnavailable")
      expect((yield* Cloud).recorded.sends).toHaveLength(0)
    }).pipe(Effect.provide(layer()))
  )
})

describe("PaymentProtocol, rejections", () => {
  const rejections = [
    new RemoteError.Forbidden({ message: "bad key", status: 403, body: "" }),
    new RemoteError.ValidationFailed({ message: "amount missing", body: "" }),
    new RemoteError.GatewayRejected({ message: "business rule", status: 400, body: "" })
  ]
  for (const error of rejections) {
    it.effect(
      `${error._tag} (${RemoteError.statusOf(error)}) is OperationRejected, sent once, not retried`,
      () =>
        Effect.gen(function* () {
          const exit = yield* runToEnd(sale(`r-${error._tag}`))
          const failure = failureOf(exit)
          expect(failure?._tag).toBe("OperationRejected")
          if (failure?._tag === "OperationRejected") expect(failure.error._tag).toBe(error._tag)
          expect((yield* Cloud).recorded.sends).toHaveLength(1)
          const types = yield* typesOf(yield* executionOf(`r-${error._tag}`))
          expect(types.at(-1)).toBe("OperationRejected")
        }).pipe(Effect.provide(layer({ scripts: [{ answer: error }] })))
    )
  }
})

describe("PaymentProtocol, outcome unknown", () => {
  const serverError = new RemoteError.OutcomeUnknown({ message: "502", reason: "ServerError", status: 502 })

  it.effect(
    "a 5xx after the terminal processed it: reconciled by status, never sent again, charged once",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(sale("u1"))
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("status")
        const cloud = yield* Cloud
        expect(cloud.recorded.sends).toHaveLength(1)
        expect(cloud.recorded.processed).toHaveLength(1)
        expect(cloud.recorded.statusQueries[0]?.reference).toBe(referenceOf(cloud.recorded.sends[0]!.request))
        expect(cloud.recorded.statusQueries[0]?.selector).toBe("first")
      }).pipe(Effect.provide(layer({ scripts: [{ answer: serverError, processed: true }] })))
  )

  it.effect("NOT FOUND after 90 s means not charged: a new attempt is sent and charges once", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(sale("u2", 1050n, "polling", { deadline: "10 minutes" }))
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
      const cloud = yield* Cloud
      expect(cloud.recorded.sends).toHaveLength(2)
      expect(cloud.recorded.processed).toHaveLength(1)
      const [a, b] = cloud.recorded.sends
      expect(referenceOf(a!.request)).not.toBe(referenceOf(b!.request))
      // Not before the 90 s window has passed since the first attempt.
      expect(b!.at - a!.at).toBeGreaterThan(90_000)
      const queried = cloud.recorded.statusQueries.filter((q) => q.reference === referenceOf(a!.request))
      expect(queried.some((q) => q.at - a!.at < 90_000)).toBe(true)
      const types = yield* typesOf(yield* executionOf("u2"))
      expect(types).toContain("AttemptNotCharged")
      expect(types.at(-1)).toBe("PaymentAuthorised")
    }).pipe(Effect.provide(layer({ scripts: [{ answer: serverError, processed: false }, {}] })))
  )

  it.effect(
    "NOT FOUND after 90 s without permission to retry: a typed NotCharged and PaymentNotCharged",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(sale("u3", 1050n, "polling", { retryNotCharged: false }))
        const failure = failureOf(exit)
        expect(failure?._tag).toBe("NotCharged")
        const cloud = yield* Cloud
        expect(cloud.recorded.sends).toHaveLength(1)
        if (failure?._tag === "NotCharged") {
          expect(failure.transactionReference).toBe(referenceOf(cloud.recorded.sends[0]!.request))
        }
        const types = yield* typesOf(yield* executionOf("u3"))
        expect(types.at(-1)).toBe("PaymentNotCharged")
      }).pipe(Effect.provide(layer({ scripts: [{ answer: serverError, processed: false }] })))
  )

  it.effect(
    "finStatus UNDEFINED in a polled result reconciles; IN_PROGRESS is asked again after a pause",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(sale("u4"))
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
        if (Exit.isSuccess(exit)) {
          expect(exit.value.facts.source).toBe("status")
          expect(exit.value.facts.finStatus).toBe("AUTHORISED")
        }
        const cloud = yield* Cloud
        expect(cloud.recorded.statusQueries).toHaveLength(3)
        const [q1, q2, q3] = cloud.recorded.statusQueries
        expect(q2!.at - q1!.at).toBeGreaterThanOrEqual(5_000)
        expect(q3!.at - q2!.at).toBeGreaterThanOrEqual(5_000)
        const types = yield* typesOf(yield* executionOf("u4"))
        expect(types.filter((t) => t === "ReconciliationChecked")).toHaveLength(3)
      }).pipe(
        Effect.provide(
          layer({
            scripts: [
              {
                result: { finStatus: "UNDEFINED" },
                statusResult: { finStatus: "AUTHORISED" },
                inProgressChecks: 2
              }
            ]
          })
        )
      )
  )

  it.effect(
    "a polled result that does not decode is stored raw; with the status answers undecodable too, the sale ends OutcomeUnresolved (Undecodable) within minutes, sent once",
    () =>
      Effect.gen(function* () {
        const startedAt = yield* Clock.currentTimeMillis
        // Beyond Number.MAX_SAFE_INTEGER as a JSON number: no result or status entry carrying it decodes.
        const exit = yield* runToEnd(sale("undecodable"), { step: "5 seconds", max: "2 hours" })
        const endedAt = yield* Clock.currentTimeMillis
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = Cause.squash(exit.cause) as OperationOutcome.OutcomeUnresolved
          expect(error).toBeInstanceOf(OperationOutcome.OutcomeUnresolved)
          expect(error.reason).toBe("Undecodable")
          expect(error.message).toContain("could not be decoded")
        }
        // Minutes (the grace of 3 minutes and the recovery rhythm), not the 24 h of reconciliation.
        expect(endedAt - startedAt).toBeLessThan(10 * 60_000)
        const cloud = yield* Cloud
        expect(cloud.recorded.sends).toHaveLength(1)
        const store = yield* EventStore.EventStore
        const payment = yield* store.readStream(yield* executionOf("undecodable"))
        expect(payment.map((event) => event.type)).toContain("OutcomeUnresolved")
        const recorded = payment.find((event) => event.type === "AttemptRecorded")
        const attemptId = (recorded?.data as { readonly attemptId: string }).attemptId
        const attemptEvents = yield* store.readStream(CallbackRegistration.attemptStream(attemptId))
        const raw = attemptEvents.filter((event) => event.type === "ResultUndecodable")
        // Stored once, however many polls saw it.
        expect(raw).toHaveLength(1)
        expect(JSON.stringify(raw[0]?.data)).toContain("totalAmount")
      }).pipe(
        Effect.provide(
          layer({ scripts: [{ result: { totalAmount: Number.MAX_SAFE_INTEGER + 2 }, takes: "2 seconds" }] })
        )
      )
  )

  it.effect(
    "a polled answer that does not decode but names a personal member (the card holder's name) is stored whole as personal data, removable after its retention; one that names none stays plain",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const rawOf = (reference: string) =>
          Effect.gen(function* () {
            yield* runToEnd(sale(reference), { step: "5 seconds", max: "2 hours" })
            const payment = yield* store.readStream(yield* executionOf(reference))
            const recorded = payment.find((event) => event.type === "AttemptRecorded")
            const attemptId = (recorded?.data as { readonly attemptId: string }).attemptId
            const attemptEvents = yield* store.readStream(CallbackRegistration.attemptStream(attemptId))
            const [undecodable] = attemptEvents.filter((event) => event.type === "ResultUndecodable")
            return (undecodable?.data as { readonly raw: unknown }).raw
          })
        const named = yield* rawOf("undecodable-named")
        expect(named).toMatchObject({
          [HashChain.personalKey]: { value: expect.stringContaining("JANE DOE") }
        })
        const plain = yield* rawOf("undecodable-plain")
        expect(typeof plain).toBe("string")
        expect(plain).toContain("totalAmount")
        // The chain links the wrapped text by its digest: it verifies as stored.
        expect((yield* store.verify()).ok).toBe(true)
      }).pipe(
        Effect.provide(
          layer({
            scripts: [
              {
                result: { totalAmount: Number.MAX_SAFE_INTEGER + 2, cardHolderName: "JANE DOE" },
                takes: "2 seconds"
              },
              { result: { totalAmount: Number.MAX_SAFE_INTEGER + 2 }, takes: "2 seconds" }
            ]
          })
        )
      )
  )

  it.effect("a result id forgotten by the service (404) reconciles by reference", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(sale("u5"))
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
      if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("status")
    }).pipe(Effect.provide(layer({ scripts: [{ forgetAfterPolls: 1, takes: "20 seconds" }] })))
  )

  it.effect("a linked refund reconciles through the original's reference with selector all", () =>
    Effect.gen(function* () {
      const original = Schema.decodeSync(Identifiers.TransactionReference)(
        "0b7e2f7c-1d2e-4c3b-9a8f-112233445566"
      )
      const cloud = yield* Cloud
      cloud.seedStatus(original, { finStatus: "REFUNDED", efttransactionID: "sale-guid", type: "SALE" })
      cloud.script({
        answer: serverError,
        processed: true,
        underReference: original,
        result: { type: "REFUND" }
      })
      const exit = yield* runToEnd(
        TerminalOperations.linkedRefund(
          { ...terminal, amount: eur(500n), originalTransactionId: Identifiers.Guid.make("sale-guid") },
          { idempotencyKey: "u6", delivery: "polling", originalTransactionReference: original }
        )
      )
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
      if (Exit.isSuccess(exit)) {
        expect(exit.value.facts.transactionType).toBe("REFUND")
        expect(exit.value.facts.originalTransactionId).toBe("sale-guid")
      }
      expect(cloud.recorded.sends).toHaveLength(1)
      expect(
        cloud.recorded.statusQueries.every((q) => q.reference === original && q.selector === "all")
      ).toBe(true)
      expect("transactionReference" in cloud.recorded.sends[0]!.request).toBe(false)
    }).pipe(Effect.provide(layer()))
  )

  it.effect(
    "a linked operation without the original's reference cannot be reconciled: OutcomeUnresolved",
    () =>
      Effect.gen(function* () {
        const exit = yield* runToEnd(
          TerminalOperations.saleReversal(
            { ...terminal, amount: eur(500n), originalTransactionId: Identifiers.Guid.make("sale-guid") },
            { idempotencyKey: "u7", delivery: "polling" }
          )
        )
        expect(failureOf(exit)?._tag).toBe("OutcomeUnresolved")
        expect((yield* Cloud).recorded.sends).toHaveLength(1)
      }).pipe(Effect.provide(layer({ scripts: [{ answer: serverError, processed: true }] })))
  )
})

describe("PaymentProtocol, utility operations and secrets", () => {
  it.effect("printReceipt ends with ReceiptPrinted, pingDevice with DevicePinged", () =>
    Effect.gen(function* () {
      const printed = yield* runToEnd(
        TerminalOperations.printReceipt({ ...terminal, receipt: "<p>thanks</p>" }, { idempotencyKey: "p1" })
      )
      expect(Exit.isSuccess(printed) && printed.value._tag).toBe("Approved")
      expect((yield* typesOf(yield* executionOf("p1"))).at(-1)).toBe("ReceiptPrinted")
      const pinged = yield* runToEnd(TerminalOperations.pingDevice({ ...terminal }, { idempotencyKey: "p2" }))
      expect(Exit.isSuccess(pinged) && pinged.value._tag).toBe("Approved")
      expect((yield* typesOf(yield* executionOf("p2"))).at(-1)).toBe("DevicePinged")
    }).pipe(Effect.provide(layer()))
  )

  it.effect("saleAndTokenizeCard with a token records PaymentAuthorised and CardTokenized", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(
        TerminalOperations.saleAndTokenizeCard({ ...terminal, amount: eur(1050n) }, { idempotencyKey: "t1" })
      )
      expect(Exit.isSuccess(exit) && exit.value.facts.cardToken).toBe("tok_123")
      expect((yield* typesOf(yield* executionOf("t1"))).slice(-2)).toEqual([
        "PaymentAuthorised",
        "CardTokenized"
      ])
    }).pipe(Effect.provide(layer({ scripts: [{ result: { cardToken: "tok_123" } }] })))
  )

  it.effect(
    "cardPan: the unmasked number never reaches the outcome or the event store; callback tokens neither",
    () =>
      Effect.gen(function* () {
        const pan = "6011000990139424"
        const exit = yield* runToEnd(
          TerminalOperations.cardPan({ ...terminal }, { idempotencyKey: "pan", delivery: "callback" })
        )
        expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
        expect(JSON.stringify(exit)).not.toContain(pan)
        const cloud = yield* Cloud
        const tokens = cloud.recorded.deliveries.map((d) => d.token)
        expect(tokens.length).toBeGreaterThan(0)
        const events = yield* everything
        const dump = JSON.stringify(events.map((e) => [e.data, e.metadata]))
        expect(dump).not.toContain(pan)
        for (const token of tokens) expect(dump).not.toContain(token)
        for (const event of events) {
          expect(
            Redaction.check({
              streamId: event.streamId,
              type: event.type,
              data: event.data,
              metadata: event.metadata
            })
          ).toEqual(Option.none())
        }
        expect((yield* typesOf(yield* executionOf("pan"))).at(-1)).toBe("CardPanRead")
      }).pipe(
        Effect.provide(
          layer({
            scripts: [
              {
                result: {
                  finStatus: "PROCESSED",
                  unMaskedPan: "6011000990139424",
                  maskedCardNumber: "601100******9424"
                }
              }
            ]
          })
        )
      )
  )
})

describe("PaymentProtocol, idempotency and stop", () => {
  it.effect("the same idempotency key twice is one operation: one POST, one outcome", () =>
    Effect.gen(function* () {
      const [a, b] = yield* runToEnd(Effect.all([sale("same"), sale("same")], { concurrency: 2 })).pipe(
        Effect.flatten
      )
      expect(a._tag).toBe("Approved")
      expect(b).toEqual(a)
      expect((yield* Cloud).recorded.sends).toHaveLength(1)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("stop at a stoppable step: accepted, and the sale ends Cancelled", () =>
    Effect.gen(function* () {
      const saleFiber = yield* Effect.fork(sale("s1", 1050n, "callback"))
      const cloud = yield* Cloud
      yield* advanceUntil(() => cloud.recorded.sends.length === 1)
      const stopped = yield* runToEnd(
        TerminalOperations.stopCurrentTransaction(terminal, { idempotencyKey: "stop-1" })
      )
      expect(Exit.isSuccess(stopped) && stopped.value._tag).toBe("StopAccepted")
      const exit = yield* runToEnd(Fiber.join(saleFiber))
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Cancelled")
      expect((yield* typesOf(yield* executionOf("s1"))).at(-1)).toBe("PaymentCancelled")
    }).pipe(Effect.provide(layer({ scripts: [{ takes: "30 seconds", stoppable: true }] })))
  )

  it.effect("stop at a step that cannot be stopped: StopRefused (1003), and the sale completes", () =>
    Effect.gen(function* () {
      const saleFiber = yield* Effect.fork(sale("s2", 1050n, "callback"))
      const cloud = yield* Cloud
      yield* advanceUntil(() => cloud.recorded.sends.length === 1)
      const stopped = yield* runToEnd(
        TerminalOperations.stopCurrentTransaction(terminal, { idempotencyKey: "stop-2" })
      )
      expect(failureOf(stopped)?._tag).toBe("StopRefused")
      const exit = yield* runToEnd(Fiber.join(saleFiber))
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
    }).pipe(Effect.provide(layer({ scripts: [{ takes: "30 seconds", stoppable: false }] })))
  )

  it.effect("recovered duplicate deliveries complete the workflow once", () =>
    Effect.gen(function* () {
      const exit = yield* runToEnd(sale("d1", 1050n, "callback"), { max: "5 minutes" })
      expect(Exit.isSuccess(exit) && exit.value._tag).toBe("Approved")
      yield* advance("30 seconds")
      const cloud = yield* Cloud
      expect(cloud.recorded.deliveries).toHaveLength(3)
      const types = yield* typesOf(yield* executionOf("d1"))
      expect(types.filter((t) => t === "PaymentAuthorised")).toHaveLength(1)
    }).pipe(Effect.provide(layer({ scripts: [{ deliveries: 3 }] })))
  )
})
