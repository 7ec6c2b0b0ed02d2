/**
 * A merchant's own people watch and act on their own alerts and terminals (issue 32), on
 * the intake with two merchants besides the deployment's own (no engine worker: what is
 * started stays unfinished). A merchant's bearer token lists the alerts of its merchant's
 * executions only — not another merchant's, not the deployment's own, not a key the
 * service refused (the registry's, the platform's) — and acknowledges and resolves them in
 * its own name; another merchant's alert id is 404 to it, nothing stored, the alert left
 * open. Its terminals' monitor holds its device list's terminals and only its merchant's
 * operations on them, even on a terminal another merchant's list names too. The platform's
 * token sees every alert, and the alerts' gauges count every merchant's, even when a scrape
 * names a merchant.
 */
import { describe, expect, layer } from "@effect/vitest"
import { MerchantKeys, MerchantRegistry } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import { Monitor, Stack } from "@tillflow/intake"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { call, configuredTokens, layerWith, mismatchNoted, simulatedMerchant } from "./support.js"

const kek = `kek-test:${Buffer.alloc(32, 7).toString("base64")}`
const cafeToken = "cafe-pos-token-3a9e7c1d5b2f4e80"

const tokens = await configuredTokens([{ name: "cafe-pos", token: cafeToken, merchants: ["cafe-sol"] }])

const stack = layerWith({ tokens }).pipe(
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

const asCafe = { token: cafeToken }

/** cafe-sol (terminal CAFE-1) and tea-house (TEA-1), registered once for the file: cafe-sol's key at the simulator. */
let cafeKey: string | undefined
const merchants = Effect.gen(function* () {
  if (cafeKey !== undefined) return cafeKey
  const key = yield* simulatedMerchant("cafe-sol", "SIM-CAFE", "CAFE-1")
  yield* simulatedMerchant("tea-house", "SIM-TEA", "TEA-1")
  cafeKey = key
  return key
})

let sales = 0
/** A sale started (left unfinished: no engine worker) on `serial` by `as`: its execution id. */
const started = (
  serial: string,
  as: { readonly token?: string; readonly headers?: Record<string, string> }
) =>
  Effect.gen(function* () {
    const reply = yield* call("POST", "/v1/operations", {
      ...as,
      body: JSON.stringify({
        idempotencyKey: `monitor-${Date.now()}-${sales++}`,
        request: { operation: "sale", serial_number: serial, amount: "1000", currency: "EUR" }
      })
    })
    expect(reply.status, reply.text).toBeLessThan(300)
    return String(reply.json.executionId)
  })

const alertsOf = (as: { readonly token?: string }, query = "") =>
  Effect.map(call("GET", `/v1/monitor/alerts${query}`, as), (reply) => {
    expect(reply.status, reply.text).toBe(200)
    return reply.json.alerts as ReadonlyArray<Json>
  })

/** Polls the platform's list until every one of `ids` is raised (the log follower runs in its own fiber). */
const raised = (ids: ReadonlyArray<string>) =>
  alertsOf({}, "?state=all").pipe(
    Effect.filterOrFail(
      (alerts) => ids.every((id) => alerts.some((a) => a.id === id)),
      () => "not yet"
    ),
    Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100))))
  )

const step = (alertId: string, action: "acknowledge" | "resolve", as: { readonly token?: string }) =>
  call("POST", `/v1/monitor/alerts/${alertId}/${action}`, {
    ...as,
    body: JSON.stringify({ reason: `${action} by a test` })
  })

