/**
 * Each merchant's people see only their own (issue 32), on a running worker with two
 * merchants besides the deployment's own: a merchant's bearer token (`TILLFLOW_INTAKE_TOKENS`)
 * and a merchant's console operator reach their merchant's executions and transactions, and
 * another merchant's — or the deployment's own — are not found by any route, id or guid:
 * read, history, retry, act, resolve, a lifecycle on its guid, a stop naming it, a list or
 * a search, a timeline. The live stream, the log and the ledger (totals and entries) are
 * answered filtered on the server to the merchant's own: what its events' metadata names as
 * their tenant, never another merchant's or the deployment's own, and so are the terminals'
 * monitor and the alerts (`MerchantMonitor.test.ts`). What spans every merchant (the chain's
 * verify, the rebuild, metrics, the registry) is refused 403; naming another merchant is
 * refused 403. The platform's token sees everything.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Operators } from "@tillflow/console"
import { MerchantRegistry } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { Stack } from "@tillflow/intake"
import * as HttpServer from "@effect/platform/HttpServer"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import {
  call,
  configuredTokens,
  login,
  readLive,
  running,
  send,
  simulatedMerchant,
  token
} from "./support.js"

const kek = `kek-test:${Buffer.alloc(32, 3).toString("base64")}`
const cafeToken = "cafe-pos-token-5b1f0e7c2a9d4e18"
const teaToken = "tea-pos-token-0c7e2b9f4d1a6e35"
const bareToken = "bare-pos-token-7d2a4c9e1b0f3e58"

const configured = {
  tokens: await configuredTokens([
    { name: "cafe-pos", token: cafeToken, merchants: ["cafe-sol"] },
    { name: "tea-pos", token: teaToken, merchants: ["tea-house"] },
    { name: "bare-pos", token: bareToken, role: "viewer", merchants: ["bare-shop"] }
  ]),
  operators: await Effect.runPromise(
    Effect.map(Operators.hash("carla-secret", 1000), (secret) =>
      Either.getOrThrow(
        Operators.parse(
          JSON.stringify([{ name: "carla", role: "operator", merchants: ["cafe-sol"], secret }])
        )
      )
    )
  )
}

const stack = running(31, configured).pipe(
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

const merchant = simulatedMerchant

/** The whole log as `as` reads it, page after page: its streams, the tenants it names, its text. */
const readLog = (as: { readonly token?: string }) =>
  Effect.gen(function* () {
    const events: Array<Json> = []
    let after = "start"
    for (;;) {
      const page = yield* call("GET", `/v1/events?after=${after}&limit=10000`, as)
      expect(page.status, page.text).toBe(200)
      events.push(...page.json.events)
      after = page.json.next
      if (page.json.caughtUp === true) break
    }
    return {
      streams: [...new Set(events.map((e) => String(e.streamId)))],
      tenants: [...new Set(events.map((e) => e.metadata?.tenant))],
      text: JSON.stringify(events)
    }
  })

let amount = 1_500
const saleBody = (serial: string, key: string) =>
  JSON.stringify({
    idempotencyKey: key,
    waitSeconds: 60,
    request: { operation: "sale", serial_number: serial, amount: String(amount++), currency: "EUR" }
  })

