/**
 * Personal data of operations sent to a terminal (issue 31): a sale's `billing` (the
 * cardholder's address, for address verification) and `moneyRemittanceOptions` (the
 * remitter's name and country) are stored in the execution's `WorkflowStarted` payload
 * wrapped (`TransactionRequest.Stored`), linked by their digest, while the request the HTTP
 * adapter sends the service still carries them plain. The result the service sends back,
 * which echoes the remittance options and reports the `cardHolderName`, is recorded with
 * both wrapped too (`TransactionResult.Stored`): in the poll step, and for a result by
 * callback in the attempt's `ResultReceived` and the deferred it resolves.
 * `EventArchive.erasePersonal` removes them all without breaking the chain, and the
 * execution still reads (its result unchanged) and replays. On the database of
 * `TestDatabase`: PostgreSQL with `DATABASE_URL`, PGlite without.
 */
import { expect, layer } from "@effect/vitest"
import { CallbackRegistration } from "@tillflow/core"
import { EngineEvent, EventStore, HashChain, ReplayKit } from "@tillflow/engine"
import { Stack } from "@tillflow/intake"
import { EventArchive } from "@tillflow/store-sql"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { call, running } from "./support.js"

const billing = { zipCode: "SW1A 2AA", address: "Calle Mayor 1" }
const remittance = { fullName: "Ada Lovelace", countryCode: "GBR" }
/** The name the simulator's terminals report for their card (`cardHolderName`). */
const holder = "SIM CARDHOLDER"

