/**
 * The callback receiver's logic, apart from HTTP: what to do with one delivery of a
 * terminal's result to `<base>/<attemptId>`. It authenticates the delivery (the
 * `AUTH-TOKEN` hashed and compared in constant time with the hash the attempt registered),
 * makes the result storable (`ResultRedaction`), appends it to the attempt's stream once
 * (a recovered resend or a duplicate is acknowledged and not recorded again), notes a
 * result that came after its operation was settled and raises `ResultMismatch` when it
 * disagrees, resolves the waiting workflow's `DurableDeferred` — and only then says 2xx.
 * A JSON body that is not a result is stored too (`ResultUndecodable`) and acknowledged:
 * a payment outcome is never dropped. Refusals are recorded as security events, without
 * the token. Nothing here logs a token, a body or a card number.
 */
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import {
  CallbackRegistration,
  DomainEvents,
  EventStore,
  OperationOutcome,
  ResultRedaction,
  TransactionResult
} from "@tillflow/core"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

/** One delivery, as the transport hands it over. */
export interface Delivery {
  /** The last path segment of the callback address. */
  readonly attemptId: string
  /** The `AUTH-TOKEN` header, if any. */
  readonly token: Option.Option<string>
  /** The body text (the transport bounds its size). */
  readonly body: string
  readonly remoteAddress?: string | undefined
}

/** What to answer, and why (for logs and tests; never sent as detail). */
export type Reply =
  | {
      readonly _tag: "Acknowledged"
      readonly status: 200
      readonly duplicate: boolean
      readonly late: boolean
    }
  | { readonly _tag: "StoredUndecodable"; readonly status: 200 }
  | {
      readonly _tag: "Refused"
      readonly status: 400 | 401 | 403 | 413
      readonly reason: CallbackRegistration.RefusalReason
    }
  | { readonly _tag: "Unavailable"; readonly status: 503 }

/** The receiver. */
export interface Service {
  readonly receive: (delivery: Delivery) => Effect.Effect<Reply>
  /** Records a refusal decided by the transport (a body too large). */
  readonly refuse: (
    attemptId: string,
    reason: CallbackRegistration.RefusalReason,
    remoteAddress?: string | undefined
  ) => Effect.Effect<Reply>
}

/** The receiver as a service. */
export class CallbackReceiver extends Context.Tag("tillflow/CallbackReceiver")<CallbackReceiver, Service>() {}

/** The largest body accepted (256 KiB): a result is a few KiB, inline receipts included. */
export const maxBodyBytes = 256 * 1024

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

type Registered = typeof CallbackRegistration.AttemptRegistered.schema.Type
type Received = typeof CallbackRegistration.ResultReceived.schema.Type

const storeRetry = Schedule.exponential("50 millis", 2).pipe(Schedule.intersect(Schedule.recurs(5)))

const describeIssue = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 5)
    .map(
      (issue) => `${issue._tag} at ${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}`
    )
    .join("; ")

