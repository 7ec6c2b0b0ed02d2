/**
 * The notes about a result that its attempt's conclusion did not take into account:
 * `LateResultRecorded`, and `ResultMismatch` when the result disagrees with the
 * conclusion. Two writers can find the same such result — the callback receiver, which
 * reads the payment's stream after appending the result to the attempt's, and the
 * protocol's settle step, which reads the attempt's stream again once its conclusion has
 * landed (`PaymentProtocol`, where the ordering argument is written) — so the notes have
 * ids derived from the attempt, the result's hash and the event's type, and are built by
 * this one function whichever side writes them: the second writer is refused as a
 * duplicate, and that is done.
 *
 * What the conclusion took into account is the attempt's stream up to a version, its
 * horizon: settle records the version it read in the metadata of the events it appends
 * (`horizonKey`); a not-charged conclusion read no result, its horizon is 0. A result
 * recorded above the horizon is late; one at or below it was weighed by the conclusion,
 * which raised its mismatch itself if it disagreed.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as CallbackRegistration from "./CallbackRegistration.js"
import * as PaymentEvents from "./PaymentEvents.js"
import * as EventStore from "@tillflow/engine/EventStore"
import { uuidFromSync } from "@tillflow/engine/DeterministicId"
import * as Tenant from "@tillflow/engine/Tenant"
import * as OperationOutcome from "./OperationOutcome.js"

/** The conclusion recorded when an attempt was proved not charged (no finStatus of its own). */
export const notCharged = "NOT_CHARGED"

/**
 * The metadata key of the settle step's events under which it records the version of the
 * attempt's stream it read: the results it weighed.
 */
export const horizonKey = "attemptStreamVersion"

/** An attempt's conclusion as its payment stream records it. */
export interface Conclusion {
  /** The finStatus settled, or `notCharged`. */
  readonly recorded: string
  /**
   * The attempt stream's version the conclusion was drawn from; undefined for an outcome
   * recorded before horizons were (every result after it is then taken as late).
   */
  readonly horizon: number | undefined
}

/** What the notes need of a recorded result. */
export interface Result {
  readonly resultHash: string
  readonly finStatus?: string | undefined
  readonly recovered: boolean
  readonly receivedAt: number
}

/** A result as recorded in the attempt's stream, with its version there. */
export interface Recorded extends Result {
  readonly version: number
}

const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The id of a note: one per attempt, result and type, whoever writes it. */
export const noteId = (attemptId: string, resultHash: string, type: string): string =>
  uuidFromSync(`late-result/${attemptId}/${resultHash}/${type}`)

/**
 * The conclusion about `attemptId` in its payment stream's events, if any: an outcome
 * event whose facts name the attempt, or `AttemptNotCharged`.
 */
export const conclusionOf = (
  events: ReadonlyArray<EventStore.RecordedEvent>,
  attemptId: string
): Option.Option<Conclusion> => {
  for (const event of events) {
    const data = event.data
    if (!isObject(data)) continue
    if (PaymentEvents.outcomeTypes.includes(event.type)) {
      const facts = data["facts"]
      if (isObject(facts) && facts["attemptId"] === attemptId && typeof facts["finStatus"] === "string") {
        const horizon = event.metadata[horizonKey]
        return Option.some({
          recorded: facts["finStatus"],
          horizon: typeof horizon === "number" ? horizon : undefined
        })
      }
    }
    if (event.type === PaymentEvents.AttemptNotCharged.type && data["attemptId"] === attemptId) {
      return Option.some({ recorded: notCharged, horizon: 0 })
    }
  }
  return Option.none()
}

/** Whether a result recorded at `version` of the attempt's stream came after the conclusion's look. */
export const isLate = (conclusion: Conclusion, version: number): boolean =>
  conclusion.horizon === undefined || version > conclusion.horizon

/** Whether the payment stream's events already note this result as late. */
export const isNoted = (
  events: ReadonlyArray<EventStore.RecordedEvent>,
  attemptId: string,
  resultHash: string
): boolean =>
  events.some(
    (event) =>
      event.type === PaymentEvents.LateResultRecorded.type &&
      isObject(event.data) &&
      event.data["attemptId"] === attemptId &&
      event.data["resultHash"] === resultHash
  )

const charged = (finStatus: string): boolean => {
  const outcome = OperationOutcome.outcomeOf(finStatus)
  return outcome === "Approved" || outcome === "PartiallyApproved"
}

/**
 * Whether a result's finStatus disagrees with the conclusion: a charge after "not
 * charged", or a final status of another outcome (an unknown or UNDEFINED status
 * disagrees with nothing).
 */
export const disagrees = (recorded: string, finStatus: string | undefined): boolean => {
  const received = finStatus ?? "UNDEFINED"
  return recorded === notCharged
    ? charged(received)
    : OperationOutcome.outcomeOf(received) !== undefined && !OperationOutcome.agrees(recorded, received)
}

