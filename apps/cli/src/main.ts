/**
 * `tillflow`: the command line (`npx tillflow <command>`, `bin/tillflow.mjs`). Commands and exit codes:
 * `tillflow --help`, `Output` and docs/operations.md. Logs go to stderr, warnings and up,
 * so `--json` output on stdout stays one clean document.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { configLayer, tillflow } from "./Commands.js"
import * as Handler from "./Handler.js"

const stderrLogger = Logger.make(({ logLevel, message }) => {
  const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
  process.stderr.write(`tillflow ${logLevel.label.toLowerCase()}: ${text}\n`)
})

const cli = Command.run(tillflow, { name: "tillflow", version: "0.0.0" })

const program = cli(process.argv).pipe(
  Effect.provide(
    Layer.mergeAll(
      NodeContext.layer,
      Logger.replace(Logger.defaultLogger, stderrLogger),
      Logger.minimumLogLevel(LogLevel.Warning),
      configLayer
    )
  )
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => {
    const code = Handler.processExitCode(exit)
    onExit(code)
    // Something (a keep-alive socket) may hold the event loop: leave once output is written.
    setTimeout(() => process.exit(code), 200).unref()
  }
})
