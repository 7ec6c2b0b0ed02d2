/**
 * An @effect/sql `SqlClient` over PGlite (PostgreSQL compiled to WASM, in process), so the
 * SQL event store runs unchanged on the embedded database. `@effect/sql-pglite` exists only
 * for Effect 4, and `@electric-sql/pglite-socket` 0.2.17 pins pglite 0.5.14 against our
 * 0.5.16, hence this small client, modelled on `@effect/sql-pg`'s `PgClient`.
 *
 * PGlite is one session. Everything that uses it — each statement outside a transaction, a
 * whole transaction (held for its scope by `sql.withTransaction`), `sql.reserve`, LISTEN —
 * takes a one-permit semaphore, so two fibers never interleave statements inside one
 * transaction. Savepoints (nested `withTransaction`) work as in `@effect/sql`. A fiber that
 * holds a transaction must not wait on another fiber running SQL outside it (deadlock, as
 * with a pool of one connection).
 *
 * Results follow `@effect/sql-pg`'s conventions: `int8` and `numeric` come back as strings
 * (never a lossy JS number), `timestamptz` as `Date`, `json`/`jsonb` parsed.
 *
 * LISTEN/NOTIFY works: PGlite delivers a notification to its own session when the
 * notifying transaction commits (measured with PGlite 0.5.16). A PGlite database has one
 * process (the embedded store's directory is locked for it), so a notification sent outside
 * a transaction needs no statement: `publish` hands it to this client's listeners in
 * process, and `listen` streams both kinds.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PGlite, types as PgliteTypes } from "@electric-sql/pglite"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** Configuration of the PGlite client. */
export interface PgliteClientConfig {
  /**
   * Where the database lives: a directory path (created if missing), or undefined /
   * `memory://` for a database in memory that disappears with the process.
   */
  readonly dataDir?: string | undefined
  readonly spanAttributes?: Record<string, unknown> | undefined
}

/** The PGlite client: a `SqlClient`, plus LISTEN/NOTIFY and the underlying PGlite instance. */
export interface PgliteClient extends SqlClient.SqlClient {
  readonly config: PgliteClientConfig
  /** The PGlite instance; use it only outside this client's transactions. */
  readonly pglite: PGlite
  /**
   * Notifications on `channel` (LISTEN while the stream runs), and those `publish`ed in
   * process, except the ones published with `ignore` as their sender.
   */
  readonly listen: (channel: string, ignore?: object) => Stream.Stream<string, SqlError>
  /** Sends a notification (delivered at the commit of the surrounding transaction, if any). */
  readonly notify: (channel: string, payload: string) => Effect.Effect<void, SqlError>
  /**
   * Sends a notification to this client's listeners without a statement, at once (not tied
   * to a transaction: use it for changes already committed). A listener that passed the same
   * `sender` as its `ignore` does not receive it.
   */
  readonly publish: (channel: string, payload: string, sender?: object) => Effect.Effect<void>
}

/** The PGlite client service. */
export const PgliteClient = Context.GenericTag<PgliteClient>("tillflow/PgliteClient")

const toSqlError = (message: string) => (cause: unknown) => new SqlError({ cause, message })

type Rows = ReadonlyArray<Record<string, unknown>>

const identity = (value: string): string => value

