/**
 * The intake accepts what the service's own request examples send, as the simulator does:
 * a remitter's name with a space ("John Doe") and a credential with externalId beside
 * mid, tid and mcc.
 */
import { describe, expect, it } from "@effect/vitest"
import { Stack } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import { call, layer } from "./support.js"

const serial = Effect.map(Stack.Cloud, (cloud) => {
  const first = cloud.terminals[0]
  if (first === undefined) throw new Error("the simulator has no terminal")
  return first.serialNumber
})

describe("the service's request examples", () => {
  it.layer(layer, { timeout: 60_000 })((it) => {
    it.effect(
      "a sale with moneyRemittanceOptions.fullName 'John Doe' and merchantAuth externalId + mid/tid/mcc is accepted",
      () =>
        Effect.gen(function* () {
          const body = JSON.stringify({
            idempotencyKey: "service-example-1",
            request: {
              operation: "sale",
              serial_number: yield* serial,
              amount: "1000",
              currency: "EUR",
              moneyRemittanceOptions: { fullName: "John Doe", countryCode: "USA" },
              merchantAuth: [{ externalId: "ext-1", mid: "MID1", tid: "TID1", mcc: "5999" }]
            }
          })
          const reply = yield* call("POST", "/v1/operations", { body })
          expect(reply.status, reply.text).toBeLessThan(300)
        })
    )
  })
})
