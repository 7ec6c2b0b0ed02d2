/**
 * End to end, with the simulator's faults (injected over its admin API): a response
 * dropped after the charge, a request that never reached the gateway, the callback
 * receiver down for three minutes; concurrent sales to one terminal; stops at a stoppable
 * and a non-stoppable step.
 */
import { describe, expect, it } from "@effect/vitest"
import { Identifiers, LifecycleEvent, Money, TerminalOperations, TransactionHistory } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { advanceUntil, everything, Harness, layer, paymentEvents, runToEnd } from "./harness.js"

const eur = (minor: bigint) => Money.make(minor, "EUR")
const tagOf = <A extends { readonly _tag: string }, E extends { readonly _tag: string }>(
  exit: Exit.Exit<A, E>
) =>
  Exit.isSuccess(exit)
    ? exit.value._tag
    : Option.match(Cause.failureOption(exit.cause), {
        onNone: () => Cause.pretty(exit.cause),
        onSome: (e) => e._tag
      })

describe("end to end: faults", () => {
  it.effect(
    "issue 28 row 4: a terminal capture whose response is dropped is reconciled through the pre-authorization's reference and does not lock it",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const opened = yield* runToEnd(
          TerminalOperations.preAuthorization(
            { ...h.terminal, amount: eur(10000n) },
            { idempotencyKey: "pa", delivery: "polling" }
          )
        )
        if (!Exit.isSuccess(opened)) return expect.fail(`pre-authorization: ${tagOf(opened)}`)
        const guid = Identifiers.Guid.make(opened.value.facts.efttransactionID ?? "")
        yield* h.admin("POST", "/faults", {
          kind: "drop-response",
          method: "POST",
          path: "/transactions",
          times: 1
        })
        // The caller names the original by its guid only, as an integrator does.
        const lost = yield* runToEnd(
          TerminalOperations.preAuthorizationCapture(
            { ...h.terminal, originalTransactionId: guid, amount: eur(9000n) },
            { idempotencyKey: "capture-lost", delivery: "polling" }
          )
        )
        expect(tagOf(lost)).toBe("Approved")
        if (Exit.isSuccess(lost)) expect(lost.value.facts.source).toBe("status")
        const store = yield* EventStore.EventStore
        const state = Option.getOrThrow((yield* TransactionHistory.load(store, guid)).state)
        expect(state.pending).toBeUndefined()
        expect(state.preAuthorization?.capture?.total).toEqual(eur(9000n))
        expect((yield* store.readStream(LifecycleEvent.transactionStream(guid))).map((e) => e.type)).toEqual([
          "PreAuthorizationOpened",
          "CaptureRequested",
          "PreAuthorizationCaptured"
        ])
        // Decided by the money rules, not locked by an unknown outcome.
        const again = yield* runToEnd(
          TerminalOperations.preAuthorizationCapture(
            { ...h.terminal, originalTransactionId: guid, amount: eur(9000n) },
            { idempotencyKey: "capture-again", delivery: "polling" }
          )
        )
        const refusal = Exit.isFailure(again)
          ? Option.getOrUndefined(Cause.failureOption(again.cause))
          : undefined
        expect(refusal).toMatchObject({ _tag: "OperationRefused", error: "CaptureAlreadyDone" })
      }).pipe(Effect.provide(layer({ linkedRules: { mcc: Option.some("7011") } }))),
    { timeout: 120_000 }
  )

  it.effect(
    "the POST's response is dropped after the charge: reconciliation finds it, no second charge is sent",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        yield* h.admin("POST", "/faults", {
          kind: "drop-response",
          method: "POST",
          path: "/transactions",
          times: 1
        })
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(2500n) },
            { idempotencyKey: "drop", delivery: "polling" }
          )
        )
        expect(tagOf(exit)).toBe("Approved")
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("status")
        expect(yield* h.charges).toBe(1)
        const transactions = (yield* h.admin("GET", "/transactions")) as ReadonlyArray<unknown>
        expect(transactions).toHaveLength(1)
        const types = (yield* paymentEvents).map((e) => e.type)
        expect(types).toContain("AttemptOutcomeUnknown")
        expect(types.filter((t) => t === "AttemptRecorded")).toHaveLength(1)
      }).pipe(Effect.provide(layer())),
    { timeout: 120_000 }
  )

  it.effect(
    "the request never reached the gateway: NOT FOUND after 90 s, then a new attempt charges exactly once",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        yield* h.admin("POST", "/faults", {
          kind: "error-before",
          method: "POST",
          path: "/transactions",
          status: 503
        })
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(2600n) },
            { idempotencyKey: "lost", delivery: "polling", deadline: "10 minutes" }
          )
        )
        expect(tagOf(exit)).toBe("Approved")
        expect(yield* h.charges).toBe(1)
        const events = yield* paymentEvents
        const recorded = events.filter((e) => e.type === "AttemptRecorded")
        expect(recorded).toHaveLength(2)
        const notCharged = events.find((e) => e.type === "AttemptNotCharged")
        const at = (e: { readonly data: unknown } | undefined) => (e?.data as { readonly at: number }).at
        expect(at(notCharged) - at(recorded[0])).toBeGreaterThan(90_000)
        const refs = recorded.map(
          (e) => (e.data as { readonly transactionReference: string }).transactionReference
        )
        expect(new Set(refs).size).toBe(2)
        if (Exit.isSuccess(exit)) expect(exit.value.facts.transactionReference).toBe(refs[1])
      }).pipe(Effect.provide(layer())),
    { timeout: 120_000 }
  )

  it.effect(
    "the callback receiver is down for 3 minutes: the recovery loop delivers later, the workflow completes once",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        yield* h.admin("POST", "/faults/callback-outage", { ms: 180_000 })
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(2700n) },
            { idempotencyKey: "down", delivery: "callback" }
          )
        )
        expect(tagOf(exit)).toBe("Approved")
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("callback")
        const deliveries = (yield* h.admin("GET", "/callbacks")) as ReadonlyArray<{
          readonly attempts: number
        }>
        expect(deliveries[0]?.attempts ?? 0).toBeGreaterThan(10)
        // The terminal's recovery loop is asked to run again: nothing new is recorded.
        yield* h.admin("POST", "/recovery")
        yield* runToEnd(Effect.sleep("1 minute"))
        const all = yield* everything
        const received = all.filter((e) => e.type === "ResultReceived")
        expect(received).toHaveLength(1)
        expect(received[0]?.data).toMatchObject({ recovered: true })
        expect(all.filter((e) => e.type === "PaymentAuthorised")).toHaveLength(1)
        expect(yield* h.charges).toBe(1)
      }).pipe(Effect.provide(layer({ settings: { callbackFallback: Duration.minutes(5) } }))),
    { timeout: 120_000 }
  )

  it.effect(
    "the receiver down past the fallback: the status settles it, the late recovered result is recorded once, no mismatch",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        yield* h.admin("POST", "/faults/callback-outage", { ms: 180_000 })
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(2800n) },
            { idempotencyKey: "late", delivery: "callback" }
          )
        )
        expect(tagOf(exit)).toBe("Approved")
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("status")
        yield* advanceUntil(
          Effect.map(everything, (all) => all.some((e) => e.type === "LateResultRecorded")),
          "10 minutes"
        )
        const all = yield* everything
        expect(all.filter((e) => e.type === "ResultReceived")).toHaveLength(1)
        expect(all.filter((e) => e.type === "LateResultRecorded")).toHaveLength(1)
        expect(all.filter((e) => e.type === "ResultMismatch")).toHaveLength(0)
        expect(yield* h.charges).toBe(1)
      }).pipe(Effect.provide(layer({ settings: { callbackFallback: Duration.minutes(1) } }))),
    { timeout: 120_000 }
  )
})

