/**
 * The terminal-less lifecycle workflows of @tillflow/core end to end: the HTTP
 * `TerminalCloud` against the simulator over real sockets (status host on its own port),
 * the simulator driven through its admin API over HTTP (`/_sim`: clock, merchant flags,
 * partner keys, faults, counters). The workflows run on @effect/workflow's in-memory
 * engine with the memory event store, and read time from the simulator's clock, so
 * `POST /_sim/clock/advance` moves both sides: the 24 h, 12 month and 7–31 day windows are
 * crossed as the simulator sees them. Each local refusal is shown to leave no request
 * (a counting wrapper around the client), and where it matters that the simulator would
 * have refused too.
 */
import * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import { describe, expect, it } from "@effect/vitest"
import {
  BatchWorkflow,
  DeferredTokenizationWorkflow,
  DeviceCommandWorkflow,
  Identifiers,
  LifecycleEvent,
  Lifecycles,
  Money,
  Moto,
  MotoWorkflow,
  PreAuthorizationWorkflow,
  ReversalWorkflow,
  TerminalCloud,
  Timeline,
  TipAdjustment,
  TipAdjustmentWorkflow,
  TransactionHistory,
  type TransactionRequest,
  type TransactionResult
} from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import { SimClock, SimulatorServer } from "@tillflow/simulator"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as F from "./Fixtures.js"
import { adminClient, instantTimings } from "@tillflow/simulator/testing"

const DAY = 86_400_000
const eur = (minor: bigint) => Money.make(minor, "EUR")

/** Effect's `Clock` reading the simulator's clock (its offset moves with `/_sim/clock/advance`). */
const clockOf = (sim: SimClock.SimClockService): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => sim.unsafeNow(),
  currentTimeMillis: sim.now,
  unsafeCurrentTimeNanos: () => BigInt(sim.unsafeNow()) * 1_000_000n,
  currentTimeNanos: Effect.map(sim.now, (ms) => BigInt(ms) * 1_000_000n),
  sleep: (duration) => sim.sleep(Duration.toMillis(duration))
})

/** Counts every call the workflows make through the port. */
const counting = (
  cloud: TerminalCloud.Service,
  calls: Ref.Ref<ReadonlyArray<string>>
): TerminalCloud.Service => {
  const wrap =
    <Args extends ReadonlyArray<unknown>, A, E>(name: string, f: (...args: Args) => Effect.Effect<A, E>) =>
    (...args: Args) =>
      Effect.zipRight(
        Ref.update(calls, (all) => [...all, name]),
        f(...args)
      )
  return {
    ...cloud,
    preAuthorizationIncrease: wrap("preAuthorizationIncrease", cloud.preAuthorizationIncrease),
    preAuthorizationCapture: wrap("preAuthorizationCapture", cloud.preAuthorizationCapture),
    reversal: wrap("reversal", cloud.reversal),
    motoSale: wrap("motoSale", cloud.motoSale),
    motoRefund: wrap("motoRefund", cloud.motoRefund),
    motoReversal: wrap("motoReversal", cloud.motoReversal),
    tipAdjustment: wrap("tipAdjustment", cloud.tipAdjustment),
    deferredToken: wrap("deferredToken", cloud.deferredToken),
    deviceCommand: wrap("deviceCommand", cloud.deviceCommand),
    batchClose: wrap("batchClose", cloud.batchClose),
    transactionStatus: wrap("transactionStatus", cloud.transactionStatus)
  }
}

/**
 * The simulator, an HTTP client to it (the merchant's key, or `apiKey`), and the lifecycle
 * workflows on an in-memory engine and event store using that client.
 */
