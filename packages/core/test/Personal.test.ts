/**
 * Personal data in a stored payload (issue 31): a MOTO sale's billing address is stored
 * wrapped (`Personal`, `HashChain.personal`), linked by its digest, removable after its
 * retention without breaking the chain, and read back from all three forms a log holds —
 * the wrapper, the plain value older logs hold, and the digest a removal leaves (absent).
 * The service still receives it plain.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Billing,
  Identifiers,
  Lifecycles,
  Money,
  MoneyRemittanceOptions,
  MotoWorkflow,
  PaymentProtocol,
  TransactionRequest
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import {
  DurableEngine,
  EngineEvent,
  EngineWorker,
  EventStore,
  ExecutionQueue,
  HashChain,
  MemoryEventStore
} from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const payload = MotoWorkflow.Sale.payloadSchema as unknown as Schema.Schema<
  { readonly billing?: { readonly zipCode: string; readonly address?: string } },
  Record<string, unknown>
>
const sale = {
  requestId: "sale-p1",
  cardToken: "tok_4f2a9c",
  amount: { amount: "4200", currency: "EUR" }
}
const billing = { zipCode: "28013", address: "Calle Mayor 1" }

describe("personal data in a stored payload", () => {
  it("is stored wrapped with a fresh salt and read from the wrapper, the plain form, or as absent once removed", () => {
    const decoded = Schema.decodeUnknownSync(payload)({ ...sale, billing })
    const first = Schema.encodeSync(payload)(decoded)
    const second = Schema.encodeSync(payload)(decoded)
    expect(first.billing).toEqual({ [HashChain.personalKey]: { salt: expect.any(String), value: billing } })
    // A fresh salt each time: a digest cannot confirm a guessed address.
    expect(first.billing).not.toEqual(second.billing)
    expect(HashChain.personalValues(first)).toEqual(HashChain.personalValues(second))
    expect(Schema.decodeUnknownSync(payload)(first).billing).toEqual(billing)
    // A log written before the field was wrapped.
    expect(Schema.decodeUnknownSync(payload)({ ...sale, billing }).billing).toEqual(billing)
    // Removed after its retention: read as never given, the rest of the payload intact.
    const erased = HashChain.erasePersonal(first) as Record<string, unknown>
    expect(JSON.stringify(erased)).not.toContain("28013")
    const read = Schema.decodeUnknownSync(payload)(erased)
    expect(read.billing).toBeUndefined()
    expect(read).toMatchObject({ requestId: "sale-p1" })
    // No billing: nothing stored for it.
    expect(Schema.encodeSync(payload)(Schema.decodeUnknownSync(payload)(sale))).not.toHaveProperty("billing")
  })

  const Node = Layer.mergeAll(
    Lifecycles.layer,
    EngineWorker.layer({ pollInterval: "50 millis", shutdownTimeout: "1 second" })
  ).pipe(
    Layer.provideMerge(DurableEngine.layer({ pollInterval: "20 millis" })),
    Layer.provideMerge(
      Layer.mergeAll(MemoryEventStore.layer(), ExecutionQueue.layerMemory, ScriptedTerminalLessCloud.layer)
    )
  )

  it.live(
    "a MOTO sale run on tillflow's engine stores its billing wrapped, linked by digest; removed, the chain still verifies; the service got it plain",
    () =>
      Effect.gen(function* () {
        const store = yield* EventStore.EventStore
        const outcome = yield* MotoWorkflow.Sale.execute({
          requestId: "sale-p2",
          cardToken: Identifiers.CardToken.make("tok_4f2a9c"),
          amount: Money.make(4200n, "EUR"),
          billing
        })
        expect(outcome.status).toBe("AUTHORISED")
        const calls = yield* (yield* ScriptedTerminalLessCloud.ScriptedControl).calls
        expect(
          calls
            .filter((c) => c.endpoint === "motoSale")
            .map((c) => (c.request as { billing?: unknown }).billing)
        ).toEqual([billing])
        const executionId = yield* MotoWorkflow.Sale.executionId({
          requestId: "sale-p2",
          cardToken: Identifiers.CardToken.make("tok_4f2a9c"),
          amount: Money.make(4200n, "EUR"),
          billing
        })
        const streamId = EngineEvent.streamId(executionId)
        const events = yield* store.readStream(streamId)
        const started = events.find((e) => e.type === "WorkflowStarted")
        expect(started?.metadata).toMatchObject({ [HashChain.linkVersionKey]: 2 })
        expect((started?.data as { payload: { billing: unknown } }).payload.billing).toEqual({
          [HashChain.personalKey]: { salt: expect.any(String), value: billing }
        })
        expect((yield* store.verify(streamId)).ok).toBe(true)
        // What `tillflow archive erase-personal` stores in its place: the chain still verifies.
        const erased = events.map((e) => ({ ...e, data: HashChain.erasePersonal(e.data) }))
        expect(JSON.stringify(erased.map((e) => e.data))).not.toContain("Calle Mayor")
        expect(yield* HashChain.verifyStream(streamId, erased)).toEqual(Option.none())
      }).pipe(Effect.provide(Node))
  )

  describe("of an operation sent to a terminal", () => {
    const request: TransactionRequest.Sale = {
      operation: "sale",
      serialNumber: Identifiers.SerialNumber.make("0821032398"),
      terminalType: Identifiers.TerminalType.make("A920"),
      transactionReference: Schema.decodeSync(Identifiers.TransactionReference)(
        "6f1c2a4e-9b8d-4c3e-a1f2-0b9c8d7e6f5a"
      ),
      amount: Money.make(1050n, "EUR"),
      billing: new Billing.Billing(billing),
      moneyRemittanceOptions: new MoneyRemittanceOptions.MoneyRemittanceOptions({
        fullName: "Ada Lovelace",
        countryCode: "GBR"
      })
    }
    const remittance = { fullName: "Ada Lovelace", countryCode: "GBR" }
    const stored = Schema.encodeSync(TransactionRequest.Stored)
    const read = Schema.decodeUnknownSync(TransactionRequest.Stored)

    it("stores billing and remittance options wrapped; the wire request still carries them plain", () => {
      const wire = Schema.encodeSync(TransactionRequest.TransactionRequest)(request)
      expect(wire).toMatchObject({ billing, moneyRemittanceOptions: remittance })
      expect(JSON.stringify(wire)).not.toContain(HashChain.personalKey)
      const form = stored(request) as Record<string, unknown>
      expect(form["billing"]).toEqual({
        [HashChain.personalKey]: { salt: expect.any(String), value: billing }
      })
      expect(form["moneyRemittanceOptions"]).toEqual({
        [HashChain.personalKey]: { salt: expect.any(String), value: remittance }
      })
      // Everything else is stored as it is sent.
      expect(HashChain.personalValues(form)).toEqual(wire)
      // Read back from the wrapper and from the plain form of logs written before: the same request.
      expect(read(form)).toEqual(request)
      expect(read(wire)).toEqual(request)
      // Removed: absent, the rest of the request intact, and still a valid request.
      const erased = HashChain.erasePersonal(form)
      expect(JSON.stringify(erased)).not.toMatch(/Lovelace|28013|GBR/)
      const { billing: _b, moneyRemittanceOptions: _m, ...rest } = request
      expect(read(erased)).toEqual(rest)
      // A request without them stores nothing for them.
      expect(stored(rest)).not.toHaveProperty("billing")
      // The payload of `TerminalOperation` stores its request so.
      const payload = Schema.encodeSync(PaymentProtocol.Payload)({
        idempotencyKey: "k",
        request,
        requestedAt: 1
      })
      expect(HashChain.mayHoldPersonal(JSON.stringify(payload))).toBe(true)
      expect(
        Schema.decodeUnknownSync(PaymentProtocol.Payload)(HashChain.erasePersonal(payload)).request
      ).toEqual(rest)
    })

    it("refuses a wrapper on the wire: a caller cannot send the stored form", () => {
      const form = stored(request)
      expect(Schema.decodeUnknownEither(TransactionRequest.TransactionRequest)(form)._tag).toBe("Left")
    })
  })
})
