/** `tillflow simulator`: the simulator of the remote service as a process of its own. */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { boundedInteger, withShownDefault } from "../internal/options.js"

export const simulator = Command.make(
  "simulator",
  {
    port: boundedInteger("port", 0, 65_535).pipe(withShownDefault(7070)),
    seed: Options.integer("seed").pipe(Options.optional),
    terminals: boundedInteger("terminals", 1, 10_000).pipe(withShownDefault(3)),
    host: Options.text("host").pipe(withShownDefault("127.0.0.1"))
  },
  Handler.make((o) =>
    // Loaded only for this command: every other one starts without the simulator's modules.
    Effect.flatMap(
      Effect.promise(() => import("@tillflow/simulator/SimulatorServer")),
      (SimulatorServer) =>
        Layer.launch(
          Layer.scopedDiscard(
            Effect.gen(function* () {
              const info = yield* SimulatorServer.SimulatorInfo
              yield* Console.log(SimulatorServer.startupLine(info))
              yield* Console.log(
                `tillflow simulator listening on ${info.baseUrl} (status host ${info.transactionsUrl}; admin ${info.adminUrl}; docs/simulator.md)`
              )
            })
          ).pipe(
            Layer.provide(
              SimulatorServer.layer({
                port: o.port,
                host: o.host,
                terminals: o.terminals,
                ...(Option.isSome(o.seed) ? { seed: o.seed.value } : {})
              })
            )
          )
        ).pipe(
          Effect.catchAll((error) =>
            Effect.as(Output.note(`tillflow simulator: ${String(error.cause)}`), Output.ExitCode.internal)
          )
        )
    )
  )
).pipe(Command.withDescription("runs the simulator of the remote service as a process (docs/simulator.md)"))
