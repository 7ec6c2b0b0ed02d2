/** The contract's tamper hook for SQL stores: a direct UPDATE of a row's data. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Tamper } from "./EventStoreContract.js"

export const sqlTamper = Layer.effect(
  Tamper,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    setData: (streamId: string, version: number, data: unknown) =>
      sql`UPDATE events SET data = ${JSON.stringify(data)}::text::jsonb
        WHERE stream_id = ${streamId} AND version = ${version}`.pipe(Effect.orDie, Effect.asVoid)
  }))
)