const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Builds the receiver on the event store and the workflow engine in context. */
export const make: Effect.Effect<Service, never, EventStore.EventStore | WorkflowEngine> = Effect.gen(
  function* () {
    const store = yield* EventStore.EventStore
    const engine = yield* WorkflowEngine

    const refuse = (
      attemptId: string,
      reason: CallbackRegistration.RefusalReason,
      remoteAddress?: string | undefined
    ) =>
      Effect.gen(function* () {
        const at = yield* Clock.currentTimeMillis
        const event = yield* CallbackRegistration.events.encode(
          CallbackRegistration.CallbackRefused.make({
            attemptId: uuid.test(attemptId) ? attemptId.toLowerCase() : "<not an attempt id>",
            reason,
            ...(remoteAddress === undefined ? {} : { remoteAddress }),
            at
          })
        )
        yield* store.append(CallbackRegistration.securityStream, EventStore.AnyVersion, [event])
        yield* Effect.logWarning("callback delivery refused").pipe(Effect.annotateLogs({ reason }))
        const status =
          reason === "UnknownAttempt" || reason === "MissingToken"
            ? 401
            : reason === "WrongToken"
              ? 403
              : reason === "TooLarge"
                ? 413
                : 400
        return { _tag: "Refused", status, reason } satisfies Reply
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logError("could not record a refused callback", cause), {
            _tag: "Unavailable",
            status: 503
          } satisfies Reply)
        )
      )

    const registrationOf = (events: ReadonlyArray<EventStore.RecordedEvent>) =>
      Effect.gen(function* () {
        const first = events[0]
        if (first === undefined || first.type !== CallbackRegistration.AttemptRegistered.type)
          return Option.none()
        const decoded = yield* Effect.option(CallbackRegistration.events.decode(first))
        return Option.map(decoded, (d) => d.data as Registered)
      })

    /** The recorded conclusion about this attempt in its payment stream, if settled. */
    const conclusionOf = (registered: Registered) =>
      Effect.gen(function* () {
        const events = yield* store.readStream(registered.paymentStream)
        for (const event of events) {
          const data = event.data
          if (!isObject(data)) continue
          if (DomainEvents.outcomeTypes.includes(event.type)) {
            const facts = data["facts"]
            if (
              isObject(facts) &&
              facts["attemptId"] === registered.attemptId &&
              typeof facts["finStatus"] === "string"
            ) {
              return Option.some(facts["finStatus"])
            }
          }
          if (
            event.type === DomainEvents.AttemptNotCharged.type &&
            data["attemptId"] === registered.attemptId
          ) {
            return Option.some("NOT_CHARGED")
          }
        }
        return Option.none<string>()
      })

    const recordLate = (registered: Registered, received: Received) =>
      Effect.gen(function* () {
        const conclusion = yield* conclusionOf(registered)
        if (Option.isNone(conclusion)) return false
        const recorded = conclusion.value
        const finStatus = received.finStatus ?? "UNDEFINED"
        const at = received.receivedAt
        const late = [
          DomainEvents.LateResultRecorded.make({
            attemptId: registered.attemptId,
            resultHash: received.resultHash,
            recovered: received.recovered,
            at,
            ...(received.finStatus === undefined ? {} : { finStatus: received.finStatus })
          })
        ]
        const charged = (s: string) => {
          const outcome = OperationOutcome.outcomeOf(s)
          return outcome === "Approved" || outcome === "PartiallyApproved"
        }
        const disagrees =
          recorded === "NOT_CHARGED"
            ? charged(finStatus)
            : OperationOutcome.outcomeOf(finStatus) !== undefined &&
              !OperationOutcome.agrees(recorded, finStatus)
        const events = yield* DomainEvents.events.encodeAll(
          disagrees
            ? [
                ...late,
                DomainEvents.ResultMismatch.make({
                  attemptId: registered.attemptId,
                  recorded,
                  received: finStatus,
                  resultHash: received.resultHash,
                  source: "callback",
                  at
                })
              ]
            : late
        )
        if (disagrees) {
          yield* Effect.logError("a late result disagrees with the recorded outcome").pipe(
            Effect.annotateLogs({ attemptId: registered.attemptId, recorded, received: finStatus })
          )
        }
        yield* store.append(registered.paymentStream, EventStore.AnyVersion, events)
        return true
      })

    const resolve = (
      registered: Registered,
      received: Received,
      result: TransactionResult.TransactionResult
    ) =>
      engine.deferredDone(CallbackRegistration.resultDeferred(registered.attemptId), {
        workflowName: registered.workflowName,
        executionId: registered.executionId,
        deferredName: registered.deferredName,
        exit: Exit.succeed({ result, resultHash: received.resultHash, receivedAt: received.receivedAt })
      })

    const receive = (delivery: Delivery): Effect.Effect<Reply> =>
      Effect.gen(function* () {
        const attemptId = delivery.attemptId.toLowerCase()
        if (!uuid.test(attemptId))
          return yield* refuse(delivery.attemptId, "UnknownAttempt", delivery.remoteAddress)
        const stream = CallbackRegistration.attemptStream(attemptId)
        const initial = yield* store.readStream(stream)
        const registration = yield* registrationOf(initial)
        if (Option.isNone(registration))
          return yield* refuse(attemptId, "UnknownAttempt", delivery.remoteAddress)
        const registered = registration.value
        if (Option.isNone(delivery.token))
          return yield* refuse(attemptId, "MissingToken", delivery.remoteAddress)
        const valid =
          registered.tokenHash !== undefined &&
          (yield* CallbackRegistration.verifyToken(delivery.token.value, registered.tokenHash))
        if (!valid) return yield* refuse(attemptId, "WrongToken", delivery.remoteAddress)

        const parsed = Either.try(() => JSON.parse(delivery.body) as unknown)
        if (Either.isLeft(parsed) || !isObject(parsed.right)) {
          return yield* refuse(attemptId, "MalformedBody", delivery.remoteAddress)
        }
        const sanitised = ResultRedaction.sanitise(parsed.right)
        const resultHash = yield* CallbackRegistration.resultHash(sanitised.value)
        const receivedAt = yield* Clock.currentTimeMillis
        const decoded = Schema.decodeUnknownEither(TransactionResult.TransactionResult)(sanitised.value)

        // Append once: a result (or an undecodable body) with this hash is recorded at most once.
        const appendOnce = (make: () => Effect.Effect<EventStore.NewEvent>) =>
          Effect.gen(function* () {
            let events = initial
            for (let round = 0; round < 5; round++) {
              const already = events.some(
                (event) =>
                  (event.type === CallbackRegistration.ResultReceived.type ||
                    event.type === CallbackRegistration.ResultUndecodable.type) &&
                  isObject(event.data) &&
                  event.data["resultHash"] === resultHash
              )
              if (already) return false
              const appended = yield* store
                .append(stream, EventStore.exactVersion(events.at(-1)?.version ?? 0), [yield* make()])
                .pipe(
                  Effect.as(true),
                  Effect.catchTag("ConcurrencyConflict", () => Effect.succeed(false))
                )
              if (appended) return true
              events = yield* store.readStream(stream)
            }
            return yield* Effect.dieMessage("the attempt stream kept changing under the receiver")
          })

        if (Either.isLeft(decoded)) {
          const reason = describeIssue(decoded.left)
          yield* appendOnce(() =>
            Effect.orDie(
              CallbackRegistration.events.encode(
                CallbackRegistration.ResultUndecodable.make({
                  attemptId,
                  resultHash,
                  reason,
                  raw: sanitised.value,
                  redactedFields: sanitised.redactedFields,
                  receivedAt
                })
              )
            )
          )
          yield* Effect.logError("a delivered result does not decode; stored raw").pipe(
            Effect.annotateLogs({ attemptId, reason })
          )
          return { _tag: "StoredUndecodable", status: 200 } satisfies Reply
        }

        const result = decoded.right
        const received: Received = {
          attemptId,
          resultHash,
          recovered: result.recoveredTransaction === true,
          result: sanitised.value,
          redactedFields: sanitised.redactedFields,
          receivedAt,
          ...(result.finStatus === undefined ? {} : { finStatus: result.finStatus })
        }
        const isNew = yield* appendOnce(() =>
          Effect.orDie(CallbackRegistration.events.encode(CallbackRegistration.ResultReceived.make(received)))
        )
        const late = isNew ? yield* recordLate(registered, received) : false
        // Resolving again is harmless (the first resolution wins) and covers a crash right after the append.
        yield* resolve(registered, received, result)
        yield* Effect.logInfo("callback result recorded").pipe(
          Effect.annotateLogs({ attemptId, duplicate: !isNew, late, recovered: received.recovered })
        )
        return { _tag: "Acknowledged", status: 200, duplicate: !isNew, late } satisfies Reply
      }).pipe(
        Effect.retry({ schedule: storeRetry, while: (e) => e._tag === "EventStoreError" }),
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logError("could not record a callback delivery", cause), {
            _tag: "Unavailable",
            status: 503
          } satisfies Reply)
        ),
        Effect.withSpan("CallbackReceiver.receive")
      )

    return { receive, refuse }
  }
)

/** The receiver as a layer. */
export const layer: Layer.Layer<CallbackReceiver, never, EventStore.EventStore | WorkflowEngine> =
  Layer.effect(CallbackReceiver, make)