/** What the built-in simulator received over HTTP for each transaction (its admin API). */
const received = (adminUrl: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${adminUrl}/transactions`)
    return (await response.json()) as ReadonlyArray<{
      readonly transactionReference: string
      readonly billing?: unknown
      readonly finStatus: string
    }>
  })

/** The whole global log's data and metadata, as JSON text. */
const wholeLog = (store: EventStore.Service) =>
  Effect.gen(function* () {
    const texts: Array<string> = []
    let checkpoint = EventStore.Checkpoint.start
    while (true) {
      const page = yield* store.readAll(checkpoint, { maxCount: 500 })
      for (const event of page.events) texts.push(JSON.stringify([event.data, event.metadata]))
      checkpoint = page.next
      if (page.caughtUp) return texts.join("\n")
    }
  })

const started = (store: EventStore.Service, executionId: string) =>
  Effect.map(store.readStream(EngineEvent.streamId(executionId)), (events) => {
    const event = events.find((e) => e.type === "WorkflowStarted")
    if (event === undefined) throw new Error(`${executionId} has no WorkflowStarted`)
    return {
      event,
      request: (event.data as { readonly payload: { readonly request: Record<string, unknown> } }).payload
        .request
    }
  })

/** The events of an execution's stream, as JSON text each. */
const executionEvents = (store: EventStore.Service, executionId: string) =>
  Effect.map(store.readStream(EngineEvent.streamId(executionId)), (events) =>
    events.map((e) => ({ type: e.type, data: e.data, text: JSON.stringify(e.data), metadata: e.metadata }))
  )

/** A wrapper of `value`, as stored. */
const wrapped = (value: unknown) => ({ [HashChain.personalKey]: { salt: expect.any(String), value } })

layer(running(31), { timeout: 120_000, excludeTestServices: true })(
  "personal data of terminal operations",
  (it) => {
    it.effect(
      "billing, remittance options and the result's cardholder name stored wrapped, sent and read plain; removed, the chain verifies and the execution still reads and replays",
      () =>
        Effect.gen(function* () {
          const cloud = yield* Stack.Cloud
          const store = yield* EventStore.EventStore
          const serial = cloud.terminals[0]?.serialNumber
          if (serial === undefined || cloud.adminUrl === undefined)
            return yield* Effect.dieMessage("the built-in simulator has no terminal or admin API")
          // Two amounts: the same amount again on the terminal at once is a duplicate payment.
          const body = (
            idempotencyKey: string,
            amount: string,
            request: Record<string, unknown>,
            delivery?: "callback"
          ) =>
            JSON.stringify({
              idempotencyKey,
              request: { operation: "sale", serial_number: serial, amount, currency: "EUR", ...request },
              ...(delivery === undefined ? {} : { delivery })
            })
          const withBilling = body("personal-billing", "1050", { billing })
          const withRemittance = body("personal-remittance", "1070", { moneyRemittanceOptions: remittance })
          const byCallback = body(
            "personal-callback",
            "1090",
            { moneyRemittanceOptions: remittance },
            "callback"
          )

          const executions: Array<string> = []
          for (const request of [withBilling, withRemittance, byCallback]) {
            const first = yield* call("POST", "/v1/operations", { body: request })
            expect(first.status, first.text).toBeLessThan(300)
            executions.push(first.json.executionId)
          }
          const [billed = "", remitted = "", calledBack = ""] = executions
          const results: Array<string> = []
          for (const executionId of executions) {
            const ended = yield* call("GET", `/v1/executions/${executionId}?wait=60`)
            expect(ended.json.status, ended.text).toBe("succeeded")
            expect(ended.text).toContain("AUTHORISED")
            // What the caller reads holds no stored form.
            expect(ended.text).not.toContain(HashChain.personalKey)
            results.push(ended.text)
          }
          // The same request asked again is the same sale, though its stored form has a salt;
          // other billing under the key is another request.
          const again = yield* call("POST", "/v1/operations", { body: withBilling })
          expect(again.status, again.text).toBeLessThan(300)
          expect(again.json.executionId).toBe(billed)
          const other = body("personal-billing", "1050", { billing: { ...billing, zipCode: "10001" } })
          expect((yield* call("POST", "/v1/operations", { body: other })).status).toBe(409)

          // Stored: the wrapper, and the event linked by its digest (link version 2).
          const billedStart = yield* started(store, billed)
          expect(billedStart.event.metadata).toMatchObject({ [HashChain.linkVersionKey]: 2 })
          expect(billedStart.request["billing"]).toEqual({
            [HashChain.personalKey]: { salt: expect.any(String), value: billing }
          })
          const remittedStart = yield* started(store, remitted)
          expect(remittedStart.request["moneyRemittanceOptions"]).toEqual({
            [HashChain.personalKey]: { salt: expect.any(String), value: remittance }
          })
          // Sent: the plain values. The simulator keeps the billing it received, and refuses
          // remittance options without a plain fullName and countryCode (400), so both sales
          // succeeding shows what went over the wire.
          const reference = billedStart.request["transactionReference"]
          const sent = (yield* received(cloud.adminUrl)).find((t) => t.transactionReference === reference)
          expect(sent?.billing).toEqual(billing)
          expect(sent?.finStatus).toBe("AUTHORISED")

          // The result, which echoes the remittance options and names the cardholder, is
          // recorded wrapped: in the poll step that received it (linked by digest) …
          const polled = (yield* executionEvents(store, remitted)).filter(
            (e) => e.type === "ActivityCompleted" && e.text.includes('"Ready"')
          )
          expect(polled.length, "a poll step with the result").toBe(1)
          const pollStep = polled[0]
          expect(pollStep?.metadata).toMatchObject({ [HashChain.linkVersionKey]: 2 })
          const pollResult = (
            pollStep?.data as {
              readonly exit: { readonly value: { readonly delivered: { readonly result: object } } }
            }
          ).exit.value.delivered.result
          expect(pollResult).toMatchObject({
            cardHolderName: wrapped(holder),
            moneyRemittanceOptions: wrapped(remittance)
          })
          // … and, by callback, in the attempt's `ResultReceived` and the deferred it resolved.
          const calledBackEvents = yield* executionEvents(store, calledBack)
          const resolved = calledBackEvents.filter(
            (e) => e.type === "DeferredResolved" && e.text.includes(holder)
          )
          // The result's deferred, and the race of the wait that recorded what it returned.
          expect(resolved.length, "the callback's deferreds hold the result").toBe(2)
          for (const event of resolved) {
            expect(event.text).toContain(HashChain.personalKey)
            expect(event.metadata).toMatchObject({ [HashChain.linkVersionKey]: 2 })
          }
          const attemptId = calledBackEvents
            .map((e) => /"attemptId":"([0-9a-f-]{36})"/.exec(e.text)?.[1])
            .find((id) => id !== undefined)
          if (attemptId === undefined) return yield* Effect.dieMessage("no attempt id in the execution")
          const receivedEvents = (yield* store.readStream(
            CallbackRegistration.attemptStream(attemptId)
          )).filter((e) => e.type === "ResultReceived")
          expect(receivedEvents.length).toBe(1)
          expect(receivedEvents[0]?.metadata).toMatchObject({ [HashChain.linkVersionKey]: 2 })
          expect((receivedEvents[0]?.data as { readonly result: object }).result).toMatchObject({
            cardHolderName: wrapped(holder),
            moneyRemittanceOptions: wrapped(remittance)
          })
          const plainLeft = (yield* wholeLog(store))
            .split("\n")
            .filter((line) => line.includes(`"cardHolderName":"${holder}"`))
          expect(plainLeft, "no plain cardholder name recorded").toEqual([])

          // Removed after its retention: nothing of the billing, the remitter or the
          // cardholder is left in the log, and every chain verifies.
          const erased = yield* EventArchive.erasePersonal({ before: new Date(Date.now() + 60_000) })
          expect(erased.events).toBeGreaterThanOrEqual(5)
          const log = yield* wholeLog(store)
          for (const text of ["Calle Mayor", "SW1A 2AA", "Ada Lovelace", "Lovelace", holder]) {
            expect(log).not.toContain(text)
          }
          const attemptVerified = yield* store.verify(CallbackRegistration.attemptStream(attemptId))
          expect(attemptVerified.broken).toEqual([])
          for (const executionId of executions) {
            const verified = yield* store.verify(EngineEvent.streamId(executionId))
            expect(verified.broken).toEqual([])
          }
          expect((yield* started(store, billed)).request["billing"]).toEqual({
            [HashChain.personalDigestKey]: expect.stringMatching(/^[0-9a-f]{64}$/)
          })
          expect((yield* started(store, remitted)).request["moneyRemittanceOptions"]).toEqual({
            [HashChain.personalDigestKey]: expect.stringMatching(/^[0-9a-f]{64}$/)
          })

          // The executions still read, their results unchanged, and still replay.
          for (const [i, executionId] of executions.entries()) {
            const read = yield* call("GET", `/v1/executions/${executionId}`)
            expect(read.text).toBe(results[i])
          }
          const histories = yield* ReplayKit.fromStore({ workflowName: "TerminalOperation" })
          expect(histories.map((h) => h.executionId)).toEqual(expect.arrayContaining(executions))
          const report = yield* ReplayKit.replay(
            histories,
            Stack.replayWorkflowsLayer({ mcc: Option.some("7011"), motoTerminal: Option.none() })
          )
          expect(ReplayKit.describe(report)).toBe(
            `${histories.length} executions replayed, 0 would not replay`
          )
        })
    )
  }
)
