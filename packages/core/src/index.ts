/**
 * @tillflow/core — see the package README and docs/architecture.md.
 */
export const packageName = "@tillflow/core"
export * as EventStore from "./EventStore.js"
export * as EventRegistry from "./EventRegistry.js"
export * as HashChain from "./HashChain.js"
export * as MemoryEventStore from "./MemoryEventStore.js"
export * as Redaction from "./Redaction.js"
export * as DurableEngine from "./DurableEngine.js"
export * as EngineEvent from "./EngineEvent.js"
export * as ExecutionQueue from "./ExecutionQueue.js"
export * as EngineWorker from "./EngineWorker.js"
