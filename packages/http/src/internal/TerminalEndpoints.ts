/**
 * The `TerminalCloud` operations that reach terminals, on the terminal host: the devices,
 * a transaction sent to a terminal, its result, and device commands. Only the devices and
 * results are reads (retried); a transaction and a command are sent once.
 */
import { type DeviceCommand, Identifiers, TerminalCloud, TransactionRequest } from "@tillflow/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Call } from "./Call.js"
import { segment, type TerminalHost } from "./Hosts.js"

/**
 * Span attributes of a terminal operation: what it is and where it goes, never its
 * secrets (no callback token, no amounts needed to find it).
 */
const transactionAttributes = (request: TransactionRequest.TransactionRequest): Record<string, unknown> => ({
  "tillflow.endpoint": "sendTransaction",
  "tillflow.operation": request.operation,
  "tillflow.serial_number": request.serialNumber,
  "tillflow.terminal_type": request.terminalType,
  "tillflow.delivery": request.delivery === undefined ? "polling" : "callback",
  ...Option.match(TransactionRequest.transactionReference(request), {
    onNone: () => ({}),
    onSome: (reference) => ({ "tillflow.transaction_reference": reference })
  }),
  ...Option.match(TransactionRequest.originalTransactionId(request), {
    onNone: () => ({}),
    onSome: (guid) => ({ "tillflow.original_guid": guid })
  })
})

/** The terminal operations over the terminal host's client. */
export const make = (
  terminal: TerminalHost,
  { once, read }: { readonly once: Call; readonly read: Call }
): Pick<TerminalCloud.Service, "listDevices" | "sendTransaction" | "transactionResult" | "deviceCommand"> => {
  const listDevices = Effect.fn("TerminalCloud.listDevices")(function* () {
    yield* Effect.annotateCurrentSpan("tillflow.endpoint", "listDevices")
    return yield* read("listDevices", terminal.listDevices())
  })

  const sendTransaction = Effect.fn("TerminalCloud.sendTransaction")(function* (
    request: TransactionRequest.TransactionRequest
  ) {
    yield* Effect.annotateCurrentSpan(transactionAttributes(request))
    // The derived method's parameter is a union of one object per operation; a request of
    // the whole union is one of them (a widening the compiler cannot see by itself).
    const accepted = yield* once(
      "sendTransaction",
      terminal.sendTransaction<false>({ payload: request } as Parameters<
        typeof terminal.sendTransaction<false>
      >[0])
    )
    if (accepted.transactionResultId !== undefined) {
      yield* Effect.annotateCurrentSpan("tillflow.transaction_result_id", accepted.transactionResultId)
    }
    return accepted
  })

  const transactionResult = Effect.fn("TerminalCloud.transactionResult")(function* (
    id: Identifiers.TransactionResultId
  ) {
    yield* Effect.annotateCurrentSpan({
      "tillflow.endpoint": "transactionResult",
      "tillflow.transaction_result_id": id
    })
    // 204 and 200 are both successes of the contract; `withResponse` tells them apart by
    // status rather than by the shape of the value. 404 is an outcome, not a failure.
    return yield* read(
      "transactionResult",
      terminal.transactionResult({
        path: { transactionResultId: segment((s) => Identifiers.TransactionResultId.make(s), id) },
        withResponse: true
      })
    ).pipe(
      Effect.map(([value, response]): TerminalCloud.ResultOutcome =>
        response.status === 204 || value === undefined
          ? new TerminalCloud.Pending()
          : new TerminalCloud.Ready({ result: value })
      ),
      Effect.catchTag("NotFound", (e) => Effect.succeed(new TerminalCloud.Unknown({ message: e.message }))),
      Effect.tap((outcome) => Effect.annotateCurrentSpan("tillflow.result_outcome", outcome._tag))
    )
  })

  const deviceCommand = Effect.fn("TerminalCloud.deviceCommand")(function* (
    deviceType: Identifiers.TerminalType,
    serialNumber: Identifiers.SerialNumber,
    command: DeviceCommand.DeviceCommand
  ) {
    yield* Effect.annotateCurrentSpan({
      "tillflow.endpoint": "deviceCommand",
      "tillflow.command": command.command,
      "tillflow.serial_number": serialNumber,
      "tillflow.terminal_type": deviceType
    })
    const path = {
      deviceType: segment((s) => Identifiers.TerminalType.make(s), deviceType),
      serialNumber: segment((s) => Identifiers.SerialNumber.make(s), serialNumber)
    }
    // A command reaches a terminal (a reboot!): sent once, never retried here.
    switch (command.command) {
      case "set-unattended-mode":
        return yield* once(command.command, terminal.setUnattendedMode({ path, payload: command.body }))
      case "set-locale":
        return yield* once(command.command, terminal.setLocale({ path, payload: command.body }))
      case "set-password-protected":
        return yield* once(command.command, terminal.setPasswordProtected({ path, payload: command.body }))
      case "reboot":
        return yield* once(command.command, terminal.reboot({ path, payload: command.body }))
      case "set-screen-brightness":
        return yield* once(command.command, terminal.setScreenBrightness({ path, payload: command.body }))
      case "set-reboot-time":
        return yield* once(command.command, terminal.setRebootTime({ path, payload: command.body }))
    }
  })

  return { listDevices: listDevices(), sendTransaction, transactionResult, deviceCommand }
}
