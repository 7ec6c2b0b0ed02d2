/**
 * The simulator as a process for the end-to-end benchmark: the simulator's own server
 * layer (`SimulatorServer.layer`, what `apps/simulator` runs) with TERMINALS virtual
 * terminals (the app's flag stops at 100) whose every step takes 0 ms (`TIMINGS=default`:
 * the simulator's own default step timings, as the worker's built-in one has them), on a
 * free loopback port. With MERCHANTS=M (and MERCHANT_TERMINALS=T, default 10), M more
 * merchants are added through the admin API (`POST /_sim/merchants`, then T terminals each),
 * beside the default merchant and its TERMINALS: the answer lists them with their keys
 * (`merchants`). Prints `{"sim": Info}` once listening; stops on SIGTERM.
 */
import { SimulatorServer } from "@tillflow/simulator"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Child from "../internal/Child.js"

const zero = {
  WaitingForCard: 0,
  PinInput: 0,
  WaitingHostConnect: 0,
  WaitingHostSend: 0,
  WaitingHostReceive: 0,
  PrintingMerchantReceipt: 0,
  Reboot: 0
}

const runtime = ManagedRuntime.make(
  SimulatorServer.layer({
    port: 0,
    seed: 11,
    terminals: Number(process.env["TERMINALS"] ?? "1000"),
    ...(process.env["TIMINGS"] === "default" ? {} : { timings: zero })
  }).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)))
)

/** A merchant added for the many-merchants bench, as the worker registers it. */
export interface SimMerchant {
  readonly id: string
  readonly apiKey: string
  readonly terminals: ReadonlyArray<{ readonly serial_number: string; readonly terminal_type: string }>
}

const admin = async (adminUrl: string, path: string, body: unknown): Promise<unknown> => {
  const response = await fetch(`${adminUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`admin POST ${path}: ${response.status} ${text}`)
  return JSON.parse(text) as unknown
}

const addMerchants = async (info: SimulatorServer.Info): Promise<ReadonlyArray<SimMerchant>> => {
  const count = Number(process.env["MERCHANTS"] ?? "0")
  const perMerchant = Number(process.env["MERCHANT_TERMINALS"] ?? "10")
  const terminalType = info.terminals[0]?.terminal_type ?? "ANDROID"
  const merchants: Array<SimMerchant> = []
  for (let i = 0; i < count; i++) {
    const id = `SIM-M${String(i).padStart(3, "0")}`
    const added = (await admin(info.adminUrl, "/merchants", { id, name: `Merchant ${i}`, mcc: "5812" })) as {
      readonly merchantId: string
      readonly apiKey: string
    }
    const terminals: Array<SimMerchant["terminals"][number]> = []
    for (let j = 0; j < perMerchant; j++) {
      const serial = `M${String(i).padStart(3, "0")}T${String(j).padStart(2, "0")}`
      await admin(info.adminUrl, `/merchants/${added.merchantId}/terminals`, {
        serial_number: serial,
        terminal_type: terminalType
      })
      terminals.push({ serial_number: serial, terminal_type: terminalType })
    }
    merchants.push({ id: added.merchantId, apiKey: added.apiKey, terminals })
  }
  return merchants
}

runtime
  .runPromise(SimulatorServer.SimulatorInfo)
  .then(async (info) => Child.tell({ sim: { ...info, merchants: await addMerchants(info) } }))
  .catch((error: unknown) => {
    process.stderr.write(`simulator failed to start: ${String(error)}\n`)
    process.exit(1)
  })

const stop = () => {
  runtime.dispose().finally(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
