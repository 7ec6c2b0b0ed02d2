import { describe, expect, it } from "@effect/vitest"
import { PaymentEvents, Ledger, LedgerProjection, Money } from "@tillflow/core"
import { EventStore, MemoryEventStore } from "@tillflow/engine"
import type { OperationOutcome } from "@tillflow/core"
import type { EventRegistry } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const day1 = Date.UTC(2026, 2, 1, 10, 0, 0)
const day2 = Date.UTC(2026, 2, 2, 9, 30, 0)

type Facts = OperationOutcome.Facts

const facts = (overrides: Partial<Facts> & Pick<Facts, "operation" | "finStatus">): Facts => ({
  serialNumber: "T1",
  terminalType: "PAXA920",
  attempt: 1,
  attemptId: "0c2b2f31-0a1d-4baf-81fc-84328263f3ef",
  source: "callback",
  mid: "M1",
  ...overrides
})

const eur = (minor: bigint) => Money.make(minor, "EUR")

/** Appends outcome events, each to its own payment stream, and returns every stored event. */
const record = (
  events: ReadonlyArray<EventRegistry.Event<(typeof PaymentEvents.events.definitions)[number]>>
) =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    let n = 0
    for (const event of events) {
      const encoded = yield* PaymentEvents.events.encode(event)
      yield* store.append(PaymentEvents.paymentStream(`exec-${n++}`), EventStore.AnyVersion, [encoded])
    }
    const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10_000 })
    return page.events
  })

const dayOne = [
  PaymentEvents.PaymentAuthorised.make({
    facts: facts({
      operation: "sale",
      finStatus: "AUTHORISED",
      totalAmount: eur(1050n),
      requestedAmount: eur(1050n)
    }),
    at: day1
  }),
  PaymentEvents.PaymentPartiallyApproved.make({
    facts: facts({
      operation: "sale",
      finStatus: "PARTIAL_APPROVAL",
      totalAmount: eur(1878n),
      requestedAmount: eur(3757n),
      dueAmount: eur(1879n)
    }),
    at: day1 + 1000
  }),
  PaymentEvents.PaymentAuthorised.make({
    facts: facts({ operation: "refund", finStatus: "AUTHORISED", totalAmount: eur(500n), source: "status" }),
    at: day1 + 2000
  }),
  PaymentEvents.PaymentAuthorised.make({
    facts: facts({ operation: "saleReversal", finStatus: "AUTHORISED", totalAmount: eur(1050n) }),
    at: day1 + 3000
  }),
  PaymentEvents.PaymentDeclined.make({
    facts: facts({
      operation: "sale",
      finStatus: "DECLINED",
      requestedAmount: eur(3779n),
      issuerResponseCode: "01"
    }),
    at: day1 + 4000
  }),
  PaymentEvents.PaymentCancelled.make({
    facts: facts({ operation: "sale", finStatus: "CANCELLED", requestedAmount: eur(100n) }),
    at: day1 + 5000
  })
]

const dayTwo = [
  PaymentEvents.PaymentAuthorised.make({
    facts: facts({
      operation: "preAuthorization",
      finStatus: "AUTHORISED",
      totalAmount: eur(10000n),
      serialNumber: "T2"
    }),
    at: day2
  }),
  PaymentEvents.PaymentAuthorised.make({
    facts: facts({
      operation: "preAuthorizationCapture",
      finStatus: "CAPTURED",
      totalAmount: eur(9000n),
      serialNumber: "T2"
    }),
    at: day2 + 1000
  }),
  PaymentEvents.PaymentAuthorised.make({
    facts: facts({
      operation: "sale",
      finStatus: "AUTHORISED",
      totalAmount: Money.make(1500n, "JPY"),
      serialNumber: "T2",
      mid: "",
      merchantName: "Tokyo shop"
    }),
    at: day2 + 2000
  }),
  PaymentEvents.PaymentAuthorised.make({
    facts: facts({
      operation: "moToSale",
      finStatus: "AUTHORISED",
      totalAmount: Money.make(1250n, "BHD"),
      serialNumber: "T2"
    }),
    at: day2 + 3000
  })
]

