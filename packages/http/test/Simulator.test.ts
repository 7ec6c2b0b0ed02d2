/**
 * Contract tests of every method of the HTTP `TerminalCloud` against the real simulator
 * (packages/simulator, served in-process over real sockets, status host on its own
 * port), its faults injected through the admin API under `/_sim` over HTTP: the 204
 * path, each error the simulator answers, and a request it processed but whose response
 * it dropped — `OutcomeUnknown`, and the status endpoint shows it was charged.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  DeviceCommand,
  Identifiers,
  Money,
  Moto,
  PreAuthorization,
  type TerminalCloud,
  type TransactionRequest,
  type TransactionResult
} from "@tillflow/core"
import { TerminalCloud as TerminalCloudTag } from "@tillflow/core"
import { HttpTerminalCloud } from "@tillflow/http"
import { SimulatorServer } from "@tillflow/simulator"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as F from "./Fixtures.js"
import { adminClient, instantTimings } from "@tillflow/simulator/testing"

const simulate = (options: SimulatorServer.Options = {}, client: Parameters<typeof F.client>[1] = {}) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      SimulatorServer.layer({
        seed: 42,
        statusPort: 0,
        ...options,
        timings: { ...instantTimings, ...options.timings }
      })
    ).pipe(Effect.orDie)
    const info = Context.get(context, SimulatorServer.SimulatorInfo)
    const hosts = { baseUrl: new URL(info.baseUrl), transactionsUrl: new URL(info.transactionsUrl) }
    const cloud = yield* F.client(hosts, { apiKey: Redacted.make(info.apiKey), ...client })
    const admin = adminClient(info.adminUrl)
    const first = info.terminals[0]!
    const terminal = {
      serialNumber: Identifiers.SerialNumber.make(first.serial_number),
      terminalType: Identifiers.TerminalType.make(first.terminal_type)
    }
    const settle = admin("POST", "/settle", { timeoutMs: 10_000 })
    return { info, hosts, cloud, admin, terminal, settle }
  })

const freshReference = Identifiers.makeTransactionReference

const saleOn = (
  terminal: {
    readonly serialNumber: Identifiers.SerialNumber
    readonly terminalType: Identifiers.TerminalType
  },
  reference: Identifiers.TransactionReference,
  minorUnits = 1050n
): TransactionRequest.Sale => ({
  operation: "sale",
  ...terminal,
  amount: Money.make(minorUnits, "EUR"),
  transactionReference: reference
})

/** Sends an operation, lets the terminal finish, and reads its polled result. */
const complete = (
  cloud: TerminalCloud.Service,
  settle: Effect.Effect<unknown>,
  request: TransactionRequest.TransactionRequest
) =>
  Effect.gen(function* () {
    const accepted = yield* cloud.sendTransaction(request)
    yield* settle
    const outcome = yield* cloud.transactionResult(accepted.transactionResultId!)
    expect(outcome._tag).toBe("Ready")
    if (outcome._tag !== "Ready") return yield* Effect.dieMessage("no result")
    return outcome.result
  })

const guidOf = (result: TransactionResult.TransactionResult): Identifiers.Guid =>
  Identifiers.Guid.make(result.efttransactionID!)

