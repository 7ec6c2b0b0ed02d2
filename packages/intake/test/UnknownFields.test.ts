/**
 * Strict at the intake's edge: a field the intake does not know, anywhere in a request (the
 * envelope of a start, a stop or a terminal-less operation, the service request, a
 * workflow's payload), is refused with a 400 that names it and says what is allowed,
 * instead of being dropped silently; nothing is written for it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Stack } from "@tillflow/intake"
import * as Effect from "effect/Effect"
import { call, layer, written } from "./support.js"

const terminal = Effect.map(Stack.Cloud, (cloud) => {
  const first = cloud.terminals[0]
  if (first === undefined) throw new Error("the simulator has no terminal")
  return first
})

describe("unknown fields at the intake", () => {
  it.layer(layer, { timeout: 60_000 })((it) => {
    it.effect("an unknown field anywhere in a request is refused 400 naming it, and nothing is written", () =>
      Effect.gen(function* () {
        const { serialNumber, terminalType } = yield* terminal
        const request = {
          operation: "sale",
          serial_number: serialNumber,
          terminal_type: terminalType,
          amount: "1000",
          currency: "EUR"
        }
        const motoSale = { cardToken: "tok_1", amount: { amount: "1000", currency: "EUR" } }
        const cases: ReadonlyArray<readonly [string, unknown, string, string]> = [
          ["/v1/operations", { idempotencyKey: "k-1", request, waitSecond: 5 }, "waitSecond", "waitSeconds"],
          [
            "/v1/operations",
            { idempotencyKey: "k-2", request: { ...request, tipp: "1" } },
            "request.tipp",
            "amount"
          ],
          ["/v1/lifecycle/Moto.Sale", { payload: motoSale, wait: 1 }, "wait", "waitSeconds"],
          [
            "/v1/lifecycle/Moto.Sale",
            { payload: { ...motoSale, bilign: { zipCode: "1" } } },
            "payload.bilign",
            "billing"
          ],
          [
            `/v1/terminals/${serialNumber}/stop`,
            { idempotencyKey: "s-1", force: true },
            "force",
            "waitSeconds"
          ]
        ]
        for (const [path, body, field, allowed] of cases) {
          const before = yield* written
          const reply = yield* call("POST", path, { body: JSON.stringify(body) })
          expect({ path, field, status: reply.status }).toEqual({ path, field, status: 400 })
          expect(reply.contentType).toMatch(/application\/json/)
          expect({ field, message: reply.json?.message }).toEqual({
            field,
            message: expect.stringContaining(`${field}: unknown field`)
          })
          expect({ field, message: reply.json?.message }).toEqual({
            field,
            message: expect.stringContaining(allowed)
          })
          expect(yield* written).toEqual(before)
        }
      })
    )
  })
})
