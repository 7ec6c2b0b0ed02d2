/**
 * The contract round trip: a server built from `RemoteApi` (as the simulator builds it)
 * and a client derived from it (as the HTTP adapter derives it) agree on bodies,
 * statuses, the API key header and the typed errors — over a web handler, no sockets.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { EftTimestamp, Identifiers, Money, RemoteApi, RemoteError, TransactionRequest } from "@tillflow/core"

const serial = Identifiers.SerialNumber.make("0821032398")
const terminalType = Identifiers.TerminalType.make("PAXA920")
const reference = "6f1d1c2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f" as Identifiers.TransactionReference

const notHere = () => Effect.die("not used by this test")

const AuthLive = Layer.succeed(RemoteApi.ApiKeyAuth, {
  apiKey: (key) =>
    Redacted.value(key) === "good-key"
      ? Effect.succeed(key)
      : Effect.fail(new RemoteError.Forbidden({ message: "bad key", status: 403, body: "" }))
})

const TerminalLive = HttpApiBuilder.group(RemoteApi.RemoteApi, "terminal", (handlers) =>
  handlers
    .handle("listDevices", notHere)
    .handle("listDevicesLegacy", notHere)
    .handle("sendTransaction", ({ payload }) =>
      payload.serialNumber === "busy"
        ? Effect.fail(new RemoteError.DeviceBusy({ message: "terminal busy", body: "" }))
        : Effect.succeed({
            transactionResultId: Identifiers.TransactionResultId.make(
              `${payload.serialNumber}-1628774190395`
            ),
            statusMessage: `${payload.operation} ${"amount" in payload && payload.amount !== undefined ? Money.toMinorUnitsString(payload.amount) : ""}`,
            ...("transactionReference" in payload
              ? { transactionReference: payload.transactionReference }
              : {})
          })
    )
    .handle("transactionResult", ({ path }) =>
      path.transactionResultId === "pending"
        ? Effect.succeed(undefined)
        : path.transactionResultId === "missing"
          ? Effect.fail(new RemoteError.NotFound({ message: "unknown id", body: "" }))
          : Effect.succeed({
              finStatus: "AUTHORISED" as const,
              totalAmount: 1000n,
              efttimestamp: EftTimestamp.fromEpochMillis(1615374961000)
            })
    )
    .handle("setUnattendedMode", notHere)
    .handle("setLocale", notHere)
    .handle("setPasswordProtected", notHere)
    .handle("reboot", notHere)
    .handle("setScreenBrightness", () => Effect.void)
    .handle("setRebootTime", notHere)
    .handle("tipAdjustment", notHere)
    .handle("deferredToken", notHere)
    .handle("reversal", notHere)
    .handle("preAuthorizationIncrease", notHere)
    .handle("preAuthorizationCapture", notHere)
    .handle("motoSale", ({ payload }) => Effect.succeed({ amount: Money.toMajorUnitsString(payload.amount) }))
    .handle("motoRefund", notHere)
    .handle("motoReversal", notHere)
    .handle("batchClose", notHere)
    .handle("batchSummary", notHere)
    .handle("batchDetail", notHere)
)

const StatusLive = HttpApiBuilder.group(RemoteApi.RemoteApi, "status", (handlers) =>
  handlers
    .handle("transactionStatus", () =>
      Effect.fail(new RemoteError.NotFound({ message: "unknown reference", body: "" }))
    )
    .handle("transactionStatusAt", ({ path }) =>
      Effect.succeed(
        path.selector === "all"
          ? [{ finStatus: "IN_PROGRESS" as const }]
          : { finStatus: "AUTHORISED" as const }
      )
    )
)

const ServerLive = HttpApiBuilder.api(RemoteApi.RemoteApi).pipe(
  Layer.provide([TerminalLive, StatusLive]),
  Layer.provide(AuthLive),
  Layer.merge(HttpServer.layerContext)
)

const makeClient = (key: string) =>
  Effect.gen(function* () {
    const { handler, dispose } = HttpApiBuilder.toWebHandler(ServerLive)
    yield* Effect.addFinalizer(() => Effect.promise(dispose))
    const fetch: typeof globalThis.fetch = (input, init) => handler(new Request(input, init))
    return yield* HttpApiClient.make(RemoteApi.RemoteApi, {
      baseUrl: "http://contract.test",
      // Header names are case-insensitive: the public samples' odd casing must work.
      transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("ApiKeyCLoud", key))
    }).pipe(Effect.provide(FetchHttpClient.layer), Effect.provideService(FetchHttpClient.Fetch, fetch))
  })

const sale = (serialNumber: string): TransactionRequest.Sale => ({
  operation: "sale",
  serialNumber: Identifiers.SerialNumber.make(serialNumber),
  terminalType,
  amount: Money.make(1050n, "EUR"),
  transactionReference: reference
})

describe("RemoteApi contract", () => {
  it.scoped("a sale travels as flat wire JSON and comes back as a typed 202 body", () =>
    Effect.gen(function* () {
      const client = yield* makeClient("good-key")
      const accepted = yield* client.terminal.sendTransaction({ payload: sale(serial) })
      expect(accepted.transactionResultId).toBe("0821032398-1628774190395")
      expect(accepted.statusMessage).toBe("sale 1050")
      expect(accepted.transactionReference).toBe(reference)
    })
  )

  it.scoped("a 400 with error 1001 reaches the client as DeviceBusy with the wire body kept", () =>
    Effect.gen(function* () {
      const client = yield* makeClient("good-key")
      const error = yield* Effect.flip(client.terminal.sendTransaction({ payload: sale("busy") }))
      expect(error._tag).toBe("DeviceBusy")
      if (error._tag !== "DeviceBusy") return
      expect(JSON.parse(error.body)).toEqual({
        error: {
          statusCode: 400,
          name: "BadRequestError",
          message: { error: 1001, message: "terminal busy" }
        }
      })
    })
  )

  it.scoped("a wrong API key is a 403 Forbidden", () =>
    Effect.gen(function* () {
      const client = yield* makeClient("wrong-key")
      const error = yield* Effect.flip(client.terminal.sendTransaction({ payload: sale(serial) }))
      expect(error._tag).toBe("Forbidden")
    })
  )

  it.scoped("transaction-result answers 204 as void, 200 as a result, 404 as NotFound", () =>
    Effect.gen(function* () {
      const client = yield* makeClient("good-key")
      const id = (s: string) => ({ path: { transactionResultId: Identifiers.TransactionResultId.make(s) } })
      expect(yield* client.terminal.transactionResult(id("pending"))).toBeUndefined()
      const ready = yield* client.terminal.transactionResult(id("0821032398-1"))
      expect(ready).toMatchObject({ finStatus: "AUTHORISED", totalAmount: 1000n })
      const missing = yield* Effect.flip(client.terminal.transactionResult(id("missing")))
      expect(missing._tag).toBe("NotFound")
    })
  )

  it.scoped("the status host answers a list for selector all and NotFound for an unknown reference", () =>
    Effect.gen(function* () {
      const client = yield* makeClient("good-key")
      const all = yield* client.status.transactionStatusAt({
        path: { transactionReference: reference, selector: "all" }
      })
      expect(all).toEqual([{ finStatus: "IN_PROGRESS" }])
      const error = yield* Effect.flip(
        client.status.transactionStatus({ path: { transactionReference: reference } })
      )
      expect(error._tag).toBe("NotFound")
    })
  )

  it.scoped("a device command answers 202 with no body", () =>
    Effect.gen(function* () {
      const client = yield* makeClient("good-key")
      const result = yield* client.terminal.setScreenBrightness({
        path: { deviceType: terminalType, serialNumber: serial },
        payload: { minimumBrightnessLevel: 10, maximumBrightnessLevel: 90 }
      })
      expect(result).toBeUndefined()
    })
  )

  it.scoped("a MOTO sale amount is sent in major units", () =>
    Effect.gen(function* () {
      const client = yield* makeClient("good-key")
      const response = yield* client.terminal.motoSale({
        payload: { cardToken: Identifiers.CardToken.make("tok"), amount: Money.make(1050n, "EUR") }
      })
      expect(response.amount).toBe("10.50")
    })
  )
})
