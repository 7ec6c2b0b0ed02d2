import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  LifecycleEvent,
  PreAuthorizationWorkflow,
  RemoteError,
  TransactionHistory
} from "@tillflow/core"
import { ScriptedTerminalLessCloud } from "@tillflow/core/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import {
  advance,
  stepClock,
  atStart,
  barrierOnFirstReads,
  environment,
  eur,
  eventsOf,
  inEnvironment,
  openPreAuth,
  recordTxn,
  typesOf,
  usd
} from "./support/lifecycle.js"

const { Capture, Increase, Decrease } = PreAuthorizationWorkflow
const guid = Identifiers.Guid.make("pa-0001")
const stream = LifecycleEvent.transactionStream(guid)
const run = inEnvironment(environment(PreAuthorizationWorkflow.layer))
const test = <E>(
  name: string,
  body: () => Effect.Effect<void, E, Layer.Layer.Success<ReturnType<typeof environment<never, never>>>>
) => it.effect(name, () => run(body()))

const control = ScriptedTerminalLessCloud.ScriptedControl

describe("PreAuthorizationWorkflow", () => {
  test('increases and decreases are tracked into the current hold, and sent as decimal deltas with subtract "1"', () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      const up = yield* Increase.execute({ requestId: "inc-1", originalGuid: guid, amount: eur(2500n) })
      expect(up.hold).toEqual(eur(12500n))
      const down = yield* Decrease.execute({ requestId: "dec-1", originalGuid: guid, amount: eur(500n) })
      expect(down.hold).toEqual(eur(12000n))
      const calls = (yield* (yield* control).calls).map((c) => c.request)
      expect(calls).toEqual([
        expect.objectContaining({ originalGuid: guid, increaseAmount: "25.00" }),
        expect.objectContaining({ originalGuid: guid, increaseAmount: "5.00", subtract: true })
      ])
      expect((calls[0] as { subtract?: unknown }).subtract).toBeUndefined()
      const state = TransactionHistory.fold(yield* eventsOf(stream)).pipe(Option.getOrThrow)
      expect(state.preAuthorization?.hold).toEqual(eur(12000n))
      expect(yield* typesOf(stream)).toEqual([
        "PreAuthorizationOpened",
        "HoldIncreaseRequested",
        "HoldIncreased",
        "HoldDecreaseRequested",
        "HoldDecreased"
      ])
    }))

  test("a decrease that would release the whole hold is refused before any request leaves", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "Visa", mcc: "7011" })
      const error = yield* Effect.flip(
        Decrease.execute({ requestId: "dec-1", originalGuid: guid, amount: eur(10000n) })
      )
      expect(error._tag).toBe("DecreaseExceedsHold")
      expect(error.message).toContain("a decrease must leave a positive hold")
      expect(yield* (yield* control).count("preAuthorizationIncrease")).toBe(0)
      expect(yield* typesOf(stream)).toEqual(["PreAuthorizationOpened", "OperationRefused"])
    }))

  test("a capture up to the scheme's tolerance over the hold is sent; one cent more is refused naming the rule", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "5411" })
      const over = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(12001n) })
      )
      expect(over._tag).toBe("CaptureOverTolerance")
      expect(over.message).toContain("rule mastercard")
      expect(over.message).toContain("120.00 EUR")
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(0)
      const done = yield* Capture.execute({ requestId: "cap-2", originalGuid: guid, amount: eur(12000n) })
      expect(done.total).toEqual(eur(12000n))
      expect(done.rule).toBe("mastercard")
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(1)
    }))

  test("the tolerance applies to the current hold, after increases", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "Visa", mcc: "7011" })
      yield* Increase.execute({ requestId: "inc-1", originalGuid: guid, amount: eur(10000n) })
      // 200.00 held, Visa lodging 15%: up to 230.00
      const done = yield* Capture.execute({
        requestId: "cap-1",
        originalGuid: guid,
        amount: eur(22000n),
        tip: eur(1000n)
      })
      expect(done.total).toEqual(eur(23000n))
      expect(done.limit).toEqual(eur(23000n))
      const request = (yield* (yield* control).calls).find(
        (c) => c.endpoint === "preAuthorizationCapture"
      )?.request
      expect(request).toEqual({ originalGuid: guid, capturedAmount: "220.00", tipAmount: "10.00" })
    }))

  test("a pre-authorization is captured once: a second capture gets CaptureAlreadyDone without a request", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      yield* Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(9000n) })
      const again = yield* Effect.flip(
        Capture.execute({ requestId: "cap-2", originalGuid: guid, amount: eur(1000n) })
      )
      expect(again._tag).toBe("CaptureAlreadyDone")
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(1)
    }))

  test("the same request id twice is answered once (idempotent execution)", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      const first = yield* Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(9000n) })
      const second = yield* Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(9000n) })
      expect(second).toEqual(first)
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(1)
    }))

  it.effect("two concurrent captures that read the same version: exactly one reaches the gateway", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      const results = yield* Effect.all(
        [
          Effect.either(Capture.execute({ requestId: "cap-a", originalGuid: guid, amount: eur(5000n) })),
          Effect.either(Capture.execute({ requestId: "cap-b", originalGuid: guid, amount: eur(6000n) }))
        ],
        { concurrency: "unbounded" }
      )
      const tags = results.map((r) => (r._tag === "Right" ? "Captured" : r.left._tag)).sort()
      expect(tags).toEqual(["CaptureAlreadyDone", "Captured"])
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(1)
    }).pipe(
      inEnvironment(
        environment(PreAuthorizationWorkflow.layer, { wrapStore: barrierOnFirstReads(stream, 2) })
      )
    )
  )

  test("Visa lodging: 31 days to capture; after that the capture is refused, or sent with a warning when opted in", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "Visa", mcc: "3512" })
      yield* advance("31 days")
      yield* advance("1 millis")
      const late = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(10000n) })
      )
      expect(late._tag).toBe("CaptureWindowClosed")
      expect(late.message).toContain("rule visa-lodging-car-rental-cruise")
      expect(late.message).toContain("31 days")
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(0)
      const warned = yield* Capture.execute({
        requestId: "cap-2",
        originalGuid: guid,
        amount: eur(10000n),
        enforcement: "warn"
      })
      expect(warned.warnings).toHaveLength(1)
      expect(warned.warnings[0]).toContain("closed at 2025-04-01T10:00:00.000Z")
      const requested = (yield* eventsOf(stream)).find((e) => e.type === "CaptureRequested")
      expect(requested?.data).toMatchObject({ warnings: warned.warnings })
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(1)
    }))

  test("Visa lodging: a capture at exactly 31 days is inside the window", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "Visa", mcc: "7011" })
      yield* advance("31 days")
      const done = yield* Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(10000n) })
      expect(done.warnings).toEqual([])
    }))

  test("Visa truck rental, EV charging, parking: 7 days and 15%", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "Visa", mcc: "7523" })
      const over = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(11501n) })
      )
      expect(over.message).toContain("rule visa-truck-ev-parking")
      yield* advance("7 days")
      yield* advance("1 seconds")
      const late = yield* Effect.flip(
        Capture.execute({ requestId: "cap-2", originalGuid: guid, amount: eur(11500n) })
      )
      expect(late._tag).toBe("CaptureWindowClosed")
    }))

  test("Visa equipment rental and recreation: no tolerance at all", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "Visa", mcc: "7999" })
      const over = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(10001n) })
      )
      expect(over._tag).toBe("CaptureOverTolerance")
      expect(over.message).toContain("rule visa-rental-recreation")
    }))

  test("Visa restaurants: capture the same (UTC) day; the next day is too late", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(5000n), scheme: "Visa", mcc: "5812" })
      yield* advance("14 hours") // 2025-03-02T00:00:00Z
      const late = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(6000n) })
      )
      expect(late._tag).toBe("CaptureWindowClosed")
      expect(late.message).toContain("same day")
    }))

  test("Visa commuter: 25 USD over a USD hold; in another currency no overage, saying why", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: usd(1000n), scheme: "Visa", mcc: "4111" })
      const over = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: usd(3501n) })
      )
      expect(over.message).toContain("35.00 USD")
      const done = yield* Capture.execute({ requestId: "cap-2", originalGuid: guid, amount: usd(3500n) })
      expect(done.total).toEqual(usd(3500n))

      const eurGuid = Identifiers.Guid.make("pa-eur")
      yield* openPreAuth({ guid: eurGuid, amount: eur(1000n), scheme: "Visa", mcc: "4111" })
      const eurOver = yield* Effect.flip(
        Capture.execute({ requestId: "cap-3", originalGuid: eurGuid, amount: eur(1001n) })
      )
      expect(eurOver.message).toContain("cannot be converted to EUR without an exchange rate")
    }))

  test("MCC 5542 is excluded for Mastercard, Visa and Amex, not for Discover", () =>
    Effect.gen(function* () {
      yield* atStart
      for (const scheme of ["MasterCard", "Visa", "American Express"]) {
        const g = Identifiers.Guid.make(`pa-5542-${scheme.replaceAll(" ", "-")}`)
        yield* openPreAuth({ guid: g, amount: eur(10000n), scheme, mcc: "5542" })
        const capture = yield* Effect.flip(
          Capture.execute({ requestId: `c-${scheme}`, originalGuid: g, amount: eur(100n) })
        )
        const increase = yield* Effect.flip(
          Increase.execute({ requestId: `i-${scheme}`, originalGuid: g, amount: eur(100n) })
        )
        expect([capture._tag, increase._tag]).toEqual(["MccExcluded", "MccExcluded"])
      }
      const discover = Identifiers.Guid.make("pa-5542-discover")
      yield* openPreAuth({ guid: discover, amount: eur(10000n), scheme: "Discover", mcc: "5542" })
      yield* Capture.execute({ requestId: "c-discover", originalGuid: discover, amount: eur(100n) })
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(1)
      expect(yield* (yield* control).count("preAuthorizationIncrease")).toBe(0)
    }))

  test("JCB hotel: the window is the time of stay; unknown stay is refused unless warnings are chosen", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "JCB", mcc: "7011" })
      const unknown = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(100n) })
      )
      expect(unknown._tag).toBe("CaptureWindowClosed")
      expect(unknown.message).toContain("time of stay")
      const stay = Identifiers.Guid.make("pa-jcb-stay")
      yield* openPreAuth({
        guid: stay,
        amount: eur(10000n),
        scheme: "JCB",
        mcc: "7011",
        stayEndsAt: DateTime.unsafeMake("2025-03-05T12:00:00Z")
      })
      yield* advance("3 days")
      yield* Capture.execute({ requestId: "cap-2", originalGuid: stay, amount: eur(100n) })
    }))

  test("a partner key's 403 is a typed Forbidden saying partner keys cannot capture; nothing is held", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      yield* (yield* control).next("preAuthorizationCapture", {
        _tag: "Fail",
        error: RemoteError.fromResponse(403, "")
      })
      const error = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(100n) })
      )
      expect(error._tag).toBe("Forbidden")
      expect(error.message).toMatch(/^partner keys cannot increase, decrease or capture a pre-authorization/)
      const events = yield* eventsOf(stream)
      expect(events.at(-1)).toMatchObject({
        type: "OperationFailed",
        data: { error: "Forbidden", operation: "capture" }
      })
      // The refused request freed the slot: a capture with a merchant key goes through.
      yield* Capture.execute({ requestId: "cap-2", originalGuid: guid, amount: eur(100n) })
    }))

  test("a 5xx after the capture was applied is reconciled through the status endpoint, not resent", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      const c = yield* control
      yield* c.next("preAuthorizationCapture", { _tag: "AppliedThen503" })
      const done = yield* Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(8000n) })
      expect(done.reconciled).toBe(true)
      expect(yield* c.count("preAuthorizationCapture")).toBe(1)
      expect(yield* c.count("transactionStatus")).toBe(1)
      expect(yield* typesOf(stream)).toEqual([
        "PreAuthorizationOpened",
        "CaptureRequested",
        "PreAuthorizationCaptured"
      ])
    }))

  test("a 5xx that was not applied is NotCharged after the 90 s rule, and a new capture is then allowed", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      const c = yield* control
      yield* c.next("preAuthorizationCapture", { _tag: "NotApplied503" })
      const fiber = yield* Effect.fork(
        Effect.flip(Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(8000n) }))
      )
      yield* stepClock("30 seconds")
      // Still asking: the status shows no capture yet, but 90 s have not passed.
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* stepClock("65 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("NotCharged")
      expect(yield* c.count("preAuthorizationCapture")).toBe(1)
      expect(yield* c.count("transactionStatus")).toBeGreaterThanOrEqual(19)
      yield* Capture.execute({ requestId: "cap-2", originalGuid: guid, amount: eur(8000n) })
      expect(yield* c.count("preAuthorizationCapture")).toBe(2)
    }))

  test("an unknown outcome that reconciliation cannot settle stays pending: later captures are refused", () =>
    Effect.gen(function* () {
      yield* atStart
      yield* openPreAuth({ guid, amount: eur(10000n), scheme: "MasterCard", mcc: "7011" })
      const c = yield* control
      yield* c.next("preAuthorizationCapture", { _tag: "NotApplied503" })
      for (let i = 0; i < 60; i++)
        yield* c.next("transactionStatus", {
          _tag: "Fail",
          error: RemoteError.fromResponse(502, "bad gateway")
        })
      const fiber = yield* Effect.fork(
        Effect.flip(Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(8000n) }))
      )
      yield* stepClock("4 minutes")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("OutcomeUnknown")
      expect(error.message).toContain("reconciliation inconclusive")
      const again = yield* Effect.flip(
        Capture.execute({ requestId: "cap-2", originalGuid: guid, amount: eur(8000n) })
      )
      expect(again._tag).toBe("CaptureAlreadyDone")
      expect(again.message).toContain("outcome unknown")
      const increase = yield* Effect.flip(
        Increase.execute({ requestId: "inc-1", originalGuid: guid, amount: eur(100n) })
      )
      expect(increase._tag).toBe("OperationInProgress")
      expect(yield* c.count("preAuthorizationCapture")).toBe(1)
    }))

  test("operations need a recorded history, and apply to pre-authorizations only", () =>
    Effect.gen(function* () {
      yield* atStart
      const missing = yield* Effect.flip(
        Capture.execute({ requestId: "cap-1", originalGuid: guid, amount: eur(100n) })
      )
      expect(missing._tag).toBe("TransactionNotRecorded")
      const sale = Identifiers.Guid.make("sale-1")
      yield* recordTxn({ guid: sale, kind: "sale", amount: eur(100n) })
      const notPreAuth = yield* Effect.flip(
        Capture.execute({ requestId: "cap-2", originalGuid: sale, amount: eur(100n) })
      )
      expect(notPreAuth._tag).toBe("OperationNotApplicable")
      const wrongCurrency = Identifiers.Guid.make("pa-2")
      yield* openPreAuth({ guid: wrongCurrency, amount: eur(100n), scheme: "Visa", mcc: "7011" })
      const mismatch = yield* Effect.flip(
        Capture.execute({ requestId: "cap-3", originalGuid: wrongCurrency, amount: usd(100n) })
      )
      expect(mismatch._tag).toBe("CurrencyNotOfTransaction")
      expect(yield* (yield* control).count("preAuthorizationCapture")).toBe(0)
    }))
})
