/**
 * @tillflow/engine: an event-sourced workflow engine for workflows written with
 * @effect/workflow, knowing nothing of the workflows it runs. Every step of an execution is
 * an event in an `EventStore` (append with an expected version, hash-chained, guarded
 * against secrets); `DurableEngine` implements @effect/workflow's `WorkflowEngine` on that
 * log (replay with a determinism check, durable deferreds and clocks); `EngineWorker`
 * claims runnable executions from an `ExecutionQueue` shared by any number of processes.
 * Stores are adapters (`@tillflow/store-sql`, or `MemoryEventStore` for tests); the
 * contract suites every store must pass are in `@tillflow/engine/testing`.
 */
export * as DeterministicId from "./DeterministicId.js"
export * as DurableEngine from "./DurableEngine.js"
export * as DurableStep from "./DurableStep.js"
export * as EngineEvent from "./EngineEvent.js"
export * as EngineWorker from "./EngineWorker.js"
export * as EventRegistry from "./EventRegistry.js"
export * as EventStore from "./EventStore.js"
export * as ExecutionQueue from "./ExecutionQueue.js"
export * as ExecutionRecord from "./ExecutionRecord.js"
export * as HashChain from "./HashChain.js"
export * as MemoryEventStore from "./MemoryEventStore.js"
export * as Redaction from "./Redaction.js"
export * as SchemaCache from "./SchemaCache.js"
export * as StoreRetry from "./StoreRetry.js"
export * as Tenant from "./Tenant.js"
export * as TraceContext from "./TraceContext.js"
export * as ReplayKit from "./ReplayKit.js"
export * as WorkflowVersion from "./WorkflowVersion.js"