describe("end to end: one terminal, several callers; stop", () => {
  it.effect(
    "concurrent sales to one terminal are serialised: none gets 1001, each charges once",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const exits = yield* runToEnd(
          Effect.all(
            [3101n, 3102n, 3103n, 3104n].map((minor) =>
              Effect.exit(
                TerminalOperations.sale(
                  { ...h.terminal, amount: eur(minor) },
                  { idempotencyKey: `c-${minor}`, delivery: "polling", deadline: "10 minutes" }
                )
              )
            ),
            { concurrency: "unbounded" }
          )
        )
        expect(Exit.isSuccess(exits)).toBe(true)
        if (Exit.isSuccess(exits))
          expect(exits.value.map(tagOf)).toEqual(["Approved", "Approved", "Approved", "Approved"])
        expect(yield* h.charges).toBe(4)
        const types = (yield* paymentEvents).map((e) => e.type)
        expect(types).not.toContain("AttemptNotProcessed")
        expect(types.filter((t) => t === "AttemptRecorded")).toHaveLength(4)
      }).pipe(Effect.provide(layer())),
    { timeout: 120_000 }
  )

  const stepOf = (h: { readonly admin: (m: string, p: string) => Effect.Effect<unknown> }, serial: string) =>
    Effect.map(
      h.admin("GET", `/terminals/${serial}`),
      (view) => (view as { readonly step: string | null }).step
    )

  it.effect(
    "stop while the terminal waits for the card: accepted, the sale ends Cancelled and charges nothing",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const sale = yield* Effect.fork(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(2900n) },
            { idempotencyKey: "s1", delivery: "callback" }
          )
        )
        yield* advanceUntil(Effect.map(stepOf(h, h.terminal.serialNumber), (s) => s === "WaitingForCard"))
        const stopped = yield* runToEnd(
          TerminalOperations.stopCurrentTransaction(h.terminal, { idempotencyKey: "stop1" })
        )
        expect(tagOf(stopped)).toBe("StopAccepted")
        const exit = yield* runToEnd(Fiber.join(sale))
        expect(tagOf(exit)).toBe("Cancelled")
        expect(yield* h.charges).toBe(0)
        expect((yield* paymentEvents).map((e) => e.type)).toContain("PaymentCancelled")
      }).pipe(Effect.provide(layer({ timings: { WaitingForCard: 60_000 } }))),
    { timeout: 120_000 }
  )

  it.effect(
    "stop after the callback's fallback, while the status endpoint cannot tell: the CANCELLED result delivered meanwhile settles the sale, nothing sold again or charged",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const sale = yield* Effect.fork(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(2950n) },
            { idempotencyKey: "s-late-stop", delivery: "callback" }
          )
        )
        // The fallback fired: the sale is reconciling (a sale at the card is not at the gateway).
        yield* advanceUntil(
          Effect.map(paymentEvents, (events) => events.some((e) => e.type === "ReconciliationChecked"))
        )
        expect(yield* stepOf(h, h.terminal.serialNumber)).toBe("WaitingForCard")
        const stopped = yield* runToEnd(
          TerminalOperations.stopCurrentTransaction(h.terminal, { idempotencyKey: "stop-late" })
        )
        expect(tagOf(stopped)).toBe("StopAccepted")
        const exit = yield* runToEnd(Fiber.join(sale), { max: "80 seconds" })
        expect(tagOf(exit)).toBe("Cancelled")
        expect(yield* h.charges).toBe(0)
        const types = (yield* paymentEvents).map((e) => e.type)
        expect(types).toContain("PaymentCancelled")
        expect(types.filter((t) => t === "AttemptRecorded")).toHaveLength(1)
        expect(types).not.toContain("AttemptNotCharged")
      }).pipe(
        Effect.provide(
          layer({ timings: { WaitingForCard: 600_000 }, settings: { callbackFallback: Duration.seconds(1) } })
        )
      ),
    { timeout: 120_000 }
  )

  it.effect(
    "stop while the terminal waits for the host: refused (1003), the sale completes and charges once",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const sale = yield* Effect.fork(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(3000n) },
            { idempotencyKey: "s2", delivery: "callback" }
          )
        )
        yield* advanceUntil(Effect.map(stepOf(h, h.terminal.serialNumber), (s) => s === "WaitingHostReceive"))
        const stopped = yield* runToEnd(
          TerminalOperations.stopCurrentTransaction(h.terminal, { idempotencyKey: "stop2" })
        )
        expect(tagOf(stopped)).toBe("StopRefused")
        const exit = yield* runToEnd(Fiber.join(sale))
        expect(tagOf(exit)).toBe("Approved")
        expect(yield* h.charges).toBe(1)
        expect((yield* paymentEvents).map((e) => e.type)).toContain("StopRefused")
      }).pipe(Effect.provide(layer({ timings: { WaitingHostReceive: 60_000 } }))),
    { timeout: 120_000 }
  )
})

