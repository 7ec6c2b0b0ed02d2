/**
 * Every route of the intake, against a running stack: the intake served on loopback as the
 * worker serves it, an engine worker running the executions, the built-in simulator as the
 * service. Each operation is started through the API, and the test reads back from the
 * simulator's admin API that the effect reached the service (a transaction of the right
 * operation, terminal, reference and amount; a setting changed; a batch closed), then the
 * shape of the answer.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Stack } from "@tillflow/intake"
import { adminClient } from "@tillflow/simulator/testing"
import { TestDatabase } from "@tillflow/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { call, type Reply, running } from "./support.js"

/** The intake, an engine worker running what it starts, and the built-in simulator. */
const stack = running(11)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

/** The simulator's admin API and its first physical terminal. */
const simulator = Effect.gen(function* () {
  const cloud = yield* Stack.Cloud
  const first = cloud.terminals[0]
  if (first === undefined || cloud.adminUrl === undefined) throw new Error("no built-in simulator")
  const admin = adminClient(cloud.adminUrl)
  return {
    serial: first.serialNumber,
    terminalType: first.terminalType,
    admin,
    /** The transactions the simulated gateway knows. */
    transactions: Effect.map(admin("GET", "/transactions"), (rows) => rows as ReadonlyArray<Json>),
    terminal: Effect.map(admin("GET", `/terminals/${first.serialNumber}`), (view) => view as Json)
  }
})

const post = (path: string, body: unknown) => call("POST", path, { body: JSON.stringify(body) })

/** An answer that is a finished execution (200, the ExecutionView's shape, succeeded). */
const expectSucceeded = (label: string, reply: Reply): Json => {
  expect({ label, status: reply.status, text: reply.status === 200 ? "" : reply.text }).toEqual({
    label,
    status: 200,
    text: ""
  })
  const failure =
    reply.json.result?._tag === "Success" ? undefined : JSON.stringify(reply.json.result ?? reply.json)
  expect({ label, status: reply.json.status, failure }).toEqual({
    label,
    status: "succeeded",
    failure: undefined
  })
  expect(reply.json).toEqual(
    expect.objectContaining({
      executionId: expect.any(String),
      workflow: expect.any(String),
      attributes: expect.any(Object),
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number)
    })
  )
  return reply.json.result.value
}

let n = 0
/** Starts a terminal operation and waits for its end; the outcome's value. */
const operation = (label: string, request: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const reply = yield* post("/v1/operations", {
      idempotencyKey: `${label}-${n++}`,
      request,
      waitSeconds: 60,
      ...extra
    })
    const value = expectSucceeded(label, reply)
    expect({ label, verdict: reply.json.report?.verdict }).toEqual({
      label,
      verdict: expect.stringMatching(/approved|processed|succeeded/)
    })
    return { view: reply.json as Json, facts: value.facts as Json }
  })

/** Starts a terminal-less workflow and waits for its end; its output. */
const lifecycle = (workflow: string, payload: Record<string, unknown>) =>
  Effect.gen(function* () {
    const reply = yield* post(`/v1/lifecycle/${workflow}`, { payload, waitSeconds: 60 })
    return expectSucceeded(workflow, reply) as Json
  })

const eur = (minor: number) => ({ amount: String(minor), currency: "EUR" })

