/**
 * End to end (PostgreSQL, tillflow's engine and worker, the HTTP client, the simulator
 * over real sockets, the callback receiver): each trigger amount of FACTS.md ends in the
 * right outcome, in both delivery modes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Money, TerminalOperations } from "@tillflow/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { Harness, layer, paymentEvents, runToEnd } from "./harness.js"

const cases = [
  { minor: 3779n, tag: "Declined", issuer: "01", charged: false },
  { minor: 3784n, tag: "Declined", issuer: "05", charged: false },
  { minor: 3793n, tag: "Declined", issuer: "04", charged: false },
  { minor: 3757n, tag: "PartiallyApproved", charged: true },
  { minor: 1234n, tag: "Approved", charged: true },
  { minor: 3768n, tag: "NotCharged", charged: false }
] as const

for (const delivery of ["polling", "callback"] as const) {
  describe(`trigger amounts, ${delivery}`, () => {
    it.effect(
      `each trigger amount ends in its outcome (${delivery})`,
      () =>
        Effect.gen(function* () {
          const h = yield* Harness
          let expectedCharges = 0
          for (const c of cases) {
            const exit = yield* runToEnd(
              TerminalOperations.sale(
                { ...h.terminal, amount: Money.make(c.minor, "EUR") },
                { idempotencyKey: `${delivery}-${c.minor}`, delivery, retryNotCharged: false }
              )
            )
            if (c.tag === "NotCharged") {
              const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
              expect(Option.map(failure, (f) => f._tag)).toEqual(Option.some("NotCharged"))
            } else {
              expect(Exit.isSuccess(exit) ? exit.value._tag : Cause.pretty(exit.cause)).toBe(c.tag)
              if (Exit.isSuccess(exit)) {
                expect(exit.value.facts.source).toBe(delivery)
                if (c.tag === "Declined") expect(exit.value.facts.issuerResponseCode).toBe(c.issuer)
                if (c.tag === "PartiallyApproved") {
                  expect(exit.value.facts.dueAmount?.minorUnits).toBe(3757n - 3757n / 2n)
                  expect(exit.value.facts.totalAmount?.minorUnits).toBe(3757n / 2n)
                }
              }
            }
            if (c.charged) expectedCharges++
            expect(yield* h.charges).toBe(expectedCharges)
          }
          const types = (yield* paymentEvents).map((e) => e.type)
          expect(types.filter((t) => t === "PaymentDeclined")).toHaveLength(3)
          expect(types.filter((t) => t === "PaymentPartiallyApproved")).toHaveLength(1)
          expect(types.filter((t) => t === "PaymentAuthorised")).toHaveLength(1)
          expect(types.filter((t) => t === "PaymentNotCharged")).toHaveLength(1)
        }).pipe(Effect.provide(layer())),
      { timeout: 180_000 }
    )
  })
}
