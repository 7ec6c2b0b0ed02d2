/**
 * @tillflow/node: tillflow for backends not written with Effect. `createTillflow()` builds
 * the library once (the worker's defaults: the embedded PGlite store and the built-in
 * simulator when nothing is configured; PostgreSQL and the real service when configured)
 * and answers a `Tillflow` whose calls return promises: `await tf.sale(…)`, every terminal
 * and terminal-less operation, `devices()`, `status()`, `audit.*`, with typed errors
 * (`DeviceBusy`, `OutcomeUnknown`, `CaptureAlreadyDone` …), progress as an async iterator or
 * events, `tf.callbackHandler` for the host's HTTP server, and `close()`.
 *
 * @example
 * import { createTillflow } from "@tillflow/node"
 * const tf = await createTillflow()
 * const sale = await tf.sale({ serialNumber: "0821032398", amount: { amount: "10.50", currency: "EUR" } })
 */
export { createTillflow, Tillflow, type Runtime } from "./Tillflow.js"
export { TillflowOperation, type Progress, type OperationEvents } from "./TillflowOperation.js"
export type * from "./TillflowOptions.js"
export type * from "./Types.js"
export * from "./Errors.js"
