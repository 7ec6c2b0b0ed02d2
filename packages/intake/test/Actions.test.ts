/**
 * An operator's actions through the intake (`POST /v1/transactions/{guid}/actions`): each
 * starts the operation any caller would start, under a key derived from the action (asked
 * twice, it acts once), is refused by the operation's money rule with the rule's name (422,
 * nothing started or recorded), takes the amount with the transaction's currency only (400
 * naming the field), and is recorded on the transaction's history with the operator and the
 * reason, shown in its timeline; a viewer is refused (403). On PostgreSQL with
 * `DATABASE_URL`, on PGlite without (support's `TestDatabase`).
 */
import { expect, layer } from "@effect/vitest"
import { LifecycleEvent, Money, TransactionHistory } from "@tillflow/core"
import { DurableEngine, EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { call, layerWith, login, operators, send } from "./support.js"

const actions = (guid: string) => `/v1/transactions/${guid}/actions`

/** A sale of 50.00 EUR made on one of the simulator's terminals, recorded in its history. */
const saleOnTerminal = (guid: string) =>
  Effect.gen(function* () {
    const devices = yield* call("GET", "/v1/devices")
    const device = (devices.json as ReadonlyArray<{ serialNumber: string; terminalType: string }>)[0]
    if (device === undefined) return yield* Effect.dieMessage("the simulator lists no terminal")
    const store = yield* EventStore.EventStore
    yield* TransactionHistory.record(store, {
      guid,
      kind: "sale",
      amount: Money.make(5000n, "EUR"),
      at: yield* DateTime.now,
      serialNumber: device.serialNumber,
      terminalType: device.terminalType,
      transactionReference: "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"
    })
    return device
  })

const historyOf = (guid: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    return yield* LifecycleEvent.registry.decodeAll(
      yield* store.readStream(LifecycleEvent.transactionStream(guid))
    )
  })

const actionEvents = (guid: string) =>
  Effect.map(historyOf(guid), (events) => events.filter((e) => e.type === "OperatorActionRequested"))

