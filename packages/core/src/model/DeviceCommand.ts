/**
 * Device control commands (`POST /devices/{deviceType}/{serialNumber}/{command}`, spec
 * 4.5), each with its body and ranges. `DeviceCommand` is the tagged union the port takes.
 */
import * as Schema from "effect/Schema"

const strict = { parseOptions: { onExcessProperty: "error" as const } }

/** `set-unattended-mode`: true leaves only the payment screen. */
export class SetUnattendedMode extends Schema.Class<SetUnattendedMode>("SetUnattendedMode")(
  Schema.Struct({ status: Schema.Boolean }).annotations(strict)
) {}

/** `set-locale`: two-letter language and country, underscore form (`en_US`). */
export class SetLocale extends Schema.Class<SetLocale>("SetLocale")(
  Schema.Struct({
    locale: Schema.String.pipe(
      Schema.pattern(/^[a-z]{2}_[A-Z]{2}$/, {
        message: () => "locale must be a two-letter language and country joined by _ (e.g. en_US)"
      })
    )
  }).annotations(strict)
) {}

/** `set-password-protected`. */
export class SetPasswordProtected extends Schema.Class<SetPasswordProtected>("SetPasswordProtected")(
  Schema.Struct({ status: Schema.Boolean }).annotations(strict)
) {}

/** `reboot`: force reboots even during a transaction. */
export class Reboot extends Schema.Class<Reboot>("Reboot")(
  Schema.Struct({ force: Schema.Boolean }).annotations(strict)
) {}

const brightness = Schema.Int.pipe(
  Schema.between(0, 100, { message: () => "a brightness level is an integer from 0 to 100" })
)

/** `set-screen-brightness`: two levels 0..100, minimum not above maximum. */
export class SetScreenBrightness extends Schema.Class<SetScreenBrightness>("SetScreenBrightness")(
  Schema.Struct({ minimumBrightnessLevel: brightness, maximumBrightnessLevel: brightness })
    .annotations(strict)
    .pipe(
      Schema.filter((b) =>
        b.minimumBrightnessLevel <= b.maximumBrightnessLevel
          ? true
          : {
              path: ["minimumBrightnessLevel"],
              message: "minimumBrightnessLevel must not exceed maximumBrightnessLevel"
            }
      )
    )
) {}

/** `set-reboot-time`: hour 0..23 (production devices; a random minute of that hour). */
export class SetRebootTime extends Schema.Class<SetRebootTime>("SetRebootTime")(
  Schema.Struct({
    hour: Schema.Int.pipe(Schema.between(0, 23, { message: () => "hour is an integer from 0 to 23" }))
  }).annotations(strict)
) {}

/** The command names of the path. */
export const CommandName = Schema.Literal(
  "set-unattended-mode",
  "set-locale",
  "set-password-protected",
  "reboot",
  "set-screen-brightness",
  "set-reboot-time"
)
/** @see CommandName */
export type CommandName = typeof CommandName.Type

/** A command and its body. */
export type DeviceCommand =
  | { readonly command: "set-unattended-mode"; readonly body: SetUnattendedMode }
  | { readonly command: "set-locale"; readonly body: SetLocale }
  | { readonly command: "set-password-protected"; readonly body: SetPasswordProtected }
  | { readonly command: "reboot"; readonly body: Reboot }
  | { readonly command: "set-screen-brightness"; readonly body: SetScreenBrightness }
  | { readonly command: "set-reboot-time"; readonly body: SetRebootTime }