describe("Ledger", () => {
  it.effect(
    "sales, partial approvals, refunds, reversals and declines are counted and totalled as Money, with the net",
    () =>
      Effect.gen(function* () {
        const events = yield* record(dayOne)
        const ledger = yield* Ledger.foldRecorded(Ledger.empty, events)
        const [row] = Ledger.summarize(ledger, ["day", "terminal", "merchant"])
        expect(row?.day).toBe("2026-03-01")
        expect(row?.terminal).toBe("T1")
        expect(row?.merchant).toBe("M1")
        expect(row?.currency).toBe("EUR")
        // 10.50 + 18.78 approved of 37.57, refund 5.00, reversal 10.50, decline of 37.79 (no money).
        expect(row?.tallies.sale).toEqual({ count: 2, amount: 2928n })
        expect(row?.tallies.refund).toEqual({ count: 1, amount: 500n })
        expect(row?.tallies.reversal).toEqual({ count: 1, amount: 1050n })
        expect(row?.tallies.decline).toEqual({ count: 1, amount: 3779n })
        expect(row?.net).toBe(2928n - 500n - 1050n)
        // The cancelled sale is not an entry; every event was read.
        expect(ledger.entries).toBe(5)
        expect(ledger.eventsRead).toBe(events.length)
        expect(ledger.checkpoint).toEqual(events[events.length - 1]?.checkpoint)
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect(
    "a summary per day and currency keeps each currency's exponent in CSV and JSON, and names the merchant",
    () =>
      Effect.gen(function* () {
        const ledger = yield* Ledger.foldRecorded(Ledger.empty, yield* record([...dayOne, ...dayTwo]))
        const byDay = Ledger.summarize(ledger, ["day"])
        expect(byDay.map((r) => `${r.day} ${r.currency} ${r.net}`)).toEqual([
          "2026-03-01 EUR 1378",
          "2026-03-02 BHD 1250",
          "2026-03-02 EUR 9000",
          "2026-03-02 JPY 1500"
        ])
        const csv = Ledger.toCsv(byDay).split("\n")
        expect(csv[0]).toMatch(/^day,terminal,merchant,currency,sale_count,sale_amount,/)
        expect(csv[2]).toContain(",BHD,1,1.250,")
        expect(csv[4]).toContain(",JPY,1,1500,")
        const json = Ledger.toJson(byDay)
        expect(json[2]).toMatchObject({
          currency: "EUR",
          preAuthorization: { count: 1, amount: "100.00" },
          capture: { count: 1, amount: "90.00" },
          net: "90.00"
        })
        const merchants = Ledger.summarize(ledger, ["merchant"]).map((r) => `${r.merchant}/${r.currency}`)
        expect(merchants).toContain("Tokyo shop/JPY")
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect(
    "folding the log in two parts, resuming from the first part's checkpoint, equals folding it at once",
    () =>
      Effect.gen(function* () {
        const events = yield* record([...dayOne, ...dayTwo])
        const whole = yield* Ledger.foldRecorded(Ledger.empty, events)
        for (let cut = 0; cut <= events.length; cut++) {
          const first = yield* Ledger.foldRecorded(Ledger.empty, events.slice(0, cut))
          const resumed = yield* LedgerProjection.replay({ from: first })
          expect(Ledger.differences(whole, resumed)).toEqual([])
          expect(yield* Ledger.digest(resumed)).toBe(yield* Ledger.digest(whole))
          expect(resumed.eventsRead).toBe(whole.eventsRead)
        }
      }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("a snapshot decodes to the same ledger, and a changed row is reported as a difference", () =>
    Effect.gen(function* () {
      const ledger = yield* Ledger.foldRecorded(Ledger.empty, yield* record([...dayOne, ...dayTwo]))
      const decoded = Option.getOrThrow(Ledger.decode(Ledger.encode(ledger)))
      expect(Ledger.differences(ledger, decoded)).toEqual([])
      expect(decoded.checkpoint).toEqual(ledger.checkpoint)
      const fewer = yield* Ledger.foldRecorded(Ledger.empty, yield* record(dayOne.slice(0, 1)))
      const diff = Ledger.differences(decoded, Ledger.addEntries(fewer, []))
      expect(diff.length).toBeGreaterThan(0)
      expect(diff[0]?.row).toContain("2026-03-01 / T1 / M1 / EUR")
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("an outcome event that does not decode is reported by the fold, never dropped silently", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      yield* store.append("payment-broken", EventStore.AnyVersion, [
        { type: "PaymentAuthorised", data: { facts: { operation: "sale" }, at: "yesterday" } }
      ])
      const page = yield* store.readAll(EventStore.Checkpoint.start, { maxCount: 10 })
      const ledger = yield* Ledger.foldRecorded(Ledger.empty, page.events)
      expect(ledger.entries).toBe(0)
      expect(ledger.undecodable).toHaveLength(1)
      expect(ledger.undecodable[0]).toContain("payment-broken@1")
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})

describe("LedgerProjection", () => {
  it.live("the live projection snapshots what it folded, and a rebuild from the first event equals it", () =>
    Effect.gen(function* () {
      yield* record(dayOne)
      const live = yield* LedgerProjection.start({ snapshotEvery: "20 millis", pollInterval: "10 millis" })
      yield* record(dayTwo)
      // Wait until the projection has folded everything and stored it.
      yield* Effect.gen(function* () {
        while (true) {
          const latest = yield* LedgerProjection.latest
          if (Option.isSome(latest) && latest.value.entries === 9) return
          yield* Effect.sleep("20 millis")
        }
      }).pipe(Effect.timeout("10 seconds"))
      const comparison = Option.getOrThrow(yield* LedgerProjection.compareWithLive)
      expect(comparison.differences).toEqual([])
      expect(comparison.liveDigest).toBe(comparison.rebuiltDigest)
      expect((yield* live.current).entries).toBe(9)
    }).pipe(Effect.scoped, Effect.provide(MemoryEventStore.layer()))
  )

  it.effect("a live snapshot that does not match the log is caught by the comparison", () =>
    Effect.gen(function* () {
      const store = yield* EventStore.EventStore
      const events = yield* record(dayOne)
      // A snapshot that claims to have read the whole log but missed the refund.
      const missing = yield* Ledger.foldRecorded(
        Ledger.empty,
        events.filter((_, i) => i !== 2)
      )
      yield* store.append(LedgerProjection.snapshotStream, EventStore.NoStream, [
        {
          type: LedgerProjection.snapshotType,
          data: Ledger.encode({ ...missing, checkpoint: events[events.length - 1]!.checkpoint })
        }
      ])
      const comparison = Option.getOrThrow(yield* LedgerProjection.compareWithLive)
      expect(comparison.differences).toHaveLength(1)
      expect(comparison.differences[0]?.left).not.toContain("refund")
      expect(comparison.differences[0]?.right).toContain("refund 1×5.00")
      expect(comparison.liveDigest).not.toBe(comparison.rebuiltDigest)
    }).pipe(Effect.provide(MemoryEventStore.layer()))
  )
})
