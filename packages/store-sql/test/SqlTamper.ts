/** The contract's test services for SQL stores: the tamper hook and a second store instance. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlEventStore } from "@tillflow/store-sql"
import { OtherInstance, Tamper } from "@tillflow/engine/testing"

/** A direct UPDATE of a row's data. */
const tamper = Layer.effect(
  Tamper,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    setData: (streamId: string, version: number, data: unknown) =>
      sql`UPDATE events SET data = ${JSON.stringify(data)}::text::jsonb
        WHERE stream_id = ${streamId} AND version = ${version}`.pipe(Effect.orDie, Effect.asVoid)
  }))
)

/** Another `SqlEventStore` over the same database, with a head cache of its own. */
const otherInstance = Layer.effect(
  OtherInstance,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    make: Effect.provideService(SqlEventStore.make(), SqlClient.SqlClient, sql)
  }))
)

export const sqlTamper = Layer.merge(tamper, otherInstance)
