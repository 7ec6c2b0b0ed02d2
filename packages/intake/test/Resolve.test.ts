/**
 * An operator resolves a request in doubt through the intake (`POST
 * /v1/transactions/{guid}/resolve`, bearer token): recorded as an audited `InDoubtResolved`
 * on the transaction's history, which releases it; 400 naming the rule when nothing is in
 * doubt, 404 for an unknown transaction, 401 without the token.
 */
import { expect, layer } from "@effect/vitest"
import { LifecycleEvent, Money, TransactionHistory } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { call, layer as intake } from "./support.js"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const resolve = (guid: string, body: unknown, token?: string | null) =>
  call("POST", `/v1/transactions/${guid}/resolve`, {
    body: JSON.stringify(body),
    ...(token === undefined ? {} : { token })
  })

layer(intake, { timeout: 60_000 })("POST /v1/transactions/{guid}/resolve", (it) => {
  it.effect("records the operator's resolution of a refund in doubt; refuses when nothing is in doubt", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const at = yield* DateTime.now
      yield* TransactionHistory.record(store, { guid: "sale-r1", kind: "sale", amount: eur(5000n), at })
      yield* store.append(
        LifecycleEvent.transactionStream("sale-r1"),
        EventStore.AnyVersion,
        yield* LifecycleEvent.registry.encodeAll([
          LifecycleEvent.RefundRequested.make({ requestId: "terminal-x1", at, amount: eur(1500n) }),
          LifecycleEvent.OperationInDoubt.make({
            requestId: "terminal-x1",
            at,
            operation: "refund",
            message: "reconciliation inconclusive"
          })
        ])
      )
      const body = {
        requestId: "terminal-x1",
        resolution: "applied",
        operator: "alice",
        reason: "the terminal's receipt shows the refund",
        statusEndpoint: "REFUND AUTHORISED"
      }
      expect((yield* resolve("sale-r1", body, null)).status).toBe(401)
      const reply = yield* resolve("sale-r1", body)
      expect([reply.status, reply.json]).toMatchObject([
        200,
        {
          guid: "sale-r1",
          requestId: "terminal-x1",
          operation: "refund",
          resolution: "applied",
          amount: "15.00",
          currency: "EUR"
        }
      ])
      const state = Option.getOrThrow((yield* TransactionHistory.load(store, "sale-r1")).state)
      expect(state.pending).toBeUndefined()
      expect(TransactionHistory.refunded(state)).toEqual(eur(1500n))
      const again = yield* resolve("sale-r1", body)
      expect(again.status).toBe(400)
      expect(again.json.message).toContain("resolve-only-in-doubt")
      const unknown = yield* resolve("never-seen", body)
      expect(unknown.status).toBe(404)
      const blank = yield* resolve("sale-r1", { ...body, reason: "" })
      expect(blank.status).toBe(400)
    })
  )
})
