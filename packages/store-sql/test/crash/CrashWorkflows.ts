/**
 * Workflows of the multi-process tests: their activities write side effects into tables of
 * the test database, so the test can count how often each effect happened. `CrashFlow`
 * holds (blocks forever) at a named point when its worker is started with `hold`, which is
 * where the test kills that worker with SIGKILL.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Activity, DurableClock, Workflow } from "@effect/workflow"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The side-effect tables (created by the test before any worker starts). */
export const createTables = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Every start of an activity body (not idempotent by design: it counts runs).
  yield* sql`CREATE TABLE activity_runs (id bigserial PRIMARY KEY, execution_id text, activity text, worker text)`
  // The idempotent charge: one row per execution, whatever the number of runs.
  yield* sql`CREATE TABLE charges (key text PRIMARY KEY, worker text)`
  // The non-idempotent notification, guarded by a marker written before it is sent.
  yield* sql`CREATE TABLE notify_markers (key text PRIMARY KEY)`
  yield* sql`CREATE TABLE notifications (id bigserial PRIMARY KEY, execution_id text, worker text)`
  yield* sql`CREATE TABLE shared_effects (key text PRIMARY KEY, worker text)`
})

/** The points where a holding worker stops (and gets killed). */
export const holdPoints = ["charge-before-record", "after-charge-recorded", "notify-before-record"] as const

/** Charge (idempotent), Announce, a durable sleep, Notify (not idempotent: at most once). */
export const CrashFlow = Workflow.make({
  name: "CrashFlow",
  payload: { id: Schema.String, holdAt: Schema.String, sleepMillis: Schema.Number },
  success: Schema.String,
  idempotencyKey: (payload) => payload.id
})

/** Three activities, each with an idempotent effect and a run counter, 50 ms each. */
export const Shared = Workflow.make({
  name: "Shared",
  payload: { id: Schema.String },
  success: Schema.Number,
  idempotencyKey: (payload) => payload.id
})

/** Writes a line the test waits for: `REACHED <point> <executionId>`. */
const announce = (line: string) => Effect.sync(() => void process.stdout.write(`${line}\n`))

export const crashFlowLayer = (options: { readonly hold: boolean; readonly workerId: string }) =>
  CrashFlow.toLayer((payload, executionId) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const holdAt = (point: string) =>
        options.hold && payload.holdAt === point
          ? Effect.zipRight(announce(`REACHED ${point} ${executionId}`), Effect.never)
          : Effect.void
      const ran = (activity: string) =>
        sql`INSERT INTO activity_runs (execution_id, activity, worker) VALUES (${executionId}, ${activity}, ${options.workerId})`

      yield* Activity.make({
        name: "Charge",
        execute: Effect.gen(function* () {
          yield* ran("Charge")
          yield* sql`INSERT INTO charges (key, worker) VALUES (${executionId}, ${options.workerId}) ON CONFLICT (key) DO NOTHING`
          yield* holdAt("charge-before-record")
        }).pipe(Effect.orDie)
      })
      yield* Activity.make({ name: "Announce", execute: holdAt("after-charge-recorded") })
      yield* DurableClock.sleep({
        name: "settle",
        duration: Duration.millis(payload.sleepMillis),
        inMemoryThreshold: Duration.zero
      })
      return yield* Activity.make({
        name: "Notify",
        success: Schema.String,
        execute: Effect.gen(function* () {
          yield* ran("Notify")
          const marked =
            yield* sql`INSERT INTO notify_markers (key) VALUES (${executionId}) ON CONFLICT (key) DO NOTHING RETURNING key`
          // An earlier attempt may have sent it: the outcome is unknown, never send twice.
          if (marked.length === 0) return "unknown"
          yield* sql`INSERT INTO notifications (execution_id, worker) VALUES (${executionId}, ${options.workerId})`
          yield* holdAt("notify-before-record")
          return "sent"
        }).pipe(Effect.orDie)
      })
    })
  )

export const sharedLayer = (options: { readonly workerId: string }) =>
  Shared.toLayer((_payload, executionId) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      for (const step of [1, 2, 3]) {
        yield* Activity.make({
          name: `Step${step}`,
          execute: Effect.gen(function* () {
            yield* sql`INSERT INTO activity_runs (execution_id, activity, worker) VALUES (${executionId}, ${`Step${step}`}, ${options.workerId})`
            yield* sql`INSERT INTO shared_effects (key, worker) VALUES (${`${executionId}/${step}`}, ${options.workerId}) ON CONFLICT (key) DO NOTHING`
            yield* Effect.sleep("50 millis")
          }).pipe(Effect.orDie)
        })
      }
      return 3
    })
  )
