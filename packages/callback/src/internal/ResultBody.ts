/**
 * A delivered body read as what the callback receiver records: JSON that is an object
 * nested at most `maxDepth` deep (checked on the text, without recursion, before it is parsed),
 * made storable (`ResultRedaction`) and hashed (the hash names it among duplicates), then
 * either a result (`ResultReceived`) or, when it does not decode as one, the raw body as
 * `ResultUndecodable` with where it failed: a payment outcome is never dropped. Either is
 * recorded with its personal members wrapped (`TransactionResult.storedJson`), removable
 * after their retention; the hash is of the plain body.
 */
import { CallbackRegistration, JsonLimits, ResultRedaction, TransactionResult } from "@tillflow/core"
import { EventStore, type HashChain } from "@tillflow/engine"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { isObject } from "./AttemptStream.js"

/** A result as recorded in the attempt's stream. */
export type Received = typeof CallbackRegistration.ResultReceived.schema.Type

/** What a body is, as the receiver records it. */
export type ResultBody =
  | {
      readonly _tag: "Malformed"
      /** What is wrong with it, for the caller (no value from the body). */
      readonly message: string
    }
  | {
      readonly _tag: "Undecodable"
      readonly resultHash: string
      /** Where it failed to decode (paths and kinds of issues, no values). */
      readonly reason: string
      readonly event: EventStore.NewEvent
    }
  | { readonly _tag: "Received"; readonly received: Received; readonly event: EventStore.NewEvent }

/** The deepest nesting a body may have: core's `JsonLimits.maxDepth`, shared with the intake. */
export const maxDepth = JsonLimits.maxDepth

/** Whether JSON text opens more than `max` arrays or objects inside one another (strings skipped). */
const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}

const malformed = (message: string) => ({ _tag: "Malformed", message }) as const

const decodeResult = Schema.decodeUnknownEither(TransactionResult.TransactionResult)

const describeIssue = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 5)
    .map(
      (issue) => `${issue._tag} at ${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}`
    )
    .join("; ")

/** Reads the body delivered for an attempt; received now. */
export const read = (attemptId: string, body: string, sha256: HashChain.Sha256): Effect.Effect<ResultBody> =>
  Effect.gen(function* () {
    if (nestsDeeperThan(body, maxDepth)) return malformed(`the body nests deeper than ${maxDepth} levels`)
    const parsed = Either.try(() => JSON.parse(body) as unknown)
    if (Either.isLeft(parsed)) return malformed("the body is not JSON")
    if (!isObject(parsed.right)) return malformed("the body is not a JSON object")
    const sanitised = ResultRedaction.sanitise(parsed.right)
    const resultHash = yield* CallbackRegistration.resultHash(sanitised.value, sha256)
    const receivedAt = yield* Clock.currentTimeMillis
    const decoded = decodeResult(sanitised.value)

    if (Either.isLeft(decoded)) {
      const reason = describeIssue(decoded.left)
      const event = yield* Effect.orDie(
        CallbackRegistration.events.encode(
          CallbackRegistration.ResultUndecodable.make({
            attemptId,
            resultHash,
            reason,
            raw: TransactionResult.storedJson(sanitised.value),
            redactedFields: sanitised.redactedFields,
            receivedAt
          })
        )
      )
      return { _tag: "Undecodable", resultHash, reason, event } as const
    }

    const result = decoded.right
    const received: Received = {
      attemptId,
      resultHash,
      recovered: result.recoveredTransaction === true,
      result: TransactionResult.storedJson(sanitised.value),
      redactedFields: sanitised.redactedFields,
      receivedAt,
      ...(result.finStatus === undefined ? {} : { finStatus: result.finStatus })
    }
    return { _tag: "Received", received, event: CallbackRegistration.resultReceivedEvent(received) } as const
  })