const simulate = (options: { readonly partnerKey?: boolean } = {}) =>
  Effect.gen(function* () {
    const simContext = yield* Layer.build(
      SimulatorServer.layer({ seed: 11, statusPort: 0, timings: instantTimings })
    ).pipe(Effect.orDie)
    const info = Context.get(simContext, SimulatorServer.SimulatorInfo)
    const clock = clockOf(Context.get(simContext, SimClock.SimClock))
    const hosts = { baseUrl: new URL(info.baseUrl), transactionsUrl: new URL(info.transactionsUrl) }
    const admin = adminClient(info.adminUrl)
    const merchantCloud = yield* F.client(hosts, { apiKey: Redacted.make(info.apiKey) })
    const calls = yield* Ref.make<ReadonlyArray<string>>([])
    // The workflows use a partner key when asked (added through the admin API), else the merchant's.
    const workflowKey =
      options.partnerKey === true
        ? (
            (yield* admin("POST", `/merchants/${info.merchantId}/keys`, { kind: "partner" })) as {
              readonly key: string
            }
          ).key
        : info.apiKey
    const cloud = counting(yield* F.client(hosts, { apiKey: Redacted.make(workflowKey) }), calls)
    const first = info.terminals[0]
    if (first === undefined) return yield* Effect.dieMessage("no terminal")
    const terminal = {
      serialNumber: Identifiers.SerialNumber.make(first.serial_number),
      terminalType: Identifiers.TerminalType.make(first.terminal_type)
    }
    const workflows = yield* Layer.build(
      Lifecycles.layer.pipe(
        Layer.provideMerge(
          Layer.mergeAll(
            WorkflowEngine.layerMemory,
            MemoryEventStore.layer(),
            Layer.succeed(TerminalCloud.TerminalCloud, cloud)
          )
        )
      )
    )
    const store = Context.get(workflows, EventStore.EventStore)
    const callsTo = (name: string) =>
      Effect.map(Ref.get(calls), (all) => all.filter((c) => c === name).length)
    const advance = (ms: number) => admin("POST", "/clock/advance", { ms })

    /** Runs a terminal operation to its end and reads its polled result. */
    const complete = (request: TransactionRequest.TransactionRequest) =>
      Effect.gen(function* () {
        const accepted = yield* merchantCloud.sendTransaction(request)
        yield* admin("POST", "/settle", { timeoutMs: 10_000 })
        const id = accepted.transactionResultId
        if (id === undefined) return yield* Effect.dieMessage("no transactionResultId")
        const outcome = yield* merchantCloud.transactionResult(id)
        if (outcome._tag !== "Ready") return yield* Effect.dieMessage(`no result: ${outcome._tag}`)
        return outcome.result
      })

    /** A pre-authorization on the terminal, its lifecycle opened from the result. */
    const preAuthorize = (amount: Money.Money, mcc = "7011") =>
      Effect.gen(function* () {
        const result = yield* complete({
          operation: "preAuthorization",
          ...terminal,
          amount,
          transactionReference: yield* Identifiers.makeTransactionReference
        })
        const authorised = yield* TransactionHistory.preAuthorizationFromResult(result, {
          mcc,
          serialNumber: terminal.serialNumber,
          terminalType: terminal.terminalType
        })
        yield* TransactionHistory.openPreAuthorization(store, authorised)
        return Identifiers.Guid.make(authorised.guid)
      })

    /** A sale (or sale-and-tokenize) on the terminal, recorded from its result. */
    const sell = (amount: Money.Money, operation: "sale" | "saleAndTokenizeCard" = "sale") =>
      Effect.gen(function* () {
        const result: TransactionResult.TransactionResult = yield* complete({
          operation,
          ...terminal,
          amount,
          transactionReference: yield* Identifiers.makeTransactionReference
        })
        const completed = yield* TransactionHistory.completedFromResult(result, {
          kind: operation,
          serialNumber: terminal.serialNumber,
          terminalType: terminal.terminalType
        })
        yield* TransactionHistory.record(store, completed)
        return { guid: Identifiers.Guid.make(completed.guid), result }
      })

    return {
      info,
      admin,
      clock,
      workflows,
      store,
      merchantCloud,
      terminal,
      callsTo,
      advance,
      preAuthorize,
      sell
    }
  })

type Harness = Effect.Effect.Success<ReturnType<typeof simulate>>

/** Runs `body` with the workflows and the simulator's clock. */
const scenario = <A, E>(
  body: (
    h: Harness
  ) => Effect.Effect<
    A,
    E,
    | Layer.Layer.Success<typeof Lifecycles.layer>
    | WorkflowEngine.WorkflowEngine
    | EventStore.EventStore
    | TerminalCloud.TerminalCloud
  >,
  options: { readonly partnerKey?: boolean } = {}
) =>
  Effect.gen(function* () {
    const h = yield* simulate(options)
    return yield* body(h).pipe(Effect.provide(h.workflows), Effect.withClock(h.clock))
  })