describe("every intake route against a running worker and the simulator", () => {
  layer(stack, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect(
      "every terminal operation type reaches the simulator and answers its execution",
      () =>
        Effect.gen(function* () {
          const sim = yield* simulator
          const on = { serial_number: sim.serial }
          const money = (minor: number) => ({
            amount: String(minor),
            currency: "EUR",
            duplicate_check: false
          })
          const byGuid = (rows: ReadonlyArray<Json>, guid: string) =>
            rows.find((r) => r.efttransactionID === guid)

          const sale = yield* operation("sale", {
            operation: "sale",
            ...on,
            ...money(1101),
            customerReference: "till-1",
            billing: { zipCode: "28013" }
          })
          const tokenized = yield* operation("saleAndTokenizeCard", {
            operation: "saleAndTokenizeCard",
            ...on,
            ...money(1102)
          })
          const refund = yield* operation("refund", { operation: "refund", ...on, ...money(1103) })
          const linkedRefund = yield* operation(
            "linked refund",
            { operation: "refund", ...on, ...money(500), originalTransactionId: sale.facts.efttransactionID },
            { originalTransactionReference: sale.facts.transactionReference }
          )
          const refundReversal = yield* operation("refundReversal", {
            operation: "refundReversal",
            ...on,
            ...money(1103),
            originalTransactionId: refund.facts.efttransactionID
          })
          const saleReversal = yield* operation("saleReversal", {
            operation: "saleReversal",
            ...on,
            ...money(1102),
            originalTransactionId: tokenized.facts.efttransactionID
          })
          const motoSale = yield* operation("moToSale", { operation: "moToSale", ...on, ...money(1104) })
          const motoRefund = yield* operation("moToRefund", {
            operation: "moToRefund",
            ...on,
            ...money(1105)
          })
          const motoReversal = yield* operation("moToReversal", {
            operation: "moToReversal",
            ...on,
            originalTransactionId: motoSale.facts.efttransactionID
          })
          const motoPreAuth = yield* operation("moToPreAuthorization", {
            operation: "moToPreAuthorization",
            ...on,
            amount: "1106",
            currency: "EUR"
          })
          const preAuth = yield* operation("preAuthorization", {
            operation: "preAuthorization",
            ...on,
            amount: "5000",
            currency: "EUR"
          })
          const preAuthOriginal = { originalTransactionReference: preAuth.facts.transactionReference }
          const increase = yield* operation(
            "preAuthorizationIncrease",
            {
              operation: "preAuthorizationIncrease",
              ...on,
              amount: "700",
              currency: "EUR",
              originalTransactionId: preAuth.facts.efttransactionID
            },
            preAuthOriginal
          )
          const capture = yield* operation(
            "preAuthorizationCapture",
            {
              operation: "preAuthorizationCapture",
              ...on,
              amount: "5200",
              currency: "EUR",
              originalTransactionId: preAuth.facts.efttransactionID
            },
            preAuthOriginal
          )
          const otherPreAuth = yield* operation("preAuthorization 2", {
            operation: "preAuthorization",
            ...on,
            amount: "3000",
            currency: "EUR"
          })
          const release = yield* operation(
            "preAuthorizationReversal",
            {
              operation: "preAuthorizationReversal",
              ...on,
              originalTransactionId: otherPreAuth.facts.efttransactionID
            },
            { originalTransactionReference: otherPreAuth.facts.transactionReference }
          )

          const rows = yield* sim.transactions
          const expectAt = (label: string, guid: string, expected: Record<string, unknown>) =>
            expect({ label, row: byGuid(rows, guid) }).toEqual({
              label,
              row: expect.objectContaining(expected)
            })
          expectAt("sale", sale.facts.efttransactionID, {
            operation: "sale",
            terminal: sim.serial,
            transactionReference: sale.facts.transactionReference,
            requestedAmount: 1101,
            customerReference: "till-1",
            billing: { zipCode: "28013" }
          })
          expect(tokenized.facts.cardToken).toEqual(expect.any(String))
          expectAt("saleAndTokenizeCard", tokenized.facts.efttransactionID, {
            operation: "saleAndTokenizeCard"
          })
          expectAt("refund", refund.facts.efttransactionID, { operation: "refund", requestedAmount: 1103 })
          expectAt("linked refund", linkedRefund.facts.efttransactionID, {
            operation: "refund",
            originalEFTTransactionID: sale.facts.efttransactionID
          })
          expectAt("refundReversal", refundReversal.facts.efttransactionID, {
            operation: "refundReversal",
            originalEFTTransactionID: refund.facts.efttransactionID
          })
          expectAt("saleReversal", saleReversal.facts.efttransactionID, {
            operation: "saleReversal",
            originalEFTTransactionID: tokenized.facts.efttransactionID
          })
          expectAt("moToSale", motoSale.facts.efttransactionID, { operation: "moToSale", type: "MOTO_SALE" })
          expectAt("moToRefund", motoRefund.facts.efttransactionID, { operation: "moToRefund" })
          expectAt("moToReversal", motoReversal.facts.efttransactionID, {
            operation: "moToReversal",
            originalEFTTransactionID: motoSale.facts.efttransactionID
          })
          expectAt("moToPreAuthorization", motoPreAuth.facts.efttransactionID, {
            operation: "moToPreAuthorization"
          })
          expectAt("preAuthorization", preAuth.facts.efttransactionID, {
            operation: "preAuthorization",
            holdAmount: 5700,
            capturedAmount: 5200
          })
          expect(increase.facts.efttransactionID).toEqual(expect.any(String))
          expect(capture.facts.efttransactionID).toEqual(expect.any(String))
          expectAt("preAuthorizationReversal", otherPreAuth.facts.efttransactionID, {
            operation: "preAuthorization"
          })
          expect(release.view.report.finStatus).toEqual(expect.any(String))

          // The utilities: each accepted by the terminal.
          const before = (yield* sim.terminal).counters.accepted
          yield* operation("tokenizeCard", { operation: "tokenizeCard", ...on })
          yield* operation("printReceipt", { operation: "printReceipt", ...on, receipt: "<p>thanks</p>" })
          yield* operation("cardPan", { operation: "cardPan", ...on })
          const ping = yield* operation("pingDevice", {
            operation: "pingDevice",
            ...on,
            returnDeviceInfo: true
          })
          expect(ping.facts.operation).toBe("pingDevice")
          expect((yield* sim.terminal).counters.accepted).toBe(before + 4)
        }),
      120_000
    )

    it.effect(
      "stop: the terminal's operation in flight is stopped through the API",
      () =>
        Effect.gen(function* () {
          const sim = yield* simulator
          const before = (yield* sim.terminal).counters.accepted
          const reply = yield* post(`/v1/terminals/${sim.serial}/stop`, { waitSeconds: 60 })
          expect(reply.status).toBe(200)
          expect(reply.json).toEqual(
            expect.objectContaining({ executionId: expect.any(String), status: expect.any(String) })
          )
          expect(reply.json.attributes).toEqual(
            expect.objectContaining({ operation: "stopCurrentTransaction", serialNumber: sim.serial })
          )
          // Nothing was running: the service refused it (1003) or took it; either way it was asked.
          expect(reply.json.report?.verdict).toEqual(
            expect.stringMatching(/stop-refused|approved|cancelled|failed/)
          )
          expect((yield* sim.terminal).counters.accepted).toBeGreaterThanOrEqual(before)
        }),
      120_000
    )

    it.effect(
      "every terminal-less workflow reaches the simulator and answers its execution",
      () =>
        Effect.gen(function* () {
          const sim = yield* simulator
          const on = { serial_number: sim.serial }
          const rows = () => sim.transactions
          const byGuid = (all: ReadonlyArray<Json>, guid: string) =>
            all.find((r) => r.efttransactionID === guid)

          // Pre-authorizations made on the terminal, then changed without it.
          const hold = yield* operation("preAuthorization", {
            operation: "preAuthorization",
            ...on,
            amount: "8000",
            currency: "EUR"
          })
          const guid = hold.facts.efttransactionID
          const increased = yield* lifecycle("PreAuthorization.Increase", {
            originalGuid: guid,
            amount: eur(1000)
          })
          expect(increased.hold).toEqual(eur(9000))
          const decreased = yield* lifecycle("PreAuthorization.Decrease", {
            originalGuid: guid,
            amount: eur(500)
          })
          expect(decreased.hold).toEqual(eur(8500))
          const captured = yield* lifecycle("PreAuthorization.Capture", {
            originalGuid: guid,
            amount: eur(8000),
            customerReference: "table 4"
          })
          expect(captured).toEqual(expect.objectContaining({ total: eur(8000) }))
          expect(byGuid(yield* rows(), guid)).toEqual(
            expect.objectContaining({ holdAmount: 8500, capturedAmount: 8000 })
          )

          // A sale made on the terminal: tip, token, reversal without it.
          const sale = yield* operation("sale", {
            operation: "sale",
            ...on,
            amount: "2000",
            currency: "EUR",
            duplicate_check: false
          })
          const saleGuid = sale.facts.efttransactionID
          const tipped = yield* lifecycle("TipAdjustment.Adjust", { originalGuid: saleGuid, tip: eur(300) })
          expect(tipped.tip).toEqual(eur(300))
          expect(byGuid(yield* rows(), saleGuid)).toEqual(expect.objectContaining({ tipAmount: 300 }))
          const token = yield* lifecycle("DeferredTokenization.Tokenize", { originalGuid: saleGuid })
          expect(token.cardToken).toEqual(expect.any(String))
          const reversed = yield* lifecycle("Reversal.Reverse", { originalGuid: saleGuid })
          expect(reversed.amount).toEqual(expect.objectContaining({ currency: "EUR" }))
          expect(byGuid(yield* rows(), saleGuid)?.finStatus).not.toBe("AUTHORISED")

          // MOTO without a terminal, on the token: sale with billing, refund with its reference, reversal.
          const motoReference = globalThis.crypto.randomUUID()
          const motoSale = yield* lifecycle("Moto.Sale", {
            cardToken: token.cardToken,
            amount: eur(4000),
            transactionReference: motoReference,
            billing: { zipCode: "28013", address: "Calle Mayor 1" }
          })
          expect(motoSale).toEqual(
            expect.objectContaining({ status: "AUTHORISED", transactionReference: motoReference })
          )
          expect(byGuid(yield* rows(), motoSale.guid)).toEqual(
            expect.objectContaining({
              operation: "moToSale",
              transactionReference: motoReference,
              billing: { zipCode: "28013", address: "Calle Mayor 1" }
            })
          )
          const refundReference = globalThis.crypto.randomUUID()
          const motoRefund = yield* lifecycle("Moto.Refund", {
            originalGuid: motoSale.guid,
            amount: eur(1000),
            transactionReference: refundReference
          })
          expect(motoRefund.refundedSoFar).toEqual(eur(1000))
          expect(byGuid(yield* rows(), motoRefund.refundGuid)).toEqual(
            expect.objectContaining({ operation: "moToRefund", originalEFTTransactionID: motoSale.guid })
          )
          const otherMoto = yield* lifecycle("Moto.Sale", { cardToken: token.cardToken, amount: eur(4100) })
          const motoReversed = yield* lifecycle("Moto.Reverse", { originalGuid: otherMoto.guid })
          expect(motoReversed.target).toBe("transaction")

          // Batches and device commands.
          const terminal = { serialNumber: sim.serial, terminalType: sim.terminalType }
          const batchNumber = String((yield* sim.terminal).batchNumber)
          const summary = yield* lifecycle("Batch.Summary", { ...terminal, batchNumber, currency: "EUR" })
          expect(summary.transactionCount).toEqual(expect.any(Number))
          const detail = yield* lifecycle("Batch.Detail", {
            ...terminal,
            batchNumber,
            currency: "EUR",
            customerReference: { till: "7" }
          })
          expect(detail.lines.length).toBeGreaterThan(0)
          yield* lifecycle("Batch.Close", { ...terminal, batchNumber })
          expect((yield* sim.terminal).batchNumber).toBe(Number(batchNumber) + 1)
          yield* lifecycle("DeviceCommand.Send", {
            ...terminal,
            command: "set-locale",
            body: { locale: "es_ES" }
          })
          yield* lifecycle("DeviceCommand.Send", {
            ...terminal,
            command: "set-screen-brightness",
            body: { minimumBrightnessLevel: 10, maximumBrightnessLevel: 90 }
          })
          expect((yield* sim.terminal).settings).toEqual(
            expect.objectContaining({
              locale: "es_ES",
              minimumBrightnessLevel: 10,
              maximumBrightnessLevel: 90
            })
          )
        }),
      120_000
    )

    it.effect(
      "the read routes: devices, status, executions, history, events, audit, metrics, openapi",
      () =>
        Effect.gen(function* () {
          const sim = yield* simulator
          const sale = yield* operation("sale for reads", {
            operation: "sale",
            serial_number: sim.serial,
            amount: "3000",
            currency: "EUR",
            duplicate_check: false
          })
          const reference = sale.facts.transactionReference as string
          const executionId = sale.view.executionId as string
          // A linked refund of the sale, made on the terminal: part of the sale's story.
          const refund = yield* operation(
            "linked refund for reads",
            {
              operation: "refund",
              serial_number: sim.serial,
              amount: "1000",
              currency: "EUR",
              duplicate_check: false,
              originalTransactionId: sale.facts.efttransactionID
            },
            { originalTransactionReference: reference }
          )

          const devices = yield* call("GET", "/v1/devices")
          expect(devices.status).toBe(200)
          expect(devices.json).toContainEqual({
            serialNumber: sim.serial,
            terminalType: sim.terminalType,
            merchant: expect.any(String)
          })
          expect(devices.text).not.toContain("ssk")

          const status = yield* call("GET", `/v1/transactions/${reference}/status?selector=all`)
          expect(status.status).toBe(200)
          expect(status.json.map((r: Json) => r.efttransactionID)).toEqual(
            expect.arrayContaining([sale.facts.efttransactionID, refund.facts.efttransactionID])
          )

          const one = yield* call("GET", `/v1/executions/${executionId}`)
          expect(one.json).toEqual(expect.objectContaining({ executionId, status: "succeeded" }))
          const listed = yield* call("GET", `/v1/executions?transactionReference=${reference}&limit=5`)
          expect(listed.json.map((e: Json) => e.executionId)).toEqual([executionId])
          const history = yield* call("GET", `/v1/executions/${executionId}/history`)
          expect(history.json).toEqual(
            expect.objectContaining({ executionId, engine: expect.any(Array), business: expect.any(Array) })
          )
          expect(history.json.business.map((e: Json) => e.type)).toContain("PaymentAuthorised")

          const events = yield* call("GET", "/v1/events?limit=5")
          expect(events.json.events).toHaveLength(5)
          const next = yield* call("GET", `/v1/events?after=${events.json.next}&limit=5`)
          expect(next.json.events[0].position).not.toBe(events.json.events[0].position)

          expect((yield* call("GET", "/v1/audit/verify")).json).toEqual(expect.objectContaining({ ok: true }))
          const ledger = yield* call("GET", "/v1/audit/ledger")
          expect(
            ledger.json.rows.some((r: Json) => r.terminal === sim.serial && r.tallies.sale.count > 0)
          ).toBe(true)
          const entries = yield* call("GET", "/v1/audit/entries?limit=10000")
          expect(entries.json.entries.map((e: Json) => e.transactionReference)).toContain(reference)
          expect((yield* call("GET", "/v1/audit/rebuild")).json).toEqual(
            expect.objectContaining({ compared: expect.any(Boolean), checkpoint: expect.any(String) })
          )

          // The sale's timeline tells the linked refund that references it.
          const timeline = yield* call("GET", `/v1/audit/timeline/${reference}`)
          expect(timeline.json.executionId).toBe(executionId)
          const story = (timeline.json.lines as ReadonlyArray<string>).join("\n")
          expect(story).toContain(refund.view.executionId)
          expect(story).toMatch(/refund/)

          const metrics = yield* call("GET", "/metrics")
          expect(metrics.text).toContain("tillflow_executions")
          const openapi = yield* call("GET", "/openapi.json")
          expect(Object.keys(openapi.json.paths)).toEqual(
            expect.arrayContaining([
              "/v1/operations",
              "/v1/lifecycle/{workflow}",
              "/v1/audit/timeline/{reference}"
            ])
          )
          expect((yield* call("GET", "/health", { token: null })).json).toEqual({ status: "ok" })
          expect((yield* call("GET", "/ready", { token: null })).json).toEqual(
            expect.objectContaining({ ready: true })
          )
        }),
      120_000
    )

    // PostgreSQL only: the hazard needs a second session. PGlite has one, so a transaction
    // held open there blocks every other statement instead of hiding later appends.
    it.effect.skipIf(!TestDatabase.postgresExpected)(
      "an operation on an original approved a moment ago waits for the log to show it, instead of refusing it as never recorded (terminal-less and linked on the terminal)",
      () =>
        Effect.gen(function* () {
          const sim = yield* simulator
          const sql = yield* SqlClient.SqlClient
          // An older transaction still open anywhere on the server hides every event appended
          // after it from the global log (read in commit-safe order) until it ends: `first`
          // runs while one is open, `then` is asked while it still is, and it ends 1 s later.
          const whileHidden = <A, B, R1, R2>(
            first: Effect.Effect<A, never, R1>,
            then: (a: A) => Effect.Effect<B, never, R2>
          ): Effect.Effect<B, never, R1 | R2> =>
            Effect.gen(function* () {
              const release = yield* Deferred.make<void>()
              const opened = yield* Deferred.make<void>()
              const blocker = yield* Effect.fork(
                sql.withTransaction(
                  Effect.gen(function* () {
                    yield* sql`SELECT pg_current_xact_id()`
                    yield* Deferred.succeed(opened, undefined)
                    yield* Deferred.await(release)
                  })
                )
              )
              yield* Deferred.await(opened)
              const a = yield* first
              yield* Effect.fork(Effect.delay(Deferred.succeed(release, undefined), "1 second"))
              const b = yield* then(a)
              yield* Fiber.join(blocker).pipe(Effect.orDie)
              return b
            })
          const on = { serial_number: sim.serial, currency: "EUR" }

          const tipped = yield* whileHidden(
            operation("sale-then-tip", { operation: "sale", ...on, amount: "2100", duplicate_check: false }),
            (sale) =>
              lifecycle("TipAdjustment.Adjust", { originalGuid: sale.facts.efttransactionID, tip: eur(200) })
          )
          expect(tipped.tip).toEqual(eur(200))

          const increased = yield* whileHidden(
            operation("preauth-then-increase", { operation: "preAuthorization", ...on, amount: "5100" }),
            (preauth) =>
              operation("increase-right-after", {
                operation: "preAuthorizationIncrease",
                ...on,
                amount: "700",
                originalTransactionId: preauth.facts.efttransactionID
              })
          )
          expect(increased.facts.efttransactionID).toEqual(expect.any(String))
        }),
      60_000
    )
  })
})
