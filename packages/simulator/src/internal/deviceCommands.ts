/**
 * Device commands (`POST /devices/{deviceType}/{serialNumber}/{command}`): settings a
 * listening terminal applies (unattended mode, password protection, locale, screen
 * brightness, reboot time) and the reboot, which ends a running operation when forced and
 * restarts the callback recovery loop when the terminal comes back.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { Caller, SimulatorService } from "./service.js"
import { invalid, NotFound, rule, type SimulatorError } from "../SimulatorError.js"
import * as Delivery from "./delivery.js"
import { terminalOf } from "./lookups.js"
import type { Terminal } from "./model.js"
import type { Shared } from "./shared.js"
import * as Validate from "./validate.js"

const deviceCommand = (shared: Shared) =>
  Effect.fn("Simulator.deviceCommand")(function* (
    caller: Caller,
    deviceType: string,
    serial: string,
    command: string,
    body: unknown
  ) {
    const terminal = terminalOf(shared, caller, serial, deviceType)
    if (terminal === undefined) return yield* new NotFound({ message: `Device ${serial} not found` })
    const b = Validate.isObject(body) ? body : undefined
    const bool = (field: string) =>
      b !== undefined && typeof b[field] === "boolean"
        ? Effect.succeed(b[field] as boolean)
        : Effect.fail(invalid(field, `${field} must be a boolean`))
    const integer = (field: string) =>
      b !== undefined && typeof b[field] === "number" && Number.isInteger(b[field])
        ? Effect.succeed(b[field] as number)
        : Effect.fail(invalid(field, `${field} must be an integer`))
    const inRange = (field: string, value: number, low: number, high: number) =>
      value >= low && value <= high
        ? Effect.void
        : Effect.fail(rule("VALUE_OUT_OF_RANGE", `${field} must be between ${low} and ${high}`, "2001"))
    // Validate before the listening check: a malformed command is a 422 whatever the device does.
    let apply: () => Effect.Effect<void, SimulatorError>
    switch (command) {
      case "set-unattended-mode": {
        const status = yield* bool("status")
        apply = () => Effect.sync(() => void (terminal.settings.unattended = status))
        break
      }
      case "set-password-protected": {
        const status = yield* bool("status")
        apply = () => Effect.sync(() => void (terminal.settings.passwordProtected = status))
        break
      }
      case "set-locale": {
        const locale = b?.locale
        if (typeof locale !== "string" || !/^[a-z]{2}_[A-Z]{2}$/.test(locale))
          return yield* invalid("locale", "locale must be a language tag like en_US")
        apply = () => Effect.sync(() => void (terminal.settings.locale = locale))
        break
      }
      case "set-screen-brightness": {
        const min = yield* integer("minimumBrightnessLevel")
        const max = yield* integer("maximumBrightnessLevel")
        yield* inRange("minimumBrightnessLevel", min, 0, 100)
        yield* inRange("maximumBrightnessLevel", max, 0, 100)
        if (min > max)
          return yield* rule(
            "VALUE_OUT_OF_RANGE",
            "minimumBrightnessLevel is above maximumBrightnessLevel",
            "2001"
          )
        apply = () =>
          Effect.sync(() => {
            terminal.settings.minimumBrightnessLevel = min
            terminal.settings.maximumBrightnessLevel = max
          })
        break
      }
      case "set-reboot-time": {
        const hour = yield* integer("hour")
        yield* inRange("hour", hour, 0, 23)
        apply = () => Effect.sync(() => void (terminal.settings.rebootHour = hour))
        break
      }
      case "reboot": {
        const force = yield* bool("force")
        apply = () => reboot(shared, terminal, force)
        break
      }
      default:
        return yield* new NotFound({ message: `Unknown command ${command}` })
    }
    if (!terminal.online || !terminal.listening)
      return yield* rule("DEVICE_NOT_LISTENING", "The device is not listening for commands", "2002")
    yield* apply()
  })

const reboot = (shared: Shared, terminal: Terminal, force: boolean): Effect.Effect<void, SimulatorError> =>
  Effect.suspend(() => {
    const op = terminal.current
    if (op !== undefined && !force)
      return Effect.fail(rule("DEVICE_BUSY", "The terminal is busy: reboot not forced", "2003"))
    if (op !== undefined) {
      op.aborted = true
      Deferred.unsafeDone(op.wake, Effect.void)
    }
    const rebootMs = shared.store.timingsOf(terminal).Reboot
    const current = shared.store
    const restart = Effect.gen(function* () {
      // Let an aborted operation finish before the terminal goes down.
      if (op !== undefined) yield* Deferred.await(op.done)
      terminal.online = false
      yield* shared.clock.sleep(rebootMs)
      if (shared.store !== current) return
      terminal.online = true
      // The recovery loop restarts when the terminal application restarts.
      Delivery.kickAll(shared.store, terminal.serial)
    })
    return Effect.sync(() => shared.fork(restart))
  })

/** The device command endpoint. */
export const make = (shared: Shared): Pick<SimulatorService, "deviceCommand"> => ({
  deviceCommand: deviceCommand(shared)
})
