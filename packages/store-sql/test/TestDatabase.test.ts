/**
 * The test database helper: a fresh PostgreSQL database per layer, dropped at release; the
 * PGlite fallback without DATABASE_URL; failure when PostgreSQL is required but missing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { EventStore } from "@tillflow/engine"
import { TestDatabase } from "@tillflow/store-sql"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const databaseUrl = process.env.DATABASE_URL ?? ""

describe("TestDatabase", () => {
  it.live("fails when TILLFLOW_REQUIRE_POSTGRES=1 and DATABASE_URL is not set", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(TestDatabase.layer)).pipe(withEnv({ TILLFLOW_REQUIRE_POSTGRES: "1" }))
      )
      expect(error._tag).toBe("TestDatabaseError")
      expect(error.message).toContain("DATABASE_URL is not set")
    })
  )

  it.live("fails when DATABASE_URL points at no server", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(TestDatabase.layer)).pipe(
          withEnv({
            TILLFLOW_REQUIRE_POSTGRES: "1",
            DATABASE_URL: "postgres://postgres@127.0.0.1:1/postgres"
          })
        )
      )
      expect(error._tag).toBe("TestDatabaseError")
      expect(error.message).toContain("unreachable")
    })
  )

  it.live(
    "falls back to PGlite in memory, with a migrated event store, when DATABASE_URL is not set",
    () =>
      Effect.gen(function* () {
        const context = yield* Layer.build(TestDatabase.layer).pipe(withEnv({}))
        const info = yield* Effect.provide(TestDatabase.TestDatabase, context)
        expect(info.kind).toBe("pglite")
        const store = yield* Effect.provide(EventStore.EventStore, context)
        yield* store.append("fallback", EventStore.NoStream, [{ type: "Works", data: {} }])
        expect(yield* store.streamVersion("fallback")).toBe(1)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live.skipIf(databaseUrl === "" && process.env["TILLFLOW_REQUIRE_POSTGRES"] !== "1")(
    "creates a fresh PostgreSQL database per layer and drops it at release",
    () =>
      Effect.gen(function* () {
        const env = withEnv({ DATABASE_URL: databaseUrl })
        const scopeA = yield* Scope.make()
        const scopeB = yield* Scope.make()
        const a = yield* Layer.buildWithScope(TestDatabase.layer, scopeA).pipe(env)
        const b = yield* Layer.buildWithScope(TestDatabase.layer, scopeB).pipe(env)
        const infoA = yield* Effect.provide(TestDatabase.TestDatabase, a)
        const infoB = yield* Effect.provide(TestDatabase.TestDatabase, b)
        expect(infoA.kind).toBe("postgres")
        expect(infoA.name).not.toBe(infoB.name)
        expect(Option.map(infoA.url, (url) => new URL(Redacted.value(url)).pathname)).toEqual(
          Option.some(`/${infoA.name}`)
        )
        const currentDatabase = Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ readonly db: string }>`SELECT current_database() AS db`
        )
        expect((yield* Effect.provide(currentDatabase, a))[0].db).toBe(infoA.name)

        const exists = (name: string) =>
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM pg_database WHERE datname = ${name}`
          ).pipe(
            Effect.provide(b),
            Effect.map((rows) => rows[0].n === "1")
          )
        expect(yield* exists(infoA.name)).toBe(true)
        yield* Scope.close(scopeA, Exit.void)
        expect(yield* exists(infoA.name)).toBe(false)
        yield* Scope.close(scopeB, Exit.void)
      }),
    60_000
  )
})
