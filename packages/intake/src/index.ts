/**
 * @tillflow/intake: the worker's application layer. `Intake` is the contract (start an
 * operation under an idempotency key, follow executions, read the audit); `IntakeApi` its
 * HttpApi; `IntakeLocal` the implementation on the library's layers; `IntakeClient` the
 * same contract over HTTP; `IntakeHttp` the server. `WorkerConfig` reads the settings,
 * `Stack` turns them into layers (embedded PGlite or PostgreSQL, the built-in simulator or
 * the real service), `Worker` composes the whole worker, `Tracing` exports its spans and `Program` runs it. The worker
 * app and the command line only compose these.
 */
export * as Intake from "./Intake.js"
export * as IntakeApi from "./IntakeApi.js"
export * as IntakeClient from "./IntakeClient.js"
export * as IntakeHttp from "./IntakeHttp.js"
export * as IntakeLocal from "./IntakeLocal.js"
export * as MerchantsApi from "./MerchantsApi.js"
export * as Monitor from "./Monitor.js"
export * as Program from "./Program.js"
export * as Prometheus from "./Prometheus.js"
export * as Stack from "./Stack.js"
export * as Tracing from "./Tracing.js"
export * as Worker from "./Worker.js"
export * as WorkerConfig from "./WorkerConfig.js"
