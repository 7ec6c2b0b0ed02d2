/**
 * The terminals themselves: `devices` lists the merchant's terminals, `device` sends one
 * a device command (its values checked against the spec's ranges before anything is sent).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Intake from "@tillflow/intake/Intake"
import { DeviceCommand } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Option from "effect/Option"
import * as Backend from "../Backend.js"
import * as Handler from "../Handler.js"
import * as Output from "../Output.js"
import { onTerminal } from "../internal/execution.js"
import { common, lifecycleRun, serial, terminalType } from "../internal/options.js"

export const devices = Command.make(
  "devices",
  { ...common },
  Handler.make((o) =>
    Backend.provide(
      o,
      { cloud: true, worker: false },
      Effect.gen(function* () {
        const list = yield* (yield* Intake.Intake).devices
        yield* Output.print(o.json, list, () =>
          list.length === 0
            ? ["no terminal"]
            : list.map(
                (d) => `${d.serialNumber.padEnd(14)} ${d.terminalType.padEnd(10)} merchant ${d.merchant}`
              )
        )
        return Output.ExitCode.ok
      })
    )
  )
).pipe(Command.withDescription("lists the merchant's terminals"))

const commands = [
  "set-unattended-mode",
  "set-password-protected",
  "set-locale",
  "set-screen-brightness",
  "set-reboot-time",
  "reboot"
] as const

const deviceOptions = {
  ...lifecycleRun,
  serial,
  terminalType,
  command: Args.choice(
    commands.map((c) => [c, c] as const),
    { name: "command" }
  ),
  on: Options.boolean("on").pipe(
    Options.withDescription("set-unattended-mode, set-password-protected: turn on (else off)")
  ),
  locale: Options.text("locale").pipe(Options.withDescription("set-locale: e.g. en_US"), Options.optional),
  min: Options.integer("min").pipe(Options.withDescription("set-screen-brightness: 0–100"), Options.optional),
  max: Options.integer("max").pipe(Options.withDescription("set-screen-brightness: 0–100"), Options.optional),
  hour: Options.integer("hour").pipe(Options.withDescription("set-reboot-time: 0–23"), Options.optional),
  force: Options.boolean("force").pipe(Options.withDescription("reboot: even while an operation runs"))
}

/** The body's schema of each command (the spec's ranges), and the flag of each field. */
const bodySchema = {
  "set-unattended-mode": DeviceCommand.SetUnattendedMode,
  "set-password-protected": DeviceCommand.SetPasswordProtected,
  "set-locale": DeviceCommand.SetLocale,
  "set-screen-brightness": DeviceCommand.SetScreenBrightness,
  "set-reboot-time": DeviceCommand.SetRebootTime,
  reboot: DeviceCommand.Reboot
} as const
const flagOf: Record<string, string> = {
  minimumBrightnessLevel: "--min",
  maximumBrightnessLevel: "--max",
  hour: "--hour",
  locale: "--locale",
  status: "--on",
  force: "--force"
}

/**
 * A body checked against the spec's ranges (core's schemas) before anything starts, each
 * refusal said with its flag and value: `--max 300: a brightness level is an integer from 0
 * to 100` (exit 2), not a parse tree, and no execution stored for it.
 */
const checked = (command: (typeof commands)[number], body: Record<string, unknown>) => {
  const decoded = Schema.decodeUnknownEither(bodySchema[command] as Schema.Schema<unknown, unknown>)(body)
  if (Either.isRight(decoded)) return Effect.succeed(body)
  const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) => {
    const field = String(issue.path[0] ?? "")
    const flag = flagOf[field]
    return flag === undefined ? issue.message : `${flag} ${String(body[field])}: ${issue.message}`
  })
  return Effect.fail(new Output.UsageError({ message: `${command}: ${issues.join("; ")}` }))
}

/** The body of a device command, from the options its command takes. */
const bodyOf = (o: {
  readonly command: (typeof commands)[number]
  readonly on: boolean
  readonly locale: Option.Option<string>
  readonly min: Option.Option<number>
  readonly max: Option.Option<number>
  readonly hour: Option.Option<number>
  readonly force: boolean
}) =>
  Effect.gen(function* () {
    const need = <A>(value: Option.Option<A>, flag: string): Effect.Effect<A, Output.UsageError> =>
      Option.match(value, {
        onNone: () => Effect.fail(new Output.UsageError({ message: `${o.command} needs ${flag}` })),
        onSome: Effect.succeed
      })
    switch (o.command) {
      case "set-unattended-mode":
      case "set-password-protected":
        return { status: o.on }
      case "set-locale":
        return { locale: yield* need(o.locale, "--locale (e.g. en_US)") }
      case "set-screen-brightness":
        return {
          minimumBrightnessLevel: yield* need(o.min, "--min (0–100)"),
          maximumBrightnessLevel: yield* need(o.max, "--max (0–100)")
        }
      case "set-reboot-time":
        return { hour: yield* need(o.hour, "--hour (0–23)") }
      case "reboot":
        return { force: o.force }
    }
  })

export const device = Command.make(
  "device",
  deviceOptions,
  Handler.make((o) =>
    Effect.flatMap(
      Effect.flatMap(bodyOf(o), (body) => checked(o.command, body)),
      (body) => onTerminal(o, "DeviceCommand.Send", { command: o.command, body })
    )
  )
).pipe(Command.withDescription("sends a device command (values checked against the spec's ranges first)"))
