/**
 * The terminals the remote service lists, as the intake shows them, and the check of the
 * terminal a request names: its serial must be listed, and a `terminal_type` given with it
 * must be the listed one (the type is looked up when not given). The check reads a copy of
 * the list kept for {@link listTtlMillis}, read again when a serial is not in it, so a
 * terminal added at the service is found at once and a busy intake does not ask the
 * service for the list at every request. Each merchant has its own list, read with its own
 * key (`MerchantKeys.currentMerchant`): a terminal belongs to the merchant whose list names
 * it, and a request for one merchant cannot name another's terminal.
 */
import { MerchantKeys, TerminalCloud } from "@tillflow/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Intake from "../Intake.js"
import { isKeyRefused, remoteFailure } from "./Failures.js"

/** How long a device list read for a check is used. */
export const listTtlMillis = 30_000

/** The device list and the check of a request's terminal against it. */
export interface Devices {
  readonly devices: Effect.Effect<ReadonlyArray<Intake.DeviceView>, Intake.IntakeError>
  /**
   * The type of the listed terminal `serialNumber`: `InvalidRequest` naming `fields.serial`
   * for a serial the service does not list, or `fields.type` when `given` is not its type.
   */
  readonly terminalTypeOf: (
    serialNumber: string,
    given?: string | undefined,
    fields?: { readonly serial: string; readonly type: string }
  ) => Effect.Effect<string, Intake.IntakeError>
  /**
   * Whether the service takes this worker's API key, for `/ready`: `ok` (a list read within
   * the last {@link listTtlMillis} counts), `refused: …` or `unreachable: …`.
   */
  readonly service: Effect.Effect<string>
  /**
   * Fails with `Unavailable` when the service refuses this worker's API key (the same read
   * of the list): an operation started anyway would only be refused by the service.
   */
  readonly ensureKey: Effect.Effect<void, Intake.IntakeError>
}

const listed = (list: ReadonlyArray<Intake.DeviceView>): string =>
  list.length === 0 ? "no terminal" : list.map((d) => `${d.serialNumber} (${d.terminalType})`).join(", ")

/** The devices of the remote service in context. */
export const make: Effect.Effect<Devices, never, TerminalCloud.TerminalCloud> = Effect.gen(function* () {
  const cloud = yield* TerminalCloud.TerminalCloud
  // merchant ("" for the deployment's own) -> its list, as last read
  const kept = yield* Ref.make(
    new Map<string, { readonly at: number; readonly list: ReadonlyArray<Intake.DeviceView> }>()
  )
  const merchant = Effect.map(MerchantKeys.currentMerchant, (id) => id ?? "")

  const devices = cloud.listDevices.pipe(
    Effect.mapError(remoteFailure("device list")),
    Effect.map((list) =>
      list.map((d): Intake.DeviceView => ({
        serialNumber: d.serialNumber,
        terminalType: d.terminalType,
        merchant: d.merchantIdAlpha
      }))
    ),
    Effect.tap((list) =>
      Effect.all([Clock.currentTimeMillis, merchant]).pipe(
        Effect.flatMap(([at, id]) => Ref.update(kept, (lists) => new Map(lists).set(id, { at, list })))
      )
    )
  )

  /** The kept list when it is recent enough (`maxAge`), else a fresh one (`kept: false`). */
  const listWithin = (maxAge: number) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const copy = (yield* Ref.get(kept)).get(yield* merchant)
      return copy !== undefined && now - copy.at <= maxAge
        ? { list: copy.list, kept: true }
        : { list: yield* devices, kept: false }
    })

  const terminalTypeOf = (
    serial: string,
    given?: string | undefined,
    fields: { readonly serial: string; readonly type: string } = {
      serial: "serialNumber",
      type: "terminalType"
    }
  ) =>
    Effect.gen(function* () {
      let copy = yield* listWithin(listTtlMillis)
      let device = copy.list.find((d) => d.serialNumber === serial)
      // Not in the kept copy: the service may list it since (as many reads as before this
      // copy was kept, when every request without a type read the list).
      if (device === undefined && copy.kept) {
        copy = yield* listWithin(0)
        device = copy.list.find((d) => d.serialNumber === serial)
      }
      if (device === undefined) {
        return yield* new Intake.InvalidRequest({
          message: `${fields.serial}: unknown terminal serial ${serial}: the service lists ${listed(copy.list)}`
        })
      }
      if (given !== undefined && given !== device.terminalType) {
        return yield* new Intake.InvalidRequest({
          message: `${fields.type}: terminal ${serial} is a ${device.terminalType}, not a ${given} (the service's device list); leave it out to have it looked up`
        })
      }
      return device.terminalType
    })

  const service = Effect.gen(function* () {
    const read = yield* Effect.either(listWithin(listTtlMillis))
    if (read._tag === "Right") return "ok"
    const error = read.left
    return isKeyRefused(error) ? `refused: ${error.message}` : `unreachable: ${error.message}`
  })

  const ensureKey = Effect.gen(function* () {
    const read = yield* Effect.either(listWithin(listTtlMillis))
    if (read._tag === "Left" && isKeyRefused(read.left)) return yield* Effect.fail(read.left)
  })

  return { devices, terminalTypeOf, service, ensureKey }
})
