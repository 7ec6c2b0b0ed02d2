import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { reference, withSimulator } from "./support.js"

describe("the simulator accepts what the service accepts", () => {
  it.live("a moToPreAuthorization without transactionReference is accepted and authorised", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const result = yield* h.run({ operation: "moToPreAuthorization", amount: "1000", currency: "EUR" })
        expect(result.status).toBe(200)
        expect(result.json.finStatus).toBe("AUTHORISED")
      })
    )
  )

  it.live("merchantAuth credentials carrying externalId together with mid, tid and mcc are accepted", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const accepted = yield* h.send({
          operation: "sale",
          amount: "1000",
          currency: "EUR",
          transactionReference: reference(),
          merchantAuth: [{ externalId: "ext-1", mid: "MID1", tid: "TID1", mcc: "5999" }]
        })
        expect(accepted.json).toMatchObject({ statusMessage: "Transaction request accepted" })
        expect(accepted.status).toBe(202)
      })
    )
  )
})
