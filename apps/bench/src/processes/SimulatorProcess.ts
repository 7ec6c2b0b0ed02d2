/**
 * The simulator as a process for the end-to-end benchmark: the simulator's own server
 * layer (`SimulatorServer.layer`, what `apps/simulator` runs) with TERMINALS virtual
 * terminals (the app's flag stops at 100) whose every step takes 0 ms (`TIMINGS=default`:
 * the simulator's own default step timings, as the worker's built-in one has them), on a
 * free loopback port. Prints `{"sim": Info}` once listening; stops on SIGTERM.
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

runtime
  .runPromise(SimulatorServer.SimulatorInfo)
  .then((info) => Child.tell({ sim: info }))
  .catch((error: unknown) => {
    process.stderr.write(`simulator failed to start: ${String(error)}\n`)
    process.exit(1)
  })

const stop = () => {
  runtime.dispose().finally(() => process.exit(0))
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
