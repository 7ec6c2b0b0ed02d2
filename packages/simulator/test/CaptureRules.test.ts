import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Harness } from "./support.js"
import { reference, withSimulator } from "./support.js"

const DAY = 86_400_000

/** A pre-authorization of 100.00 on `card` at a merchant of `mcc`, captured `after` ms later. */
const captureAfter = (
  h: Harness,
  input: {
    readonly card: { readonly pan: string; readonly scheme: string; readonly tender?: "CREDIT" | "DEBIT" }
    readonly mcc: string
    readonly currency?: string
    readonly after: number
    readonly capturedAmount?: string
  }
) =>
  Effect.gen(function* () {
    yield* h.admin("PATCH", `/merchants/${h.info.merchantId}`, { mcc: input.mcc })
    yield* h.admin("PATCH", `/terminals/${h.serial}`, { card: input.card })
    const preauth = yield* h.run({
      operation: "preAuthorization",
      amount: "10000",
      currency: input.currency ?? "EUR",
      transactionReference: reference()
    })
    yield* h.advance(input.after)
    return yield* h.main("/preauthorization/capture", {
      originalGuid: preauth.json.efttransactionID,
      capturedAmount: input.capturedAmount ?? "100.00"
    })
  })

describe("capture windows and tolerances are FACTS.md's", () => {
  it.live("Diners other debit: the window closes after 7 days", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const late = yield* captureAfter(h, {
          card: { pan: "36000000000008", scheme: "DINERS", tender: "DEBIT" },
          mcc: "5411",
          after: 8 * DAY
        })
        expect(late.status).toBe(400)
        expect(late.json.error.code).toBe("PREAUTH_EXPIRED")
      })
    )
  )

  it.live("a scheme spelt `Diners Club` is Diners: lodging stays capturable for 30 days", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const ok = yield* captureAfter(h, {
          card: { pan: "36000000000008", scheme: "Diners Club", tender: "CREDIT" },
          mcc: "7011",
          after: 20 * DAY
        })
        expect(ok.status).toBe(200)
      })
    )
  )

  it.live("JCB hotel: capturable for the time of stay, not closed after 30 days", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const ok = yield* captureAfter(h, {
          card: { pan: "3530111333300000", scheme: "JCB" },
          mcc: "7011",
          after: 40 * DAY
        })
        expect(ok.status).toBe(200)
      })
    )
  )

  it.live("Visa commuter: 25 USD over a USD hold, no overage over a EUR hold", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const visa = { pan: "4761739001010010", scheme: "VISA" }
        const euroOver = yield* captureAfter(h, {
          card: visa,
          mcc: "4111",
          after: DAY / 2,
          capturedAmount: "100.01"
        })
        expect(euroOver.status).toBe(400)
        expect(euroOver.json.error.code).toBe("CAPTURE_ABOVE_TOLERANCE")
        const usdOver = yield* captureAfter(h, {
          card: visa,
          mcc: "4111",
          currency: "USD",
          after: DAY / 2,
          capturedAmount: "125.01"
        })
        expect(usdOver.json.error.code).toBe("CAPTURE_ABOVE_TOLERANCE")
        const usd = yield* captureAfter(h, {
          card: visa,
          mcc: "4111",
          currency: "USD",
          after: DAY / 2,
          capturedAmount: "125.00"
        })
        expect(usd.status).toBe(200)
      })
    )
  )
})
