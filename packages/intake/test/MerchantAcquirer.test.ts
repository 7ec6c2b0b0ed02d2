/**
 * What each merchant's acquirer supports (issue 32), on a running worker: two merchants, one
 * whose acquirer the registry says takes partial reversals, one left to the deployment's
 * (which does not). A partial reversal of the first's sale is accepted and made; the
 * second's is refused with the rule's message before anything starts, and the reversal
 * workflow, started directly, refuses it too (deciding in its recorded step with the
 * merchant's capabilities). Changed through the admin route, the second's is accepted.
 */
import { describe, expect, layer } from "@effect/vitest"
import { MerchantRegistry } from "@tillflow/core"
import { DurableEngine } from "@tillflow/engine"
import { Stack } from "@tillflow/intake"
import { adminClient } from "@tillflow/simulator/testing"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { call, running } from "./support.js"

// A key-encryption key for the test: the registry seals the merchants' keys under it.
const kek = `kek-test:${Buffer.alloc(32, 5).toString("base64")}`

const stack = running(27).pipe(
  // The KEK over the environment's configuration (DATABASE_URL: the tests' PostgreSQL).
  Layer.provide(
    Layer.setConfigProvider(
      ConfigProvider.fromMap(new Map([["TILLFLOW_KEK", kek]])).pipe(
        ConfigProvider.orElse(() => ConfigProvider.fromEnv())
      )
    )
  )
)

/** A merchant at the simulator and in the registry, with a terminal and a key. */
const merchant = (registered: MerchantRegistry.NewMerchant, simId: string, serial: string) =>
  Effect.gen(function* () {
    const cloud = yield* Stack.Cloud
    if (cloud.adminUrl === undefined) return yield* Effect.dieMessage("no built-in simulator")
    const admin = adminClient(cloud.adminUrl)
    // The simulator's acquirer of the merchant takes partial reversals as the registry says.
    const made = (yield* admin("POST", "/merchants", {
      id: simId,
      name: registered.name,
      mcc: "5812",
      flags: { partialReversalAllowed: registered.partialReversal === true }
    })) as {
      readonly merchantId: string
      readonly apiKey: string
    }
    yield* admin("POST", `/merchants/${made.merchantId}/terminals`, {
      serial_number: serial,
      terminal_type: "ANDROID"
    })
    const registry = yield* MerchantRegistry.MerchantRegistry
    yield* registry.register(registered)
    yield* registry.addKey(registered.id, "merchant", Redacted.make(made.apiKey))
  })

// Every sale of another amount: the simulator cancels a duplicate payment (same card and amount).
let amount = 4_410
/** An approved sale on `serial` for the merchant: its transaction's guid. */
const sale = (serial: string, key: string, headers: Record<string, string>) =>
  Effect.gen(function* () {
    const made = yield* call("POST", "/v1/operations", {
      headers,
      body: JSON.stringify({
        idempotencyKey: key,
        waitSeconds: 60,
        request: { operation: "sale", serial_number: serial, amount: String(amount++), currency: "EUR" }
      })
    })
    expect([made.status, made.json?.report?.verdict], made.text).toEqual([200, "approved"])
    return String(made.json.attributes.guid)
  })

const reverse = (guid: string, headers: Record<string, string>, reason: string) =>
  call("POST", `/v1/transactions/${guid}/actions`, {
    headers,
    body: JSON.stringify({ action: "reverse", amount: "10.00", currency: "EUR", reason, waitSeconds: 60 })
  })

describe("each merchant's acquirer", () => {
  layer(stack, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect(
      "a partial reversal accepted for the merchant whose acquirer takes it, refused with the rule for the one left to the deployment's",
      () =>
        Effect.gen(function* () {
          yield* merchant(
            { id: "split-bar", name: "Split Bar", mcc: "5812", partialReversal: true },
            "SIM-SPLIT",
            "SPLIT-1"
          )
          yield* merchant({ id: "whole-inn", name: "Whole Inn", mcc: "5812" }, "SIM-WHOLE", "WHOLE-1")
          const split = { "tillflow-merchant": "split-bar" }
          const whole = { "tillflow-merchant": "whole-inn" }
          const run = Date.now()
          const splitGuid = yield* sale("SPLIT-1", `split-${run}`, split)
          const wholeGuid = yield* sale("WHOLE-1", `whole-${run}`, whole)

          // The merchant left to the deployment's (no partial reversals): refused, nothing started.
          const engine = yield* DurableEngine.DurableEngine
          const before = (yield* engine.list({})).length
          const refused = yield* reverse(wholeGuid, whole, "one item")
          expect([refused.status, refused.json?.rule], refused.text).toEqual([
            422,
            "acquirer-partial-reversal"
          ])
          expect(refused.json?.message).toContain(
            `the acquirer does not support partial reversals: reverse ${wholeGuid} in full`
          )
          expect((yield* engine.list({})).length).toBe(before)

          // The merchant whose acquirer takes them: the part reversed.
          const accepted = yield* reverse(splitGuid, split, "one item")
          expect(accepted.status, accepted.text).toBe(200)
          expect([accepted.json?.status, accepted.json?.report?.verdict], accepted.text).toEqual([
            "succeeded",
            "approved"
          ])
          expect(accepted.json?.result?.value?.amount).toEqual({ amount: "1000", currency: "EUR" })

          // The workflow decides with the merchant's capabilities too (in its recorded step):
          // started directly for the merchant left to the deployment's, it refuses.
          const direct = yield* call("POST", "/v1/lifecycle/Reversal.Reverse", {
            headers: whole,
            body: JSON.stringify({
              payload: {
                requestId: `direct-${run}`,
                originalGuid: wholeGuid,
                amount: { amount: "1000", currency: "EUR" }
              },
              waitSeconds: 60
            })
          })
          expect(direct.status, direct.text).toBe(200)
          expect(direct.json?.status, direct.text).toBe("failed")
          expect(direct.json?.result?.cause?.error?.rule, direct.text).toBe("acquirer-partial-reversal")

          // Changed by an admin: the merchant's acquirer now takes partial reversals.
          const set = yield* call("POST", "/v1/merchants/whole-inn/acquirer", {
            body: JSON.stringify({ partialReversal: true })
          })
          expect([set.status, set.json?.partialReversal], set.text).toEqual([200, true])
          expect(set.json?.captureReversal).toBeUndefined()
          const listed = yield* call("GET", "/v1/merchants")
          expect(listed.json?.find((m: { id: string }) => m.id === "split-bar")?.partialReversal).toBe(true)
        })
    )
  })
})
