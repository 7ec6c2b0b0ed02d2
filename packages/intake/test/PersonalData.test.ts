/**
 * A MOTO sale with billing (personal data, stored wrapped with a fresh salt each time it is
 * encoded) asked twice under the same requestId is the same sale: the intake compares the
 * stored payload with the one asked by value, salts aside, instead of answering a conflict.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, layer as intake } from "./support.js"

layer(intake, { timeout: 60_000, excludeTestServices: true })("personal data at the intake", (it) => {
  it.effect(
    "the same MOTO sale with billing asked twice answers one execution; other billing is a conflict",
    () =>
      Effect.gen(function* () {
        const body = (zipCode: string) =>
          JSON.stringify({
            payload: {
              requestId: "moto-billing-1",
              cardToken: "tok_1234",
              amount: { amount: "1050", currency: "EUR" },
              billing: { zipCode, address: "Calle Mayor 1" }
            },
            waitSeconds: 5
          })
        const first = yield* call("POST", "/v1/lifecycle/Moto.Sale", { body: body("28013") })
        expect(first.status, first.text).toBe(200)
        const again = yield* call("POST", "/v1/lifecycle/Moto.Sale", { body: body("28013") })
        expect(again.status, again.text).toBe(200)
        expect(again.json.executionId).toBe(first.json.executionId)
        const other = yield* call("POST", "/v1/lifecycle/Moto.Sale", { body: body("10001") })
        expect(other.status).toBe(409)
      })
  )
})
