/**
 * The simulator as a process: `npm run simulator -- --port 7070 [--status-port P]
 * [--seed N] [--host H] [--terminals N] [--fast]`. Prints one JSON line with the URLs, the
 * API key and the terminals, then a few lines for humans; stops cleanly on SIGTERM/SIGINT.
 * `TILLFLOW_SIM_API_KEY` sets the default merchant's key.
 */
import { NodeRuntime } from "@effect/platform-node"
import { SimulatorServer } from "@tillflow/simulator"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** Default port of the process (0 picks a free one). */
const DEFAULT_PORT = 7070

const usage = `usage: simulator [--port P] [--status-port P] [--seed N] [--host H] [--terminals N] [--fast]
  --port P          main host port (default ${DEFAULT_PORT}; 0 picks a free port)
  --status-port P   serve the status host on its own port (default: under /_status-host)
  --seed N          deterministic keys, serials and ids
  --host H          interface to bind (default 127.0.0.1)
  --terminals N     online terminals of the default merchant (default 3)
  --fast            every step takes 0 ms (benchmarks)`

interface Args {
  readonly port: number
  readonly statusPort: number | undefined
  readonly seed: number | undefined
  readonly host: string
  readonly terminals: number
  readonly fast: boolean
}

const parseArgs = (argv: ReadonlyArray<string>): Args | string => {
  let port = DEFAULT_PORT
  let statusPort: number | undefined
  let seed: number | undefined
  let host = "127.0.0.1"
  let terminals = 3
  let fast = false
  const int = (name: string, value: string | undefined, max: number): number | string => {
    const n = value === undefined ? NaN : Number(value)
    return Number.isInteger(n) && n >= 0 && n <= max ? n : `${name} needs an integer from 0 to ${max}`
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const next = argv[i + 1]
    const take = (name: string, max: number): number | string => {
      i++
      return int(name, next, max)
    }
    switch (arg) {
      case "--port": {
        const v = take(arg, 65535)
        if (typeof v === "string") return v
        port = v
        break
      }
      case "--status-port": {
        const v = take(arg, 65535)
        if (typeof v === "string") return v
        statusPort = v
        break
      }
      case "--seed": {
        const v = take(arg, 4294967295)
        if (typeof v === "string") return v
        seed = v
        break
      }
      case "--terminals": {
        const v = take(arg, 100)
        if (typeof v === "string") return v
        terminals = v
        break
      }
      case "--host":
        if (next === undefined) return "--host needs a value"
        host = next
        i++
        break
      case "--fast":
        fast = true
        break
      case "--help":
      case "-h":
        return usage
      default:
        return `unknown argument ${arg}\n${usage}`
    }
  }
  return { port, statusPort, seed, host, terminals, fast }
}

const zero = {
  WaitingForCard: 0,
  PinInput: 0,
  WaitingHostConnect: 0,
  WaitingHostSend: 0,
  WaitingHostReceive: 0,
  PrintingMerchantReceipt: 0,
  Reboot: 0
}

const main = Effect.gen(function* () {
  const args = parseArgs(process.argv.slice(2))
  if (typeof args === "string") {
    yield* Console.error(args)
    return yield* Effect.sync(() => process.exit(args === usage ? 0 : 2))
  }
  const apiKey = yield* Config.option(Config.nonEmptyString("TILLFLOW_SIM_API_KEY"))
  const SimLive = SimulatorServer.layer({
    port: args.port,
    statusPort: args.statusPort,
    host: args.host,
    seed: args.seed,
    terminals: args.terminals,
    apiKey: Option.getOrUndefined(apiKey),
    timings: args.fast ? zero : undefined
  })
  yield* Layer.launch(
    Layer.effectDiscard(
      Effect.gen(function* () {
        const info = yield* SimulatorServer.SimulatorInfo
        yield* Console.log(SimulatorServer.startupLine(info))
        yield* Console.log(`tillflow simulator listening`)
        yield* Console.log(`  base_url          ${info.baseUrl}`)
        yield* Console.log(`  transactions_url  ${info.transactionsUrl}`)
        yield* Console.log(`  admin             ${info.adminUrl}  (docs/simulator.md)`)
        yield* Console.log(`  ApiKeyCloud       ${info.apiKey}`)
        for (const t of info.terminals)
          yield* Console.log(`  terminal          ${t.serial_number} ${t.terminal_type}`)
      })
    ).pipe(Layer.provide(SimLive))
  )
})

NodeRuntime.runMain(main)
