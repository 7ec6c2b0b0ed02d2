/**
 * The embedded event store: `SqlEventStore` over PGlite (PostgreSQL in WASM, in process),
 * in a data directory or in memory. Same SQL, same contract as PostgreSQL.
 *
 * Durability: file-backed PGlite issues no fsync (its WASM file system ignores sync
 * requests), so committed events survive a crash of the process but not of the operating
 * system or a power loss. The layer says so in a warning at start-up. Production: PostgreSQL.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@tillflow/engine"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PgliteClient from "./PgliteClient.js"
import * as SqlEventStore from "./SqlEventStore.js"

/** Configuration of the embedded event store. */
export interface PgliteEventStoreConfig {
  /** The data directory; undefined (or `memory://`) keeps the database in memory. */
  readonly dataDir?: string | undefined
  /** Poll interval of idle subscriptions (default 500 ms; notifications wake them sooner). */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** Append statements in flight before appends are coalesced (default 2; `SqlEventStore.Options`). */
  readonly maxInFlight?: number | undefined
  /**
   * How long a subscription woken by an append waits before reading, so that the appends of
   * a burst share one read of the one session (default {@link defaultSubscriptionGather};
   * `SqlEventStore.Options`).
   */
  readonly subscriptionGather?: Duration.DurationInput | undefined
}

/**
 * The embedded store's default `subscriptionGather`: a sale's appends come within a few
 * tens of milliseconds of each other; a subscriber (the ledger, the console's feed) sees
 * them up to this much later, in fewer reads.
 */
export const defaultSubscriptionGather: Duration.Duration = Duration.millis(50)

/** The warning logged at start-up, for a data directory and for memory. */
export const durabilityWarning = (dataDir: string | undefined): string =>
  dataDir === undefined || dataDir.startsWith("memory://")
    ? "Event store on PGlite in memory: every event is lost when the process exits. Use PostgreSQL for real payments."
    : `Event store on PGlite in ${dataDir}: PGlite issues no fsync, so events survive a process crash but not an OS crash or power loss. Use PostgreSQL (DATABASE_URL) in production.`

const openError = (cause: unknown) =>
  new EventStore.EventStoreError({
    operation: "open",
    detail: cause instanceof Error ? cause.message : String(cause),
    cause
  })

/** The embedded event store, migrated at start-up. Also provides the `SqlClient`. */
export const layer = (
  config: PgliteEventStoreConfig = {}
): Layer.Layer<
  EventStore.EventStore | SqlClient.SqlClient | PgliteClient.PgliteClient,
  EventStore.EventStoreError
> =>
  SqlEventStore.layer({
    pollInterval: config.pollInterval,
    maxInFlight: config.maxInFlight,
    subscriptionGather: config.subscriptionGather ?? defaultSubscriptionGather
  }).pipe(
    Layer.provideMerge(PgliteClient.layer({ dataDir: config.dataDir }).pipe(Layer.mapError(openError))),
    Layer.tap(() => Effect.logWarning(durabilityWarning(config.dataDir)))
  )

/** {@link layer} from `Config`. */
export const layerConfig = (
  config: Config.Config.Wrap<PgliteEventStoreConfig>
): Layer.Layer<
  EventStore.EventStore | SqlClient.SqlClient | PgliteClient.PgliteClient,
  EventStore.EventStoreError | ConfigError.ConfigError
> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
