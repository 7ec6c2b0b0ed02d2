/**
 * Whether a delivery may be recorded: its address names an attempt the receiver can find,
 * and its `AUTH-TOKEN`, hashed, equals the hash the attempt registered (compared in
 * constant time). Otherwise, the reason it is refused.
 */
import { CallbackRegistration } from "@tillflow/core"
import { type EventStore, type HashChain } from "@tillflow/engine"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { type AttemptStream, isAttemptId } from "./AttemptStream.js"

/** The attempt a delivery to `attemptId` (lower case) with this token is for, or why it is refused. */
export const check = (
  attemptStream: AttemptStream,
  sha256: HashChain.Sha256,
  attemptId: string,
  token: Option.Option<string>
): Effect.Effect<
  Either.Either<CallbackRegistration.KnownAttempt, CallbackRegistration.RefusalReason>,
  EventStore.EventStoreError
> =>
  Effect.gen(function* () {
    if (!isAttemptId(attemptId)) return Either.left("UnknownAttempt")
    const found = yield* attemptStream.known(attemptId)
    if (Option.isNone(found)) return Either.left("UnknownAttempt")
    if (Option.isNone(token)) return Either.left("MissingToken")
    const tokenHash = found.value.registration.tokenHash
    const valid =
      tokenHash !== undefined && (yield* CallbackRegistration.verifyToken(token.value, tokenHash, sha256))
    return valid ? Either.right(found.value) : Either.left("WrongToken")
  })
