/**
 * A terminal of the merchant, as the device listing returns it (spec 2.1). The shared
 * secret `ssk` is `Redacted` from the moment it is decoded so it cannot reach a log.
 */
import * as Schema from "effect/Schema"
import * as Identifiers from "./Identifiers.js"
import * as Lenient from "./internal/Lenient.js"

/**
 * A device of the listing. `customerReference` appeared in an older version. The spec says
 * `ssk` is always present, but the service's own `GET /initialize` example lists devices
 * without it: it is optional here (tolerant in what we receive), so one device without it
 * does not make the whole list undecodable. tillflow never sends it anywhere.
 */
export class Device extends Schema.Class<Device>("Device")({
  merchantIdAlpha: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("merchant_id_alpha")),
  serialNumber: Schema.propertySignature(Identifiers.SerialNumber).pipe(Schema.fromKey("serial_number")),
  ssk: Schema.optionalWith(Schema.Redacted(Schema.String), { exact: true }),
  terminalType: Schema.propertySignature(Identifiers.TerminalType).pipe(Schema.fromKey("terminal_type")),
  customerReference: Lenient.optional(Schema.String)
}) {}

/** The body of `GET /devices`. */
export const DeviceList = Schema.Array(Device).annotations({ identifier: "DeviceList" })
