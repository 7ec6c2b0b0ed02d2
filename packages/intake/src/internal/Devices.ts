/**
 * The terminals the remote service lists, as the intake shows them, and a terminal's type
 * looked up there for a request that does not give it.
 */
import { TerminalCloud } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Intake from "../Intake.js"
import { remoteFailure } from "./Failures.js"

/** The device list and the lookup of a terminal's type in it. */
export interface Devices {
  readonly devices: Effect.Effect<ReadonlyArray<Intake.DeviceView>, Intake.IntakeError>
  /** A listed terminal's type; `InvalidRequest` for a serial the service does not list. */
  readonly terminalTypeOf: (serialNumber: string) => Effect.Effect<string, Intake.IntakeError>
}

/** The devices of the remote service in context. */
export const make: Effect.Effect<Devices, never, TerminalCloud.TerminalCloud> = Effect.gen(function* () {
  const cloud = yield* TerminalCloud.TerminalCloud

  const devices = cloud.listDevices.pipe(
    Effect.mapError(remoteFailure("device list")),
    Effect.map((list) =>
      list.map((d): Intake.DeviceView => ({
        serialNumber: d.serialNumber,
        terminalType: d.terminalType,
        merchant: d.merchantIdAlpha
      }))
    )
  )

  const terminalTypeOf = (serial: string) =>
    Effect.gen(function* () {
      const list = yield* devices
      const device = list.find((d) => d.serialNumber === serial)
      if (device === undefined) {
        return yield* new Intake.InvalidRequest({
          message: `unknown terminal serial ${serial}: the service lists ${
            list.length === 0
              ? "no terminal"
              : list.map((d) => `${d.serialNumber} (${d.terminalType})`).join(", ")
          }`
        })
      }
      return device.terminalType
    })

  return { devices, terminalTypeOf }
})
