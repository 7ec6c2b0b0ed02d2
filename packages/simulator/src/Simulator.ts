/**
 * The simulated terminal cloud service: merchants with API keys, virtual terminals that
 * run operations step by step, the gateway with its business rules, result delivery by
 * polling or callback with the recovery loop, the status log, batches, device commands,
 * and the controls a test needs (admin operations, faults, the clock). The HTTP layer
 * (`SimulatorHttp`) is a thin translation of requests into calls of this service.
 *
 * The service is composed here from its parts in `internal/`: the terminal host and the
 * terminal each operation runs on (`terminalHost`, `terminalMachine`, `hostAnswer`), the
 * status host, the gateway's terminal-less endpoints (`gatewayHost`, `gatewayMoto`,
 * `gatewayBatches`), device commands, and the admin controls (`admin`, `faults`), all over
 * one shared state (`shared`).
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as AdminControls from "./internal/admin.js"
import * as DeviceCommands from "./internal/deviceCommands.js"
import * as Faults from "./internal/faults.js"
import * as GatewayBatches from "./internal/gatewayBatches.js"
import * as GatewayHost from "./internal/gatewayHost.js"
import * as GatewayMoto from "./internal/gatewayMoto.js"
import {
  type Card,
  type Counters,
  defaultTimings,
  type Fault,
  type KeyKind,
  type MerchantFlags,
  type Step,
  type Timings
} from "./internal/model.js"
import { exponentOf } from "./internal/money.js"
import * as Operations from "./internal/operations.js"
import type { Options, SimulatorService } from "./internal/service.js"
import * as Shared from "./internal/shared.js"
import * as StatusHost from "./internal/statusHost.js"
import * as TerminalHost from "./internal/terminalHost.js"
import type * as Validate from "./internal/validate.js"
import type * as SimClock from "./SimClock.js"

export type { Card, Counters, Fault, KeyKind, MerchantFlags, Step, Timings }
export { defaultTimings }

export type {
  Patch,
  Caller,
  Device,
  Accepted,
  Json,
  Options,
  TerminalView,
  TerminalPatch,
  FaultInput,
  SimulatorService,
  Admin
} from "./internal/service.js"

/** The simulated service. */
export class Simulator extends Context.Tag("tillflow/Simulator")<Simulator, SimulatorService>() {}

/** The steps an operation goes through on the terminal. */
export const stepsOf: (operation: Validate.Operation) => ReadonlyArray<Step> = Operations.stepsOf

/** Builds a simulator over the clock and an HTTP client for callbacks. */
export const make = (
  options: Options = {}
): Effect.Effect<SimulatorService, never, SimClock.SimClock | HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    const shared = yield* Shared.make(options)
    return {
      ...TerminalHost.make(shared),
      ...StatusHost.make(shared),
      ...DeviceCommands.make(shared),
      ...GatewayHost.make(shared),
      ...GatewayMoto.make(shared),
      ...GatewayBatches.make(shared),
      admin: { ...AdminControls.make(shared), ...Faults.make(shared) }
    }
  })

/** The simulator as a layer (needs the clock and an HTTP client for callbacks). */
export const layer = (
  options: Options = {}
): Layer.Layer<Simulator, never, SimClock.SimClock | HttpClient.HttpClient> =>
  Layer.scoped(Simulator, make(options))

/** Exponent of a currency as the simulator knows it (undefined for an unknown code). */
export const currencyExponent = exponentOf
