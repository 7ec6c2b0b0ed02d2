/**
 * Many merchants in one worker (issue 32), against a running worker and the simulator
 * holding a second merchant: a request naming the merchant (`Tillflow-Merchant`) sees that
 * merchant's terminals, and its sales are made with that merchant's keys and run as its
 * executions; a key the service stops taking mid-traffic fails over to the merchant's next
 * key — every sale of the stream approved, each charged once, the refusal recorded; a
 * merchant disabled mid-traffic has its new operations refused with the rule while the
 * other merchant's go on; an unknown or malformed merchant is refused with what is wrong.
 */
import { describe, expect, layer } from "@effect/vitest"
import { LifecycleEvent, MerchantKeys, MerchantRegistry, TerminalOutcomeRecorder } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { Intake, IntakeClient, Stack } from "@tillflow/intake"
import * as HttpServer from "@effect/platform/HttpServer"
import { adminClient } from "@tillflow/simulator/testing"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { call, running, token } from "./support.js"

// A key-encryption key for the test: the registry seals the merchants' keys under it.
const kek = `kek-test:${Buffer.alloc(32, 9).toString("base64")}`

const stack = running(21).pipe(
  // The KEK over the environment's configuration (DATABASE_URL: the tests' PostgreSQL).
  Layer.provide(
    Layer.setConfigProvider(
      ConfigProvider.fromMap(new Map([["TILLFLOW_KEK", kek]])).pipe(
        ConfigProvider.orElse(() => ConfigProvider.fromEnv())
      )
    )
  )
)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const cafe = "cafe-sol"
const forCafe = { "tillflow-merchant": cafe }

/** The second merchant, at the simulator and in the registry: a terminal and two keys. */
const setUp = Effect.gen(function* () {
  const cloud = yield* Stack.Cloud
  if (cloud.adminUrl === undefined) return yield* Effect.dieMessage("no built-in simulator")
  const admin = adminClient(cloud.adminUrl)
  const merchant = (yield* admin("POST", "/merchants", {
    id: "SIM-CAFE",
    name: "Café Sol",
    mcc: "5812"
  })) as {
    readonly merchantId: string
    readonly apiKey: string
  }
  const spare = (yield* admin("POST", `/merchants/${merchant.merchantId}/keys`, {})) as {
    readonly key: string
  }
  yield* admin("POST", `/merchants/${merchant.merchantId}/terminals`, {
    serial_number: "CAFE-1",
    terminal_type: "ANDROID"
  })
  const registry = yield* MerchantRegistry.MerchantRegistry
  yield* registry.register({ id: cafe, name: "Café Sol", mcc: "5812", virtualTerminal: "CAFE-V" })
  const first = yield* registry.addKey(cafe, "merchant", Redacted.make(merchant.apiKey))
  yield* registry.addKey(cafe, "merchant", Redacted.make(spare.key))
  return { admin, cloud, registry, oldKey: merchant.apiKey, oldKeyId: first.keyId }
})

// Every sale of another amount: the simulator cancels a duplicate payment (same card and amount).
let amount = 1_250
const sale = (serial: string, key: string, headers: Record<string, string> = {}) =>
  call("POST", "/v1/operations", {
    headers,
    body: JSON.stringify({
      idempotencyKey: key,
      waitSeconds: 60,
      request: { operation: "sale", serial_number: serial, amount: String(amount++), currency: "EUR" }
    })
  })

