/**
 * Running an operation from the command line: start it through the `Intake`, follow it
 * with a progress line until it ends or the wait is over, print it, and yield the exit
 * code it ends with. Terminal operations (`runOperation`) and terminal-less ones
 * (`runLifecycle`, `onTerminal`) share the loop.
 */
import * as Intake from "@tillflow/intake/Intake"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Backend from "../Backend.js"
import * as Output from "../Output.js"
import type { LifecycleOptions, RunOptions } from "./options.js"

/** Follows an execution until it ends or the wait is over, drawing the progress line. */
const follow = (started: Intake.ExecutionView, waitSeconds: number) =>
  Effect.gen(function* () {
    const intake = yield* Intake.Intake
    const begin = yield* Clock.currentTimeMillis
    let view = started
    let tick = 0
    while (
      view.report === undefined &&
      !["succeeded", "failed", "interrupted", "stuck"].includes(view.status)
    ) {
      const now = yield* Clock.currentTimeMillis
      if (now - begin > waitSeconds * 1000) break
      yield* Output.progress(Output.progressLine(view, now - begin, tick++))
      yield* Effect.sleep("250 millis")
      view = yield* intake.execution(view.executionId, 0)
    }
    yield* Output.clearProgress
    return view
  })

/**
 * Starts an execution on the command's intake and prints it: at once with `--detach`
 * (exit 0), else once it has ended or the wait is over (its exit code). Interrupted while
 * it follows, it says where the execution goes on; `main` turns the signal into the exit code.
 */
const startAndFollow = <E>(
  options: LifecycleOptions,
  start: Effect.Effect<Intake.ExecutionView, E, Intake.Intake>,
  original: string | undefined = undefined
) =>
  Backend.provide(
    options,
    { cloud: true, worker: true },
    Effect.gen(function* () {
      const info = yield* Backend.BackendInfo
      const started = yield* start
      if (options.detach) {
        yield* Output.printExecution(options.json, started)
        return Output.ExitCode.ok
      }
      const id = started.executionId
      const final = yield* Output.note(`tillflow: started execution ${id}; following it`).pipe(
        Effect.zipRight(follow(started, options.wait)),
        Effect.onInterrupt(() =>
          Effect.zipRight(
            Output.clearProgress,
            Output.note(
              info.remote
                ? `tillflow: stopped following; the worker carries on with execution ${id} (tillflow executions show ${id})`
                : `tillflow: interrupted; execution ${id} stays in the store and resumes with the next worker or command (tillflow executions show ${id})`
            )
          )
        )
      )
      yield* Output.printExecution(options.json, final)
      const code = Output.exitCodeOf(final)
      const unknownThere = /not found|invalid guid/i.test(final.report?.summary ?? "")
      const refused = code === Output.ExitCode.failed || code === Output.ExitCode.declined
      if (info.simulator && original !== undefined && refused && unknownThere) {
        yield* Output.note(simulatorGone(original))
      }
      return code
    })
  )

/**
 * Why a follow-up failed, when it ran on this process's built-in simulator: the transaction
 * it refers to was most likely made by another command, on that command's own simulator,
 * whose state ended with it ("Transaction … not found").
 */
export const simulatorGone = (original: string): string =>
  `tillflow: this command ran on a built-in simulator of its own, which knows only what this process did: ` +
  `if ${original} was made by an earlier command, it was made on that command's simulator, which ended with it. ` +
  `Run commands through a worker (npm start or tillflow worker, then the commands find it through the data ` +
  `directory or --worker/TILLFLOW_WORKER_URL), or point at a simulator process (tillflow simulator) or the real service.`

/** Runs a terminal operation from its JSON request: start, follow, print, exit code. */
export const runOperation = (
  options: RunOptions,
  request: Record<string, unknown>,
  extra: { readonly originalTransactionReference?: string | undefined } = {}
) =>
  startAndFollow(
    options,
    Effect.gen(function* () {
      const intake = yield* Intake.Intake
      const idempotencyKey = Option.getOrElse(options.key, () => `cli-${globalThis.crypto.randomUUID()}`)
      return yield* intake.start({
        idempotencyKey,
        request: {
          ...request,
          serial_number: options.serial,
          ...(Option.isSome(options.terminalType) ? { terminal_type: options.terminalType.value } : {})
        },
        ...(Option.isSome(options.delivery) ? { delivery: options.delivery.value } : {}),
        ...(Option.isSome(options.deadline) ? { deadlineSeconds: options.deadline.value } : {}),
        ...(extra.originalTransactionReference === undefined
          ? {}
          : { originalTransactionReference: extra.originalTransactionReference }),
        waitSeconds: 0
      })
    }),
    typeof request["originalTransactionId"] === "string" ? request["originalTransactionId"] : undefined
  )

/** Runs a terminal-less operation (a `Lifecycles` workflow) by name: start, follow, print, exit code. */
export const runLifecycle = (
  options: LifecycleOptions,
  workflow: string,
  payloadOf:
    | Record<string, unknown>
    | Effect.Effect<Record<string, unknown>, Output.UsageError | Intake.IntakeError, Intake.Intake>
) =>
  startAndFollow(
    options,
    Effect.gen(function* () {
      const intake = yield* Intake.Intake
      const payload = Effect.isEffect(payloadOf) ? yield* payloadOf : payloadOf
      return yield* intake.lifecycle(workflow, {
        payload: { ...payload, ...(Option.isSome(options.key) ? { requestId: options.key.value } : {}) },
        waitSeconds: 0
      })
    }),
    Effect.isEffect(payloadOf) || typeof payloadOf["originalGuid"] !== "string"
      ? undefined
      : payloadOf["originalGuid"]
  )

/** The terminal type of a serial: given, or looked up in the device list. */
const terminalTypeFor = (serialNumber: string, given: Option.Option<string>) =>
  Option.isSome(given)
    ? Effect.succeed(given.value)
    : Effect.flatMap(Intake.Intake, (intake) =>
        Effect.flatMap(intake.devices, (list) => {
          const device = list.find((d) => d.serialNumber === serialNumber)
          return device === undefined
            ? Effect.fail(
                new Output.UsageError({
                  message: `unknown terminal serial ${serialNumber}: the service lists ${list.map((d) => d.serialNumber).join(", ") || "none"}`
                })
              )
            : Effect.succeed(device.terminalType)
        })
      )

/** A terminal-less command about one terminal (batches, device commands). */
export const onTerminal = (
  o: LifecycleOptions & { readonly serial: string; readonly terminalType: Option.Option<string> },
  workflow: string,
  payload: Record<string, unknown>
) =>
  runLifecycle(
    o,
    workflow,
    Effect.map(terminalTypeFor(o.serial, o.terminalType), (terminalType) => ({
      serialNumber: o.serial,
      terminalType,
      ...payload
    }))
  )

/** The options of a `dual` command run through the terminal `serialNumber`. */
export const terminalOptions = (
  o: { readonly serial: Option.Option<string> } & Omit<RunOptions, "serial">,
  serialNumber: string
): RunOptions => ({
  ...o,
  serial: serialNumber
})

/** The `transactionReference` of a request, when `--reference` gives one. */
export const optionalRef = (value: Option.Option<string>) =>
  Option.isSome(value) ? { transactionReference: value.value } : {}
