/** `tillflow worker`: the standalone worker, as `npm start` runs it. */
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"

export const worker = Command.make(
  "worker",
  {},
  Handler.make(() =>
    // Loaded only for this command: every other one starts without the worker's modules.
    Effect.flatMap(
      Effect.promise(() => import("@tillflow/intake/Program")),
      (Program) => Effect.as(Program.run("worker"), Output.ExitCode.ok)
    )
  )
).pipe(
  Command.withDescription("runs the standalone worker (same as npm start; configuration: docs/operations.md)")
)
