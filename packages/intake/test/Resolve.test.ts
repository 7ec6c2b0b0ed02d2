/**
 * An operator resolves a request in doubt through the intake (`POST
 * /v1/transactions/{guid}/resolve`, bearer token): recorded as an audited `InDoubtResolved`
 * on the transaction's history, which releases it; 400 naming the rule when nothing is in
 * doubt, 404 for an unknown transaction, 401 without the token; with named operators, a
 * viewer's session is refused (403) and an operator resolves in their own name only.
 */
import { expect, layer } from "@effect/vitest"
import { LifecycleEvent, Money, TransactionHistory } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { call, layer as intake, layerWith, login, operators, send } from "./support.js"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const resolve = (guid: string, body: unknown, token?: string | null) =>
  call("POST", `/v1/transactions/${guid}/resolve`, {
    body: JSON.stringify(body),
    ...(token === undefined ? {} : { token })
  })

/** A refund in doubt on a recorded sale. */
const refundInDoubt = (guid: string, requestId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const at = yield* DateTime.now
    yield* TransactionHistory.record(store, { guid, kind: "sale", amount: eur(5000n), at })
    yield* store.append(
      LifecycleEvent.transactionStream(guid),
      EventStore.AnyVersion,
      yield* LifecycleEvent.registry.encodeAll([
        LifecycleEvent.RefundRequested.make({ requestId, at, amount: eur(1500n) }),
        LifecycleEvent.OperationInDoubt.make({ requestId, at, operation: "refund", message: "unknown" })
      ])
    )
  })

layer(intake, { timeout: 60_000 })("POST /v1/transactions/{guid}/resolve", (it) => {
  it.effect("records the operator's resolution of a refund in doubt; refuses when nothing is in doubt", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      yield* refundInDoubt("sale-r1", "terminal-x1")
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

layer(layerWith({ operators }), { timeout: 60_000, excludeTestServices: true })(
  "resolve with named operators",
  (it) => {
    it.effect("a viewer is refused (403); an operator resolves in their own name only", () =>
      Effect.gen(function* () {
        yield* refundInDoubt("sale-o1", "terminal-o1")
        const body = (operator: string) => ({
          requestId: "terminal-o1",
          resolution: "notApplied",
          operator,
          reason: "the acquirer's report shows no refund"
        })
        const path = "/v1/transactions/sale-o1/resolve"
        const viewer = yield* send("POST", path, {
          cookie: yield* login("vic", "vic-secret"),
          body: body("vic")
        })
        expect(viewer.status).toBe(403)
        const ana = yield* login("ana", "ana-secret")
        const asAnother = yield* send("POST", path, { cookie: ana, body: body("bob") })
        expect(asAnother.status).toBe(400)
        expect(String(asAnother.json?.["message"])).toContain("logged in (ana)")
        const own = yield* send("POST", path, { cookie: ana, body: body("ana") })
        expect([own.status, own.json?.["resolution"]]).toEqual([200, "notApplied"])
        const store = yield* EventStore.EventStore
        const events = yield* LifecycleEvent.registry.decodeAll(
          yield* store.readStream(LifecycleEvent.transactionStream("sale-o1"))
        )
        expect(events.at(-1)).toMatchObject({ type: "InDoubtResolved", data: { operator: "ana" } })
      })
    )
  }
)
