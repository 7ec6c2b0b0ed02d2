/**
 * The event store on PostgreSQL: `SqlEventStore` over `@effect/sql-pg`'s pooled `PgClient`,
 * with LISTEN/NOTIFY waking subscriptions. The layers also provide the `SqlClient` and
 * `PgClient`, so the rest of an app (the workflow engine's tables) shares the pool.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { EventStore } from "@tillflow/engine"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as ConnectFailure from "./internal/ConnectFailure.js"
import * as HotPool from "./internal/HotPool.js"
import * as PgUrl from "./PgUrl.js"
import * as SqlEventStore from "./SqlEventStore.js"

/** Configuration of the PostgreSQL event store. */
export interface PgEventStoreConfig {
  /** A `postgres://` connection URL; redacted because it may hold a password. */
  readonly url: Redacted.Redacted
  /** Maximum connections of the pool (default 10). */
  readonly maxConnections?: number | undefined
  /** Poll interval of idle subscriptions (default 500 ms; notifications wake them sooner). */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** The least time between two NOTIFYs of this store (default 50 ms; `SqlEventStore.Options`). */
  readonly notifyInterval?: Duration.DurationInput | undefined
  /** Append statements in flight before appends are coalesced (default 2; `SqlEventStore.Options`). */
  readonly maxInFlight?: number | undefined
  /** Group commit of multi-stream appends (default true; `SqlEventStore.Options`). */
  readonly multiStreamGroupCommit?: boolean | undefined
  readonly applicationName?: string | undefined
}

const connectionError = (cause: unknown) =>
  new EventStore.EventStoreError({ operation: "connect", detail: ConnectFailure.describe(cause), cause })

/**
 * The event store on the PostgreSQL at `config.url`, migrated at start-up. A connection
 * that cannot be made fails with PostgreSQL's own reason (a missing database, an unknown
 * role, a refused password) or the network's (a closed port, an unknown host), and what to
 * check; a value that is not a PostgreSQL URL, without trying.
 */
export const layer = (
  config: PgEventStoreConfig
): Layer.Layer<
  EventStore.EventStore | SqlClient.SqlClient | PgClient.PgClient,
  EventStore.EventStoreError
> => {
  const problem = PgUrl.problem(Redacted.value(config.url))
  if (problem !== undefined) {
    return Layer.fail(
      new EventStore.EventStoreError({ operation: "connect", detail: `the database URL ${problem}` })
    )
  }
  return SqlEventStore.layer({
    pollInterval: config.pollInterval,
    notifyInterval: config.notifyInterval,
    maxInFlight: config.maxInFlight,
    multiStreamGroupCommit: config.multiStreamGroupCommit
  }).pipe(
    Layer.provideMerge(
      // A `pg` pool of our own under the `PgClient`, so the hot statements reach it
      // (`internal/HotPool`); the app sees the `PgClient` and `SqlClient` as before.
      Layer.scopedContext(
        HotPool.make({
          url: config.url,
          maxConnections: config.maxConnections ?? 10,
          applicationName: config.applicationName ?? "tillflow"
        })
      ).pipe(Layer.provide(Reactivity.layer), Layer.mapError(connectionError))
    )
  )
}

/** {@link layer} from `Config`. */
export const layerConfig = (
  config: Config.Config.Wrap<PgEventStoreConfig>
): Layer.Layer<
  EventStore.EventStore | SqlClient.SqlClient | PgClient.PgClient,
  EventStore.EventStoreError | ConfigError.ConfigError
> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))

/** {@link layer} from the environment: `DATABASE_URL` and `DATABASE_POOL_SIZE` (default 10). */
export const layerFromEnv: Layer.Layer<
  EventStore.EventStore | SqlClient.SqlClient | PgClient.PgClient,
  EventStore.EventStoreError | ConfigError.ConfigError
> = layerConfig({
  url: Config.redacted("DATABASE_URL").pipe(Config.withDescription("PostgreSQL connection URL")),
  maxConnections: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.withDefault(10),
    Config.withDescription("maximum connections of the pool")
  ),
  pollInterval: Config.succeed(undefined),
  applicationName: Config.succeed(undefined)
})
