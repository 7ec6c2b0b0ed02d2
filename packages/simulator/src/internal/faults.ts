/**
 * Fault injection on the service routes (a response dropped, an error before or after
 * processing, a delay) and the callback outage. The HTTP layer asks `takeFault` for each
 * request; admin routes are never faulted.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Admin } from "./service.js"
import { invalid } from "../SimulatorError.js"
import type { Fault } from "./model.js"
import type { Shared } from "./shared.js"

const faultKinds: ReadonlyArray<Fault["kind"]> = [
  "drop-response",
  "error-after",
  "error-before",
  "delay",
  "misreport"
]

/** The fault controls. */
export const make = (
  shared: Shared
): Pick<Admin, "addFault" | "faults" | "clearFaults" | "takeFault" | "callbackOutage"> => ({
  addFault: (input) =>
    Effect.suspend(() => {
      if (!faultKinds.includes(input.kind))
        return Effect.fail(invalid("kind", `kind must be one of ${faultKinds.join(", ")}`))
      if (input.kind === "misreport" && (input.finStatus === undefined || input.finStatus === ""))
        return Effect.fail(
          invalid("finStatus", "a misreport fault needs the finStatus to answer, e.g. DECLINED")
        )
      const status = input.status ?? (input.kind === "error-after" ? 502 : 503)
      if (!Number.isInteger(status) || status < 500 || status > 599)
        return Effect.fail(invalid("status", "status must be a 5xx code"))
      const fault: Fault = {
        id: shared.store.ids.uuidV4(),
        kind: input.kind,
        method: input.method?.toUpperCase(),
        path: input.path,
        operation: input.operation,
        host: input.host,
        status,
        delayMs: input.delayMs ?? 0,
        finStatus: input.finStatus,
        remaining: input.times === 0 ? undefined : (input.times ?? 1)
      }
      shared.store.faults.push(fault)
      return Effect.succeed(fault)
    }),
  faults: Effect.sync(() => [...shared.store.faults]),
  clearFaults: (id) =>
    Effect.sync(() => {
      if (id === undefined) {
        shared.store.faults.splice(0, shared.store.faults.length)
        shared.store.callbackOutageUntil = undefined
      } else {
        const index = shared.store.faults.findIndex((f) => f.id === id)
        if (index >= 0) shared.store.faults.splice(index, 1)
      }
    }),
  takeFault: (request) =>
    Effect.sync(() => {
      const index = shared.store.faults.findIndex(
        (f) =>
          (f.host === undefined || f.host === request.host) &&
          (f.method === undefined || f.method === request.method.toUpperCase()) &&
          (f.path === undefined ||
            request.path === f.path ||
            request.path.startsWith(f.path.endsWith("/") ? f.path : `${f.path}/`)) &&
          (f.operation === undefined || f.operation === request.operation)
      )
      if (index < 0) return Option.none()
      const fault = shared.store.faults[index]
      if (fault === undefined) return Option.none()
      if (fault.remaining !== undefined) {
        fault.remaining--
        if (fault.remaining <= 0) shared.store.faults.splice(index, 1)
      }
      return Option.some(fault)
    }),
  callbackOutage: (ms) =>
    Effect.sync(() => {
      shared.store.callbackOutageUntil = ms > 0 ? shared.now() + ms : undefined
      return shared.store.callbackOutageUntil
    })
})
