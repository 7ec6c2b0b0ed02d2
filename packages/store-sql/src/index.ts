/**
 * @tillflow/store-sql — the event store on @effect/sql: PostgreSQL and embedded PGlite.
 * See docs/event-store.md.
 */
export const packageName = "@tillflow/store-sql"

export * as EventArchive from "./EventArchive.js"
export * as SqlMerchantRegistry from "./SqlMerchantRegistry.js"
export * as EventStoreMigrations from "./EventStoreMigrations.js"
export * as PgEventStore from "./PgEventStore.js"
export * as PgUrl from "./PgUrl.js"
export * as PgliteClient from "./PgliteClient.js"
export * as PgliteEventStore from "./PgliteEventStore.js"
export * as SqlEventStore from "./SqlEventStore.js"
export * as TestDatabase from "./TestDatabase.js"
export * as ExecutionQueueMigrations from "./ExecutionQueueMigrations.js"
export * as SqlExecutionQueue from "./SqlExecutionQueue.js"
export * as PgliteLock from "./PgliteLock.js"
