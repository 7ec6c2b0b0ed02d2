/**
 * A merchant's own people resolve its requests in doubt outside a transaction (issue 32): a
 * batch close, a MOTO sale attempt and a device command left in doubt by an execution of the
 * merchant (its events name it as their tenant, as the lifecycles stamp them) are resolved
 * with the merchant's bearer token, through `POST /v1/attempts/{kind}/{key}/resolve`;
 * another merchant's request — or the deployment's own — is 404 to it, nothing recorded,
 * while the platform's token resolves any. The resolution is the merchant's: its ledger
 * (the MOTO sale resolved as applied) and its log read it.
 */
import { expect, layer } from "@effect/vitest"
import { LifecycleEvent, Money } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { attemptInDoubt, call, configuredTokens, layerWith } from "./support.js"

const cafeToken = "cafe-pos-token-8e2a4f1c9b7d3e60"

const tokens = await configuredTokens([{ name: "cafe-pos", token: cafeToken, merchants: ["cafe-sol"] }])

/** A request in doubt on an attempt's stream, written as an execution of `tenant` writes it. */
const inDoubt = (
  tenant: string | undefined,
  streamId: string,
  requested: LifecycleEvent.Event,
  operation: LifecycleEvent.Operation
) => attemptInDoubt(streamId, requested, operation, tenant)
const closeInDoubt = (tenant: string | undefined, serial: string, requestId: string) =>
  Effect.flatMap(DateTime.now, (at) =>
    inDoubt(
      tenant,
      LifecycleEvent.batchStream(serial),
      LifecycleEvent.BatchCloseRequested.make({ requestId, at, batchNumber: "7" }),
      "batchClose"
    )
  )

const resolve = (kind: string, key: string, body: Record<string, unknown>, token?: string) =>
  call("POST", `/v1/attempts/${kind}/${key}/resolve`, {
    body: JSON.stringify({
      resolution: "notApplied",
      operator: "cafe-pos",
      reason: "no close on the report",
      ...body
    }),
    ...(token === undefined ? {} : { token })
  })

const tenantsOf = (streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(store.readStream(streamId), (events) =>
      events.map((e) => [e.type, Tenant.ofMetadata(e.metadata)])
    )
  )

layer(layerWith({ tokens }), { timeout: 60_000 })("a merchant resolves its own requests in doubt", (it) => {
  it.effect(
    "its batch close, device command and MOTO sale; another merchant's, or the deployment's own, is 404",
    () =>
      Effect.gen(function* () {
        yield* closeInDoubt("cafe-sol", "CAFE-1", "close-cafe")
        yield* closeInDoubt("tea-house", "TEA-1", "close-tea")
        yield* closeInDoubt(undefined, "OWN-1", "close-own")

        // Another merchant's request, and the deployment's own: not found, nothing recorded.
        for (const [serial, requestId] of [
          ["TEA-1", "close-tea"],
          ["OWN-1", "close-own"],
          ["CAFE-1", "close-tea"]
        ] as const) {
          const refused = yield* resolve("batch", serial, { requestId }, cafeToken)
          expect([refused.status, refused.json.message]).toEqual([
            404,
            `no request ${requestId} of merchant cafe-sol on batch-${serial}`
          ])
        }
        expect((yield* tenantsOf("batch-TEA-1")).map(([type]) => type)).toEqual([
          "BatchCloseRequested",
          "OperationInDoubt"
        ])

        // Its own: resolved in its operator's name, the resolution its own.
        const own = yield* resolve("batch", "CAFE-1", { requestId: "close-cafe" }, cafeToken)
        expect([own.status, own.json]).toMatchObject([
          200,
          { streamId: "batch-CAFE-1", requestId: "close-cafe", resolution: "notApplied" }
        ])
        expect(yield* tenantsOf("batch-CAFE-1")).toEqual([
          ["BatchCloseRequested", "cafe-sol"],
          ["OperationInDoubt", "cafe-sol"],
          ["InDoubtResolved", "cafe-sol"]
        ])

        // A device command of its own.
        const at = yield* DateTime.now
        yield* inDoubt(
          "cafe-sol",
          LifecycleEvent.deviceStream("CAFE-1"),
          LifecycleEvent.DeviceCommandRequested.make({
            requestId: "reboot-1",
            at,
            command: "reboot",
            body: {}
          }),
          "deviceCommand"
        )
        const device = yield* resolve("device", "CAFE-1", { requestId: "reboot-1" }, cafeToken)
        expect(device.status).toBe(200)

        // The platform's token resolves another merchant's, in that merchant's name.
        const platform = yield* resolve("batch", "TEA-1", { requestId: "close-tea", operator: "ana" })
        expect(platform.status).toBe(200)
        expect((yield* tenantsOf("batch-TEA-1")).at(-1)).toEqual(["InDoubtResolved", "tea-house"])
      })
  )

  it.effect("its MOTO sale resolved as applied is booked in its own ledger, read with its token", () =>
    Effect.gen(function* () {
      const reference = "4d6e2f1a-9b3c-4e8d-a7f5-0c1b2d3e4f5a"
      const at = yield* DateTime.now
      yield* inDoubt(
        "cafe-sol",
        LifecycleEvent.motoSaleStream(reference),
        LifecycleEvent.MotoSaleRequested.make({
          requestId: "moto-1",
          at,
          transactionReference: reference,
          amount: Money.make(3150n, "EUR"),
          cardToken: "tok_cafe",
          serialNumber: "CAFE-V"
        }),
        "motoSale"
      )
      const resolved = yield* resolve(
        "moto-sale",
        reference,
        {
          requestId: "moto-1",
          resolution: "applied",
          guid: "moto-cafe-found",
          reason: "the acquirer's report"
        },
        cafeToken
      )
      expect([resolved.status, resolved.json]).toMatchObject([200, { guid: "moto-cafe-found" }])
      const entries = yield* call("GET", "/v1/audit/entries", { token: cafeToken })
      expect(entries.status).toBe(200)
      expect(entries.json.entries.map((e: { kind: string; amount: string }) => [e.kind, e.amount])).toEqual([
        ["sale", "31.50"]
      ])
    })
  )
})
