/**
 * An operator's secret, read where no one else sees it: a setting (through `Config`, the
 * environment), else typed without echo on a terminal, else standard input
 * (`… | tillflow login`). Never an argument, which the shell's history and `ps` would show;
 * held as `Redacted` from the moment it is read.
 */
import * as Prompt from "@effect/cli/Prompt"
import type * as Terminal from "@effect/platform/Terminal"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/** Standard input to its end, without the last line break. */
export const fromStdin: Effect.Effect<string> = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "")
})

/** The secret from `variable` when set, else asked with `message` on a terminal, else standard input. */
export const read = (
  message: string,
  variable?: string
): Effect.Effect<Redacted.Redacted<string>, never, Terminal.Terminal> =>
  Effect.gen(function* () {
    const configured =
      variable === undefined
        ? Option.none()
        : yield* Config.option(Config.redacted(Config.nonEmptyString(variable))).pipe(
            Effect.orElseSucceed(() => Option.none())
          )
    if (Option.isSome(configured)) return configured.value
    if (process.stdin.isTTY === true) return yield* Prompt.hidden({ message }).pipe(Effect.orDie)
    return Redacted.make(yield* fromStdin)
  })
