/**
 * @tillflow/simulator — a stateful simulator of the remote terminal cloud service: both
 * hosts, merchants and keys, virtual terminals, the gateway's business rules, callbacks
 * with the recovery loop, fault injection and a controllable clock.
 */
export * as AdminHttp from "./AdminHttp.js"
export * as SimClock from "./SimClock.js"
export * as Simulator from "./Simulator.js"
export * as SimulatorError from "./SimulatorError.js"
export * as SimulatorHttp from "./SimulatorHttp.js"
export * as SimulatorServer from "./SimulatorServer.js"
export * as Triggers from "./Triggers.js"
