import { describe, expect, it } from "@effect/vitest"
import { Enumerations } from "@tillflow/core"
import * as Effect from "effect/Effect"
import { reference, withSimulator } from "./support.js"

/** The spec's TransactionType enumeration (2.4), as the contract writes it. */
const specTypes: ReadonlyArray<string> = Enumerations.TransactionType.literals

describe("result types are the spec's", () => {
  it.live("pre-authorization results and status rows carry only the spec's TransactionType values", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const ref = reference()
        const preauth = yield* h.run({
          operation: "preAuthorization",
          amount: "10000",
          currency: "EUR",
          transactionReference: ref
        })
        const guid = preauth.json.efttransactionID
        const increase = yield* h.run({
          operation: "preAuthorizationIncrease",
          amount: "1000",
          currency: "EUR",
          originalTransactionId: guid
        })
        yield* h.main("/preauthorization/increase", { originalGuid: guid, increaseAmount: "5.00" })
        const capture = yield* h.run({
          operation: "preAuthorizationCapture",
          amount: "11000",
          currency: "EUR",
          originalTransactionId: guid
        })
        const reversal = yield* h.run({ operation: "preAuthorizationReversal", originalTransactionId: guid })
        const moto = yield* h.run({ operation: "moToPreAuthorization", amount: "1000", currency: "EUR" })
        const rows = (yield* h.status(`/transactions/${ref}/status/all`)).json as ReadonlyArray<{
          type: string
        }>
        const seen = [preauth, increase, capture, reversal, moto].map((r) => r.json.type as string)
        expect(rows.length).toBeGreaterThan(1)
        for (const type of [...seen, ...rows.map((row) => row.type)]) expect(specTypes).toContain(type)
      })
    )
  )
})
