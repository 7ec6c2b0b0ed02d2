/**
 * An answer of the service that arrived but cannot be read — a polled result whose body
 * does not decode — kept raw in the attempt's stream as the callback receiver keeps an
 * undecodable delivery (`ResultUndecodable`): nothing the service said about a payment is
 * dropped, whichever way it came, and a person can read it later.
 */
import * as Effect from "effect/Effect"
import { uuidFrom } from "@tillflow/engine/DeterministicId"
import * as EventStore from "@tillflow/engine/EventStore"
import * as HashChain from "@tillflow/engine/HashChain"
import * as Tenant from "@tillflow/engine/Tenant"
import type * as RemoteError from "../../model/RemoteError.js"
import * as CallbackRegistration from "../CallbackRegistration.js"
import * as TransactionResult from "../../model/TransactionResult.js"
import * as ResultRedaction from "../ResultRedaction.js"
import { retryStore } from "./step.js"

/** The body of an answer that came (2xx) but does not decode, when the error is one. */
export const bodyOf = (error: RemoteError.RemoteError): string | undefined =>
  error._tag === "OutcomeUnknown" &&
  error.reason === "UndecodableResponse" &&
  error.status !== undefined &&
  error.status >= 200 &&
  error.status < 300
    ? (error.body ?? "")
    : undefined

/**
 * The raw text as stored: whole as personal data (`HashChain.personal`, member `raw`) when
 * it names a personal member of a result (`TransactionResult.personalMembers`: the card
 * holder's name, the remittance options), so the retention that removes them from a decoded
 * result removes them here too; as it is otherwise. Text that does not decode cannot be read
 * member by member, so it goes whole.
 */
const storedRaw = (raw: string): EventStore.Json =>
  TransactionResult.personalMembers.some((member) => raw.includes(`"${member}"`))
    ? HashChain.personal(raw)
    : raw

/**
 * Records the raw body (card numbers masked, length bounded) as `ResultUndecodable` in the
 * attempt's stream, once: its id derives from the attempt and the body, so a step run again
 * after a crash appends nothing new.
 */
export const record = (
  store: EventStore.Service,
  attemptId: string,
  body: string,
  reason: string,
  receivedAt: number
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const raw = ResultRedaction.sanitiseText(body)
    const resultHash = yield* CallbackRegistration.resultHash(raw)
    const event = yield* CallbackRegistration.events.encode(
      CallbackRegistration.ResultUndecodable.make({
        attemptId,
        resultHash,
        reason,
        raw: storedRaw(raw),
        redactedFields: [],
        receivedAt
      })
    )
    const eventId = yield* uuidFrom(`${attemptId}/undecodable/${resultHash}`)
    yield* store
      .append(
        CallbackRegistration.attemptStream(attemptId),
        EventStore.AnyVersion,
        yield* Tenant.stamp([{ ...event, eventId }])
      )
      .pipe(
        Effect.asVoid,
        Effect.catchTag("DuplicateEventId", () => Effect.void),
        retryStore
      )
  }).pipe(Effect.orDie)
