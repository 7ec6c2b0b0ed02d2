/**
 * The rows the event store's statements answer, their decoders, and what they become for
 * the port: `RecordedEvent`, and `EventStoreError` for a failed statement.
 */
import { EventStore } from "@tillflow/engine"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const EventRow = Schema.Struct({
  stream_id: Schema.String,
  version: Schema.NumberFromString,
  global_position: Schema.BigInt,
  transaction_id: Schema.BigInt,
  event_id: Schema.String,
  type: Schema.String,
  schema_version: Schema.Number,
  data: Schema.Unknown,
  metadata: Schema.Unknown,
  recorded_at: Schema.DateFromSelf,
  hash: Schema.String
})
const decodeEventRows = Schema.decodeUnknown(Schema.Array(EventRow))

const HeadRow = Schema.Struct({
  stream_id: Schema.String,
  version: Schema.NumberFromString,
  last_hash: Schema.String
})
export const decodeHeadRows = Schema.decodeUnknown(Schema.Array(HeadRow))

/** A stream's row in `streams`: its head. */
export type Head = typeof HeadRow.Type

const toRecordedEvent = (row: typeof EventRow.Type): EventStore.RecordedEvent =>
  // Rows come from jsonb columns and typed SQL casts: already valid, so skip re-validation.
  new EventStore.RecordedEvent(
    {
      streamId: row.stream_id,
      version: row.version,
      globalPosition: row.global_position,
      transactionId: row.transaction_id,
      eventId: row.event_id,
      type: row.type,
      schemaVersion: row.schema_version,
      data: row.data as EventStore.Json,
      metadata: row.metadata as EventStore.JsonObject,
      recordedAt: DateTime.unsafeFromDate(row.recorded_at),
      hash: row.hash
    },
    true
  )

/** The port's error for a failure of `operation`. */
export const storeError = (operation: string) => (cause: unknown) =>
  new EventStore.EventStoreError({
    operation,
    detail: cause instanceof Error ? cause.message : String(cause),
    cause
  })

/** Event rows (`Statements.columns`) as recorded events; a bad row fails `operation`. */
export const decodeEvents = (operation: string) => (rows: ReadonlyArray<unknown>) =>
  decodeEventRows(rows).pipe(Effect.map(Arr.map(toRecordedEvent)), Effect.mapError(storeError(operation)))
