/**
 * Device control commands (spec 4.5) as a durable workflow: the body of each command is
 * checked locally against its range or format (brightness 0..100 with minimum ≤ maximum,
 * reboot hour 0..23, locale `ll_CC`, booleans) before anything is sent, and every command
 * is recorded in the device's stream (`device-<serial>`): requested, then accepted or
 * refused. Setting a value twice is harmless, so a 5xx on a `set-…` command is resent; a
 * reboot is not (a second one would reboot again), so its unknown outcome is recorded as
 * in doubt.
 */
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as DurableStep from "@tillflow/engine/DurableStep"
import * as DeviceCommand from "../model/DeviceCommand.js"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Identifiers from "../model/Identifiers.js"
import * as Guarded from "./internal/guarded.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as PolicyError from "./PolicyError.js"
import * as RemoteError from "../model/RemoteError.js"
import * as TerminalCloud from "../model/TerminalCloud.js"

/** Every error of the device command workflow. */
export const DeviceCommandError = Schema.Union(
  LifecycleError.InvalidDeviceCommand,
  LifecycleError.RequestAlreadyFailed,
  PolicyError.NotCharged,
  RemoteError.RemoteError,
  EventStore.EventStoreError
)
/** @see DeviceCommandError */
export type DeviceCommandError = typeof DeviceCommandError.Type

/** A command the device accepted (202). */
export class Accepted extends Schema.Class<Accepted>("DeviceCommandAccepted")({
  requestId: Schema.String,
  command: DeviceCommand.CommandName,
  body: Schema.Record({
    key: Schema.String,
    value: Schema.Union(Schema.Boolean, Schema.Number, Schema.String)
  })
}) {}

/** Send a command to a device; `body` is checked against the command's rules first. */
export const Send = Workflow.make({
  name: "DeviceCommand.Send",
  payload: {
    requestId: Schema.String,
    serialNumber: Identifiers.SerialNumber,
    terminalType: Identifiers.TerminalType,
    command: DeviceCommand.CommandName,
    body: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  },
  success: Accepted,
  error: DeviceCommandError,
  idempotencyKey: (p) => `${p.serialNumber}/${p.requestId}`
})

/** The rule each command's body is checked against. */
export const RULES: Readonly<Record<DeviceCommand.CommandName, string>> = {
  "set-unattended-mode": "status is a boolean",
  "set-locale": "locale is a two-letter language and country joined by _ (en_US)",
  "set-password-protected": "status is a boolean",
  reboot: "force is a boolean",
  "set-screen-brightness": "brightness levels are integers 0..100, minimum not above maximum",
  "set-reboot-time": "hour is an integer 0..23"
}

const check = <A, I>(
  schema: Schema.Schema<A, I>,
  command: DeviceCommand.CommandName,
  body: unknown
): Either.Either<A, LifecycleError.InvalidDeviceCommand> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(body),
    (error) =>
      new LifecycleError.InvalidDeviceCommand({
        message: `${command} refused before sending: ${ParseResult.TreeFormatter.formatErrorSync(error)}`,
        command,
        rule: RULES[command]
      })
  )

/** Checks a command's body locally: the typed command, or why it cannot be sent. */
export const validate = (
  command: DeviceCommand.CommandName,
  body: unknown
): Either.Either<DeviceCommand.DeviceCommand, LifecycleError.InvalidDeviceCommand> => {
  switch (command) {
    case "set-unattended-mode":
      return Either.map(check(DeviceCommand.SetUnattendedMode, command, body), (b) => ({ command, body: b }))
    case "set-locale":
      return Either.map(check(DeviceCommand.SetLocale, command, body), (b) => ({ command, body: b }))
    case "set-password-protected":
      return Either.map(check(DeviceCommand.SetPasswordProtected, command, body), (b) => ({
        command,
        body: b
      }))
    case "reboot":
      return Either.map(check(DeviceCommand.Reboot, command, body), (b) => ({ command, body: b }))
    case "set-screen-brightness":
      return Either.map(check(DeviceCommand.SetScreenBrightness, command, body), (b) => ({
        command,
        body: b
      }))
    case "set-reboot-time":
      return Either.map(check(DeviceCommand.SetRebootTime, command, body), (b) => ({ command, body: b }))
  }
}

/** The JSON body of a checked command, as recorded. */
const plain = (command: DeviceCommand.DeviceCommand): Record<string, boolean | number | string> =>
  ({ ...command.body }) as Record<string, boolean | number | string>

const send = (payload: Workflow.Workflow.Payload<typeof Send>) =>
  Effect.gen(function* () {
    const cloud = yield* TerminalCloud.TerminalCloud
    const streamId = LifecycleEvent.deviceStream(payload.serialNumber)
    const spec: Guarded.Spec<void, DeviceCommand.DeviceCommand, void, Accepted, DeviceCommandError> = {
      operation: "deviceCommand",
      streamId,
      requestId: payload.requestId,
      requestedType: "DeviceCommandRequested",
      outcomeTypes: ["DeviceCommandAccepted"],
      notChargedReference: payload.serialNumber,
      fold: () => Either.void,
      decide: (_state, at) =>
        Either.map(validate(payload.command, payload.body), (command) =>
          LifecycleEvent.DeviceCommandRequested.make({
            requestId: payload.requestId,
            at,
            command: payload.command,
            body: plain(command)
          })
        ),
      toRequest: (requested) => {
        const d = requested.data as { readonly body: unknown }
        // Already checked before it was recorded; checked again rather than trusted blindly.
        return Either.getOrThrow(validate(payload.command, d.body))
      },
      send: (command) => cloud.deviceCommand(payload.terminalType, payload.serialNumber, command),
      onUnknown: payload.command === "reboot" ? "inDoubt" : "resend",
      applied: (_response, { now, requested }) => {
        const body = (requested.data as { readonly body: Record<string, boolean | number | string> }).body
        return Either.right({
          appends: [
            {
              streamId,
              expected: "any",
              events: [
                LifecycleEvent.DeviceCommandAccepted.make({
                  requestId: payload.requestId,
                  at: now,
                  command: payload.command
                })
              ]
            }
          ],
          output: Accepted.make({ requestId: payload.requestId, command: payload.command, body })
        })
      },
      output: (_outcome, _state, requested) =>
        Accepted.make({
          requestId: payload.requestId,
          command: payload.command,
          body:
            (requested?.data as { readonly body?: Record<string, boolean | number | string> } | undefined)
              ?.body ?? {}
        })
    }
    return yield* deviceCommandSendStep(Guarded.run(spec))
  })

/** The device command workflow, registered with the engine. */
export const layer: Layer.Layer<
  never,
  never,
  WorkflowEngine | EventStore.EventStore | TerminalCloud.TerminalCloud
> = Send.toLayer((payload) => send(payload))

// The durable steps of this module, defined once (schemas built once; `DurableStep`).
const deviceCommandSendStep = DurableStep.make({
  name: "DeviceCommand.Send",
  success: Accepted,
  error: DeviceCommandError
})