describe("many merchants in one worker", () => {
  layer(stack, { timeout: 180_000, excludeTestServices: true })((it) => {
    it.effect(
      "scoping, key fail-over mid-stream, a merchant disabled mid-traffic, unknown and malformed merchants",
      () =>
        Effect.gen(function* () {
          const { admin, cloud, registry, oldKey, oldKeyId } = yield* setUp
          const own = cloud.terminals[0]
          if (own === undefined) return yield* Effect.dieMessage("no terminal")
          const run = Date.now()

          // Each merchant sees its own terminals.
          const cafeDevices = yield* call("GET", "/v1/devices", { headers: forCafe })
          expect(cafeDevices.status, cafeDevices.text).toBe(200)
          expect((cafeDevices.json as Json).map((d: Json) => d.serialNumber)).toEqual(["CAFE-1"])
          // The intake's client names the merchant a caller acts for.
          const server = yield* HttpServer.HttpServer
          const port = server.address._tag === "TcpAddress" ? server.address.port : 0
          const viaClient = yield* Effect.flatMap(Intake.Intake, (intake) => intake.devices).pipe(
            MerchantKeys.forMerchant(cafe),
            Effect.provide(
              IntakeClient.layer({
                baseUrl: `http://127.0.0.1:${port}`,
                credential: { _tag: "Token", token: Redacted.make(token) }
              })
            )
          )
          expect(viaClient.map((d) => d.serialNumber)).toEqual(["CAFE-1"])
          const ownDevices = yield* call("GET", "/v1/devices")
          expect((ownDevices.json as Json).map((d: Json) => d.serialNumber)).not.toContain("CAFE-1")
          // A request cannot name another merchant's terminal.
          const crossed = yield* sale(own.serialNumber, `crossed-${run}`, forCafe)
          expect([crossed.status, crossed.json?._tag]).toEqual([400, "InvalidRequest"])
          expect(crossed.json?.message).toContain("unknown terminal serial")

          // A stream of sales; the service stops taking the first key after the third.
          const verdicts: Array<string> = []
          for (let i = 0; i < 8; i++) {
            if (i === 3) yield* admin("DELETE", `/keys/${encodeURIComponent(oldKey)}`)
            const made = yield* sale("CAFE-1", `stream-${run}-${i}`, forCafe)
            expect(made.status, made.text).toBe(200)
            verdicts.push(String(made.json?.report?.verdict))
          }
          expect(verdicts).toEqual(Array.from({ length: 8 }, () => "approved"))
          const counters = (yield* admin("GET", "/counters")) as Json
          expect(counters.terminals["CAFE-1"]?.accepted).toBe(8)
          const store = yield* EventStore.EventStore
          const refusals = yield* store.readStream(MerchantKeys.streamOf(cafe))
          expect(refusals.length).toBeGreaterThanOrEqual(1)
          expect(refusals.map((e) => [e.type, (e.data as Json).keyId])).toContainEqual([
            "MerchantKeyRefused",
            oldKeyId
          ])

          // A pre-authorization on the merchant's terminal opens its history with the merchant's MCC.
          const hold = yield* call("POST", "/v1/operations", {
            headers: forCafe,
            body: JSON.stringify({
              idempotencyKey: `hold-${run}`,
              waitSeconds: 60,
              request: {
                operation: "preAuthorization",
                serial_number: "CAFE-1",
                amount: "9000",
                currency: "EUR"
              }
            })
          })
          expect([hold.status, hold.json?.report?.verdict], hold.text).toEqual([200, "approved"])
          const guid = String(hold.json.attributes.guid)
          // (The worker's follower records it as the log grows; here the recorder is asked once.)
          yield* TerminalOutcomeRecorder.catchUpFor(
            { mcc: Option.some("7011"), mccOf: MerchantRegistry.mccOf(registry) },
            guid
          )
          const opened = yield* store.readStream(LifecycleEvent.transactionStream(guid))
          expect(opened.map((e) => [e.type, (e.data as Json).mcc])).toEqual([
            ["PreAuthorizationOpened", "5812"]
          ])

          // A MOTO sale of the merchant naming no terminal is booked on its virtual terminal.
          const reference = globalThis.crypto.randomUUID()
          const moto = yield* call("POST", "/v1/lifecycle/Moto.Sale", {
            headers: forCafe,
            body: JSON.stringify({
              payload: {
                requestId: `moto-${run}`,
                transactionReference: reference,
                cardToken: "tok_1234",
                amount: { amount: "2100", currency: "EUR" }
              },
              waitSeconds: 30
            })
          })
          expect(moto.status, moto.text).toBe(200)
          const motoEvents = yield* store.readStream(LifecycleEvent.motoSaleStream(reference))
          expect(
            motoEvents.filter((e) => e.type === "MotoSaleRequested").map((e) => (e.data as Json).serialNumber)
          ).toEqual(["CAFE-V"])

          // The refusal is an alert, naming the key and what to do.
          const alerts = yield* call("GET", "/v1/monitor/alerts")
          const keyAlert = (alerts.json?.alerts as Json[] | undefined)?.find(
            (a: Json) => a.kind === "key-refused"
          )
          expect(keyAlert?.id).toMatch(new RegExp(`^key-refused\\.${oldKeyId}\\.[0-9]+$`))
          expect(keyAlert?.message).toContain(`tillflow merchants retire-key ${cafe} ${oldKeyId}`)
          expect(keyAlert?.state).toBe("open")

          // Each merchant's executions running and waiting are metrics (its fair share).
          const metrics = yield* call("GET", "/metrics")
          expect(metrics.text).toMatch(
            /tillflow_merchant_executions\{merchant="cafe-sol",state="running"\} 0/
          )
          expect(metrics.text).toMatch(
            /tillflow_merchant_executions\{merchant="cafe-sol",state="waiting"\} 0/
          )

          // Disabled mid-traffic: its new operations refused with the rule; the other merchant's go on.
          yield* registry.setEnabled(cafe, false)
          const refused = yield* sale("CAFE-1", `disabled-${run}`, forCafe)
          expect([refused.status, refused.json?.rule]).toEqual([422, "merchant-enabled"])
          expect(refused.json?.message).toContain(`merchant ${cafe} is disabled`)
          const ownSale = yield* sale(own.serialNumber, `own-${run}`)
          expect([ownSale.status, ownSale.json?.report?.verdict]).toEqual([200, "approved"])
          // Reads still answer for a disabled merchant.
          expect((yield* call("GET", "/v1/devices", { headers: forCafe })).status).toBe(200)

          // Unknown and malformed merchants.
          const unknown = yield* sale("CAFE-1", `unknown-${run}`, { "tillflow-merchant": "no-such-merchant" })
          expect([unknown.status, unknown.json?._tag]).toEqual([400, "InvalidRequest"])
          expect(unknown.json?.message).toContain("no merchant no-such-merchant is registered")
          const malformed = yield* sale("CAFE-1", `malformed-${run}`, { "tillflow-merchant": "a b" })
          expect([malformed.status, malformed.json?._tag]).toEqual([400, "InvalidRequest"])
          expect(malformed.json?.message).toContain("Tillflow-Merchant")
        })
    )
  })
})