describe("end to end: a result acknowledged but never forwarded", () => {
  it.effect(
    "the receiver's process stops between the 200 and the forwarding: the sale settles with that result, one charge",
    () =>
      Effect.gen(function* () {
        const h = yield* Harness
        const exit = yield* runToEnd(
          TerminalOperations.sale(
            { ...h.terminal, amount: eur(3100n) },
            { idempotencyKey: "lost-forward", delivery: "callback" }
          )
        )
        expect(tagOf(exit)).toBe("Approved")
        // Settled by the delivered result found in the attempt's stream, not by the status endpoint.
        if (Exit.isSuccess(exit)) expect(exit.value.facts.source).toBe("callback")
        expect(yield* h.charges).toBe(1)
        const all = yield* everything
        expect(all.filter((e) => e.type === "ResultReceived")).toHaveLength(1)
        // The deferred was resolved by the reply's own write (the result and its resolution
        // in one appendStreams), once; nothing woke the execution after it.
        const resolved = all.filter(
          (e) =>
            e.type === "DeferredResolved" &&
            String((e.data as { readonly name?: unknown }).name).startsWith("tillflow/result/")
        )
        expect(resolved).toHaveLength(1)
        const types = (yield* paymentEvents).map((e) => e.type)
        expect(types.filter((t) => t === "AttemptRecorded")).toHaveLength(1)
        expect(types.filter((t) => t === "PaymentAuthorised")).toHaveLength(1)
      }).pipe(Effect.provide(layer({ loseForwarding: true }))),
    { timeout: 120_000 }
  )
})