layer(layerWith({ operators }), { timeout: 60_000, excludeTestServices: true })(
  "POST /v1/transactions/{guid}/actions",
  (it) => {
    it.effect(
      "a refund is the terminal refund any caller starts, recorded with the operator and reason; twice acts once",
      () =>
        Effect.gen(function* () {
          const guid = "6a1f0c2e-3b4d-4e5f-8a6b-7c8d9e0f1a2b"
          const device = yield* saleOnTerminal(guid)
          const ana = yield* login("ana", "ana-secret")
          const body = {
            action: "refund",
            amount: "15.00",
            currency: "EUR",
            reason: "the customer returned a shirt"
          }
          const first = yield* send("POST", actions(guid), { cookie: ana, body })
          expect(first.status).toBe(200)
          expect(first.json).toMatchObject({
            workflow: "TerminalOperation",
            attributes: {
              operation: "refund",
              serialNumber: device.serialNumber,
              originalTransactionId: guid
            }
          })
          expect(first.json.attributes.idempotencyKey).toMatch(/^action-refund-[0-9a-f]{32}$/)
          // The double click: the same execution, one event.
          const [again, third] = yield* Effect.all(
            [
              send("POST", actions(guid), { cookie: ana, body }),
              send("POST", actions(guid), { cookie: ana, body })
            ],
            { concurrency: 2 }
          )
          expect([again.status, again.json.executionId]).toEqual([200, first.json.executionId])
          expect([third.status, third.json.executionId]).toEqual([200, first.json.executionId])
          const engine = yield* DurableEngine.DurableEngine
          const refunds = yield* engine.list({ attributes: { originalTransactionId: guid } })
          expect(refunds.map((e) => e.executionId)).toEqual([first.json.executionId])
          const recorded = yield* actionEvents(guid)
          expect(recorded).toHaveLength(1)
          expect(recorded[0]?.data).toMatchObject({
            requestId: first.json.attributes.idempotencyKey,
            action: "refund",
            operator: "ana",
            via: "operator",
            reason: "the customer returned a shirt",
            workflow: "TerminalOperation"
          })
          expect(String(recorded[0]?.type === "OperatorActionRequested" && recorded[0].data.amount)).toBe(
            "15.00 EUR"
          )
          // A second refund of the same amount on purpose: `repeat: 2`, another execution.
          const second = yield* send("POST", actions(guid), { cookie: ana, body: { ...body, repeat: 2 } })
          expect(second.status).toBe(200)
          expect(second.json.executionId).not.toBe(first.json.executionId)
          // In the transaction's timeline, with the operator's name.
          const timeline = yield* call("GET", `/v1/audit/timeline/${guid}`)
          expect(timeline.status).toBe(200)
          expect(
            (timeline.json.lines as ReadonlyArray<string>).filter((l) =>
              l.includes("refund of 15.00 EUR asked by operator ana")
            )
          ).toHaveLength(2)
        })
    )

    it.effect("a money rule refuses with its name and message; nothing is started or recorded", () =>
      Effect.gen(function* () {
        const guid = "7b2a1d3f-4c5e-4f6a-9b7c-8d9e0f1a2b3c"
        yield* saleOnTerminal(guid)
        const engine = yield* DurableEngine.DurableEngine
        const before = (yield* engine.list({})).length
        const above = yield* call("POST", actions(guid), {
          body: JSON.stringify({ action: "refund", amount: "50.01", currency: "EUR", reason: "too much" })
        })
        expect(above.status).toBe(422)
        expect(above.json).toMatchObject({ _tag: "ActionRefused", rule: "refund-not-above-sale" })
        expect(above.json.message).toContain("above the sale's 50.00 EUR")
        const capture = yield* call("POST", actions(guid), {
          body: JSON.stringify({ action: "capture", amount: "10.00", currency: "EUR", reason: "ship it" })
        })
        expect(capture.status).toBe(422)
        expect(capture.json.rule).toBeTypeOf("string")
        const release = yield* call("POST", actions(guid), {
          body: JSON.stringify({ action: "release", reason: "guest left" })
        })
        expect([release.status, release.json.rule]).toEqual([422, "release-an-open-pre-authorization"])
        expect((yield* engine.list({})).length).toBe(before)
        expect(yield* actionEvents(guid)).toHaveLength(0)
      })
    )

    it.effect(
      "a reversal's rule is checked before it starts: 422 naming it, nothing started or recorded",
      () =>
        Effect.gen(function* () {
          const guid = "8c3b2e4a-5d6f-4a7b-8c9d-0e1f2a3b4c5d"
          yield* saleOnTerminal(guid)
          const engine = yield* DurableEngine.DurableEngine
          const before = (yield* engine.list({})).length
          // A part of it, where the acquirer takes no partial reversal (the default).
          const partial = yield* call("POST", actions(guid), {
            body: JSON.stringify({ action: "reverse", amount: "10.00", currency: "EUR", reason: "one item" })
          })
          expect([partial.status, partial.json.rule]).toEqual([422, "acquirer-partial-reversal"])
          // Already reversed in full: nothing is left to reverse.
          const store = yield* EventStore.EventStore
          const encoded = yield* LifecycleEvent.registry.encodeAll([
            LifecycleEvent.Reversed.make({
              requestId: "rev-by-api",
              at: yield* DateTime.now,
              target: "transaction",
              amount: Money.make(5000n, "EUR"),
              reconciled: false
            })
          ])
          yield* store.append(LifecycleEvent.transactionStream(guid), EventStore.AnyVersion, encoded)
          const again = yield* call("POST", actions(guid), {
            body: JSON.stringify({ action: "reverse", reason: "customer cancelled" })
          })
          expect([again.status, again.json.rule]).toEqual([422, "reverse-once"])
          expect(again.json.message).toContain("already reversed")
          expect((yield* engine.list({})).length).toBe(before)
          expect(yield* actionEvents(guid)).toHaveLength(0)
        })
    )

    it.effect("the amount is confirmed in the transaction's currency: 400 naming the field", () =>
      Effect.gen(function* () {
        const guid = "8c3b2e4a-5d6f-4a7b-8c8d-9e0f1a2b3c4d"
        yield* saleOnTerminal(guid)
        const refund = (body: Record<string, unknown>) =>
          call("POST", actions(guid), { body: JSON.stringify({ action: "refund", reason: "r", ...body }) })
        const usd = yield* refund({ amount: "15.00", currency: "USD" })
        expect(usd.status).toBe(400)
        expect(usd.json.message).toMatch(/^currency: USD is not the currency of transaction .* \(EUR\)/)
        const noAmount = yield* refund({ currency: "EUR" })
        expect([noAmount.status, noAmount.json.message]).toEqual([400, expect.stringMatching(/^amount: /)])
        const noCurrency = yield* refund({ amount: "15.00" })
        expect([noCurrency.status, noCurrency.json.message]).toEqual([
          400,
          expect.stringMatching(/^currency: /)
        ])
        const badAmount = yield* refund({ amount: "15.001", currency: "EUR" })
        expect([badAmount.status, badAmount.json.message]).toEqual([400, expect.stringMatching(/^amount: /)])
        const noReason = yield* refund({ amount: "15.00", currency: "EUR", reason: "  " })
        expect(noReason.status).toBe(400)
        expect(noReason.json.message).toContain("reason")
        const unknown = yield* call("POST", actions("never-seen"), {
          body: JSON.stringify({ action: "reverse", reason: "r" })
        })
        expect(unknown.status).toBe(404)
        expect(yield* actionEvents(guid)).toHaveLength(0)
      })
    )

    it.effect("a bearer token is recorded as the token; a lifecycle action starts its workflow", () =>
      Effect.gen(function* () {
        const guid = "9d4c3f5b-6e7a-4b8c-9d9e-0f1a2b3c4d5e"
        yield* saleOnTerminal(guid)
        const reply = yield* call("POST", actions(guid), {
          body: JSON.stringify({ action: "reverse", reason: "double charge at the till" })
        })
        expect(reply.status).toBe(200)
        expect(reply.json).toMatchObject({
          workflow: "Reversal.Reverse",
          attributes: { originalGuid: guid, idempotencyKey: expect.stringMatching(/^action-reverse-/) }
        })
        const recorded = yield* actionEvents(guid)
        expect(
          recorded.map((e) => [e.data.operator, e.type === "OperatorActionRequested" && e.data.via])
        ).toEqual([["token", "token"]])
        const timeline = yield* call("GET", `/v1/audit/timeline/${reply.json.executionId}`)
        expect((timeline.json.lines as ReadonlyArray<string>).join("\n")).toContain(
          "reverse asked by the intake's bearer token: double charge at the till"
        )
      })
    )

    it.effect("a viewer is refused (403) and nothing is recorded", () =>
      Effect.gen(function* () {
        const guid = "0e5d4a6c-7f8b-4c9d-8e0f-1a2b3c4d5e6f"
        yield* saleOnTerminal(guid)
        const vic = yield* login("vic", "vic-secret")
        const refused = yield* send("POST", actions(guid), {
          cookie: vic,
          body: { action: "refund", amount: "15.00", currency: "EUR", reason: "r" }
        })
        expect([refused.status, refused.json?._tag]).toEqual([403, "Forbidden"])
        expect(yield* actionEvents(guid)).toHaveLength(0)
      })
    )
  }
)
