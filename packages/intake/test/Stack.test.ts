import { describe, expect, it } from "@effect/vitest"
import {
  BatchWorkflow,
  Identifiers,
  MotoWorkflow,
  TerminalCloud,
  TerminalOperations,
  Money
} from "@tillflow/core"
import { Stack } from "@tillflow/intake"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const settings = (dataDir: string) =>
  ConfigProvider.fromMap(
    new Map([
      ["TILLFLOW_DATA_DIR", dataDir],
      ["TILLFLOW_SIMULATOR_FAST", "true"]
    ]),
    { pathDelim: "_" }
  )

describe("Stack.layerConfig: the library embedded in a host as one layer", () => {
  it.live(
    "on the worker's defaults (embedded store, built-in simulator) a sale is approved, and the same key joins it",
    () => {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-stack-"))
      return Effect.gen(function* () {
        const store = yield* Stack.Store
        const cloud = yield* Stack.Cloud
        expect(store.kind).toBe("embedded")
        expect(cloud.kind).toBe("simulator")
        const [device] = yield* (yield* TerminalCloud.TerminalCloud).listDevices
        if (device === undefined) return expect.fail("the simulator lists no terminal")
        const outcome = yield* TerminalOperations.sale(
          {
            serialNumber: device.serialNumber,
            terminalType: device.terminalType,
            amount: Money.make(1050n, "EUR")
          },
          { idempotencyKey: "stack-test-sale" }
        )
        expect(outcome._tag).toBe("Approved")
        // The engine worker of the layer ran it; the same key joins the recorded execution.
        const again = yield* TerminalOperations.sale(
          {
            serialNumber: device.serialNumber,
            terminalType: device.terminalType,
            amount: Money.make(1050n, "EUR")
          },
          { idempotencyKey: "stack-test-sale" }
        )
        expect(again.facts.attemptId).toBe(outcome.facts.attemptId)
      }).pipe(
        Effect.provide(
          Stack.layerConfig({ holder: "stack-test" }).pipe(
            Layer.provide(Layer.setConfigProvider(settings(dataDir)))
          )
        ),
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      )
    },
    120_000
  )

  it.live(
    "row 5 of issue 28: a pre-authorization opened on a terminal is captured through the terminal (the layer wires the merchant's MCC as the worker does)",
    () => {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-stack-"))
      return Effect.gen(function* () {
        const [device] = yield* (yield* TerminalCloud.TerminalCloud).listDevices
        if (device === undefined) return expect.fail("the simulator lists no terminal")
        const terminal = { serialNumber: device.serialNumber, terminalType: device.terminalType }
        const hold = yield* TerminalOperations.preAuthorization(
          { ...terminal, amount: Money.make(6000n, "EUR") },
          { idempotencyKey: "stack-hold" }
        )
        expect(hold._tag).toBe("Approved")
        const guid = Identifiers.Guid.make(hold.facts.efttransactionID ?? "")
        const captured = yield* TerminalOperations.preAuthorizationCapture(
          { ...terminal, originalTransactionId: guid, amount: Money.make(5500n, "EUR") },
          { idempotencyKey: "stack-capture" }
        )
        expect(captured._tag).toBe("Approved")
      }).pipe(
        Effect.provide(
          Stack.layerConfig({ holder: "stack-test-mcc" }).pipe(
            Layer.provide(
              Layer.setConfigProvider(
                ConfigProvider.fromMap(
                  new Map([
                    ["TILLFLOW_DATA_DIR", dataDir],
                    ["TILLFLOW_SIMULATOR_FAST", "true"],
                    ["TILLFLOW_MERCHANT_MCC", "7011"]
                  ]),
                  { pathDelim: "_" }
                )
              )
            )
          )
        ),
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      )
    },
    120_000
  )
  it.live(
    "row 6 of issue 28: a terminal-less MOTO sale is booked on the merchant's virtual terminal, so its batch closing ends the MOTO reversal window",
    () => {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "tillflow-stack-"))
      return Effect.gen(function* () {
        const cloud = yield* Stack.Cloud
        const [device] = yield* (yield* TerminalCloud.TerminalCloud).listDevices
        if (device === undefined) return expect.fail("the simulator lists no terminal")
        const tokenizing = yield* TerminalOperations.saleAndTokenizeCard(
          {
            serialNumber: device.serialNumber,
            terminalType: device.terminalType,
            amount: Money.make(100n, "EUR")
          },
          { idempotencyKey: "stack-moto-token" }
        )
        const sale = yield* MotoWorkflow.Sale.execute({
          requestId: "stack-moto-sale",
          cardToken: Identifiers.CardToken.make(tokenizing.facts.cardToken ?? ""),
          amount: Money.make(4200n, "EUR")
        })
        expect(sale.status).toBe("AUTHORISED")
        // The simulator books the sale on the merchant's virtual terminal; close that batch.
        const state = (yield* Effect.promise(() =>
          fetch(`${cloud.adminUrl}/state`).then((r) => r.json())
        )) as {
          readonly merchants: ReadonlyArray<{ readonly virtualTerminal: string }>
          readonly terminals: ReadonlyArray<{
            readonly serial_number: string
            readonly terminal_type: string
            readonly batchNumber: number
          }>
        }
        const virtual = state.terminals.find((t) => t.serial_number === state.merchants[0]?.virtualTerminal)
        if (virtual === undefined) return expect.fail("the simulator shows no virtual terminal")
        yield* BatchWorkflow.Close.execute({
          requestId: "stack-moto-close",
          serialNumber: Identifiers.SerialNumber.make(virtual.serial_number),
          terminalType: Identifiers.TerminalType.make(virtual.terminal_type),
          batchNumber: Identifiers.BatchNumber.make(String(virtual.batchNumber))
        })
        const refused = yield* Effect.flip(
          MotoWorkflow.Reverse.execute({
            requestId: "stack-moto-reverse",
            originalGuid: Identifiers.Guid.make(sale.guid ?? "")
          })
        )
        expect(refused._tag).toBe("ReversalNotAllowed")
        expect("rule" in refused ? refused.rule : undefined).toBe("moto-reversal-before-batch")
      }).pipe(
        Effect.provide(
          Stack.layerConfig({ holder: "stack-test-moto" }).pipe(
            Layer.provide(Layer.setConfigProvider(settings(dataDir)))
          )
        ),
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      )
    },
    120_000
  )
})
