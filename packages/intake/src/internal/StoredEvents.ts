/**
 * Stored events as the intake shows them: a position in the global log written and read
 * as `transactionId:globalPosition`, and an event as the JSON view the API answers.
 */
import { Ledger } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Intake from "../Intake.js"

/** Parses `transactionId:globalPosition`. */
export const parseCheckpoint = (text: string | undefined): Either.Either<EventStore.Checkpoint, string> => {
  if (text === undefined || text === "" || text === "start") return Either.right(EventStore.Checkpoint.start)
  const match = /^(\d+):(\d+)$/.exec(text)
  return match === null
    ? Either.left(`"${text}" is not a checkpoint: expected transactionId:position, e.g. 752:41 (or "start")`)
    : Either.right(
        new EventStore.Checkpoint({
          transactionId: BigInt(match[1] ?? "0"),
          globalPosition: BigInt(match[2] ?? "0")
        })
      )
}

/** A checkpoint from a request, or the request refused. */
export const checkpointOf = (
  text: string | undefined
): Effect.Effect<EventStore.Checkpoint, Intake.InvalidRequest> =>
  Either.match(parseCheckpoint(text), {
    onLeft: (message) => Effect.fail(new Intake.InvalidRequest({ message })),
    onRight: Effect.succeed
  })

/** The view of a stored event. */
export const eventView = (recorded: EventStore.RecordedEvent): Intake.EventView => ({
  position: Ledger.positionOf(recorded.checkpoint),
  streamId: recorded.streamId,
  version: recorded.version,
  type: recorded.type,
  schemaVersion: recorded.schemaVersion,
  recordedAt: new Date(recorded.recordedAt.epochMillis).toISOString(),
  data: recorded.data,
  metadata: recorded.metadata,
  hash: recorded.hash
})
