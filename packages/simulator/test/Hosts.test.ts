import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { SimulatorServer } from "@tillflow/simulator"
import { reference, request, withSimulator, zeroTimings } from "./support.js"

describe("hosts and keys", () => {
  it.live(
    "serves the status endpoint on the status host only and the main routes on the main host only",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const ref = reference()
          yield* h.run({ operation: "sale", amount: "1000", currency: "EUR", transactionReference: ref })
          const onStatusHost = yield* h.status(`/transactions/${ref}/status`)
          expect(onStatusHost.status).toBe(200)
          expect(onStatusHost.json.finStatus).toBe("AUTHORISED")
          const onMainHost = yield* h.main(`/transactions/${ref}/status`)
          expect(onMainHost.status).toBe(404)
          expect(onMainHost.json.error.statusCode).toBe(404)
          const devicesOnStatusHost = yield* h.status("/devices")
          expect(devicesOnStatusHost.status).toBe(404)
          expect(h.info.transactionsUrl).toBe(`${h.info.baseUrl}/_status-host`)
        })
      )
  )

  it.live("can serve the status host on its own port, where main routes are unknown", () =>
    withSimulator({ statusPort: 0 }, (h) =>
      Effect.gen(function* () {
        expect(new URL(h.info.transactionsUrl).port).not.toBe(new URL(h.info.baseUrl).port)
        const ref = reference()
        yield* h.run({ operation: "sale", amount: "1000", currency: "EUR", transactionReference: ref })
        expect((yield* h.status(`/transactions/${ref}/status`)).json.finStatus).toBe("AUTHORISED")
        expect((yield* h.status("/devices")).status).toBe(404)
        expect((yield* h.main(`/transactions/${ref}/status`)).status).toBe(404)
        expect((yield* h.main(`/_status-host/transactions/${ref}/status`)).status).toBe(404)
      })
    )
  )

  it.live(
    "accepts any of a merchant's keys, in any header casing, and answers 403 to a wrong or missing key",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const merchantId = h.info.merchantId
          const added = yield* h.admin("POST", `/merchants/${merchantId}/keys`, { kind: "merchant" })
          expect(added.status).toBe(201)
          const second = added.json.key as string
          const withFirst = yield* h.main("/devices")
          const withSecond = yield* h.main("/devices", undefined, second)
          expect(withSecond.status).toBe(200)
          expect(withSecond.json).toEqual(withFirst.json)
          const oddCasing = yield* request(`${h.info.baseUrl}/devices`, { headers: { ApiKeyCLoud: second } })
          expect(oddCasing.status).toBe(200)
          const wrong = yield* h.main("/devices", undefined, "not-a-key")
          expect(wrong.status).toBe(403)
          expect(wrong.json).toEqual({
            error: { statusCode: 403, name: "ForbiddenError", message: "Authentication failed" }
          })
          const missing = yield* request(`${h.info.baseUrl}/devices`)
          expect(missing.status).toBe(403)
          const revoked = yield* h.admin("DELETE", `/keys/${second}`)
          expect(revoked.status).toBe(200)
          expect((yield* h.main("/devices", undefined, second)).status).toBe(403)
        })
      )
  )

  it.live("another merchant's key sees only that merchant's devices", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const created = yield* h.admin("POST", "/merchants", { id: "OTHER1", apiKey: "other-key" })
        expect(created.json).toEqual({ merchantId: "OTHER1", apiKey: "other-key" })
        yield* h.admin("POST", "/merchants/OTHER1/terminals", {
          serial_number: "7777777777",
          terminal_type: "PAXA80"
        })
        const other = yield* h.main("/devices", undefined, "other-key")
        expect(other.json.map((d: { serial_number: string }) => d.serial_number)).toEqual(["7777777777"])
        const sale = yield* h.send(
          { operation: "sale", amount: "100", currency: "EUR", transactionReference: reference() },
          "other-key"
        )
        expect(sale.status).toBe(404)
      })
    )
  )

  it.live(
    "lists at least three online terminals on /devices and the same list on the older /initialize",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          const devices = yield* h.main("/devices")
          const initialize = yield* h.main("/initialize")
          expect(devices.status).toBe(200)
          expect(devices.json.length).toBeGreaterThanOrEqual(3)
          for (const d of devices.json) {
            expect(Object.keys(d).sort()).toEqual([
              "merchant_id_alpha",
              "serial_number",
              "ssk",
              "terminal_type"
            ])
          }
          expect(initialize.json).toEqual(devices.json)
          const terminals = yield* h.admin("GET", "/terminals")
          const listed = new Set(devices.json.map((d: { serial_number: string }) => d.serial_number))
          for (const t of terminals.json.filter((t: { serial_number: string }) =>
            listed.has(t.serial_number)
          )) {
            expect(t.online).toBe(true)
          }
        })
      )
  )

  it.live("hands out the same keys and serial numbers for the same seed", () =>
    Effect.gen(function* () {
      const a = yield* withSimulator({ seed: 7 }, (h) => Effect.succeed(h.info))
      const b = yield* withSimulator({ seed: 7 }, (h) => Effect.succeed(h.info))
      const c = yield* withSimulator({ seed: 8 }, (h) => Effect.succeed(h.info))
      expect(b.apiKey).toBe(a.apiKey)
      expect(b.terminals).toEqual(a.terminals)
      expect(c.apiKey).not.toBe(a.apiKey)
      const keyed = yield* withSimulator({ apiKey: "my-key" }, (h) => Effect.succeed(h.info.apiKey))
      expect(keyed).toBe("my-key")
    })
  )

  it.live(
    "with transactionSeed random, the seed still gives the key and serials but every start hands out fresh guids",
    () =>
      Effect.gen(function* () {
        const firstSale = (options: SimulatorServer.Options) =>
          withSimulator({ timings: zeroTimings, ...options }, (h) =>
            Effect.map(
              h.run({
                operation: "sale",
                amount: "1000",
                currency: "EUR",
                transactionReference: reference()
              }),
              (result) => ({
                key: h.info.apiKey,
                serials: h.info.terminals,
                guid: result.json.efttransactionID
              })
            )
          )
        const seeded = yield* firstSale({ seed: 7 })
        const again = yield* firstSale({ seed: 7 })
        expect(again).toEqual(seeded)
        expect(seeded.guid).toEqual(expect.any(String))
        const fresh = yield* firstSale({ seed: 7, transactionSeed: "random" })
        const freshAgain = yield* firstSale({ seed: 7, transactionSeed: "random" })
        expect([fresh.key, fresh.serials]).toEqual([seeded.key, seeded.serials])
        expect(freshAgain.serials).toEqual(seeded.serials)
        expect(new Set([seeded.guid, fresh.guid, freshAgain.guid]).size).toBe(3)
      })
  )
})

