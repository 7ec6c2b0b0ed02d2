/**
 * `tillflow operators hash`: the hash of an operator's secret, as the operators'
 * configuration (`TILLFLOW_OPERATORS`, `TILLFLOW_OPERATORS_FILE`) takes it. The secret is
 * read from standard input (typed without echo on a terminal), never from an argument
 * (which the shell's history and `ps` would show), and never printed.
 */
import * as Command from "@effect/cli/Command"
import * as Prompt from "@effect/cli/Prompt"
import { Operators } from "@tillflow/console"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"

/** The shortest secret accepted. */
export const minimumLength = 12

const fromStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "")
})

const hash = Command.make(
  "hash",
  {},
  Handler.make(() =>
    Effect.gen(function* () {
      const secret = process.stdin.isTTY
        ? Redacted.value(yield* Prompt.hidden({ message: "the operator's secret" }).pipe(Effect.orDie))
        : yield* fromStdin
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
