/**
 * The contract suites of the engine's ports, for any implementation to run: an event store
 * (`eventStoreContract`), an execution queue (`queueContract`, `queueNotificationContract`)
 * and the durable engine on them (`engineContract`). `@tillflow/store-sql` runs them on
 * PostgreSQL and PGlite, the engine's own tests on the memory implementations; a store of
 * a third party imports them from `@tillflow/engine/testing` and passes the same tests.
 * They are written with @effect/vitest, an optional peer dependency of this entry point.
 */
export * from "./EngineContract.js"
export * from "./EventStoreContract.js"
export * from "./QueueContract.js"
export * as EngineEventSamples from "./EngineEventSamples.js"
export * as EventGoldens from "./EventGoldens.js"
export * as HashChainSamples from "./HashChainSamples.js"