describe("lifecycle workflows against the simulator over HTTP", () => {
  it.scopedLive(
    "a pre-authorization's full story: open from the terminal, increase, decrease, capture, reverse the capture",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const guid = yield* h.preAuthorize(eur(10000n))
          const up = yield* PreAuthorizationWorkflow.Increase.execute({
            requestId: "inc-1",
            originalGuid: guid,
            amount: eur(2500n)
          })
          expect(up.hold).toEqual(eur(12500n))
          const down = yield* PreAuthorizationWorkflow.Decrease.execute({
            requestId: "dec-1",
            originalGuid: guid,
            amount: eur(500n)
          })
          expect(down.hold).toEqual(eur(12000n))
          // Visa lodging (the simulator's default card and MCC 7011): 15% over 120.00 is 138.00.
          const over = yield* Effect.flip(
            PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-0",
              originalGuid: guid,
              amount: eur(13801n)
            })
          )
          expect(over._tag).toBe("CaptureOverTolerance")
          const captured = yield* PreAuthorizationWorkflow.Capture.execute({
            requestId: "cap-1",
            originalGuid: guid,
            amount: eur(13800n)
          })
          expect(captured).toMatchObject({ total: eur(13800n), rule: "visa-lodging-car-rental-cruise" })
          const reversed = yield* ReversalWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid })
          expect(reversed.target).toBe("capture")
          const status = yield* h.merchantCloud.transactionStatus(yield* referenceOf(h, guid), "first")
          expect(status[0]?.finStatus).toBe("AUTHORISED")
          expect(yield* h.callsTo("preAuthorizationCapture")).toBe(1)
          const lines = yield* Timeline.read(LifecycleEvent.transactionStream(guid))
          expect(lines.map((l) => l.replace(/^\S+ \S+ UTC {2}/, ""))).toEqual([
            expect.stringMatching(
              /^pre-authorization \S+ opened \(preAuthorization\): 100\.00 EUR held; VISA, MCC 7011: capture within 31 days, up to 15% over the hold/
            ),
            "[inc-1] increase of 25.00 EUR requested",
            "[inc-1] hold increased by 25.00 EUR to 125.00 EUR",
            "[dec-1] decrease of 5.00 EUR requested",
            "[dec-1] hold decreased by 5.00 EUR to 120.00 EUR",
            expect.stringMatching(
              /^\[cap-0\] capture refused before sending: capture of 138\.01 EUR is above the limit of 138\.00 EUR/
            ),
            "[cap-1] capture of 138.00 EUR requested: limit 138.00 EUR by rule visa-lodging-car-rental-cruise",
            "[cap-1] captured 138.00 EUR: status CAPTURED",
            "[rev-1] reversal of the capture requested (CUSTOMER_CANCELLATION)",
            "[rev-1] capture of 138.00 EUR reversed: status AUTHORISED, withheld funds released"
          ])
        })
      )
  )

  it.scopedLive(
    "Visa lodging: 31 days on the simulator's clock; a day later the capture is refused locally, and the simulator agrees",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const guid = yield* h.preAuthorize(eur(10000n))
          // Another amount: the same card paying the same amount within 5 minutes is a duplicate.
          const inTime = yield* h.preAuthorize(eur(10100n))
          yield* h.advance(31 * DAY - 60_000)
          yield* PreAuthorizationWorkflow.Capture.execute({
            requestId: "cap-in-time",
            originalGuid: inTime,
            amount: eur(10000n)
          })
          yield* h.advance(2 * 60_000)
          const late = yield* Effect.flip(
            PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-1",
              originalGuid: guid,
              amount: eur(10000n)
            })
          )
          expect(late._tag).toBe("CaptureWindowClosed")
          expect(yield* h.callsTo("preAuthorizationCapture")).toBe(1)
          // Opting into warnings sends it: the simulator refuses the expired pre-authorization.
          const sent = yield* Effect.flip(
            PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-2",
              originalGuid: guid,
              amount: eur(10000n),
              enforcement: "warn"
            })
          )
          expect(sent._tag).toBe("GatewayRejected")
          expect(sent._tag === "GatewayRejected" ? sent.code : "").toBe("PREAUTH_EXPIRED")
        })
      )
  )

  it.scopedLive("Visa parking (MCC 7523): 7 days on the simulator's clock", () =>
    scenario((h) =>
      Effect.gen(function* () {
        yield* h.admin("PATCH", `/merchants/${h.info.merchantId}`, { mcc: "7523" })
        const guid = yield* h.preAuthorize(eur(10000n), "7523")
        yield* h.advance(7 * DAY + 60_000)
        const late = yield* Effect.flip(
          PreAuthorizationWorkflow.Capture.execute({
            requestId: "cap-1",
            originalGuid: guid,
            amount: eur(10000n)
          })
        )
        expect(late._tag).toBe("CaptureWindowClosed")
        expect(late.message).toContain("rule visa-truck-ev-parking")
        expect(yield* h.callsTo("preAuthorizationCapture")).toBe(0)
      })
    )
  )

  it.scopedLive("two concurrent captures: exactly one reaches the simulator", () =>
    scenario((h) =>
      Effect.gen(function* () {
        const guid = yield* h.preAuthorize(eur(10000n))
        const results = yield* Effect.all(
          ["cap-a", "cap-b", "cap-c"].map((requestId) =>
            Effect.either(
              PreAuthorizationWorkflow.Capture.execute({ requestId, originalGuid: guid, amount: eur(9000n) })
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight)).toHaveLength(1)
        expect(yield* h.callsTo("preAuthorizationCapture")).toBe(1)
        const counters = (yield* h.admin("GET", "/counters")) as {
          readonly merchants: Record<string, { readonly captures: number }>
        }
        expect(Object.values(counters.merchants).reduce((n, m) => n + m.captures, 0)).toBe(1)
      })
    )
  )

  it.scopedLive(
    "a 5xx after the simulator applied the capture is reconciled through its status host, not resent",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const guid = yield* h.preAuthorize(eur(10000n))
          yield* h.admin("POST", "/faults", {
            kind: "error-after",
            method: "POST",
            path: "/preauthorization/capture",
            status: 502
          })
          const captured = yield* PreAuthorizationWorkflow.Capture.execute({
            requestId: "cap-1",
            originalGuid: guid,
            amount: eur(9000n)
          })
          expect(captured.reconciled).toBe(true)
          expect(yield* h.callsTo("preAuthorizationCapture")).toBe(1)
          expect(yield* h.callsTo("transactionStatus")).toBeGreaterThanOrEqual(1)
        })
      )
  )

  it.scopedLive("a partner key gets a typed Forbidden saying partner keys cannot capture or increase", () =>
    scenario(
      (h) =>
        Effect.gen(function* () {
          const guid = yield* h.preAuthorize(eur(10000n))
          const error = yield* Effect.flip(
            PreAuthorizationWorkflow.Capture.execute({
              requestId: "cap-1",
              originalGuid: guid,
              amount: eur(9000n)
            })
          )
          expect(error._tag).toBe("Forbidden")
          expect(error.message).toMatch(
            /^partner keys cannot increase, decrease or capture a pre-authorization/
          )
          const increase = yield* Effect.flip(
            PreAuthorizationWorkflow.Increase.execute({
              requestId: "inc-1",
              originalGuid: guid,
              amount: eur(100n)
            })
          )
          expect(increase._tag).toBe("Forbidden")
        }),
      { partnerKey: true }
    )
  )

  it.scopedLive(
    "MOTO: a sale on a token from the terminal, refunds not above it, reversal within 24 h of the simulator's time",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const { result } = yield* h.sell(eur(4000n), "saleAndTokenizeCard")
          const cardToken = Identifiers.CardToken.make(result.cardToken ?? "")
          const sale = yield* MotoWorkflow.Sale.execute({
            requestId: "moto-1",
            cardToken,
            amount: eur(2000n)
          })
          expect(sale.status).toBe("AUTHORISED")
          const guid = Identifiers.Guid.make(sale.guid ?? "")
          yield* MotoWorkflow.Refund.execute({ requestId: "ref-1", originalGuid: guid, amount: eur(1500n) })
          const over = yield* Effect.flip(
            MotoWorkflow.Refund.execute({ requestId: "ref-2", originalGuid: guid, amount: eur(501n) })
          )
          expect(over._tag).toBe("RefundExceedsSale")
          expect(yield* h.callsTo("motoRefund")).toBe(1)
          // The simulator would have refused it too.
          const direct = yield* Effect.flip(
            h.merchantCloud.motoRefund({ originalGuid: guid, amount: eur(501n) })
          )
          expect(direct._tag === "GatewayRejected" ? direct.code : direct._tag).toBe("AMOUNT_TOO_HIGH")

          // A sale refunded in part is not reversed whole: that would credit back more than it charged.
          const credited = yield* Effect.flip(
            MotoWorkflow.Reverse.execute({ requestId: "rev-0", originalGuid: guid })
          )
          expect(credited).toMatchObject({ _tag: "ReversalNotAllowed", rule: "credited-not-above-charged" })
          const early = yield* MotoWorkflow.Sale.execute({
            requestId: "moto-3",
            cardToken,
            amount: eur(1900n)
          })
          const late = yield* MotoWorkflow.Sale.execute({
            requestId: "moto-2",
            cardToken,
            amount: eur(2100n)
          })
          yield* h.advance(23 * 3_600_000)
          yield* MotoWorkflow.Reverse.execute({
            requestId: "rev-1",
            originalGuid: Identifiers.Guid.make(early.guid ?? "")
          })
          yield* h.advance(3_600_000 + 1_000)
          const closed = yield* Effect.flip(
            MotoWorkflow.Reverse.execute({
              requestId: "rev-2",
              originalGuid: Identifiers.Guid.make(late.guid ?? "")
            })
          )
          expect(closed._tag).toBe("ReversalWindowClosed")
          expect(yield* h.callsTo("motoReversal")).toBe(1)
          const simSays = yield* Effect.flip(
            h.merchantCloud.motoReversal(
              new Moto.MotoReversalRequest({ originalGuid: Identifiers.Guid.make(late.guid ?? "") })
            )
          )
          expect(simSays._tag === "GatewayRejected" ? simSays.code : simSays._tag).toBe(
            "REVERSAL_WINDOW_CLOSED"
          )
        })
      )
  )

  it.scopedLive(
    "MOTO: an account requiring the security code answers 3107, a typed SecurityCodeRequired",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const { result } = yield* h.sell(eur(4000n), "saleAndTokenizeCard")
          yield* h.admin("PATCH", `/merchants/${h.info.merchantId}`, {
            flags: { securityCodeRequired: true }
          })
          const error = yield* Effect.flip(
            MotoWorkflow.Sale.execute({
              requestId: "moto-1",
              cardToken: Identifiers.CardToken.make(result.cardToken ?? ""),
              amount: eur(2000n)
            })
          )
          expect(error._tag).toBe("SecurityCodeRequired")
        })
      )
  )

  it.scopedLive(
    "MOTO: a response lost after the simulator charged is reconciled through the status endpoint (MOTO is supported there)",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const { result } = yield* h.sell(eur(4000n), "saleAndTokenizeCard")
          yield* h.admin("POST", "/faults", { kind: "drop-response", method: "POST", path: "/moto/sale" })
          const sale = yield* MotoWorkflow.Sale.execute({
            requestId: "moto-1",
            cardToken: Identifiers.CardToken.make(result.cardToken ?? ""),
            amount: eur(2000n)
          })
          expect(sale).toMatchObject({ status: "AUTHORISED", reconciled: true })
          expect(sale.guid).toBeDefined()
          expect(yield* h.callsTo("motoSale")).toBe(1)
          const counters = (yield* h.admin("GET", "/counters")) as {
            readonly merchants: Record<string, { readonly charges: number }>
          }
          // The terminal's saleAndTokenizeCard and the one MOTO sale.
          expect(Object.values(counters.merchants).reduce((n, m) => n + m.charges, 0)).toBe(2)
        })
      )
  )

  it.scopedLive(
    'MOTO amount forms on /moto/sale: the simulator reads major units, so "1050" would charge 1050.00',
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const { result } = yield* h.sell(eur(4000n), "saleAndTokenizeCard")
          const post = (amount: string) =>
            Effect.promise(async () => {
              const response = await fetch(`${h.info.baseUrl}/moto/sale`, {
                method: "POST",
                headers: { "content-type": "application/json", ApiKeyCloud: h.info.apiKey },
                body: JSON.stringify({ cardToken: result.cardToken, amount, currency: "EUR" })
              })
              return {
                status: response.status,
                body: (await response.json()) as { readonly amount?: string }
              }
            })
          const major = yield* post("10.50")
          const minor = yield* post("1050")
          expect([major.status, major.body.amount]).toEqual([200, "10.50"])
          expect([minor.status, minor.body.amount]).toEqual([200, "1050.00"])
          // tillflow can only send the first form: the workflow takes Money, Moto.AMOUNT_FORM writes it.
          const sale = yield* MotoWorkflow.Sale.execute({
            requestId: "moto-1",
            cardToken: Identifiers.CardToken.make(result.cardToken ?? ""),
            amount: eur(1051n)
          })
          expect(sale.amount).toEqual(eur(1051n))
        })
      )
  )

  it.scopedLive(
    "tips: sales only, the last one stands, none after the batch closes; the simulator agrees",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const { guid, result } = yield* h.sell(eur(4000n))
          yield* TipAdjustmentWorkflow.Adjust.execute({
            requestId: "tip-1",
            originalGuid: guid,
            tip: eur(300n)
          })
          const second = yield* TipAdjustmentWorkflow.Adjust.execute({
            requestId: "tip-2",
            originalGuid: guid,
            tip: eur(525n)
          })
          expect(second.replaces).toEqual(eur(300n))
          const txns = (yield* h.admin("GET", "/transactions")) as ReadonlyArray<{
            readonly efttransactionID: string
            readonly tipAmount: string | number
          }>
          expect(String(txns.find((t) => t.efttransactionID === guid)?.tipAmount)).toBe("525")

          const { result: tokenized } = yield* h.sell(eur(4100n), "saleAndTokenizeCard")
          const moto = yield* MotoWorkflow.Sale.execute({
            requestId: "moto-1",
            cardToken: Identifiers.CardToken.make(tokenized.cardToken ?? ""),
            amount: eur(1000n)
          })
          const motoGuid = Identifiers.Guid.make(moto.guid ?? "")
          const notASale = yield* Effect.flip(
            TipAdjustmentWorkflow.Adjust.execute({
              requestId: "tip-3",
              originalGuid: motoGuid,
              tip: eur(100n)
            })
          )
          expect(notASale._tag).toBe("TipAdjustmentNotAllowed")
          const simNotASale = yield* Effect.flip(
            h.merchantCloud.tipAdjustment(
              motoGuid,
              new TipAdjustment.TipAdjustment({ amount: Money.DecimalString.make("1.00") })
            )
          )
          expect(simNotASale._tag === "GatewayRejected" ? simNotASale.code : simNotASale._tag).toBe(
            "NOT_A_SALE"
          )

          yield* BatchWorkflow.Close.execute({
            requestId: "close-1",
            ...h.terminal,
            batchNumber: Identifiers.BatchNumber.make(result.batchNumber ?? "")
          })
          const batched = yield* Effect.flip(
            TipAdjustmentWorkflow.Adjust.execute({ requestId: "tip-4", originalGuid: guid, tip: eur(600n) })
          )
          expect(batched._tag).toBe("TipAdjustmentNotAllowed")
          expect(batched.message).toContain("rule before-batch-close")
          expect(yield* h.callsTo("tipAdjustment")).toBe(2)
          const simBatched = yield* Effect.flip(
            h.merchantCloud.tipAdjustment(
              guid,
              new TipAdjustment.TipAdjustment({ amount: Money.DecimalString.make("6.00") })
            )
          )
          expect(simBatched._tag === "GatewayRejected" ? simBatched.code : simBatched._tag).toBe(
            "ALREADY_BATCHED"
          )
        })
      )
  )

  it.scopedLive(
    "deferred tokenization: eligible types within 12 months of the simulator's time; the simulator agrees",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const { guid } = yield* h.sell(eur(4000n))
          const { guid: later } = yield* h.sell(eur(4100n))
          const token = yield* DeferredTokenizationWorkflow.Tokenize.execute({
            requestId: "tok-1",
            originalGuid: guid
          })
          expect(token.cardToken).toBeDefined()
          const preAuth = yield* h.preAuthorize(eur(5000n))
          const ineligible = yield* Effect.flip(
            DeferredTokenizationWorkflow.Tokenize.execute({ requestId: "tok-2", originalGuid: preAuth })
          )
          expect(ineligible._tag).toBe("TokenizationNotEligible")
          const simIneligible = yield* Effect.flip(h.merchantCloud.deferredToken(preAuth))
          expect(simIneligible._tag === "GatewayRejected" ? simIneligible.code : simIneligible._tag).toBe(
            "NOT_TOKENIZABLE"
          )
          yield* h.advance(366 * DAY)
          const late = yield* Effect.flip(
            DeferredTokenizationWorkflow.Tokenize.execute({ requestId: "tok-3", originalGuid: later })
          )
          expect(late._tag).toBe("TokenizationWindowClosed")
          expect(yield* h.callsTo("deferredToken")).toBe(1)
          const simLate = yield* Effect.flip(h.merchantCloud.deferredToken(later))
          expect(simLate._tag === "GatewayRejected" ? simLate.code : simLate._tag).toBe(
            "TOKENIZATION_WINDOW_CLOSED"
          )
        })
      )
  )

  it.scopedLive(
    "reversal without a terminal: a partial one is refused where unsupported, the full one cancels the sale",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const { guid } = yield* h.sell(eur(4000n))
          const partial = yield* Effect.flip(
            ReversalWorkflow.Reverse.execute({ requestId: "rev-1", originalGuid: guid, amount: eur(1000n) })
          )
          expect(partial._tag).toBe("ReversalNotAllowed")
          const full = yield* ReversalWorkflow.Reverse.execute({ requestId: "rev-2", originalGuid: guid })
          expect(full.amount).toEqual(eur(4000n))
          const status = yield* h.merchantCloud.transactionStatus(yield* referenceOf(h, guid), "first")
          expect(status[0]?.finStatus).toBe("CANCELLED")
          expect(yield* h.callsTo("reversal")).toBe(1)
        })
      )
  )

  it.scopedLive("batch close, summary and detail, typed with Money; a batch closes once", () =>
    scenario((h) =>
      Effect.gen(function* () {
        const { result } = yield* h.sell(eur(4000n))
        yield* h.sell(eur(1250n))
        const batchNumber = Identifiers.BatchNumber.make(result.batchNumber ?? "")
        const summary = yield* BatchWorkflow.ReadSummary.execute({
          requestId: "s-1",
          ...h.terminal,
          batchNumber,
          currency: "EUR"
        })
        expect(summary.netAmount).toEqual(eur(5250n))
        expect(summary.transactionCount).toBe(2)
        yield* BatchWorkflow.Close.execute({ requestId: "c-1", ...h.terminal, batchNumber })
        const detail = yield* BatchWorkflow.ReadDetail.execute({
          requestId: "d-1",
          ...h.terminal,
          batchNumber,
          currency: "EUR"
        })
        expect(detail.batchStatus).toBe("CLOSED")
        expect(detail.lines.map((l) => l.amount)).toEqual([eur(4000n), eur(1250n)])
        const again = yield* Effect.flip(
          BatchWorkflow.Close.execute({ requestId: "c-2", ...h.terminal, batchNumber })
        )
        expect(again._tag).toBe("OperationNotApplicable")
        expect(yield* h.callsTo("batchClose")).toBe(1)
      })
    )
  )

  it.scopedLive(
    "device commands: values in range reach the simulator's terminal; out of range never leave",
    () =>
      scenario((h) =>
        Effect.gen(function* () {
          const send = (
            requestId: string,
            command: DeviceCommandWorkflow.Accepted["command"],
            body: Record<string, unknown>
          ) => DeviceCommandWorkflow.Send.execute({ requestId, ...h.terminal, command, body })
          yield* send("c-1", "set-locale", { locale: "fr_FR" })
          yield* send("c-2", "set-reboot-time", { hour: 3 })
          yield* send("c-3", "set-screen-brightness", {
            minimumBrightnessLevel: 10,
            maximumBrightnessLevel: 90
          })
          const bad = yield* Effect.flip(send("c-4", "set-reboot-time", { hour: 24 }))
          expect(bad._tag).toBe("InvalidDeviceCommand")
          const badLocale = yield* Effect.flip(send("c-5", "set-locale", { locale: "fr-FR" }))
          expect(badLocale._tag).toBe("InvalidDeviceCommand")
          expect(yield* h.callsTo("deviceCommand")).toBe(3)
          const view = (yield* h.admin("GET", `/terminals/${h.terminal.serialNumber}`)) as {
            readonly settings: Record<string, unknown>
          }
          expect(view.settings).toMatchObject({
            locale: "fr_FR",
            rebootHour: 3,
            minimumBrightnessLevel: 10,
            maximumBrightnessLevel: 90
          })
        })
      )
  )
})

/** The transaction's reference as its history recorded it. */
const referenceOf = (h: Harness, guid: string) =>
  Effect.gen(function* () {
    const { state } = yield* TransactionHistory.load(h.store, guid)
    const reference = Option.getOrThrow(state).transactionReference
    return Schema.decodeSync(Identifiers.TransactionReference)(reference ?? "")
  })
