/**
 * The `pg` pool under @effect/sql-pg's `PgClient`, held for the store's hot statements
 * (STYLE.md, "SQL"): @effect/sql-pg 0.53 spends 2–2.4× the Node CPU of the bare `pg`
 * driver per statement, so the append goes through this pool as a NAMED prepared
 * statement of a fixed text (parsed and planned once per connection), everything else
 * through @effect/sql over the same pool. PGlite has no `pg` pool: its store keeps the
 * @effect/sql path (no `HotPool` in its context).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Pg from "pg"

/** The `pg` pool the `PgClient` in context runs on (absent on PGlite). */
export class HotPool extends Context.Tag("@tillflow/store-sql/HotPool")<HotPool, Pg.Pool>() {}

/** How to open the pool: the subset of `PgClient`'s options the store uses. */
export interface PoolOptions {
  readonly url: Redacted.Redacted
  readonly maxConnections?: number | undefined
  readonly applicationName?: string | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
}

/**
 * Opens a `pg` pool (checked with one `SELECT 1`, ended with the scope) and a `PgClient`
 * over it (`PgClient.fromPool`), answering both with the `SqlClient`.
 */
export const make = (
  options: PoolOptions
): Effect.Effect<
  Context.Context<PgClient.PgClient | SqlClient.SqlClient | HotPool>,
  SqlError,
  Scope.Scope | Reactivity.Reactivity
> =>
  Effect.gen(function* () {
    const pool = new Pg.Pool({
      connectionString: Redacted.value(options.url),
      max: options.maxConnections,
      application_name: options.applicationName ?? "tillflow",
      // JIT off for the store's sessions: its statements are point reads and writes of a
      // few rows, and on tables never analysed (autovacuum off) their estimated cost grows
      // with the rows stored until it passes `jit_above_cost`, from where every one of them
      // would pay a compilation (~90 ms measured) that never pays back (issue 29).
      options: "-c jit=off"
    })
    // An idle connection's error (a server restart) is answered by the next statement.
    pool.on("error", () => {})
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }),
      () => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ).pipe(
      Effect.timeoutFail({
        duration: options.connectTimeout ?? Duration.seconds(5),
        onTimeout: () =>
          new SqlError({
            cause: new Error("Connection timed out"),
            message: "PgClient: Connection timed out"
          })
      })
    )
    const client = yield* PgClient.fromPool({ acquire: Effect.succeed(pool) })
    return Context.make(PgClient.PgClient, client).pipe(
      Context.add(SqlClient.SqlClient, client),
      Context.add(HotPool, pool)
    )
  })

/**
 * One hot statement through the pool: a named prepared statement (`name` stands for
 * `text`, which must never vary), its rows, or a `SqlError` whose cause is `pg`'s error
 * (its `code`, `constraint` and `detail` read as @effect/sql's are). It is not
 * interruptible: an interrupted caller waits for its statement, as the store's calls do.
 * A statement transformer installed by the caller (`Statement.withTransformer`, as the
 * tests that count statements do) sees it as it sees @effect/sql's statements; what it
 * answers is not sent (the text is fixed).
 */
export const query = <Row>(
  sql: SqlClient.SqlClient,
  pool: Pg.Pool,
  name: string,
  text: string,
  values: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<Row>, SqlError> => {
  const run = Effect.async<ReadonlyArray<Row>, SqlError>((resume) => {
    pool.query({ name, text, values: values as Array<unknown> }, (error: Error | undefined, result) => {
      if (error) resume(Effect.fail(new SqlError({ cause: error, message: `Failed to execute ${name}` })))
      else resume(Effect.succeed(result.rows as ReadonlyArray<Row>))
    })
  })
  return Effect.flatMap(FiberRef.get(Statement.currentTransformer), (transformer) =>
    Option.isNone(transformer)
      ? run
      : Effect.zipRight(
          Effect.useSpan(name, (span) =>
            Effect.flatMap(Effect.getFiberRefs, (refs) =>
              transformer.value(sql.unsafe(text, values), sql, refs, span)
            )
          ),
          run
        )
  )
}