/** Opens PGlite and builds the client; PGlite is closed when the scope closes. */
export const make = (
  config: PgliteClientConfig
): Effect.Effect<PgliteClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const pglite = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create(config.dataDir ?? "memory://", {
            parsers: { [PgliteTypes.INT8]: identity, [PgliteTypes.NUMERIC]: identity }
          }),
        catch: toSqlError("PgliteClient: failed to open the database")
      }),
      (db) => Effect.promise(() => db.close())
    )
    const semaphore = yield* Effect.makeSemaphore(1)
    const compiler = PgClient.makeCompiler()

    const query = (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") =>
      Effect.tryPromise({
        try: () => pglite.query<Record<string, unknown>>(sql, [...params], { rowMode }),
        catch: toSqlError("Failed to execute statement")
      })

    const connection: Connection = {
      execute: (sql, params, transformRows) =>
        Effect.map(query(sql, params, "object"), (result) => {
          const rows = result.rows as Rows
          return transformRows ? transformRows(rows) : rows
        }),
      executeRaw: (sql, params) => query(sql, params, "object"),
      executeStream: (sql, params, transformRows) =>
        Stream.fromIterableEffect(
          Effect.map(query(sql, params, "object"), (result) => {
            const rows = result.rows as Rows
            return transformRows ? transformRows(rows) : rows
          })
        ),
      executeValues: (sql, params) =>
        Effect.map(
          query(sql, params, "array"),
          (result) => result.rows as unknown as ReadonlyArray<ReadonlyArray<unknown>>
        ),
      executeUnprepared: (sql, params, transformRows) =>
        params.length > 0
          ? Effect.map(query(sql, params, "object"), (result) => {
              const rows = result.rows as Rows
              return transformRows ? transformRows(rows) : rows
            })
          : // The simple protocol: several statements in one string (BEGIN, migrations).
            Effect.tryPromise({
              try: () => pglite.exec(sql),
              catch: toSqlError("Failed to execute statement")
            }).pipe(
              Effect.map((results) => {
                const rows = (results[results.length - 1]?.rows ?? []) as Rows
                return transformRows ? transformRows(rows) : rows
              })
            )
    }

    // One permit = the one session. Held for a single statement by the plain acquirer, and
    // for a whole transaction (or a `reserve`) by the transaction acquirer: @effect/sql keeps
    // the scope of the transaction's connection open until COMMIT or ROLLBACK.
    const acquire: Effect.Effect<Connection, never, Scope.Scope> = Effect.as(
      Effect.acquireRelease(semaphore.take(1), () => semaphore.release(1)),
      connection
    )

    const client = yield* SqlClient.make({
      acquirer: acquire,
      transactionAcquirer: acquire,
      compiler,
      spanAttributes: [
        ...(config.spanAttributes ? Object.entries(config.spanAttributes) : []),
        ["db.system.name", "postgresql"],
        ["db.namespace", config.dataDir ?? "memory://"]
      ]
    })

    // The in-process listeners, by channel (`publish`).
    const local = new Map<
      string,
      Set<{ readonly ignore: object | undefined; readonly emit: (payload: string) => void }>
    >()

    const listen = (channel: string, ignore?: object): Stream.Stream<string, SqlError> =>
      Stream.asyncPush<string, SqlError>((emit) =>
        Effect.gen(function* () {
          const listener = { ignore, emit: (payload: string) => void emit.single(payload) }
          yield* Effect.acquireRelease(
            Effect.sync(() => {
              const set = local.get(channel) ?? new Set()
              set.add(listener)
              local.set(channel, set)
            }),
            () => Effect.sync(() => local.get(channel)?.delete(listener))
          )
          yield* Effect.acquireRelease(
            semaphore.withPermits(1)(
              Effect.tryPromise({
                try: () => pglite.listen(channel, (payload) => emit.single(payload)),
                catch: toSqlError("Failed to listen")
              })
            ),
            (unlisten) => semaphore.withPermits(1)(Effect.promise(() => unlisten()))
          )
        })
      )

    const publish = (channel: string, payload: string, sender?: object): Effect.Effect<void> =>
      Effect.sync(() => {
        for (const listener of local.get(channel) ?? []) {
          if (sender === undefined || listener.ignore !== sender) listener.emit(payload)
        }
      })

    const notify = (channel: string, payload: string): Effect.Effect<void, SqlError> =>
      Effect.asVoid(client`SELECT pg_notify(${channel}, ${payload})`)

    return Object.assign(client, { config, pglite, listen, notify, publish })
  })

/** A layer of the PGlite client, also provided as the `SqlClient`. */
export const layer = (
  config: PgliteClientConfig
): Layer.Layer<PgliteClient | SqlClient.SqlClient, SqlError> =>
  Layer.scopedContext(
    Effect.map(make(config), (client) =>
      Context.make(PgliteClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    )
  ).pipe(Layer.provide(Reactivity.layer))

/** {@link layer} from `Config`. */
export const layerConfig = (
  config: Config.Config.Wrap<PgliteClientConfig>
): Layer.Layer<PgliteClient | SqlClient.SqlClient, SqlError | ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
