/**
 * An operator resolves a request in doubt through the intake (`POST
 * /v1/transactions/{guid}/resolve`, bearer token): recorded as an audited `InDoubtResolved`
 * on the transaction's history, which releases it; 400 naming the rule when nothing is in
 * doubt, 404 for an unknown transaction, 401 without the token; with named operators, a
 * viewer's session is refused (403) and an operator resolves in their own name only.
 */
import { expect, layer } from "@effect/vitest"
import { Ledger, LifecycleEvent, Money, PaymentEvents, TransactionHistory } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { attemptInDoubt, call, layer as intake, layerWith, login, operators, send } from "./support.js"

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

const resolveAttempt = (kind: string, key: string, body: unknown) =>
  call("POST", `/v1/attempts/${kind}/${key}/resolve`, { body: JSON.stringify(body) })

layer(intake, { timeout: 60_000 })("POST /v1/attempts/{kind}/{key}/resolve", (it) => {
  it.effect(
    "a batch close in doubt resolved as not applied frees the terminal; nothing in doubt is 400 naming the rule",
    () =>
      Effect.gen(function* () {
        const at = yield* DateTime.now
        yield* attemptInDoubt(
          LifecycleEvent.batchStream("T-41"),
          LifecycleEvent.BatchCloseRequested.make({ requestId: "close-1", at, batchNumber: "7" }),
          "batchClose"
        )
        const body = {
          requestId: "close-1",
          resolution: "notApplied",
          operator: "alice",
          reason: "no close on the report"
        }
        const reply = yield* resolveAttempt("batch", "T-41", body)
        expect([reply.status, reply.json]).toMatchObject([
          200,
          { streamId: "batch-T-41", requestId: "close-1", operation: "batchClose", resolution: "notApplied" }
        ])
        const store = yield* EventStore.EventStore
        const events = yield* LifecycleEvent.registry.decodeAll(yield* store.readStream("batch-T-41"))
        expect(events.at(-1)).toMatchObject({
          type: "InDoubtResolved",
          data: { operator: "alice", requestId: "close-1" }
        })
        const again = yield* resolveAttempt("batch", "T-41", body)
        expect(again.status).toBe(400)
        expect(again.json.message).toContain("resolve-only-in-doubt")
        const unknownKind = yield* resolveAttempt("printer", "T-41", body)
        expect(unknownKind.status).toBe(400)
        expect(JSON.stringify(unknownKind.json)).toContain("moto-sale")
      })
  )

  it.effect(
    "an applied MOTO sale needs the gateway's guid, opens its history on the terminal its request named",
    () =>
      Effect.gen(function* () {
        const at = yield* DateTime.now
        const reference = "6c1f7a0e-2b4d-4e8a-9f3c-1d2e3f4a5b6c"
        yield* attemptInDoubt(
          LifecycleEvent.motoSaleStream(reference),
          LifecycleEvent.MotoSaleRequested.make({
            requestId: "sale-1",
            at,
            transactionReference: reference,
            amount: eur(4200n),
            cardToken: "tok_1",
            serialNumber: "V-1"
          }),
          "motoSale"
        )
        const body = {
          requestId: "sale-1",
          resolution: "applied",
          operator: "alice",
          reason: "on the acquirer's report"
        }
        const noGuid = yield* resolveAttempt("moto-sale", reference, body)
        expect(noGuid.status).toBe(400)
        expect(noGuid.json.message).toContain("applied-moto-sale-needs-guid")
        const reply = yield* resolveAttempt("moto-sale", reference, { ...body, guid: "moto-found" })
        expect([reply.status, reply.json]).toMatchObject([
          200,
          {
            operation: "motoSale",
            resolution: "applied",
            guid: "moto-found",
            amount: "42.00",
            currency: "EUR"
          }
        ])
        const state = Option.getOrThrow(
          (yield* TransactionHistory.load(yield* EventStore.EventStore, "moto-found")).state
        )
        expect(state).toMatchObject({ serialNumber: "V-1" })
      })
  )
})

/** A terminal sale of `minor` EUR whose outcome stayed unresolved: its payment stream, as the protocol leaves it. */
const terminalSaleUnresolved = (executionId: string, minor: bigint) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const at = Date.now()
    yield* store.append(
      PaymentEvents.paymentStream(executionId),
      EventStore.NoStream,
      yield* PaymentEvents.events.encodeAll([
        PaymentEvents.OperationRequested.make({
          executionId,
          operation: "sale",
          serialNumber: "T-77",
          terminalType: "A920",
          amount: eur(minor),
          delivery: "polling",
          requestedAt: at,
          deadlineAt: at + 60_000,
          at
        }),
        PaymentEvents.AttemptRecorded.make({
          attempt: 1,
          attemptId: `${executionId}-1`,
          at,
          transactionReference: "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"
        }),
        PaymentEvents.OutcomeUnresolved.make({
          attempt: 1,
          attemptId: `${executionId}-1`,
          at,
          message: "reconciliation ran out of time",
          reason: "ReconcileTimeout"
        })
      ])
    )
  })

