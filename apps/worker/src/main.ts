/**
 * The standalone worker: `npm start`. With no configuration it runs on the embedded store
 * (PGlite under `.tillflow/data`) against the built-in simulator, serves the intake API on
 * http://127.0.0.1:8080 and prints its addresses and a generated token. Configuration:
 * environment and `tillflow.config.json` (docs/operations.md). SIGTERM or Ctrl-C stops it
 * gracefully.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Program } from "@tillflow/intake"

NodeRuntime.runMain(Program.run("worker"), { disableErrorReporting: true, disablePrettyLogger: true })