describe("HttpTerminalCloud against the simulator", () => {
  it.scopedLive("layerConfig reads TERMINAL_CLOUD_*; a {transactions_url} with a path prefix is kept", () =>
    Effect.gen(function* () {
      // Without statusPort the simulator serves the status host under a path prefix.
      const context = yield* Layer.build(SimulatorServer.layer({ seed: 7, timings: instantTimings })).pipe(
        Effect.orDie
      )
      const info = Context.get(context, SimulatorServer.SimulatorInfo)
      expect(info.transactionsUrl).toContain("/_status-host")
      const env = ConfigProvider.fromMap(
        new Map([
          ["TERMINAL_CLOUD_API_KEY", info.apiKey],
          ["TERMINAL_CLOUD_BASE_URL", `${info.baseUrl}/`],
          ["TERMINAL_CLOUD_TRANSACTIONS_URL", info.transactionsUrl],
          ["TERMINAL_CLOUD_REQUEST_TIMEOUT", "10 seconds"]
        ]),
        { pathDelim: "_" } // as the environment names them
      )
      const cloud = yield* Layer.build(HttpTerminalCloud.layerConfig()).pipe(
        Effect.map((ctx) => Context.get(ctx, TerminalCloudTag.TerminalCloud)),
        Effect.withConfigProvider(env)
      )
      const first = info.terminals[0]!
      const terminal = {
        serialNumber: Identifiers.SerialNumber.make(first.serial_number),
        terminalType: Identifiers.TerminalType.make(first.terminal_type)
      }
      const reference = yield* freshReference
      yield* cloud.sendTransaction(saleOn(terminal, reference))
      yield* adminClient(info.adminUrl)("POST", "/settle", { timeoutMs: 10_000 })
      expect((yield* cloud.transactionStatus(reference)).map((r) => r.finStatus)).toEqual(["AUTHORISED"])

      const missing = yield* Effect.flip(
        Layer.build(HttpTerminalCloud.layerConfig()).pipe(
          Effect.withConfigProvider(
            ConfigProvider.fromMap(new Map([["TERMINAL_CLOUD_BASE_URL", info.baseUrl]]), { pathDelim: "_" })
          )
        )
      )
      expect(String(missing)).toMatch(/TERMINAL_CLOUD.API_KEY/)
    })
  )

  it.scopedLive("listDevices lists the merchant's terminals, ssk Redacted", () =>
    Effect.gen(function* () {
      const { cloud, info } = yield* simulate()
      const devices = yield* cloud.listDevices
      expect(devices.map((d) => d.serialNumber).sort()).toEqual(
        info.terminals.map((t) => t.serial_number).sort()
      )
      expect(devices.every((d) => Redacted.isRedacted(d.ssk) && Redacted.value(d.ssk) !== "")).toBe(true)
    })
  )

  it.scopedLive("a polled sale: 202, then 204 while the card is awaited, then 200 with the result", () =>
    Effect.gen(function* () {
      const { cloud, admin, terminal, settle } = yield* simulate({ timings: { WaitingForCard: 60_000 } })
      const reference = yield* freshReference
      const accepted = yield* cloud.sendTransaction(saleOn(terminal, reference))
      expect(accepted.transactionReference).toBe(reference)
      const id = accepted.transactionResultId!
      expect((yield* cloud.transactionResult(id))._tag).toBe("Pending")
      yield* admin("POST", "/clock/advance", { ms: 61_000 })
      yield* settle
      const outcome = yield* cloud.transactionResult(id)
      expect(outcome._tag).toBe("Ready")
      if (outcome._tag !== "Ready") return
      expect(outcome.result.finStatus).toBe("AUTHORISED")
      expect(outcome.result.totalAmount).toBe(1050n)
      expect(outcome.result.transactionReference).toBe(reference)
      expect(outcome.result.efttimestamp).toBeDefined()
    })
  )

  it.scopedLive("an unknown transactionResultId is the Unknown outcome (404)", () =>
    Effect.gen(function* () {
      const { cloud } = yield* simulate()
      const outcome = yield* cloud.transactionResult(Identifiers.TransactionResultId.make("nope-1"))
      expect(outcome._tag).toBe("Unknown")
    })
  )

  it.scopedLive(
    "transactionStatus on {transactions_url}: first, all, index; an unknown reference is NotFound",
    () =>
      Effect.gen(function* () {
        const { cloud, terminal, settle } = yield* simulate()
        const reference = yield* freshReference
        yield* complete(cloud, settle, saleOn(terminal, reference, 3784n)) // 37.84: declined (05)
        yield* complete(cloud, settle, saleOn(terminal, reference))
        const first = yield* cloud.transactionStatus(reference)
        expect(first.map((r) => r.finStatus)).toEqual(["DECLINED"])
        const all = yield* cloud.transactionStatus(reference, "all")
        expect(all.map((r) => r.finStatus)).toEqual(["DECLINED", "AUTHORISED"])
        expect(all[1]!.efttimestamp).toBeDefined()
        const second = yield* cloud.transactionStatus(reference, 2)
        expect(second.map((r) => r.finStatus)).toEqual(["AUTHORISED"])
        expect((yield* Effect.flip(cloud.transactionStatus(reference, 3)))._tag).toBe("NotFound")
        const unknown = yield* freshReference
        expect((yield* Effect.flip(cloud.transactionStatus(unknown)))._tag).toBe("NotFound")
      })
  )

  it.scopedLive("a busy terminal answers 1001 (DeviceBusy); stop at a stoppable step is accepted", () =>
    Effect.gen(function* () {
      const { cloud, terminal } = yield* simulate({ timings: { WaitingForCard: 600_000 } })
      yield* cloud.sendTransaction(saleOn(terminal, yield* freshReference))
      const busy = yield* Effect.flip(cloud.sendTransaction(saleOn(terminal, yield* freshReference)))
      expect(busy._tag).toBe("DeviceBusy")
      expect(busy.body).toContain("1001")
      const stopped = yield* cloud.sendTransaction({ operation: "stopCurrentTransaction", ...terminal })
      expect(stopped.statusMessage).toBeDefined()
    })
  )

  it.scopedLive("stop outside a stoppable step answers 1003 (CancelNotAllowed)", () =>
    Effect.gen(function* () {
      const { cloud, terminal } = yield* simulate()
      const error = yield* Effect.flip(
        cloud.sendTransaction({ operation: "stopCurrentTransaction", ...terminal })
      )
      expect(error._tag).toBe("CancelNotAllowed")
    })
  )

  it.scopedLive("an offline terminal answers 1002 (DeviceOffline)", () =>
    Effect.gen(function* () {
      const { cloud, admin, terminal } = yield* simulate()
      yield* admin("POST", `/terminals/${terminal.serialNumber}/offline`)
      const error = yield* Effect.flip(cloud.sendTransaction(saleOn(terminal, yield* freshReference)))
      expect(error._tag).toBe("DeviceOffline")
    })
  )

  it.scopedLive(
    "processed but the response dropped: OutcomeUnknown, sent once, and the status shows the charge",
    () =>
      Effect.gen(function* () {
        const { cloud, admin, terminal, settle } = yield* simulate()
        yield* admin("POST", "/faults", { kind: "drop-response", method: "POST", path: "/transactions" })
        const reference = yield* freshReference
        const error = yield* Effect.flip(cloud.sendTransaction(saleOn(terminal, reference)))
        expect(error._tag).toBe("OutcomeUnknown")
        if (error._tag !== "OutcomeUnknown") return
        expect(error.reason).toBe("Network")
        expect(error.request).toMatchObject({
          endpoint: "sendTransaction",
          body: { transactionReference: reference }
        })
        yield* settle
        const status = yield* cloud.transactionStatus(reference)
        expect(status.map((r) => r.finStatus)).toEqual(["AUTHORISED"])
        const counters = (yield* admin("GET", `/terminals/${terminal.serialNumber}`)) as {
          readonly counters: { readonly accepted: number }
        }
        expect(counters.counters.accepted).toBe(1)
      })
  )

  it.scopedLive("a 503 after processing is OutcomeUnknown(ServerError); a 500 before a GET is retried", () =>
    Effect.gen(function* () {
      const { cloud, admin, terminal, settle } = yield* simulate()
      yield* admin("POST", "/faults", {
        kind: "error-after",
        method: "POST",
        path: "/transactions",
        status: 503
      })
      const reference = yield* freshReference
      const error = yield* Effect.flip(cloud.sendTransaction(saleOn(terminal, reference)))
      expect(error._tag).toBe("OutcomeUnknown")
      if (error._tag === "OutcomeUnknown") expect(error.status).toBe(503)
      yield* settle
      expect((yield* cloud.transactionStatus(reference)).map((r) => r.finStatus)).toEqual(["AUTHORISED"])

      yield* admin("POST", "/faults", { kind: "error-before", method: "GET", path: "/devices", status: 500 })
      expect((yield* cloud.listDevices).length).toBeGreaterThan(0)
    })
  )

  it.scopedLive("a delayed answer beyond the request timeout is OutcomeUnknown(Timeout)", () =>
    Effect.gen(function* () {
      const { cloud, admin, terminal } = yield* simulate({}, { requestTimeout: Duration.millis(300) })
      yield* admin("POST", "/faults", {
        kind: "delay",
        method: "POST",
        path: "/transactions",
        delayMs: 5_000
      })
      const error = yield* Effect.flip(cloud.sendTransaction(saleOn(terminal, yield* freshReference)))
      expect(error._tag).toBe("OutcomeUnknown")
      if (error._tag === "OutcomeUnknown") expect(error.reason).toBe("Timeout")
    })
  )

  it.scopedLive("an unknown API key is Forbidden (403)", () =>
    Effect.gen(function* () {
      const { hosts } = yield* simulate()
      const stranger = yield* F.client(hosts, { apiKey: Redacted.make("not-a-key") })
      const error = yield* Effect.flip(stranger.listDevices)
      expect(error._tag).toBe("Forbidden")
    })
  )

  it.scopedLive(
    "every device command is accepted (202); not listening is GatewayRejected (400), unknown NotFound",
    () =>
      Effect.gen(function* () {
        const { cloud, admin, terminal } = yield* simulate()
        const commands: ReadonlyArray<DeviceCommand.DeviceCommand> = [
          { command: "set-unattended-mode", body: new DeviceCommand.SetUnattendedMode({ status: true }) },
          { command: "set-locale", body: new DeviceCommand.SetLocale({ locale: "fr_FR" }) },
          {
            command: "set-password-protected",
            body: new DeviceCommand.SetPasswordProtected({ status: true })
          },
          { command: "set-screen-brightness", body: F.brightness },
          { command: "set-reboot-time", body: new DeviceCommand.SetRebootTime({ hour: 3 }) },
          { command: "reboot", body: new DeviceCommand.Reboot({ force: false }) }
        ]
        for (const command of commands) {
          yield* cloud.deviceCommand(terminal.terminalType, terminal.serialNumber, command)
        }
        const view = (yield* admin("GET", `/terminals/${terminal.serialNumber}`)) as {
          readonly settings: Record<string, unknown>
        }
        expect(view.settings).toMatchObject({ locale: "fr_FR", rebootHour: 3, maximumBrightnessLevel: 90 })
        yield* admin("PATCH", `/terminals/${terminal.serialNumber}`, { listening: false })
        const error = yield* Effect.flip(
          cloud.deviceCommand(terminal.terminalType, terminal.serialNumber, commands[0]!)
        )
        expect(error._tag).toBe("GatewayRejected")
        const unknownDevice = yield* Effect.flip(
          cloud.deviceCommand(
            terminal.terminalType,
            Identifiers.SerialNumber.make("0000000000"),
            commands[0]!
          )
        )
        expect(unknownDevice._tag).toBe("NotFound")
      })
  )

  it.scopedLive(
    "tip adjustment, deferred token, MOTO sale/refund/reversal and reversal on a completed sale",
    () =>
      Effect.gen(function* () {
        const { cloud, terminal, settle } = yield* simulate()
        const sale = yield* complete(cloud, settle, saleOn(terminal, yield* freshReference))
        const guid = guidOf(sale)

        const tipped = yield* cloud.tipAdjustment(guid, F.tipAdjustment)
        expect(tipped.statusMessage).toBeDefined()
        const badGuid = yield* Effect.flip(
          cloud.tipAdjustment(Identifiers.Guid.make("no-such-guid"), F.tipAdjustment)
        )
        expect(badGuid._tag).toBe("GatewayRejected")
        expect(badGuid.message).toContain("Invalid guid")

        const token = yield* cloud.deferredToken(guid)
        expect(token.cardToken).toBeDefined()
        const cardToken = Identifiers.CardToken.make(token.cardToken!)

        const motoReference = yield* freshReference
        const moto = yield* cloud.motoSale({
          cardToken,
          amount: Money.make(2000n, "EUR"),
          transactionReference: motoReference
        })
        expect(moto.amount).toBe("20.00")
        const motoGuid = Identifiers.Guid.make(moto.guid!)
        const refund = yield* cloud.motoRefund({ originalGuid: motoGuid, amount: Money.make(500n, "EUR") })
        expect(refund.amount).toBe("5.00")
        const reversed = yield* cloud.motoReversal(new Moto.MotoReversalRequest({ originalGuid: motoGuid }))
        expect(reversed.guid).toBeDefined()

        const reversal = yield* cloud.reversal({ originalGuid: guid })
        expect(reversal.transactionReference).toBeDefined()
      })
  )

  it.scopedLive("MOTO: 3107 is SecurityCodeRequired; an unknown token is GatewayRejected", () =>
    Effect.gen(function* () {
      const { cloud, admin, info, terminal, settle } = yield* simulate()
      const sale = yield* complete(cloud, settle, saleOn(terminal, yield* freshReference))
      const token = yield* cloud.deferredToken(guidOf(sale))
      const unknown = yield* Effect.flip(
        cloud.motoSale({
          cardToken: Identifiers.CardToken.make("tok-unknown"),
          amount: Money.make(100n, "EUR")
        })
      )
      expect(unknown._tag).toBe("GatewayRejected")
      yield* admin("PATCH", `/merchants/${info.merchantId}`, { flags: { securityCodeRequired: true } })
      const error = yield* Effect.flip(
        cloud.motoSale({
          cardToken: Identifiers.CardToken.make(token.cardToken!),
          amount: Money.make(100n, "EUR")
        })
      )
      expect(error._tag).toBe("SecurityCodeRequired")
    })
  )

  it.scopedLive(
    "pre-authorization increase and capture; a second capture is GatewayRejected; a partner key is Forbidden",
    () =>
      Effect.gen(function* () {
        const { cloud, admin, info, hosts, terminal, settle } = yield* simulate()
        const preAuth = yield* complete(cloud, settle, {
          operation: "preAuthorization",
          ...terminal,
          amount: Money.make(10000n, "EUR"),
          transactionReference: yield* freshReference
        })
        expect(preAuth.finStatus).toBe("AUTHORISED")
        const originalGuid = guidOf(preAuth)
        const increased = yield* cloud.preAuthorizationIncrease(
          new PreAuthorization.PreAuthorizationIncreaseRequest({
            originalGuid,
            increaseAmount: Money.DecimalString.make("20.00")
          })
        )
        expect(increased.increaseAmount).toBe("20.00")
        const capture = new PreAuthorization.PreAuthorizationCaptureRequest({
          originalGuid,
          capturedAmount: Money.DecimalString.make("110.00")
        })
        const captured = yield* cloud.preAuthorizationCapture(capture)
        expect(captured.capturedAmount).toBe("110.00")
        const again = yield* Effect.flip(cloud.preAuthorizationCapture(capture))
        expect(again._tag).toBe("GatewayRejected")

        const partner = (yield* admin("POST", `/merchants/${info.merchantId}/keys`, { kind: "partner" })) as {
          readonly key: string
        }
        const partnerCloud = yield* F.client(hosts, { apiKey: Redacted.make(partner.key) })
        const refused = yield* Effect.flip(partnerCloud.preAuthorizationCapture(capture))
        expect(refused._tag).toBe("Forbidden")
      })
  )

  it.scopedLive("batch close, summary and detail of a terminal's batch", () =>
    Effect.gen(function* () {
      const { cloud, admin, terminal, settle } = yield* simulate()
      yield* complete(cloud, settle, saleOn(terminal, yield* freshReference))
      const view = (yield* admin("GET", `/terminals/${terminal.serialNumber}`)) as {
        readonly batchNumber: number
      }
      const batch = {
        serialNumber: terminal.serialNumber,
        deviceType: terminal.terminalType,
        batchNumber: Identifiers.BatchNumber.make(String(view.batchNumber))
      }
      const summary = yield* cloud.batchSummary(batch)
      expect(summary.batchNumber).toBe(String(view.batchNumber))
      expect(summary.transactionCount).toBe("1")
      const detail = yield* cloud.batchDetail(batch)
      expect(detail.details).toHaveLength(1)
      expect(detail.details?.[0]?.amount).toBe("10.50")
      const closed = yield* cloud.batchClose(batch)
      expect(closed).toBeDefined()
      const after = yield* cloud.batchSummary(batch)
      expect(after.batchStatus).toBe("CLOSED")
      const unknownBatch = yield* Effect.flip(
        cloud.batchSummary({ ...batch, batchNumber: Identifiers.BatchNumber.make("999") })
      )
      expect(unknownBatch._tag).toBe("GatewayRejected")
    })
  )

  it.scopedLive(
    "the bodies the client sends satisfy the simulator's reading of the contract (decoded back)",
    () =>
      Effect.gen(function* () {
        const { cloud, terminal, settle } = yield* simulate()
        const result = yield* complete(cloud, settle, {
          operation: "pingDevice",
          ...terminal,
          returnDeviceInfo: true
        })
        expect(result.finStatus).toBeDefined()
        expect(Schema.is(Schema.String)(result.deviceStatus?.serialNumber)).toBe(true)
      })
  )
})
