import { describe, expect, it } from "@effect/vitest"
import {
  DomainEvents,
  Identifiers,
  Money,
  PaymentProtocol,
  RemoteError,
  TerminalOperations
} from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Cloud, layer, runToEnd, typesOf } from "./support/protocol.js"

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
    (id) => DomainEvents.paymentStream(id)
  )

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
