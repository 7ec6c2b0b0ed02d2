/** The merchant's virtual terminal: where terminal-less MOTO sales are booked. */
import * as Context from "effect/Context"
import * as Option from "effect/Option"
import type * as Identifiers from "../model/Identifiers.js"

/**
 * The merchant's virtual terminal (spec §1: the terminal that books terminal-less MOTO
 * payments), by serial: a MOTO sale given no `serialNumber` is recorded on it, so closing
 * its daily batch ends the sale's MOTO reversal window ("MOTO reversal only before the
 * batch"). None by default: an app provides it from its configuration (the worker's
 * `TILLFLOW_MOTO_TERMINAL`, else the built-in simulator's); without it that rule cannot
 * fire for a terminal-less sale, and only the 24-hour window holds. An operator's applied resolution of
 * a MOTO sale in doubt (`InDoubtResolution.resolveAttempt`) records it on the same terminal.
 */
export class VirtualTerminal extends Context.Reference<VirtualTerminal>()(
  "tillflow/core/MotoWorkflow/VirtualTerminal",
  { defaultValue: (): Option.Option<Identifiers.SerialNumber> => Option.none() }
) {}