const sales = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
  return (yield* Ledger.entriesOf(page.events)).entries.filter((e) => e.kind === "sale")
})

layer(intake, { timeout: 60_000 })("POST /v1/attempts/terminal/{executionId}/resolve", (it) => {
  it.effect(
    "a terminal sale left unresolved, resolved as applied with the gateway's guid and the amount it moved: recorded, booked once by the ledger",
    () =>
      Effect.gen(function* () {
        yield* terminalSaleUnresolved("exec-u1", 2500n)
        const body = {
          requestId: "exec-u1-1",
          resolution: "applied",
          operator: "alice",
          reason: "the terminal's journal shows it approved with a 2.00 tip",
          guid: "f0e1d2c3-b4a5-4968-8776-655443322110",
          amount: "27.00",
          currency: "EUR"
        }
        const wrongCurrency = yield* resolveAttempt("terminal", "exec-u1", { ...body, currency: "USD" })
        expect(wrongCurrency.status).toBe(400)
        expect(wrongCurrency.json.message).toContain("resolved-amount-positive")
        const badCurrency = yield* resolveAttempt("terminal", "exec-u1", { ...body, currency: "EURO" })
        expect(badCurrency.status).toBe(400)
        const wrongAttempt = yield* resolveAttempt("terminal", "exec-u1", { ...body, requestId: "exec-u1-9" })
        expect(wrongAttempt.status).toBe(400)
        expect(wrongAttempt.json.message).toContain("exec-u1-1")
        expect((yield* sales).filter((e) => e.terminal === "T-77")).toHaveLength(0)

        const reply = yield* resolveAttempt("terminal", "exec-u1", body)
        expect([reply.status, reply.json]).toMatchObject([
          200,
          {
            streamId: "execution-actions-exec-u1",
            requestId: "exec-u1-1",
            operation: "sale",
            resolution: "applied",
            guid: body.guid,
            amount: "27.00",
            currency: "EUR"
          }
        ])
        const booked = (yield* sales).filter((e) => e.terminal === "T-77")
        expect(booked.map((e) => [e.amount?.toString(), e.terminal, e.original])).toEqual([
          [eur(2700n).toString(), "T-77", body.guid]
        ])
        const again = yield* resolveAttempt("terminal", "exec-u1", body)
        expect(again.status).toBe(400)
        expect(again.json.message).toContain("resolved as applied by alice")
        expect((yield* sales).filter((e) => e.terminal === "T-77")).toHaveLength(1)
      })
  )

  it.effect("not applied: recorded, nothing booked; an amount with it, or with another kind, is 400", () =>
    Effect.gen(function* () {
      yield* terminalSaleUnresolved("exec-u2", 1200n)
      const before = (yield* sales).length
      const body = {
        requestId: "exec-u2",
        resolution: "notApplied",
        operator: "bob",
        reason: "no such transaction"
      }
      const withAmount = yield* resolveAttempt("terminal", "exec-u2", {
        ...body,
        amount: "12.00",
        currency: "EUR"
      })
      expect(withAmount.status).toBe(400)
      expect(withAmount.json.message).toContain("moved nothing")
      const batchAmount = yield* resolveAttempt("batch", "T-77", { ...body, amount: "1", currency: "EUR" })
      expect(batchAmount.status).toBe(400)
      expect(batchAmount.json.message).toContain("kind terminal")
      const reply = yield* resolveAttempt("terminal", "exec-u2", body)
      expect([reply.status, reply.json]).toMatchObject([200, { resolution: "notApplied", operation: "sale" }])
      expect(reply.json.guid).toBeUndefined()
      expect(yield* sales).toHaveLength(before)
      const notUnresolved = yield* resolveAttempt("terminal", "never-ran", body)
      expect(notUnresolved.status).toBe(400)
      expect(notUnresolved.json.message).toContain("resolve-only-in-doubt")
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

    it.effect(
      "a viewer cannot resolve an attempt (403); an operator resolves it in their own name only",
      () =>
        Effect.gen(function* () {
          const at = yield* DateTime.now
          yield* attemptInDoubt(
            LifecycleEvent.deviceStream("T-42"),
            LifecycleEvent.DeviceCommandRequested.make({
              requestId: "r-1",
              at,
              command: "reboot",
              body: { force: false }
            }),
            "deviceCommand"
          )
          const body = (operator: string) => ({
            requestId: "r-1",
            resolution: "notApplied",
            operator,
            reason: "the terminal did not restart"
          })
          const path = "/v1/attempts/device/T-42/resolve"
          const viewer = yield* send("POST", path, {
            cookie: yield* login("vic", "vic-secret"),
            body: body("vic")
          })
          expect(viewer.status).toBe(403)
          const ana = yield* login("ana", "ana-secret")
          const asAnother = yield* send("POST", path, { cookie: ana, body: body("bob") })
          expect(asAnother.status).toBe(400)
          const own = yield* send("POST", path, { cookie: ana, body: body("ana") })
          expect([own.status, own.json?.["streamId"]]).toEqual([200, "device-T-42"])
        })
    )
  }
)
