/**
 * The HTTP `TerminalCloud` calls the service with the keys of the merchant it acts for
 * (`MerchantKeys.forMerchant`), against the simulator holding two merchants: each sees its
 * own terminals; a key the service refuses (revoked) is reported and the call made again
 * with the merchant's next key, once — the sale is charged once; a merchant without a key
 * is refused before anything is sent.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  Identifiers,
  MerchantKeys,
  Money,
  TerminalCloud,
  type TransactionRequest,
  type TransactionResult
} from "@tillflow/core"
import { HttpTerminalCloud, TerminalCloudConfig } from "@tillflow/http"
import { SimulatorServer } from "@tillflow/simulator"
import { adminClient, instantTimings } from "@tillflow/simulator/testing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

interface Refusal {
  readonly merchant: string | undefined
  readonly keyId: string
  readonly endpoint: string
}

const setUp = Effect.gen(function* () {
  const context = yield* Layer.build(
    SimulatorServer.layer({ seed: 7, statusPort: 0, timings: instantTimings })
  ).pipe(Effect.orDie)
  const info = Context.get(context, SimulatorServer.SimulatorInfo)
  const admin = adminClient(info.adminUrl)
  // A second merchant with a terminal of its own and two keys.
  const second = (yield* admin("POST", "/merchants", { id: "SIM-CAFE", name: "Café Sol", mcc: "5812" })) as {
    readonly merchantId: string
    readonly apiKey: string
  }
  const spare = (yield* admin("POST", `/merchants/${second.merchantId}/keys`, {})) as { readonly key: string }
  const terminal = (yield* admin("POST", `/merchants/${second.merchantId}/terminals`, {
    serial_number: "CAFE-1",
    terminal_type: "ANDROID"
  })) as { readonly serial_number: string }
  const keys: Record<string, ReadonlyArray<MerchantKeys.CallKey>> = {
    "cafe-sol": [
      { keyId: "key-old", key: Redacted.make(second.apiKey) },
      { keyId: "key-new", key: Redacted.make(spare.key) }
    ],
    "no-keys": []
  }
  const refusals: Array<Refusal> = []
  const service: MerchantKeys.Service = {
    keysFor: (merchant) =>
      Effect.succeed(
        merchant === undefined
          ? [{ keyId: "configured", key: Redacted.make(info.apiKey) }]
          : (keys[merchant] ?? [])
      ),
    refused: (refusal) => Effect.sync(() => void refusals.push(refusal))
  }
  const cloudContext = yield* Layer.build(
    HttpTerminalCloud.layer(
      TerminalCloudConfig.make({
        apiKey: Redacted.make("not-used-when-merchant-keys-are-given"),
        baseUrl: new URL(info.baseUrl),
        transactionsUrl: new URL(info.transactionsUrl)
      })
    ).pipe(Layer.provide(Layer.succeed(MerchantKeys.MerchantKeys, service)))
  )
  const cloud = Context.get(cloudContext, TerminalCloud.TerminalCloud)
  return { info, admin, cloud, refusals, second, terminal, oldKey: second.apiKey }
})

const saleOn = (serial: string) =>
  Effect.map(Identifiers.makeTransactionReference, (transactionReference): TransactionRequest.Sale => ({
    operation: "sale",
    serialNumber: Identifiers.SerialNumber.make(serial),
    terminalType: Identifiers.TerminalType.make("ANDROID"),
    amount: Money.make(1250n, "EUR"),
    transactionReference
  }))

describe("HttpTerminalCloud with the merchants' keys", () => {
  it.scopedLive("each merchant lists its own terminals, with its own key", () =>
    Effect.gen(function* () {
      const { cloud, info, terminal } = yield* setUp
      const own = yield* cloud.listDevices
      expect(own.map((d) => d.serialNumber).sort()).toEqual(info.terminals.map((t) => t.serial_number).sort())
      const cafe = yield* cloud.listDevices.pipe(MerchantKeys.forMerchant("cafe-sol"))
      expect(cafe.map((d) => d.serialNumber)).toEqual([terminal.serial_number])
    })
  )

  it.scopedLive(
    "a revoked key is reported and the call made with the next key: the sale is charged once",
    () =>
      Effect.gen(function* () {
        const { admin, cloud, refusals, oldKey, terminal } = yield* setUp
        yield* admin("DELETE", `/keys/${encodeURIComponent(oldKey)}`)
        const request = yield* saleOn(terminal.serial_number)
        const accepted = yield* cloud.sendTransaction(request).pipe(MerchantKeys.forMerchant("cafe-sol"))
        expect(accepted).toBeDefined()
        expect(refusals).toEqual([{ merchant: "cafe-sol", keyId: "key-old", endpoint: expect.any(String) }])
        yield* admin("POST", "/settle", { timeoutMs: 10_000 })
        const status = (yield* cloud
          .transactionStatus(request.transactionReference)
          .pipe(MerchantKeys.forMerchant("cafe-sol"))) as ReadonlyArray<TransactionResult.TransactionResult>
        expect(status).toHaveLength(1)
        const counters = (yield* admin("GET", "/counters")) as {
          readonly terminals: Record<string, { readonly accepted: number }>
        }
        expect(counters.terminals[terminal.serial_number]?.accepted).toBe(1)
      })
  )

  it.scopedLive("a merchant without a key that may be used is refused before anything is sent", () =>
    Effect.gen(function* () {
      const { admin, cloud, refusals, terminal } = yield* setUp
      const refused = yield* Effect.flip(
        cloud.sendTransaction(yield* saleOn(terminal.serial_number)).pipe(MerchantKeys.forMerchant("no-keys"))
      )
      expect(refused._tag).toBe("Forbidden")
      expect(refused.message).toContain("no API key")
      expect(refusals).toEqual([])
      const counters = (yield* admin("GET", "/counters")) as {
        readonly terminals: Record<string, { readonly accepted: number }>
      }
      expect(counters.terminals[terminal.serial_number]?.accepted ?? 0).toBe(0)
    })
  )
})
