/**
 * `tillflow operators hash`: the hash of an operator's secret, as the operators'
 * configuration (`TILLFLOW_OPERATORS`, `TILLFLOW_OPERATORS_FILE`) takes it. The secret is
 * read from standard input (typed without echo on a terminal), never from an argument
 * (which the shell's history and `ps` would show), and never printed.
 */
import * as Command from "@effect/cli/Command"
import { Operators } from "@tillflow/console"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import * as Secret from "../internal/secret.js"

/** The shortest secret accepted. */
export const minimumLength = 12

const hash = Command.make(
  "hash",
  {},
  Handler.make(() =>
    Effect.gen(function* () {
      const secret = Redacted.value(yield* Secret.read("the operator's secret"))
      if (secret.length < minimumLength) {
        return yield* new Output.UsageError({
          message: `the secret has ${secret.length} characters: at least ${minimumLength} are needed (give it on standard input)`
        })
      }
      const hashed = yield* Operators.hash(secret)
      yield* Effect.sync(() => process.stdout.write(`${hashed}\n`))
      return Output.ExitCode.ok
    })
  )
).pipe(
  Command.withDescription(
    "prints the hash of an operator's secret read from standard input, for TILLFLOW_OPERATORS(_FILE)"
  )
)

export const operators = Command.make("operators").pipe(
  Command.withDescription("the console's named operators"),
  Command.withSubcommands([hash])
)