describe("bad input", () => {
  it.live("answers malformed JSON with a 400 JSON error and stays up", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const bad = yield* h.main("/transactions", "{not json")
        expect(bad.status).toBe(400)
        expect(bad.json.error.name).toBe("BadRequestError")
        expect((yield* h.main("/devices")).status).toBe(200)
      })
    )
  )

  it.live("answers an empty or non-JSON body on every POST route with a 400 JSON error, never 500", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const routes = [
          "/transactions",
          "/reversal",
          "/preauthorization/increase",
          "/moto/sale",
          "/batch/close",
          "/batch/detail"
        ]
        for (const route of routes) {
          for (const body of ["", "   ", "not json"]) {
            for (const headers of [
              { "content-type": "application/json" },
              { "content-type": "text/plain" }
            ]) {
              const reply = yield* request(`${h.info.baseUrl}${route}`, {
                method: "POST",
                key: h.info.apiKey,
                headers,
                body
              })
              const seen = `${route} ${JSON.stringify(body)} ${JSON.stringify(headers)}`
              expect({ seen, status: reply.status }).toEqual({ seen, status: 400 })
              expect({ seen, error: reply.json?.error }).toEqual({
                seen,
                error: expect.objectContaining({ statusCode: 400, name: "BadRequestError" })
              })
            }
          }
        }
        expect((yield* h.main("/devices")).status).toBe(200)
      })
    )
  )

  it.live("answers a body above 1 MiB with 413 JSON and stays up", () =>
    withSimulator({}, (h) =>
      Effect.gen(function* () {
        const huge = JSON.stringify({ operation: "sale", padding: "x".repeat(2 * 1024 * 1024) })
        const reply = yield* h.main("/transactions", huge)
        expect(reply.status).toBe(413)
        expect(reply.json.error.statusCode).toBe(413)
        expect((yield* h.main("/devices")).status).toBe(200)
      })
    )
  )

  it.live(
    "answers unknown routes with 404 JSON on every host, and invalid requests with 422 VALIDATION_FAILED",
    () =>
      withSimulator({}, (h) =>
        Effect.gen(function* () {
          for (const reply of [
            yield* h.main("/no/such/route"),
            yield* h.status("/no/such/route"),
            yield* h.admin("GET", "/no/such/route")
          ]) {
            expect(reply.status).toBe(404)
            expect(reply.json.error.statusCode).toBe(404)
          }
          const invalid = yield* h.send({
            operation: "sale",
            amount: "12.50",
            currency: "EUR",
            transactionReference: reference()
          })
          expect(invalid.status).toBe(422)
          expect(invalid.json.error.code).toBe("VALIDATION_FAILED")
          const unknownOp = yield* h.send({ operation: "update" })
          expect(unknownOp.status).toBe(422)
        })
      )
  )
})