/**
 * A note's metadata: its execution, and whose payment it is (its merchant): the current
 * tenant, the execution's inside it, the payment stream's for the callback receiver
 * (`Tenant.within`), so that merchant's log reads the note.
 */
const noteMetadata = (executionId: string): Effect.Effect<EventStore.JsonObject> =>
  Effect.map(Tenant.current, (tenant) =>
    tenant === undefined ? { executionId } : { executionId, [Tenant.metadataKey]: tenant }
  )

/**
 * The `ResultMismatch` of a result that disagrees with the conclusion, with its note id;
 * dated when the result was received, not when it is written, so that every writer
 * builds the same event.
 */
export const mismatchOf = (options: {
  readonly executionId: string
  readonly attemptId: string
  readonly recorded: string
  readonly result: Result
}): Effect.Effect<EventStore.NewEvent> =>
  Effect.map(
    PaymentEvents.events.encode(
      PaymentEvents.ResultMismatch.make({
        attemptId: options.attemptId,
        recorded: options.recorded,
        received: options.result.finStatus ?? "UNDEFINED",
        resultHash: options.result.resultHash,
        source: "callback",
        at: options.result.receivedAt
      })
    ),
    (event) => ({
      ...event,
      eventId: noteId(options.attemptId, options.result.resultHash, PaymentEvents.ResultMismatch.type)
    })
  ).pipe(
    Effect.zipWith(noteMetadata(options.executionId), (event, metadata) => ({ ...event, metadata })),
    Effect.orDie
  )

/**
 * The notes of a late result: `LateResultRecorded`, and its `ResultMismatch` when it
 * disagrees with the conclusion. The same events, ids included, whoever builds them.
 */
export const notesOf = (options: {
  readonly executionId: string
  readonly attemptId: string
  readonly recorded: string
  readonly result: Result
}): Effect.Effect<ReadonlyArray<EventStore.NewEvent>> =>
  Effect.gen(function* () {
    const { attemptId, executionId, result } = options
    const late = yield* PaymentEvents.events
      .encode(
        PaymentEvents.LateResultRecorded.make({
          attemptId,
          resultHash: result.resultHash,
          recovered: result.recovered,
          at: result.receivedAt,
          ...(result.finStatus === undefined ? {} : { finStatus: result.finStatus })
        })
      )
      .pipe(Effect.orDie)
    const note: EventStore.NewEvent = {
      ...late,
      eventId: noteId(attemptId, result.resultHash, PaymentEvents.LateResultRecorded.type),
      metadata: yield* noteMetadata(executionId)
    }
    return disagrees(options.recorded, result.finStatus) ? [note, yield* mismatchOf(options)] : [note]
  })

/**
 * The results (`ResultReceived`) in an attempt stream's events, with their versions; one
 * that does not decode is left out, as the workflow leaves it out.
 */
export const resultsIn = (
  events: ReadonlyArray<EventStore.RecordedEvent>
): Effect.Effect<ReadonlyArray<Recorded>> =>
  Effect.gen(function* () {
    const results: Array<Recorded> = []
    for (const recorded of events) {
      if (recorded.type !== CallbackRegistration.ResultReceived.type) continue
      const decoded = yield* Effect.option(CallbackRegistration.events.decode(recorded))
      if (Option.isNone(decoded) || decoded.value.type !== "ResultReceived") continue
      const received = decoded.value.data as typeof CallbackRegistration.ResultReceived.schema.Type
      results.push({
        version: recorded.version,
        resultHash: received.resultHash,
        recovered: received.recovered,
        receivedAt: received.receivedAt,
        ...(received.finStatus === undefined ? {} : { finStatus: received.finStatus })
      })
    }
    return results
  })

/**
 * Appends events that may be in the stream already, each once: the batch in one
 * statement, and when the store refuses it for a known id (a batch is refused whole),
 * each event on its own, a refused one being there already. True when the batch landed
 * whole, false when some of it was there before.
 */
export const appendEach = (
  store: EventStore.Service,
  streamId: string,
  events: ReadonlyArray<EventStore.NewEvent>
): Effect.Effect<boolean, Exclude<EventStore.AppendError, EventStore.DuplicateEventId>> =>
  events.length === 0
    ? Effect.succeed(true)
    : store.append(streamId, EventStore.AnyVersion, events).pipe(
        Effect.as(true),
        Effect.catchTag("DuplicateEventId", () =>
          Effect.as(
            Effect.forEach(
              events,
              (event) =>
                store
                  .append(streamId, EventStore.AnyVersion, [event])
                  .pipe(Effect.catchTag("DuplicateEventId", () => Effect.void)),
              { discard: true }
            ),
            false
          )
        )
      )
