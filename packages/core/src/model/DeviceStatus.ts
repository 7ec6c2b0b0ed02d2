/**
 * Status of a terminal (battery, power, application) and the progress report of an
 * operation (`StatusInfo`). Real payloads use camelCase; the documentation also shows
 * PascalCase (`SerialNumber`), which is read too.
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Enumerations from "./Enumerations.js"
import * as Lenient from "./internal/Lenient.js"

const fields = {
  serialNumber: Lenient.optional(Lenient.StringLenient),
  batteryStatus: Lenient.optional(Lenient.StringLenient),
  batterymV: Lenient.optional(Lenient.StringLenient),
  batteryCharging: Lenient.optional(Lenient.StringLenient),
  externalPower: Lenient.optional(Lenient.StringLenient),
  applicationName: Lenient.optional(Lenient.StringLenient),
  applicationVersion: Lenient.optional(Lenient.StringLenient),
  bluetoothName: Lenient.optional(Lenient.StringLenient),
  statusMessage: Lenient.optional(Lenient.StringLenient)
}

const camelByLowerCase = new Map(Object.keys(fields).map((key) => [key.toLowerCase(), key]))

const Camel = Schema.Struct(fields, Lenient.Extra)

/** Renames PascalCase keys (`SerialNumber`, `BatterymV`) to the camelCase the rest reads. */
const normaliseKeys = (input: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) {
    const camel = camelByLowerCase.get(key.toLowerCase())
    if (camel !== undefined && camel !== key) {
      if (!(camel in input)) out[camel] = value
    } else {
      out[key] = value
    }
  }
  return out
}

const decodeCamel = ParseResult.decodeUnknown(Camel)
const encodeCamel = ParseResult.encodeUnknown(Camel)

/** Device status as received: all fields optional strings, either key casing. */
export const DeviceStatus = Schema.transformOrFail(
  Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  Schema.typeSchema(Camel),
  {
    strict: true,
    decode: (input, options) => decodeCamel(normaliseKeys(input), options),
    encode: (value, options) => encodeCamel(value, options)
  }
).annotations({ identifier: "DeviceStatus" })
/** @see DeviceStatus */
export type DeviceStatus = typeof DeviceStatus.Type

/** Progress report of an operation on a terminal. */
export const StatusInfo = Schema.Struct(
  {
    cancelAllowed: Lenient.optional(Lenient.BooleanLenient),
    status: Lenient.optional(Enumerations.StatusReceived),
    message: Lenient.optional(Schema.String),
    deviceStatus: Lenient.optional(DeviceStatus)
  },
  Lenient.Extra
).annotations({ identifier: "StatusInfo" })
/** @see StatusInfo */
export type StatusInfo = typeof StatusInfo.Type

/** The serial number a device status reports, if any. */
export const serialNumber = (status: DeviceStatus): Option.Option<string> =>
  Option.fromNullable(status.serialNumber)