describe("each merchant's people see only their own", () => {
  layer(stack, { timeout: 180_000, excludeTestServices: true })((it) => {
    it.effect(
      "the live stream of a merchant's token carries its merchant's events only; an event naming no merchant is not sent; ?merchant= names one as the header does",
      () =>
        Effect.gen(function* () {
          const store = yield* EventStore.EventStore
          const port = Effect.map(HttpServer.HttpServer, (server) =>
            server.address._tag === "TcpAddress" ? server.address.port : 0
          )
          const url = `http://127.0.0.1:${yield* port}/v1/monitor/live`
          const probe = (stream: string, tenant: string | undefined) =>
            store.append(stream, EventStore.AnyVersion, [
              { type: "Probed", data: { n: 1 }, ...(tenant === undefined ? {} : { metadata: { tenant } }) }
            ])
          const run = Date.now()
          // Another merchant's and no merchant's first, then its own: what it was sent before
          // its own arrived is everything it would ever see of the others.
          const read = (bearer: string, until: string) =>
            readLive(
              url,
              bearer,
              async () => {
                await Effect.runPromise(probe(`probe-tea-${run}-${bearer.length}`, "tea-house"))
                await Effect.runPromise(probe(`probe-none-${run}-${bearer.length}`, undefined))
                await Effect.runPromise(probe(`probe-cafe-${run}-${bearer.length}`, "cafe-sol"))
              },
              until
            )
          const cafe = yield* read(cafeToken, `probe-cafe-${run}`)
          expect(cafe.status).toBe(200)
          expect(cafe.text).toContain(`"streamId":"probe-cafe-${run}-${cafeToken.length}"`)
          expect(cafe.text).not.toContain("probe-tea-")
          expect(cafe.text).not.toContain("probe-none-")
          // Whose an event is stays off the wire.
          expect(cafe.text).not.toContain("tenant")
          // The platform's token sees them all.
          const platform = yield* read(token, `probe-cafe-${run}-${token.length}`)
          expect(platform.text).toContain(`probe-tea-${run}`)
          expect(platform.text).toContain(`probe-none-${run}`)
          // Named in the query (what a browser's EventSource can send): the platform's token
          // gets that merchant's events only; a merchant's token naming another is refused.
          const named = yield* readLive(
            `${url}?merchant=cafe-sol`,
            token,
            async () => {
              await Effect.runPromise(probe(`probe-tea-${run}-named`, "tea-house"))
              await Effect.runPromise(probe(`probe-cafe-${run}-named`, "cafe-sol"))
            },
            `probe-cafe-${run}-named`
          )
          expect(named.status).toBe(200)
          expect(named.text).not.toContain(`probe-tea-${run}-named`)
          const other = yield* call("GET", "/v1/monitor/live?merchant=tea-house", { token: cafeToken })
          expect([other.status, other.json?._tag], other.text).toEqual([403, "Forbidden"])
        })
    )

    it.effect("a merchant's token and operator reach their own, and nothing of another merchant's", () =>
      Effect.gen(function* () {
        yield* merchant("cafe-sol", "SIM-CAFE", "CAFE-1")
        yield* merchant("tea-house", "SIM-TEA", "TEA-1")
        const cloud = yield* Stack.Cloud
        const own = cloud.terminals[0]
        if (own === undefined) return yield* Effect.dieMessage("no terminal")
        const run = Date.now()
        const asCafe = { token: cafeToken }
        const asTea = { token: teaToken }

        // Each merchant's backend sells on its own terminal, its merchant implied by its token.
        const cafeSale = yield* call("POST", "/v1/operations", {
          ...asCafe,
          body: saleBody("CAFE-1", `c-${run}`)
        })
        expect([cafeSale.status, cafeSale.json?.report?.verdict], cafeSale.text).toEqual([200, "approved"])
        const teaSale = yield* call("POST", "/v1/operations", {
          ...asTea,
          body: saleBody("TEA-1", `t-${run}`)
        })
        expect([teaSale.status, teaSale.json?.report?.verdict], teaSale.text).toEqual([200, "approved"])
        const ownSale = yield* call("POST", "/v1/operations", {
          body: saleBody(own.serialNumber, `o-${run}`)
        })
        expect([ownSale.status, ownSale.json?.report?.verdict], ownSale.text).toEqual([200, "approved"])
        const cafe = { id: String(cafeSale.json.executionId), guid: String(cafeSale.json.attributes.guid) }
        const tea = { id: String(teaSale.json.executionId), guid: String(teaSale.json.attributes.guid) }
        const ownId = String(ownSale.json.executionId)

        // Its own: found.
        expect((yield* call("GET", `/v1/executions/${cafe.id}`, asCafe)).status).toBe(200)
        expect((yield* call("GET", `/v1/executions/${cafe.id}/history`, asCafe)).status).toBe(200)
        const devices = yield* call("GET", "/v1/devices", asCafe)
        expect((devices.json as Json).map((d: Json) => d.serialNumber)).toEqual(["CAFE-1"])
        // The service's view (the console's shell reads it) is its own: its merchant's
        // terminals, none of the simulator's others (the platform sees them all).
        const service = yield* call("GET", "/v1/monitor/service", asCafe)
        expect([service.status, service.json], service.text).toEqual([
          200,
          { kind: "simulator", terminals: [{ serialNumber: "CAFE-1", terminalType: "ANDROID" }] }
        ])
        expect(service.text).not.toContain("TEA-1")
        expect(service.text).not.toContain(own.serialNumber)
        // A merchant whose device list cannot be read (no key yet): its view lists no
        // terminal, and still answers (its console opens, its executions stay readable).
        yield* (yield* MerchantRegistry.MerchantRegistry).register({
          id: "bare-shop",
          name: "bare",
          mcc: "5812"
        })
        expect((yield* call("GET", "/v1/devices", { token: bareToken })).status).not.toBe(200)
        const bare = yield* call("GET", "/v1/monitor/service", { token: bareToken })
        expect([bare.status, bare.json], bare.text).toEqual([200, { kind: "simulator", terminals: [] }])
        const platformService = yield* call("GET", "/v1/monitor/service")
        expect(platformService.json.terminals.map((t: Json) => t.serialNumber)).toContain(own.serialNumber)

        // Another merchant's, and the deployment's own: not found, by any route, id or guid.
        const refund = JSON.stringify({ action: "refund", amount: "1.00", currency: "EUR", reason: "test" })
        for (const [method, path, body] of [
          ["GET", `/v1/executions/${tea.id}`, undefined],
          ["GET", `/v1/executions/${ownId}`, undefined],
          ["GET", `/v1/executions/${tea.id}/history`, undefined],
          ["POST", `/v1/executions/${tea.id}/retry`, JSON.stringify({ reason: "again" })],
          ["POST", `/v1/transactions/${tea.guid}/actions`, refund],
          [
            "POST",
            `/v1/transactions/${tea.guid}/resolve`,
            JSON.stringify({
              requestId: "r-1",
              resolution: "applied",
              operator: "cafe-pos",
              reason: "checked"
            })
          ],
          [
            "POST",
            `/v1/attempts/terminal/${tea.id}/resolve`,
            JSON.stringify({
              requestId: tea.id,
              resolution: "notApplied",
              operator: "cafe-pos",
              reason: "checked"
            })
          ],
          [
            "POST",
            "/v1/lifecycle/TipAdjustment",
            JSON.stringify({
              payload: { originalGuid: tea.guid, tipAmount: { amount: "100", currency: "EUR" } }
            })
          ],
          ["POST", "/v1/terminals/CAFE-1/stop", JSON.stringify({ of: tea.id, reason: "wrong one" })]
        ] as const) {
          const reply = yield* call(method, path, { ...asCafe, ...(body === undefined ? {} : { body }) })
          expect([method, path, reply.status, reply.json?._tag], reply.text).toEqual([
            method,
            path,
            404,
            "NotFound"
          ])
          expect(reply.text).not.toContain("tea-house")
        }
        // A sale on another merchant's terminal: its device list does not name it.
        const crossed = yield* call("POST", "/v1/operations", {
          ...asCafe,
          body: saleBody("TEA-1", `x-${run}`)
        })
        expect([crossed.status, crossed.json?._tag]).toEqual([400, "InvalidRequest"])

        // What spans every merchant is the platform's.
        // Its lists and searches hold its merchant's executions only.
        const listed = yield* call("GET", "/v1/executions", asCafe)
        expect(listed.status, listed.text).toBe(200)
        expect((listed.json as Json).map((e: Json) => e.executionId)).toEqual([cafe.id])
        const searched = yield* call("GET", "/v1/monitor/executions", asCafe)
        expect(searched.status, searched.text).toBe(200)
        expect(searched.json.executions.map((e: Json) => e.executionId)).toEqual([cafe.id])
        expect(searched.json.total).toBe(1)
        const byGuid = yield* call("GET", `/v1/monitor/executions?q=${tea.guid}`, asCafe)
        expect(byGuid.json.executions).toEqual([])
        // Naming another merchant in the search is a contradiction, said as such.
        const theirs = yield* call("GET", "/v1/monitor/executions?merchant=tea-house", asCafe)
        expect([theirs.status, theirs.json.message]).toEqual([
          400,
          expect.stringContaining("acts for merchant cafe-sol")
        ])
        const ours = yield* call("GET", "/v1/monitor/executions?merchant=cafe-sol", asCafe)
        expect(ours.json.executions.map((e: Json) => e.executionId)).toEqual([cafe.id])
        // The platform names a merchant to see its executions only.
        const platformTea = yield* call("GET", "/v1/monitor/executions?merchant=tea-house")
        expect(platformTea.json.executions.map((e: Json) => e.executionId)).toEqual([tea.id])
        for (const path of ["/v1/audit/verify", "/v1/audit/rebuild", "/v1/merchants", "/metrics"]) {
          const reply = yield* call("GET", path, asCafe)
          expect([path, reply.status, reply.json?._tag]).toEqual([path, 403, "Forbidden"])
        }
        // Its operations' timelines, by id or guid: another merchant's, or the deployment's
        // own, is not found by any reference.
        const story = yield* call("GET", `/v1/audit/timeline/${cafe.id}`, asCafe)
        expect(story.status, story.text).toBe(200)
        expect(story.json.executionId).toBe(cafe.id)
        expect(story.json.lines.length).toBeGreaterThan(0)
        for (const reference of [tea.id, tea.guid, ownId]) {
          const hidden = yield* call("GET", `/v1/audit/timeline/${reference}`, asCafe)
          expect([reference, hidden.status, hidden.json?._tag]).toEqual([reference, 404, "NotFound"])
          expect(hidden.text).not.toContain("TEA-1")
        }
        expect((yield* call("GET", `/v1/audit/timeline/${tea.id}`)).status).toBe(200)
        // Its log and its ledger: answered, filtered on the server to its merchant's sales.
        const cafeEntries = yield* call("GET", "/v1/audit/entries", asCafe)
        expect(cafeEntries.status, cafeEntries.text).toBe(200)
        expect(cafeEntries.json.entries.map((e: Json) => [e.kind, e.terminal, e.streamId])).toEqual([
          ["sale", "CAFE-1", `payment-${cafe.id}`]
        ])
        const cafeLedger = yield* call("GET", "/v1/audit/ledger", asCafe)
        expect(cafeLedger.status, cafeLedger.text).toBe(200)
        expect(cafeLedger.json.entries).toBe(1)
        expect(cafeLedger.json.rows.map((r: Json) => [r.terminal, r.tallies.sale.count])).toEqual([
          ["CAFE-1", 1]
        ])
        for (const reply of [cafeEntries, cafeLedger]) {
          expect(reply.text).not.toContain("TEA-1")
          expect(reply.text).not.toContain(tea.id)
          expect(reply.text).not.toContain(own.serialNumber)
          expect(reply.text).not.toContain(ownId)
        }
        // The live snapshot cannot tell whose its rows are: a merchant's ledger is replayed.
        const cafeLive = yield* call("GET", "/v1/audit/ledger?source=live", asCafe)
        expect([cafeLive.status, cafeLive.json?._tag]).toEqual([400, "InvalidRequest"])
        const cafeLog = yield* readLog(asCafe)
        expect(cafeLog.streams).toContain(`payment-${cafe.id}`)
        expect(cafeLog.tenants).toEqual(["cafe-sol"])
        expect(cafeLog.text).not.toContain(tea.id)
        expect(cafeLog.text).not.toContain(ownId)
        // The platform's token still reads everyone's.
        const allEntries = yield* call("GET", "/v1/audit/entries")
        const terminals = allEntries.json.entries.map((e: Json) => e.terminal)
        expect(terminals).toEqual(expect.arrayContaining(["CAFE-1", "TEA-1", own.serialNumber]))
        const allLedger = yield* call("GET", "/v1/audit/ledger")
        expect(allLedger.json.rows.map((r: Json) => r.terminal)).toEqual(
          expect.arrayContaining(["CAFE-1", "TEA-1", own.serialNumber])
        )
        const allLog = yield* readLog({})
        expect(allLog.streams).toEqual(
          expect.arrayContaining([`payment-${cafe.id}`, `payment-${tea.id}`, `payment-${ownId}`])
        )

        // Naming another merchant is refused.
        const named = yield* call("GET", "/v1/devices", {
          ...asCafe,
          headers: { "tillflow-merchant": "tea-house" }
        })
        expect([named.status, named.json?.message]).toEqual([
          403,
          "token cafe-pos acts for cafe-sol only, not for merchant tea-house"
        ])

        // A merchant's console operator: the same.
        const cookie = yield* login("carla")
        expect((yield* send("GET", `/v1/executions/${cafe.id}`, { cookie })).status).toBe(200)
        expect((yield* send("GET", `/v1/executions/${tea.id}`, { cookie })).status).toBe(404)
        expect(
          (yield* send("POST", `/v1/transactions/${tea.guid}/actions`, { cookie, body: JSON.parse(refund) }))
            .status
        ).toBe(404)
        const carlaList = yield* send("GET", "/v1/executions", { cookie })
        expect((carlaList.json as Json).map((e: Json) => e.executionId)).toEqual([cafe.id])
        // Her ledger is her merchant's, as its token's is.
        const carlaEntries = yield* send("GET", "/v1/audit/entries", { cookie })
        expect(carlaEntries.status, carlaEntries.text).toBe(200)
        expect(carlaEntries.json.entries.map((e: Json) => e.terminal)).toEqual(["CAFE-1"])
        const carlaLedger = yield* send("GET", "/v1/audit/ledger", { cookie })
        expect(carlaLedger.json.rows.map((r: Json) => r.terminal)).toEqual(["CAFE-1"])
        const carlaLog = yield* send("GET", "/v1/events?limit=10000", { cookie })
        expect(carlaLog.status, carlaLog.text).toBe(200)
        expect(carlaLog.json.events.map((e: Json) => e.metadata.tenant)).not.toContain(undefined)
        expect(carlaLog.text).not.toContain(tea.id)
        expect((yield* send("GET", "/v1/audit/verify", { cookie })).status).toBe(403)
        // The console's shell knows whom she acts for.
        const carlaSession = yield* send("GET", "/console/session", { cookie })
        expect(carlaSession.json).toEqual({
          name: "carla",
          role: "operator",
          via: "operator",
          merchants: ["cafe-sol"]
        })
        // Its service view, its terminals' monitor and its alerts are carla's merchant's.
        const carlaService = yield* send("GET", "/v1/monitor/service", { cookie })
        expect([carlaService.status, carlaService.json]).toEqual([
          200,
          { kind: "simulator", terminals: [{ serialNumber: "CAFE-1", terminalType: "ANDROID" }] }
        ])
        const carlaTerminals = yield* send("GET", "/v1/monitor/terminals", { cookie })
        expect([carlaTerminals.status, carlaTerminals.json.map((t: Json) => t.serialNumber)]).toEqual([
          200,
          ["CAFE-1"]
        ])
        const carlaAlerts = yield* send("GET", "/v1/monitor/alerts?state=all", { cookie })
        expect([carlaAlerts.status, carlaAlerts.json.alerts]).toEqual([200, []])

        // The platform's token sees every merchant's.
        expect((yield* call("GET", `/v1/executions/${tea.id}`)).status).toBe(200)
        expect((yield* call("GET", `/v1/executions/${cafe.id}`)).status).toBe(200)
        // A wrong token is still a wrong token.
        expect((yield* call("GET", "/v1/devices", { token: "not-a-token-of-anyone-0000" })).status).toBe(401)
      })
    )
  })
})
