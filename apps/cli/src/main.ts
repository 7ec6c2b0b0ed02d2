/**
 * `tillflow`: the command line (`npx tillflow <command>`, `bin/tillflow.mjs`). Commands and exit codes:
 * `tillflow --help`, `Output` and docs/operations.md. Logs go to stderr, warnings and up,
 * so `--json` output on stdout stays one clean document.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Fs from "node:fs"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { configLayer, tillflow } from "./Commands.js"
import * as GlobalOptions from "./GlobalOptions.js"
import * as Handler from "./Handler.js"
import * as Help from "./Help.js"
import * as Output from "./Output.js"

const stderrLogger = Logger.make(({ logLevel, message }) => {
  const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
  process.stderr.write(`tillflow ${logLevel.label.toLowerCase()}: ${text}\n`)
})

Output.plainUnlessColour(process.stdout, process.env)
Output.plainUnlessColour(process.stderr, process.env)

const app = { name: "tillflow", version: "0.1.0" }
const cli = Command.run(tillflow, app)

// Help is printed by `Help` (100 columns, `tillflow …` usage, no colour outside a terminal);
// everything else, a request that is not help after all included, by `Command.run`.
// `tillflow --worker URL devices`: the global options are read after the subcommand.
const args = GlobalOptions.hoist(process.argv.slice(2))
const help = Help.isRequested(args)
  ? Help.render(tillflow, app, args, Help.colourFor(process.stdout, process.env)).pipe(
      Effect.orElseSucceed(() => Option.none<string>())
    )
  : Effect.succeed(Option.none<string>())

const program = Effect.flatMap(help, (text) =>
  Option.match(text, {
    onNone: () => cli([...process.argv.slice(0, 2), ...args]),
    onSome: (text) => Console.log(text)
  })
).pipe(
  Effect.provide(
    Layer.mergeAll(
      NodeContext.layer,
      Logger.replace(Logger.defaultLogger, stderrLogger),
      Logger.minimumLogLevel(LogLevel.Warning),
      configLayer
    )
  )
)

/**
 * The help of every command written to a file instead of running one (`bin/tillflow.mjs`
 * asks for it once per build, to answer `--help` without loading the command line).
 */
const writeHelpIndex = (file: string, bundle: string) =>
  Effect.flatMap(Help.index(tillflow, app), (help) =>
    Effect.sync(() => {
      Fs.writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify({ bundle, help }))
      Fs.renameSync(`${file}.${process.pid}.tmp`, file)
    })
  ).pipe(Effect.provide(NodeContext.layer))

// `runMain` interrupts the program on SIGINT and SIGTERM without saying which came: keep it
// for the exit code. Both listeners go with the first signal, as `runMain`'s do: a second
// signal then ends the process at once.
let signal = Option.none<Handler.StopSignal>()
const listeners = (["SIGINT", "SIGTERM"] as const).map((name) => {
  const listener = () => {
    signal = Option.some(name)
    for (const [other, remove] of listeners) process.removeListener(other, remove)
  }
  return [name, listener] as const
})
for (const [name, listener] of listeners) process.on(name, listener)

const helpIndexFile = process.env["TILLFLOW_CLI_HELP_INDEX"]
if (helpIndexFile !== undefined) {
  void Effect.runPromise(writeHelpIndex(helpIndexFile, process.env["TILLFLOW_CLI_BUNDLE_IDENTITY"] ?? ""))
} else {
  NodeRuntime.runMain(program, {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => {
      const code = Handler.processExitCode(exit, signal, Handler.stopsOnSignal(args))
      onExit(code)
      // Something (a keep-alive socket) may hold the event loop: leave once output is written.
      setTimeout(() => process.exit(code), 200).unref()
    }
  })
}
