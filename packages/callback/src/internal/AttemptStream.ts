/**
 * An attempt's stream as the callback receiver sees it: what is known of the attempt (its
 * registration, the stream's version and the results already in it), from this process's
 * `RegisteredAttempts` or else read from the stream; the append of a delivered result
 * unless a result with its hash is there already (the dedupe); and the version at which a
 * result was recorded, for weighing a resend's lateness.
 */
import { CallbackRegistration } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as Tenant from "@tillflow/engine/Tenant"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether the last segment of a callback address can name an attempt (a UUID, any case). */
export const isAttemptId = (segment: string): boolean => uuid.test(segment)

/** Whether a parsed JSON value is an object (not null, not an array). */
export const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isResultType = (type: string) =>
  type === CallbackRegistration.ResultReceived.type || type === CallbackRegistration.ResultUndecodable.type

const resultHashOf = (event: EventStore.RecordedEvent): string | undefined =>
  isResultType(event.type) && isObject(event.data) && typeof event.data["resultHash"] === "string"
    ? event.data["resultHash"]
    : undefined

const hashesIn = (events: ReadonlyArray<EventStore.RecordedEvent>): ReadonlyArray<string> =>
  events.flatMap((event) => {
    const hash = resultHashOf(event)
    return hash === undefined ? [] : [hash]
  })

const registrationOf = (events: ReadonlyArray<EventStore.RecordedEvent>) =>
  Effect.gen(function* () {
    const first = events[0]
    if (first === undefined || first.type !== CallbackRegistration.AttemptRegistered.type)
      return Option.none()
    const decoded = yield* Effect.option(CallbackRegistration.events.decode(first))
    return Option.map(decoded, (d) => d.data as CallbackRegistration.Registration)
  })

/** The receiver's view of attempts' streams, over the store and this process's memory of attempts. */
export const make = (store: EventStore.Service, attempts: CallbackRegistration.RegisteredAttemptsService) => {
  /** The registration and what is known of the stream: noted in memory, else read. */
  const known = (attemptId: string) =>
    Effect.gen(function* () {
      const noted = attempts.get(attemptId)
      if (noted !== undefined) return Option.some(noted)
      const events = yield* store.readStream(CallbackRegistration.attemptStream(attemptId))
      const registration = yield* registrationOf(events)
      if (Option.isNone(registration)) return Option.none()
      const found: CallbackRegistration.KnownAttempt = {
        registration: registration.value,
        version: events.at(-1)?.version ?? 0,
        resultHashes: hashesIn(events),
        tenant: Tenant.ofMetadata(events[0]?.metadata)
      }
      attempts.note(found)
      return Option.some(found)
    })

  /**
   * Appends the event unless a result with this hash is already in the stream: at the
   * version known, and on a conflict again after reading the stream. Its version in the
   * stream when appended, none when it was there already. With `alongside` (another
   * stream's part, a deferred's resolution), both are written in one atomic write
   * (`appendStreams`), all or none; when the store refuses `alongside`'s event id (that
   * deferred is resolved already), the event is appended alone. `alongside` says whether
   * it was written with it.
   */
  const appendOnce = (
    attempt: CallbackRegistration.KnownAttempt,
    resultHash: string,
    given: EventStore.NewEvent,
    alongside?: EventStore.StreamAppend | undefined
  ) =>
    Effect.gen(function* () {
      const stream = CallbackRegistration.attemptStream(attempt.registration.attemptId)
      // Whose payment it is, as its registration says: the merchant's log reads it.
      const { tenant } = attempt
      const event =
        tenant === undefined
          ? given
          : { ...given, metadata: { ...given.metadata, [Tenant.metadataKey]: tenant } }
      let version = attempt.version
      let hashes = attempt.resultHashes
      let other = alongside
      for (let round = 0; round < 5; round++) {
        if (hashes.includes(resultHash)) return { appended: Option.none<number>(), alongside: false }
        const expectedVersion = EventStore.exactVersion(version)
        const appended = yield* (
          other === undefined
            ? Effect.map(store.append(stream, expectedVersion, [event]), (done) =>
                Option.some(done.nextVersion)
              )
            : Effect.map(
                store.appendStreams([{ streamId: stream, expectedVersion, events: [event] }, other]),
                (done) => Option.fromNullable(done[0]?.nextVersion)
              )
        ).pipe(
          Effect.map((version) => ({ version, refusedOther: false })),
          Effect.catchTag("ConcurrencyConflict", () =>
            Effect.succeed({ version: Option.none<number>(), refusedOther: false })
          ),
          // With the other stream's part, a refused id is its event's (that deferred is
          // resolved already; nothing was written): the event goes alone. Without it, a
          // refusal is the store's answer, as before.
          Effect.catchTag("DuplicateEventId", (refused) =>
            other === undefined
              ? Effect.fail(refused)
              : Effect.succeed({ version: Option.none<number>(), refusedOther: true })
          )
        )
        if (appended.refusedOther) {
          other = undefined
          continue
        }
        if (Option.isSome(appended.version)) {
          attempts.note({
            registration: attempt.registration,
            version: appended.version.value,
            resultHashes: [...hashes, resultHash],
            tenant
          })
          return { appended: appended.version, alongside: other !== undefined }
        }
        const events = yield* store.readStream(stream)
        version = events.at(-1)?.version ?? 0
        hashes = hashesIn(events)
        attempts.note({ registration: attempt.registration, version, resultHashes: hashes, tenant })
      }
      return yield* Effect.dieMessage("the attempt stream kept changing under the receiver")
    })

  /** The version at which the result with this hash is recorded in the attempt's stream. */
  const recordedVersion = (attemptId: string, resultHash: string) =>
    Effect.map(
      store.readStream(CallbackRegistration.attemptStream(attemptId)),
      (events) => events.find((event) => resultHashOf(event) === resultHash)?.version
    )

  return { known, appendOnce, recordedVersion }
}

/** @see make */
export type AttemptStream = ReturnType<typeof make>
