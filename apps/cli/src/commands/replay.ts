/**
 * `tillflow replay`: replays recorded execution histories against the workflows of this
 * build, without side effects (`ReplayKit`), and reports every execution that would not
 * replay with the step where it diverges (exit 4 when one would not). The histories come
 * from the database in use, or from an export file (`--from`); `--export FILE` writes the
 * database's histories to such a file (JSON lines) instead.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Handler from "../Handler.js"
import { common } from "../internal/options.js"

export const replay = Command.make(
  "replay",
  {
    json: common.json,
    from: Options.file("from").pipe(
      Options.withDescription(
        "replay the histories of this export file (JSON lines) instead of the database in use"
      ),
      Options.optional
    ),
    export: Options.file("export").pipe(
      Options.withDescription(
        "write the execution histories of the database in use to this file (JSON lines); replays nothing"
      ),
      Options.optional
    ),
    workflow: Options.text("workflow").pipe(
      Options.withDescription("only the executions of this workflow"),
      Options.optional
    )
  },
  Handler.make((options) =>
    // Loaded only for this command: the store and the workflows.
    Effect.flatMap(
      Effect.promise(() => import("../internal/Replay.js")),
      (Replay) => Replay.run(options)
    )
  )
).pipe(
  Command.withDescription(
    "replays recorded execution histories against this build's workflows and reports those that would not replay"
  )
)
