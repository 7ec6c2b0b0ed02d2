/**
 * A terminal of the merchant, as the device listing returns it (spec 2.1). The shared
 * secret `ssk` is `Redacted` from the moment it is decoded so it cannot reach a log.
 */
import * as Schema from "effect/Schema"
import * as Identifiers from "./Identifiers.js"
import * as Lenient from "./internal/Lenient.js"

/** A device of the listing. `customerReference` appeared in an older version. */
export class Device extends Schema.Class<Device>("Device")({
  merchantIdAlpha: Schema.propertySignature(Schema.String).pipe(Schema.fromKey("merchant_id_alpha")),
  serialNumber: Schema.propertySignature(Identifiers.SerialNumber).pipe(Schema.fromKey("serial_number")),
  ssk: Schema.Redacted(Schema.String),
  terminalType: Schema.propertySignature(Identifiers.TerminalType).pipe(Schema.fromKey("terminal_type")),
  customerReference: Lenient.optional(Schema.String)
}) {}

/** The body of `GET /devices`. */
export const DeviceList = Schema.Array(Device).annotations({ identifier: "DeviceList" })
