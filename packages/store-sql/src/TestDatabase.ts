/**
 * A fresh database for each test file, for every package whose tests need SQL: on the
 * PostgreSQL of `DATABASE_URL`, a new database with a random name (created on start,
 * dropped on release); without `DATABASE_URL`, PGlite in memory, with the log line
 * "PostgreSQL tests ran on PGlite: DATABASE_URL not set". With `TILLFLOW_REQUIRE_POSTGRES=1`
 * (CI sets it), a missing or unreachable PostgreSQL fails the layer instead.
 *
 * @example
 * import { TestDatabase } from "@tillflow/store-sql"
 * it.layer(TestDatabase.layer)("my tests", (it) => {
 *   it.effect("…", () => Effect.gen(function* () {
 *     const sql = yield* SqlClient.SqlClient         // the fresh database
 *     const store = yield* EventStore.EventStore     // migrated event store on it
 *   }))
 * })
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { EventStore } from "@tillflow/engine"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as HotPool from "./internal/HotPool.js"
import * as PgliteClient from "./PgliteClient.js"
import * as SqlEventStore from "./SqlEventStore.js"

/** Which database a test got. */
export interface TestDatabaseInfo {
  readonly kind: "postgres" | "pglite"
  /** The database's name (PostgreSQL) or `memory://` (PGlite). */
  readonly name: string
  /** The connection URL of the fresh database (PostgreSQL only). */
  readonly url: Option.Option<Redacted.Redacted>
}

/** The database of the current test file. */
export class TestDatabase extends Context.Tag("tillflow/TestDatabase")<TestDatabase, TestDatabaseInfo>() {}

/** No usable test database (PostgreSQL required but missing or unreachable, or setup failed). */
export class TestDatabaseError extends Schema.TaggedError<TestDatabaseError>()("TestDatabaseError", {
  reason: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return this.reason
  }
}

/** Options of {@link layerWith}. */
export interface Options {
  /** Poll interval of the event store's subscriptions (default 50 ms, to keep tests quick). */
  readonly pollInterval?: Duration.DurationInput | undefined
  /** Pool size on PostgreSQL (default 10). */
  readonly maxConnections?: number | undefined
}

/**
 * Whether this run's SQL tests get PostgreSQL: `DATABASE_URL` is set, or
 * `TILLFLOW_REQUIRE_POSTGRES=1` demands it (then a missing server fails the layer). A test
 * that can only hold on a server (several sessions, several processes) runs under
 * `skipIf(!TestDatabase.postgresExpected)` and says why; in CI it always runs.
 */
export const postgresExpected: boolean =
  (globalThis.process?.env["DATABASE_URL"] ?? "").trim() !== "" ||
  globalThis.process?.env["TILLFLOW_REQUIRE_POSTGRES"] === "1"

/** The line logged when tests fall back to PGlite. */
export const fallbackMessage = "PostgreSQL tests ran on PGlite: DATABASE_URL not set"

// @effect/vitest removes the default logger; this one line must reach the terminal anyway.
const logLoud = (message: string) =>
  Effect.locally(
    Effect.logWarning(message),
    FiberRef.currentLoggers,
    HashSet.make(Logger.prettyLoggerDefault)
  )

const environment = Effect.gen(function* () {
  const url = yield* Config.option(Config.redacted("DATABASE_URL"))
  const required = yield* Config.boolean("TILLFLOW_REQUIRE_POSTGRES").pipe(Config.withDefault(false))
  return {
    url: Option.filter(url, (value) => Redacted.value(value).trim().length > 0),
    required
  }
}).pipe(
  Effect.mapError(
    (cause) => new TestDatabaseError({ reason: `Bad test database configuration: ${cause}`, cause })
  )
)

const randomName = (): string => {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8))
  return `tillflow_test_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`
}

const withDatabase = (url: Redacted.Redacted, database: string): Redacted.Redacted => {
  const parsed = new URL(Redacted.value(url))
  parsed.pathname = `/${database}`
  return Redacted.make(parsed.toString())
}

const postgres = (url: Redacted.Redacted, options: Options) =>
  Effect.gen(function* () {
    const admin = yield* PgClient.make({ url, maxConnections: 1, applicationName: "tillflow-tests" }).pipe(
      Effect.mapError(
        (cause) =>
          new TestDatabaseError({
            reason: `PostgreSQL at DATABASE_URL is unreachable: ${cause.message}`,
            cause
          })
      )
    )
    const name = randomName()
    yield* Effect.acquireRelease(
      admin`CREATE DATABASE ${admin(name)}`.pipe(
        Effect.mapError(
          (cause) => new TestDatabaseError({ reason: `CREATE DATABASE failed: ${cause.message}`, cause })
        )
      ),
      () =>
        admin`DROP DATABASE IF EXISTS ${admin(name)} WITH (FORCE)`.pipe(
          Effect.catchAll((cause) => Effect.logWarning(`Could not drop test database ${name}`, cause))
        )
    )
    const databaseUrl = withDatabase(url, name)
    // Acquired after CREATE DATABASE, so released (pool closed) before DROP DATABASE.
    // With its `pg` pool (`internal/HotPool`), as `PgEventStore` opens it: the contract
    // suites run the store's hot statements on PostgreSQL as the apps do.
    const clients = yield* HotPool.make({
      url: databaseUrl,
      maxConnections: options.maxConnections ?? 10,
      applicationName: "tillflow-tests"
    }).pipe(
      Effect.mapError(
        (cause) => new TestDatabaseError({ reason: `Cannot connect to ${name}: ${cause.message}`, cause })
      )
    )
    const info: TestDatabaseInfo = { kind: "postgres", name, url: Option.some(databaseUrl) }
    return Context.add(clients, TestDatabase, info)
  })

const pglite = Effect.gen(function* () {
  yield* logLoud(fallbackMessage)
  const client = yield* PgliteClient.make({}).pipe(
    Effect.mapError(
      (cause) => new TestDatabaseError({ reason: `PGlite failed to start: ${cause.message}`, cause })
    )
  )
  const info: TestDatabaseInfo = { kind: "pglite", name: "memory://", url: Option.none() }
  return Context.make(PgliteClient.PgliteClient, client).pipe(
    Context.add(SqlClient.SqlClient, client),
    Context.add(TestDatabase, info)
  )
})

/** A fresh database and a migrated event store on it; see the module's description. */
export const layerWith = (
  options: Options = {}
): Layer.Layer<
  TestDatabase | SqlClient.SqlClient | EventStore.EventStore,
  TestDatabaseError | EventStore.EventStoreError
> => {
  const database = Layer.scopedContext(
    Effect.gen(function* () {
      const env = yield* environment
      if (Option.isSome(env.url)) return yield* postgres(env.url.value, options)
      if (env.required) {
        return yield* new TestDatabaseError({
          reason:
            "TILLFLOW_REQUIRE_POSTGRES=1 but DATABASE_URL is not set: these tests must run on PostgreSQL"
        })
      }
      return yield* pglite
    })
  ).pipe(Layer.provide(Reactivity.layer))
  return SqlEventStore.layer({ pollInterval: options.pollInterval ?? "50 millis" }).pipe(
    Layer.provideMerge(database)
  )
}

/** {@link layerWith} with its defaults. */
export const layer: Layer.Layer<
  TestDatabase | SqlClient.SqlClient | EventStore.EventStore,
  TestDatabaseError | EventStore.EventStoreError
> = layerWith()
