/**
 * A command's exit code is its result. A command's body succeeds with the code it ends
 * with, or fails with an error that is said on stderr and mapped to its code (`report`).
 * @effect/cli's `Command.run` keeps no value a handler succeeds with, so a code other than
 * 0 leaves the run as the `Exited` failure, and `processExitCode` reads the process's exit
 * code from how the run ended.
 */
import * as ValidationError from "@effect/cli/ValidationError"
import type * as Intake from "@tillflow/intake/Intake"
import type * as Stack from "@tillflow/intake/Stack"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Os from "node:os"
import type * as Backend from "./Backend.js"
import * as Output from "./Output.js"

/** What a command's body may fail with. */
export type Failure = Intake.IntakeError | Output.UsageError | Stack.StartupError | Backend.BackendError

/** A command ended with this exit code (never 0: a command that ends with 0 succeeds). */
export class Exited extends Data.TaggedError("Exited")<{ readonly code: number }> {}

/**
 * The exit code of a body that failed: its message on stderr (under any progress line), or,
 * under `--json`, one JSON object on stdout, `{ "error": <tag>, "message": … }`, so a script
 * reading the document gets one either way.
 */
export const report = <R>(
  body: Effect.Effect<number, Failure, R>,
  json = false
): Effect.Effect<number, never, R> =>
  Effect.catchAll(body, (error) =>
    Effect.gen(function* () {
      yield* Output.clearProgress
      // A money rule's refusal names its rule.
      const rule = error._tag === "ActionRefused" ? error.rule : undefined
      // A refusal of the caller's role names the role.
      const role = error._tag === "Forbidden" ? error.role : undefined
      if (json)
        yield* Console.log(
          JSON.stringify({
            error: error._tag,
            message: error.message,
            ...(rule === undefined ? {} : { rule }),
            ...(role === undefined ? {} : { role })
          })
        )
      else
        yield* Output.note(
          `tillflow: ${rule === undefined ? "" : `refused by rule ${rule}: `}${error.message}`
        )
      return error._tag === "StartupError" || error._tag === "BackendError"
        ? Output.ExitCode.internal
        : Output.exitCodeOfError(error)
    })
  )

const wantsJson = (options: unknown): boolean =>
  typeof options === "object" && options !== null && (options as { readonly json?: unknown }).json === true

/** A command's handler from its body, which yields the exit code the command ends with. */
export const make =
  <A, R>(body: (options: A) => Effect.Effect<number, Failure, R>) =>
  (options: A): Effect.Effect<void, Exited, R> =>
    Effect.flatMap(report(body(options), wantsJson(options)), (code) =>
      code === Output.ExitCode.ok ? Effect.void : Effect.fail(new Exited({ code }))
    )

/** A signal that stops the command line. */
export type StopSignal = "SIGINT" | "SIGTERM"

/**
 * Whether a signal is how the invoked command is meant to end: `tillflow worker` runs until
 * it is stopped, and stops gracefully on SIGINT or SIGTERM with 0, as `npm start` does.
 * Every other command is interrupted by a signal before its end.
 */
export const stopsOnSignal = (args: ReadonlyArray<string>): boolean => args[0] === "worker"

/**
 * The process's exit code from how the run of the root command ended: the command's own
 * code; 2 for what @effect/cli refused (an unknown option, a bad value); 1 for a defect.
 * Interrupted by a signal, 128 + its number as shells report it (130 for Ctrl-C, 143 for
 * SIGTERM), never 0, which says approved: the command has said where its operation goes on;
 * except for a command a signal is meant to stop (`signalIsStop`, see `stopsOnSignal`).
 */
export const processExitCode = (
  exit: Exit.Exit<unknown, unknown>,
  signal: Option.Option<StopSignal>,
  signalIsStop = false
): number => {
  if (Exit.isSuccess(exit)) return Output.ExitCode.ok
  if (Exit.isInterrupted(exit)) {
    if (signalIsStop && Option.isSome(signal)) return Output.ExitCode.ok
    return Option.match(signal, {
      onNone: () => Output.ExitCode.internal,
      onSome: (name) => 128 + Os.constants.signals[name]
    })
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) return Output.ExitCode.internal
  if (failure.value instanceof Exited) return failure.value.code
  return ValidationError.isValidationError(failure.value) ? Output.ExitCode.usage : Output.ExitCode.internal
}
