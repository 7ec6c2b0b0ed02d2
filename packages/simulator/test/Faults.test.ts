import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { reference, withSimulator } from "./support.js"

const sale = (ref: string, amount = "1000") => ({
  operation: "sale",
  amount,
  currency: "EUR",
  transactionReference: ref
})

describe("fault injection", () => {
  it.live(
    "drops the response after processing: the caller sees no answer, yet the card was charged once",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const fault = yield* h.admin("POST", "/faults", {
            kind: "drop-response",
            method: "POST",
            path: "/transactions",
            operation: "sale"
          })
          expect(fault.status).toBe(201)
          const ref = reference()
          const outcome = yield* h.send(sale(ref)).pipe(Effect.sandbox, Effect.either)
          expect(outcome._tag).toBe("Left")
          yield* h.settle
          expect((yield* h.counters()).charges).toBe(1)
          expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("AUTHORISED")
          // The rule applied once: the next request is answered normally.
          expect((yield* h.send(sale(reference(), "2000"))).status).toBe(202)
        })
      )
  )

  it.live(
    "misreports a result: the status host answers the fault's finStatus once, then the truth again",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          expect((yield* h.send(sale(ref))).status).toBe(202)
          yield* h.settle
          const fault = yield* h.admin("POST", "/faults", {
            kind: "misreport",
            host: "status",
            finStatus: "DECLINED"
          })
          expect(fault.status).toBe(201)
          expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("DECLINED")
          expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("AUTHORISED")
          // The card was charged once whatever the status host said.
          expect((yield* h.counters()).charges).toBe(1)
          const refused = yield* h.admin("POST", "/faults", { kind: "misreport", host: "status" })
          expect(refused.status).toBe(422)
        })
      )
  )

  it.live("answers 5xx after processing (charged) or before processing (not charged)", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        yield* h.admin("POST", "/faults", { kind: "error-after", path: "/transactions", status: 502 })
        const after = yield* h.send(sale(reference()))
        expect(after.status).toBe(502)
        expect(after.json.error.statusCode).toBe(502)
        yield* h.settle
        expect((yield* h.counters()).charges).toBe(1)
        yield* h.admin("POST", "/faults", { kind: "error-before", path: "/transactions" })
        const before = yield* h.send(sale(reference(), "3000"))
        expect(before.status).toBe(503)
        yield* h.settle
        expect((yield* h.counters()).accepted).toBe(1)
        expect((yield* h.counters()).charges).toBe(1)
      })
    )
  )

  it.live("delays a response, and can target the status host; rules can last until cleared", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        yield* h.admin("POST", "/faults", { kind: "delay", delayMs: 150, path: "/devices" })
        const started = Date.now()
        expect((yield* h.main("/devices")).status).toBe(200)
        expect(Date.now() - started).toBeGreaterThanOrEqual(150)
        const ref = reference()
        yield* h.run(sale(ref))
        yield* h.admin("POST", "/faults", { kind: "error-before", host: "status", times: 0 })
        expect((yield* h.status(`/transactions/${ref}/status`)).status).toBe(503)
        expect((yield* h.status(`/transactions/${ref}/status`)).status).toBe(503)
        expect((yield* h.main("/devices")).status).toBe(200)
        expect((yield* h.admin("GET", "/faults")).json).toHaveLength(1)
        yield* h.admin("DELETE", "/faults")
        expect((yield* h.status(`/transactions/${ref}/status`)).status).toBe(200)
      })
    )
  )

  it.live("resets to the seeded initial state", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        yield* h.run(sale(reference()))
        yield* h.admin("POST", `/terminals/${h.serial}/offline`)
        yield* h.advance(1000)
        expect((yield* h.admin("POST", "/reset")).status).toBe(200)
        expect((yield* h.counters()).charges).toBe(0)
        expect((yield* h.admin("GET", `/terminals/${h.serial}`)).json.online).toBe(true)
        expect((yield* h.admin("GET", "/clock")).json.offset).toBe(0)
        expect((yield* h.main("/devices")).status).toBe(200)
      })
    )
  )
})