describe("a merchant's people watch their own alerts and terminals", () => {
  layer(stack, { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect(
      "a merchant's token lists its merchant's alerts only and steps them in its name; another merchant's alert id is 404, nothing stored; the platform's token and the gauges see all",
      () =>
        Effect.gen(function* () {
          yield* merchants
          const store = yield* EventStore.EventStore
          const [own = ""] = (yield* Stack.Cloud).terminals.map((t) => t.serialNumber)
          const cafe = yield* started("CAFE-1", asCafe)
          const tea = yield* started("TEA-1", { headers: { "tillflow-merchant": "tea-house" } })
          const ownId = yield* started(own, {})
          const cafeAlert = yield* mismatchNoted(cafe)
          const teaAlert = yield* mismatchNoted(tea)
          const ownAlert = yield* mismatchNoted(ownId)
          // A key of cafe-sol's the service refused, on a call of its execution: the
          // registry's, the platform's to act on.
          const refused = yield* MerchantKeys.events.encode(
            MerchantKeys.MerchantKeyRefused.make({
              merchant: "cafe-sol",
              keyId: "key-cafe-1",
              endpoint: "transactions",
              executionId: cafe,
              at: Date.now()
            })
          )
          const { nextVersion } = yield* store.append(
            MerchantKeys.streamOf("cafe-sol"),
            EventStore.AnyVersion,
            [refused]
          )
          const keyAlert = `key-refused.key-cafe-1.${nextVersion}`

          // The platform's token sees every one.
          yield* raised([cafeAlert, teaAlert, ownAlert, keyAlert])
          // The gauges count every merchant's, whichever merchant a scrape names.
          const scraped = yield* call("GET", "/metrics", { headers: { "tillflow-merchant": "cafe-sol" } })
          expect(scraped.text.split("\n")).toEqual(
            expect.arrayContaining([
              'tillflow_alerts_open{kind="mismatch",state="open"} 3',
              'tillflow_alerts_open{kind="key-refused",state="open"} 1'
            ])
          )

          // cafe-sol's token: its merchant's alert only.
          const cafeList = yield* alertsOf(asCafe, "?state=all")
          expect(cafeList.map((a) => [a.id, a.executionId, a.state])).toEqual([[cafeAlert, cafe, "open"]])
          expect(JSON.stringify(cafeList)).not.toContain(tea)

          // Another merchant's alert, the deployment's own, the platform's: not found, nothing stored.
          for (const alertId of [teaAlert, ownAlert, keyAlert]) {
            for (const action of ["acknowledge", "resolve"] as const) {
              const reply = yield* step(alertId, action, asCafe)
              expect([alertId, action, reply.status, reply.json?._tag, reply.json?.message]).toEqual([
                alertId,
                action,
                404,
                "NotFound",
                `no alert ${alertId} of merchant cafe-sol is raised now (GET /v1/monitor/alerts?state=all lists its merchant's)`
              ])
            }
            expect(yield* store.readStream(Monitor.alertStreamOf(alertId))).toEqual([])
          }
          const platformList = yield* alertsOf({}, "?state=all")
          expect(platformList.find((a) => a.id === teaAlert)?.state).toBe("open")

          // Its own: acknowledged, then resolved, in its token's name; the steps name its
          // merchant as their tenant (its log and live feed carry them).
          const acknowledged = yield* step(cafeAlert, "acknowledge", asCafe)
          expect([acknowledged.status, acknowledged.json], acknowledged.text).toMatchObject([
            200,
            { id: cafeAlert, state: "acknowledged", acknowledged: { operator: "cafe-pos" } }
          ])
          const resolved = yield* step(cafeAlert, "resolve", asCafe)
          expect([resolved.status, resolved.json], resolved.text).toMatchObject([
            200,
            { id: cafeAlert, state: "resolved", resolved: { operator: "cafe-pos" } }
          ])
          const steps = yield* store.readStream(Monitor.alertStreamOf(cafeAlert))
          expect(steps.map((e) => [e.type, e.data, e.metadata["tenant"]])).toEqual([
            ["AlertAcknowledged", expect.objectContaining({ operator: "cafe-pos" }), "cafe-sol"],
            ["AlertResolved", expect.objectContaining({ operator: "cafe-pos" }), "cafe-sol"]
          ])
          expect(yield* alertsOf(asCafe)).toEqual([])

          // The platform's token acts on any merchant's.
          const platformStep = yield* step(teaAlert, "acknowledge", {})
          expect([platformStep.status, platformStep.json?.state]).toEqual([200, "acknowledged"])
          expect((yield* alertsOf({})).map((a) => a.id)).toEqual(
            expect.arrayContaining([teaAlert, ownAlert, keyAlert])
          )
        })
    )

    it.effect(
      "a merchant's token watches its device list's terminals and only its merchant's operations on them",
      () =>
        Effect.gen(function* () {
          const key = yield* merchants
          // Another merchant of the registry with the same account at the service: its device
          // list names CAFE-1 too, and its sale there is the older one.
          const registry = yield* MerchantRegistry.MerchantRegistry
          yield* registry.register({ id: "cafe-annex", name: "cafe-annex", mcc: "5812" })
          yield* registry.addKey("cafe-annex", "merchant", Redacted.make(key))
          const annex = yield* started("CAFE-1", { headers: { "tillflow-merchant": "cafe-annex" } })
          const cafe = yield* started("CAFE-1", asCafe)
          yield* started("TEA-1", { headers: { "tillflow-merchant": "tea-house" } })

          const reply = yield* call("GET", "/v1/monitor/terminals", asCafe)
          expect(reply.status, reply.text).toBe(200)
          const terminals = reply.json as ReadonlyArray<Json>
          expect(terminals.map((t) => t.serialNumber)).toEqual(["CAFE-1"])
          // Its oldest unfinished operation there runs (this file's other sales of its are
          // unfinished too), the rest queued: none of the annex's, though the annex's is older.
          const mine = yield* call(
            "GET",
            "/v1/monitor/executions?serialNumber=CAFE-1&outcome=in-progress",
            asCafe
          )
          const ids = (mine.json.executions as ReadonlyArray<Json>).map((e) => String(e.executionId))
          expect(ids).toContain(cafe)
          expect(ids).not.toContain(annex)
          expect(terminals.map((t) => [t.state, t.running?.executionId, t.queued])).toEqual([
            ["busy", ids.at(-1), ids.length - 1]
          ])
          expect(reply.text).not.toContain(annex)
          expect(reply.text).not.toContain("TEA-1")

          // The annex sees its own sale on the terminal they share (the platform naming it).
          const annexView = yield* call("GET", "/v1/monitor/terminals", {
            headers: { "tillflow-merchant": "cafe-annex" }
          })
          expect((annexView.json as ReadonlyArray<Json>).map((t) => t.running?.executionId)).toEqual([annex])
        })
    )
  })
})
