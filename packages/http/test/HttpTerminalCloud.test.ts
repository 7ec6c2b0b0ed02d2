/**
 * Contract tests of the HTTP `TerminalCloud` over real HTTP on loopback, against a
 * scripted server of `RemoteApi` (two hosts): every method, each error status with the
 * bodies the spec shows, the 204 path, undeclared statuses, a response dropped after
 * the request was read, silence until the deadline, and where retries happen.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  DeviceCommand,
  Identifiers,
  RemoteError,
  TerminalCloud,
  TransactionRequest,
  type TransactionResult
} from "@tillflow/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as F from "./Fixtures.js"
import * as Server from "./ScriptedServer.js"

const setup = (options: Parameters<typeof F.client>[1] = {}) =>
  Effect.gen(function* () {
    const script = yield* Server.makeScript(F.API_KEY)
    const hosts = yield* Server.start(script)
    const cloud = yield* F.client(hosts, options)
    return { script, cloud, hosts }
  })

const json = (received: Server.Received): unknown => JSON.parse(received.body)

const expectOutcomeUnknown = (error: RemoteError.RemoteError): RemoteError.OutcomeUnknown => {
  expect(error._tag).toBe("OutcomeUnknown")
  if (error._tag !== "OutcomeUnknown") throw new Error("unreachable")
  return error
}

describe("HttpTerminalCloud over real HTTP", () => {
  describe("listDevices", () => {
    it.scopedLive(
      "reads the device list from {base_url} with the ApiKeyCloud header; ssk stays Redacted",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer("listDevices", Server.respond(200, F.devicesBody))
          const devices = yield* cloud.listDevices
          expect(devices).toHaveLength(1)
          expect(devices[0]!.serialNumber).toBe("0821032398")
          expect(devices[0]!.terminalType).toBe("PAXA920")
          const ssk = devices[0]!.ssk
          expect(ssk !== undefined && Redacted.isRedacted(ssk)).toBe(true)
          expect(ssk && Redacted.value(ssk)).toBe(F.SSK)
          const [sent] = script.to("listDevices")
          expect(sent!.host).toBe("base")
          expect(sent!.method).toBe("GET")
          expect(sent!.url).toBe("/devices")
          expect(sent!.headers["apikeycloud"]).toBe(F.API_KEY)
        })
    )

    it.scopedLive("a GET is retried after a 503 and succeeds on the next attempt", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "listDevices",
          Server.respond(503, "Service Unavailable"),
          Server.respond(200, F.devicesBody)
        )
        const devices = yield* cloud.listDevices
        expect(devices).toHaveLength(1)
        expect(script.to("listDevices")).toHaveLength(2)
      })
    )

    it.scopedLive("a GET that keeps failing gives up after the bounded retries with OutcomeUnknown", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup({ readRetries: 2 })
        script.answer("listDevices", Server.respond(503, "Service Unavailable"))
        const error = expectOutcomeUnknown(yield* Effect.flip(cloud.listDevices))
        expect(error.reason).toBe("ServerError")
        expect(error.status).toBe(503)
        expect(script.to("listDevices")).toHaveLength(3)
      })
    )

    it.scopedLive("a wrong API key is refused with 403 Forbidden by the contract's auth", () =>
      Effect.gen(function* () {
        const script = yield* Server.makeScript("another-key")
        const cloud = yield* F.client(yield* Server.start(script))
        const error = yield* Effect.flip(cloud.listDevices)
        expect(error._tag).toBe("Forbidden")
        if (error._tag === "Forbidden") expect(error.status).toBe(403)
        // Refused by the contract's ApiKeyAuth middleware, before any handler.
        expect(script.received).toHaveLength(0)
      })
    )

    it.scopedLive(
      "a listed device without ssk (as in the service's /initialize example) is read, not the whole list refused",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer(
            "listDevices",
            Server.respond(200, [
              {
                merchant_id_alpha: "MERCHANT01",
                serial_number: "0821032398",
                ssk: F.SSK,
                terminal_type: "PAXA920"
              },
              { merchant_id_alpha: "MERCHANT01", serial_number: "0821032399", terminal_type: "PAXA920" }
            ])
          )
          const devices = yield* cloud.listDevices
          expect(devices.map((d) => d.serialNumber)).toEqual(["0821032398", "0821032399"])
          expect(devices[1]?.ssk).toBeUndefined()
          expect(JSON.stringify(devices)).not.toContain(F.SSK)
        })
    )

    it.scopedLive(
      "a 200 that does not decode is OutcomeUnknown(UndecodableResponse), the ssk scrubbed from the kept body",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer("listDevices", Server.respond(200, [{ serial_number: "x", ssk: F.SSK }]))
          const error = expectOutcomeUnknown(yield* Effect.flip(cloud.listDevices))
          expect(error.reason).toBe("UndecodableResponse")
          expect(error.status).toBe(200)
          expect(error.body).toContain('"serial_number":"x"')
          expect(error.body).not.toContain(F.SSK)
          // Deterministic: not retried.
          expect(script.to("listDevices")).toHaveLength(1)
        })
    )
  })

  describe("sendTransaction", () => {
    it.scopedLive("a sale travels as the spec's flat JSON and the 202 body comes back typed", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("sendTransaction", Server.respond(202, F.acceptedBody))
        const accepted = yield* cloud.sendTransaction(F.sale)
        expect(accepted.transactionResultId).toBe("0821032398-1628774190395")
        expect(accepted.statusMessage).toBe("Transaction sent successfully")
        const [sent] = script.to("sendTransaction")
        expect(sent!.method).toBe("POST")
        expect(sent!.url).toBe("/transactions")
        expect(sent!.headers["content-type"]).toContain("application/json")
        expect(json(sent!)).toEqual({
          operation: "sale",
          serial_number: "0821032398",
          terminal_type: "PAXA920",
          amount: "1050",
          currency: "EUR",
          transactionReference: F.reference,
          callbackUrl: "https://merchant.example/results",
          token: F.CALLBACK_TOKEN
        })
        // What was sent satisfies the contract's own request schema.
        expect(Schema.decodeUnknownSync(TransactionRequest.TransactionRequest)(json(sent!))).toMatchObject({
          operation: "sale",
          transactionReference: F.reference
        })
      })
    )

    it.scopedLive("400 with error 1001 (spec 4.2 body) is DeviceBusy, the body kept verbatim", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        const body = F.numberedError(1001, "Device is busy")
        script.answer("sendTransaction", Server.respond(400, body))
        const error = yield* Effect.flip(cloud.sendTransaction(F.polledSale))
        expect(error._tag).toBe("DeviceBusy")
        expect(error.body).toBe(body)
        expect(RemoteError.isNotProcessed(error)).toBe(true)
      })
    )

    it.scopedLive("400 with error 1002 is DeviceOffline", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("sendTransaction", Server.respond(400, F.numberedError(1002, "Device is offline")))
        const error = yield* Effect.flip(cloud.sendTransaction(F.polledSale))
        expect(error._tag).toBe("DeviceOffline")
        expect(error.message).toContain("Device is offline")
      })
    )

    it.scopedLive("400 with error 1003 on stopCurrentTransaction is CancelNotAllowed", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("sendTransaction", Server.respond(400, F.numberedError(1003, "Cannot stop now")))
        const error = yield* Effect.flip(cloud.sendTransaction(F.stop))
        expect(error._tag).toBe("CancelNotAllowed")
        expect(json(script.to("sendTransaction")[0]!)).toEqual({
          operation: "stopCurrentTransaction",
          serial_number: "0821032398",
          terminal_type: "PAXA920"
        })
      })
    )

    it.scopedLive(
      "a 500 is OutcomeUnknown carrying what was sent without the callback token, and is not resent",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer("sendTransaction", Server.respond(500, { error: "boom" }))
          const error = expectOutcomeUnknown(yield* Effect.flip(cloud.sendTransaction(F.sale)))
          expect(error.reason).toBe("ServerError")
          expect(error.status).toBe(500)
          expect(error.request).toMatchObject({
            endpoint: "sendTransaction",
            method: "POST",
            body: {
              operation: "sale",
              transactionReference: F.reference,
              amount: "1050",
              token: "<redacted>"
            }
          })
          expect(JSON.stringify(error)).not.toContain(F.CALLBACK_TOKEN)
          expect(JSON.stringify(error)).not.toContain(F.API_KEY)
          expect(script.to("sendTransaction")).toHaveLength(1)
        })
    )

    it.scopedLive("a 502 (a status the contract does not declare) with an HTML body is OutcomeUnknown", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("sendTransaction", Server.respond(502, "<html><body>Bad Gateway</body></html>"))
        const error = expectOutcomeUnknown(yield* Effect.flip(cloud.sendTransaction(F.polledSale)))
        expect(error.reason).toBe("ServerError")
        expect(error.status).toBe(502)
        expect(error.body).toBe("<html><body>Bad Gateway</body></html>")
        expect(error.request).toMatchObject({ endpoint: "sendTransaction" })
      })
    )

    it.scopedLive(
      "a response dropped after the request was read is OutcomeUnknown(Network), not success, not resent",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer("sendTransaction", Server.drop)
          const error = expectOutcomeUnknown(yield* Effect.flip(cloud.sendTransaction(F.sale)))
          expect(error.reason).toBe("Network")
          expect(error.request).toMatchObject({ body: { transactionReference: F.reference } })
          expect(script.to("sendTransaction")).toHaveLength(1)
        })
    )

    it.scoped(
      "no answer within the request timeout is OutcomeUnknown(Timeout) after the request arrived",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup({ requestTimeout: Duration.seconds(20) })
          script.answer("sendTransaction", Server.hang)
          const call = yield* Effect.fork(Effect.flip(cloud.sendTransaction(F.sale)))
          const arrived = yield* Queue.take(script.arrivals)
          expect(arrived.endpoint).toBe("sendTransaction")
          yield* TestClock.adjust(Duration.seconds(20))
          const error = expectOutcomeUnknown(yield* Fiber.join(call))
          expect(error.reason).toBe("Timeout")
          expect(error.request).toMatchObject({ endpoint: "sendTransaction", method: "POST" })
          expect(script.to("sendTransaction")).toHaveLength(1)
        })
    )

    it.scopedLive(
      "a request that breaks the contract is refused before it leaves (ValidationFailed, nothing sent)",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          const invalid = {
            ...F.polledSale,
            transactionReference: "not-a-uuid" as Identifiers.TransactionReference
          }
          const error = yield* Effect.flip(cloud.sendTransaction(invalid))
          expect(error._tag).toBe("ValidationFailed")
          expect(error.message).toContain("not sent")
          expect(script.received).toHaveLength(0)
        })
    )

    it.scopedLive(
      "a 400 with the platform's HttpApiDecodeError body (a server of the contract) is ValidationFailed",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          const body = JSON.stringify({ _tag: "HttpApiDecodeError", issues: [], message: "Expected string" })
          script.answer("sendTransaction", Server.respond(400, body))
          const error = yield* Effect.flip(cloud.sendTransaction(F.polledSale))
          expect(error._tag).toBe("ValidationFailed")
          expect(error.body).toBe(body)
        })
    )

    it.scopedLive("an unexpected 2xx (200 instead of 202) on a POST is OutcomeUnknown, not success", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("sendTransaction", Server.respond(200, F.acceptedBody))
        const error = expectOutcomeUnknown(yield* Effect.flip(cloud.sendTransaction(F.polledSale)))
        expect(error.reason).toBe("UndecodableResponse")
        expect(error.status).toBe(200)
      })
    )
  })

  describe("transactionResult", () => {
    it.scopedLive("204 is Pending, then 200 is Ready with the result decoded leniently", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("transactionResult", Server.respond(204), Server.respond(200, F.resultBody))
        const first = yield* cloud.transactionResult(F.resultId)
        expect(first).toBeInstanceOf(TerminalCloud.Pending)
        const second = yield* cloud.transactionResult(F.resultId)
        expect(second._tag).toBe("Ready")
        if (second._tag !== "Ready") return
        const result: TransactionResult.TransactionResult = second.result
        expect(result.finStatus).toBe("AUTHORISED")
        expect(result.totalAmount).toBe(1050n)
        expect(result.cardSchemeName).toBe("SOME_NEW_SCHEME")
        expect(result.mid).toBeUndefined()
        expect(result.balance).toBeUndefined()
        expect(result["aNewField"]).toEqual({ kept: true })
        expect(script.to("transactionResult").map((r) => r.url)).toEqual([
          "/transaction-result/0821032398-1628774190395",
          "/transaction-result/0821032398-1628774190395"
        ])
      })
    )

    it.scopedLive("404 is the Unknown outcome, not a failure", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "transactionResult",
          Server.respond(404, { error: { statusCode: 404, message: "not found" } })
        )
        const outcome = yield* cloud.transactionResult(F.resultId)
        expect(outcome).toBeInstanceOf(TerminalCloud.Unknown)
      })
    )

    it.scopedLive(
      "a 200 that does not decode is OutcomeUnknown with the raw body kept, the unmasked PAN scrubbed",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer(
            "transactionResult",
            Server.respond(200, { ...F.resultBody, totalAmount: "ten euros", unMaskedPan: F.UNMASKED_PAN })
          )
          const error = expectOutcomeUnknown(yield* Effect.flip(cloud.transactionResult(F.resultId)))
          expect(error.reason).toBe("UndecodableResponse")
          expect(error.body).toContain('"totalAmount":"ten euros"')
          expect(error.body).toContain('"efttransactionID":"01236fc0-8192-11eb-9aca-ad4b0e95f241"')
          expect(error.body).not.toContain(F.UNMASKED_PAN)
          expect(error.message).toContain("totalAmount")
        })
    )

    it.scopedLive("polling is a read: a 503 is retried", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("transactionResult", Server.respond(503), Server.respond(204))
        const outcome = yield* cloud.transactionResult(F.resultId)
        expect(outcome._tag).toBe("Pending")
        expect(script.to("transactionResult")).toHaveLength(2)
      })
    )
  })

  describe("transactionStatus", () => {
    it.scopedLive("goes to {transactions_url}, without a selector by default, and answers a list", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "transactionStatus",
          Server.respond(200, { finStatus: "IN_PROGRESS", efttimestamp: "20230511110113006", holdAmount: 0 })
        )
        const results = yield* cloud.transactionStatus(F.reference)
        expect(results).toHaveLength(1)
        expect(results[0]!.finStatus).toBe("IN_PROGRESS")
        expect(results[0]!.holdAmount).toBe(0n)
        const [sent] = script.to("transactionStatus")
        expect(sent!.host).toBe("transactions")
        expect(sent!.url).toBe(`/transactions/${F.reference}/status`)
        expect(sent!.headers["apikeycloud"]).toBe(F.API_KEY)
      })
    )

    it.scopedLive(
      "selector all answers every transaction under the reference; an index goes in the path",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer(
            "transactionStatus",
            Server.respond(200, [{ finStatus: "DECLINED" }, { finStatus: "AUTHORISED" }]),
            Server.respond(200, { finStatus: "AUTHORISED" })
          )
          const all = yield* cloud.transactionStatus(F.reference, "all")
          expect(all.map((r) => r.finStatus)).toEqual(["DECLINED", "AUTHORISED"])
          const second = yield* cloud.transactionStatus(F.reference, 2)
          expect(second.map((r) => r.finStatus)).toEqual(["AUTHORISED"])
          expect(script.to("transactionStatus").map((r) => [r.host, r.url])).toEqual([
            ["transactions", `/transactions/${F.reference}/status/all`],
            ["transactions", `/transactions/${F.reference}/status/2`]
          ])
        })
    )

    it.scopedLive("404 is NotFound; 403, and 401 of older versions, are Forbidden", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "transactionStatus",
          Server.respond(404, "Not Found"),
          Server.respond(403, ""),
          Server.respond(401, { error: { statusCode: 401, message: "key does not match the reference" } })
        )
        expect((yield* Effect.flip(cloud.transactionStatus(F.reference)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(cloud.transactionStatus(F.reference)))._tag).toBe("Forbidden")
        const old = yield* Effect.flip(cloud.transactionStatus(F.reference))
        expect(old._tag).toBe("Forbidden")
        if (old._tag === "Forbidden") expect(old.status).toBe(401)
      })
    )
  })

  describe("deviceCommand", () => {
    const commands: ReadonlyArray<readonly [DeviceCommand.DeviceCommand, unknown]> = [
      [
        { command: "set-unattended-mode", body: new DeviceCommand.SetUnattendedMode({ status: true }) },
        { status: true }
      ],
      [
        { command: "set-locale", body: new DeviceCommand.SetLocale({ locale: "en_US" }) },
        { locale: "en_US" }
      ],
      [
        {
          command: "set-password-protected",
          body: new DeviceCommand.SetPasswordProtected({ status: false })
        },
        { status: false }
      ],
      [{ command: "reboot", body: new DeviceCommand.Reboot({ force: false }) }, { force: false }],
      [
        { command: "set-screen-brightness", body: F.brightness },
        { minimumBrightnessLevel: 10, maximumBrightnessLevel: 90 }
      ],
      [{ command: "set-reboot-time", body: new DeviceCommand.SetRebootTime({ hour: 22 }) }, { hour: 22 }]
    ]

    it.scopedLive(
      "every command is a POST to /devices/{type}/{serial}/{command} answered 202 with no body",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          for (const [command] of commands) script.answer(command.command, Server.respond(202))
          for (const [command, wire] of commands) {
            const result = yield* cloud.deviceCommand(F.terminalType, F.serial, command)
            expect(result).toBeUndefined()
            const [sent] = script.to(command.command)
            expect(sent!.method).toBe("POST")
            expect(sent!.url).toBe(`/devices/PAXA920/0821032398/${command.command}`)
            expect(json(sent!)).toEqual(wire)
          }
        })
    )

    it.scopedLive("400 out of range is GatewayRejected, 422 is ValidationFailed, 403 is Forbidden", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "set-reboot-time",
          Server.respond(400, {
            error: { statusCode: 400, name: "BadRequestError", message: "hour out of range" }
          }),
          Server.respond(422, {
            error: { statusCode: 422, name: "VALIDATION_FAILED", message: "hour is required" }
          }),
          Server.respond(403, { error: { statusCode: 403, message: "Forbidden" } })
        )
        const command = {
          command: "set-reboot-time",
          body: new DeviceCommand.SetRebootTime({ hour: 3 })
        } as const
        const rejected = yield* Effect.flip(cloud.deviceCommand(F.terminalType, F.serial, command))
        expect(rejected._tag).toBe("GatewayRejected")
        expect(rejected.message).toContain("hour out of range")
        expect((yield* Effect.flip(cloud.deviceCommand(F.terminalType, F.serial, command)))._tag).toBe(
          "ValidationFailed"
        )
        expect((yield* Effect.flip(cloud.deviceCommand(F.terminalType, F.serial, command)))._tag).toBe(
          "Forbidden"
        )
      })
    )

    it.scopedLive("a command reaches a terminal: a 503 is OutcomeUnknown and is not retried", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("reboot", Server.respond(503))
        const error = expectOutcomeUnknown(
          yield* Effect.flip(
            cloud.deviceCommand(F.terminalType, F.serial, {
              command: "reboot",
              body: new DeviceCommand.Reboot({ force: true })
            })
          )
        )
        expect(error.request).toMatchObject({ endpoint: "reboot", body: { force: true } })
        expect(script.to("reboot")).toHaveLength(1)
      })
    )
  })

  describe("terminal-less operations", () => {
    it.scopedLive("tipAdjustment posts the decimal string and reads the status message", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("tipAdjustment", Server.respond(200, { statusMessage: "Tip adjusted" }))
        const response = yield* cloud.tipAdjustment(F.guid, F.tipAdjustment)
        expect(response.statusMessage).toBe("Tip adjusted")
        const [sent] = script.to("tipAdjustment")
        expect(sent!.url).toBe(`/transactions/${F.guid}/tip-adjustment`)
        expect(json(sent!)).toEqual({ amount: "5.25" })
      })
    )

    it.scopedLive(
      "tipAdjustment: the bad-guid body (a string message) is GatewayRejected with its text",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          const body = JSON.stringify({
            error: { statusCode: 400, name: "BadRequestError", message: "Invalid guid [nope]" }
          })
          script.answer("tipAdjustment", Server.respond(400, body))
          const error = yield* Effect.flip(
            cloud.tipAdjustment(Identifiers.Guid.make("nope"), F.tipAdjustment)
          )
          expect(error._tag).toBe("GatewayRejected")
          expect(error.message).toContain("Invalid guid [nope]")
          expect(error.body).toBe(body)
        })
    )

    it.scopedLive("an id with / and .. cannot address another endpoint: it never leaves", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("tipAdjustment", Server.respond(200, { statusMessage: "ok" }))
        // The schema refuses such a guid (Identifiers.Guid is a path segment's characters);
        // one branded without the schema is refused by the contract's path before it is sent.
        const refused = yield* Effect.flip(
          cloud.tipAdjustment(
            Identifiers.Guid.make("../../reversal", { disableValidation: true }),
            F.tipAdjustment
          )
        )
        expect(refused._tag).toBe("ValidationFailed")
        expect(script.to("tipAdjustment")).toHaveLength(0)
        expect(script.to("reversal")).toHaveLength(0)
        expect(() => Identifiers.Guid.make("../../reversal")).toThrow(/letters, digits/)
      })
    )

    it.scopedLive(
      "deferredToken reads the token; a 400 for an ineligible transaction is GatewayRejected",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer(
            "deferredToken",
            Server.respond(200, {
              cardToken: "tok_77",
              cardTokenizationGuid: "g-1",
              serverDateTime: "20240101120000000",
              transactionReference: F.guid,
              httpStatus: "200"
            }),
            Server.respond(400, F.businessError("TX_TYPE", "transaction type not eligible"))
          )
          const token = yield* cloud.deferredToken(F.guid)
          expect(token.cardToken).toBe("tok_77")
          expect(script.to("deferredToken")[0]!.method).toBe("GET")
          expect(script.to("deferredToken")[0]!.url).toBe(`/transactions/${F.guid}/token`)
          const error = yield* Effect.flip(cloud.deferredToken(F.guid))
          expect(error._tag).toBe("GatewayRejected")
        })
    )

    it.scopedLive(
      "deferredToken mints a token at the gateway: a 503 is OutcomeUnknown and is not retried",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer("deferredToken", Server.respond(503))
          const error = expectOutcomeUnknown(yield* Effect.flip(cloud.deferredToken(F.guid)))
          expect(error.status).toBe(503)
          expect(script.to("deferredToken")).toHaveLength(1)
        })
    )

    it.scopedLive("reversal posts originalGuid and reads the tokenization-shaped answer", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "reversal",
          Server.respond(200, { transactionReference: F.guid, maskedCardNumber: "****1111" })
        )
        const response = yield* cloud.reversal(F.reversal)
        expect(response.maskedCardNumber).toBe("****1111")
        expect(json(script.to("reversal")[0]!)).toEqual({ originalGuid: F.guid })
      })
    )

    it.scopedLive(
      'preAuthorizationIncrease sends decimal strings and subtract "1"; a partner key gets Forbidden',
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer(
            "preAuthorizationIncrease",
            Server.respond(200, {
              httpStatus: 200,
              holdAmount: "87.50",
              preAuthorizationIncreaseGuid: "inc-1"
            }),
            Server.respond(403, { error: { statusCode: 403, message: "partner keys are not allowed" } })
          )
          const response = yield* cloud.preAuthorizationIncrease(F.increase)
          expect(response.holdAmount).toBe("87.50")
          expect(json(script.to("preAuthorizationIncrease")[0]!)).toEqual({
            originalGuid: F.guid,
            increaseAmount: "12.50",
            subtract: "1"
          })
          const error = yield* Effect.flip(cloud.preAuthorizationIncrease(F.increase))
          expect(error._tag).toBe("Forbidden")
        })
    )

    it.scopedLive(
      "preAuthorizationCapture: a spec 7 business error is GatewayRejected with code and guid",
      () =>
        Effect.gen(function* () {
          const { script, cloud } = yield* setup()
          script.answer(
            "preAuthorizationCapture",
            Server.respond(200, { capturedAmount: "100.00", preAuthorizationCaptureGuid: "cap-1" }),
            Server.respond(400, F.businessError("ALREADY_CAPTURED", "pre-authorization already captured"))
          )
          const response = yield* cloud.preAuthorizationCapture(F.capture)
          expect(response.capturedAmount).toBe("100.00")
          expect(json(script.to("preAuthorizationCapture")[0]!)).toEqual({
            originalGuid: F.guid,
            capturedAmount: "100.00"
          })
          const error = yield* Effect.flip(cloud.preAuthorizationCapture(F.capture))
          expect(error._tag).toBe("GatewayRejected")
          if (error._tag !== "GatewayRejected") return
          expect(error.code).toBe("ALREADY_CAPTURED")
          expect(error.errorGuid).toBe("9a8b7c6d-0000-4000-8000-000000000001")
          expect(error.message).toContain("already captured")
        })
    )

    it.scopedLive("motoSale sends major units; 3107 is SecurityCodeRequired; 422 is ValidationFailed", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "motoSale",
          Server.respond(200, { guid: "m-1", amount: "10.50", currency: "EUR", approvalCode: "A1" }),
          Server.respond(400, F.businessError("3107", "security code required")),
          Server.respond(422, {
            error: { statusCode: 422, name: "VALIDATION_FAILED", message: "currency length" }
          })
        )
        const response = yield* cloud.motoSale(F.motoSale)
        expect(response.guid).toBe("m-1")
        expect(json(script.to("motoSale")[0]!)).toEqual({
          cardToken: "tok_4f9a",
          amount: "10.50",
          currency: "EUR",
          transactionReference: F.reference
        })
        expect((yield* Effect.flip(cloud.motoSale(F.motoSale)))._tag).toBe("SecurityCodeRequired")
        expect((yield* Effect.flip(cloud.motoSale(F.motoSale)))._tag).toBe("ValidationFailed")
      })
    )

    it.scopedLive("motoSale: a 5xx is OutcomeUnknown (to reconcile), never resent", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("motoSale", Server.respond(504, "Gateway Timeout"))
        const error = expectOutcomeUnknown(yield* Effect.flip(cloud.motoSale(F.motoSale)))
        expect(error.status).toBe(504)
        expect(error.request).toMatchObject({
          endpoint: "motoSale",
          body: { transactionReference: F.reference }
        })
        expect(script.to("motoSale")).toHaveLength(1)
      })
    )

    it.scopedLive("motoRefund and motoReversal post their bodies and read the MOTO response", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer(
          "motoRefund",
          Server.respond(200, { guid: "r-1", originalGuid: F.guid, amount: "5.00" })
        )
        script.answer("motoReversal", Server.respond(200, { guid: "v-1", originalGuid: F.guid }))
        expect((yield* cloud.motoRefund(F.motoRefund)).guid).toBe("r-1")
        expect((yield* cloud.motoReversal(F.motoReversal)).guid).toBe("v-1")
        expect(json(script.to("motoRefund")[0]!)).toEqual({
          originalGuid: F.guid,
          amount: "5.00",
          currency: "EUR"
        })
        expect(json(script.to("motoReversal")[0]!)).toEqual({ originalGuid: F.guid })
      })
    )

    it.scopedLive("batch close, summary and detail post the terminal and batch number", () =>
      Effect.gen(function* () {
        const { script, cloud } = yield* setup()
        script.answer("batchClose", Server.respond(200, { batchStatus: "CLOSED", extra: 1 }))
        script.answer(
          "batchSummary",
          Server.respond(200, {
            batchNumber: "42",
            batchStatus: "CLOSED",
            transactionCount: "3",
            netAmount: "12.34",
            customFields: { entry: [{ key: "sales", value: "2" }] }
          })
        )
        script.answer(
          "batchDetail",
          Server.respond(200, {
            batchNumber: "42",
            details: [{ transactionType: "SALE", amount: "10.00", batchDetailElementGuid: "e-1" }]
          })
        )
        expect(yield* cloud.batchClose(F.batch)).toEqual({ batchStatus: "CLOSED", extra: 1 })
        const summary = yield* cloud.batchSummary(F.batch)
        expect(summary.netAmount).toBe("12.34")
        expect(summary.customFields?.entry?.[0]).toEqual({ key: "sales", value: "2" })
        const detail = yield* cloud.batchDetail(F.batchDetail)
        expect(detail.details?.[0]?.amount).toBe("10.00")
        const wire = { serialNumber: "0821032398", deviceType: "PAXA920", batchNumber: "42" }
        expect(json(script.to("batchClose")[0]!)).toEqual(wire)
        expect(json(script.to("batchSummary")[0]!)).toEqual(wire)
        expect(json(script.to("batchDetail")[0]!)).toEqual({ ...wire, rrn: "000123" })
      })
    )
  })
})
