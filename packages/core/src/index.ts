/**
 * @tillflow/core — see the package README and docs/architecture.md.
 */
export const packageName = "@tillflow/core"
export * as EventStore from "./EventStore.js"
export * as EventRegistry from "./EventRegistry.js"
export * as HashChain from "./HashChain.js"
export * as MemoryEventStore from "./MemoryEventStore.js"
export * as Redaction from "./Redaction.js"
