/**
 * The callback receiver's logic, apart from HTTP: what to do with one delivery of a
 * terminal's result to `<base>/<attemptId>`. It authenticates the delivery (the
 * `AUTH-TOKEN` hashed and compared in constant time with the hash the attempt registered),
 * makes the result storable (`ResultRedaction`), appends it to the attempt's stream once
 * (a recovered resend or a duplicate is acknowledged and not recorded again), notes a
 * result that its attempt's conclusion did not weigh and raises `ResultMismatch` when it
 * disagrees (`LateResults`: the protocol's settle step notes the same results, so that a
 * race between the two loses none and writes none twice), and resolves the waiting
 * workflow's `DurableDeferred`.
 *
 * The 2xx waits for one thing only: the append of the result to the attempt's stream (one
 * statement when the attempt is known to this process, `CallbackRegistration.RegisteredAttempts`,
 * else a read of the stream before it). Forwarding the result — noting a late one in the
 * payment's stream, resolving the deferred and waking the execution — runs after the
 * reply: the result waits in a bounded line taken by a fixed number of forwarders on the
 * receiver's scope (the line is awaited on shutdown), so a burst of deliveries does not put
 * its forwardings' statements ahead of the next deliveries' appends. A
 * crash between the two loses nothing: the result is in the attempt's stream, and the
 * workflow looks there before it goes on without a callback (`PaymentProtocol`); a resend
 * of the same result forwards it again.
 *
 * A JSON body that is not a result is stored too (`ResultUndecodable`) and acknowledged:
 * a payment outcome is never dropped. Refusals are recorded as security events, without
 * the token. Nothing here logs a token, a body or a card number.
 */
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { CallbackRegistration, LateResults, ResultRedaction, TransactionResult } from "@tillflow/core"
import { EventStore, type HashChain } from "@tillflow/engine"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"

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
  /** Records one delivery and says what to answer; its result is forwarded after that. */
  readonly receive: (delivery: Delivery) => Effect.Effect<Reply>
  /** Waits until every result received so far has been forwarded (or given up on). */
  readonly forwarded: Effect.Effect<void>
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

type Registered = CallbackRegistration.Registration
type Received = typeof CallbackRegistration.ResultReceived.schema.Type

/** A recorded result awaiting its forwarding. */
interface ForwardJob {
  readonly registered: Registered
  readonly received: Received
  /** Its version in the attempt's stream when this delivery appended it; none for a duplicate. */
  readonly version: number | undefined
  /** Its key among the results forwarded or being forwarded. */
  readonly key: string
}

const storeRetry = Schedule.exponential("50 millis", 2).pipe(Schedule.intersect(Schedule.recurs(5)))
const forwardRetry = Schedule.exponential("100 millis", 2).pipe(
  Schedule.union(Schedule.spaced("5 seconds")),
  Schedule.intersect(Schedule.recurs(12))
)

/** SHA-256 with `node:crypto`: synchronous, no thread-pool round trip as Web Crypto's digest. */
export const nodeSha256: HashChain.Sha256 = (text) =>
  Effect.sync(() => createHash("sha256").update(text, "utf8").digest("hex"))

const decodeResult = Schema.decodeUnknownEither(TransactionResult.TransactionResult)
const encodeEvent = CallbackRegistration.events.encode
const isResultType = (type: string) =>
  type === CallbackRegistration.ResultReceived.type || type === CallbackRegistration.ResultUndecodable.type

const describeIssue = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 5)
    .map(
      (issue) => `${issue._tag} at ${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}`
    )
    .join("; ")

const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Options of the receiver. */
export interface Options {
  /** The SHA-256 of tokens and results (default `node:crypto`'s). */
  readonly sha256?: HashChain.Sha256 | undefined
  /** At most this many results awaiting their forwarding; more make the replies wait (default 1,024). */
  readonly maxPendingForwards?: number | undefined
  /**
   * How many forwardings run at once (default 16): the others wait in line. A forwarding
   * takes three statements (the payment's stream read, the resolution appended, the
   * execution woken) where the reply took one; with one fiber per result, up to
   * `maxPendingForwards` of them could queue their statements for the store's connections
   * ahead of the next deliveries' appends.
   */
  readonly forwardConcurrency?: number | undefined
  /** How long the receiver's shutdown waits for forwardings in flight (default 10 s). */
  readonly shutdownTimeout?: Duration.DurationInput | undefined
}

/**
 * Builds the receiver on the event store and the workflow engine in context, and the
 * `RegisteredAttempts` in context if any (else a memory of its own, filled by what it reads).
 * Forwardings run in the scope and are awaited when it closes.
 */
export const make = (
  options: Options = {}
): Effect.Effect<Service, never, EventStore.EventStore | WorkflowEngine | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const engine = yield* WorkflowEngine
    const sha256 = options.sha256 ?? nodeSha256
    const attempts = Option.getOrElse(
      yield* Effect.serviceOption(CallbackRegistration.RegisteredAttempts),
      () => CallbackRegistration.makeRegisteredAttempts()
    )
    // Results awaiting their forwarding, taken by a fixed number of forwarders. Finalizers
    // run in reverse order: the wait for the line to drain, then the forwarders'
    // interruption, then the line's shutdown.
    const line = yield* Effect.acquireRelease(
      Queue.bounded<ForwardJob>(Math.max(1, options.maxPendingForwards ?? 1024)),
      Queue.shutdown
    )
    // Results offered and not yet done with; `idle` is open when there are none.
    let outstanding = 0
    const idle = Effect.unsafeMakeLatch(true)
    const settle = Effect.sync(() => {
      outstanding--
      if (outstanding === 0) idle.unsafeOpen()
    })
    const forwarders = Math.max(1, options.forwardConcurrency ?? 16)
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

    /**
     * Notes the result in the payment's stream if its attempt was concluded without it:
     * a conclusion is recorded there, and the result's version in the attempt's stream is
     * above the conclusion's horizon (`LateResults`). The protocol's settle step reads the
     * attempt's stream again after its conclusion has landed and notes such a result too:
     * whichever of the two looks last sees the other's append, so one of them notes it
     * (the argument is written at `PaymentProtocol`'s settle), and the notes' ids make the
     * other's a no-op. A result the conclusion weighed is not late: its mismatch, if any,
     * was raised with the conclusion.
     */
    const recordLate = (registered: Registered, received: Received, version: number, duplicate: boolean) =>
      Effect.gen(function* () {
        const attemptId = registered.attemptId
        const events = yield* store.readStream(registered.paymentStream)
        // A note with this hash is not written again.
        if (LateResults.isNoted(events, attemptId, received.resultHash)) return false
        const conclusion = LateResults.conclusionOf(events, attemptId)
        if (Option.isNone(conclusion) || !LateResults.isLate(conclusion.value, version)) return false
        // An outcome recorded before horizons were says nothing of what it weighed: a resend
        // is not taken as late against it (its first delivery was, if it was).
        if (duplicate && conclusion.value.horizon === undefined) return false
        const recorded = conclusion.value.recorded
        const notes = yield* LateResults.notesOf({
          executionId: registered.executionId,
          attemptId,
          recorded,
          result: received
        })
        if (LateResults.disagrees(recorded, received.finStatus)) {
          yield* Effect.logError("a late result disagrees with the recorded outcome").pipe(
            Effect.annotateLogs({ attemptId, recorded, received: received.finStatus ?? "UNDEFINED" })
          )
        }
        yield* LateResults.appendEach(store, registered.paymentStream, notes)
        return true
      })

    // Resolved with the result as the JSON it was decoded from (`resultDeferredJson`): the
    // engine stores the exit encoded, and encoding the decoded result back would only
    // rebuild that JSON. The workflow decodes it as `resultDeferred`'s `DeliveredResult`.
    const resolve = (registered: Registered, received: Received) =>
      engine.deferredDone(CallbackRegistration.resultDeferredJson(registered.attemptId), {
        workflowName: registered.workflowName,
        executionId: registered.executionId,
        deferredName: registered.deferredName,
        exit: Exit.succeed({
          result: received.result,
          resultHash: received.resultHash,
          receivedAt: received.receivedAt
        })
      })

    /** The version at which the result with this hash is recorded in the attempt's stream. */
    const recordedVersion = (attemptId: string, resultHash: string) =>
      Effect.map(
        store.readStream(CallbackRegistration.attemptStream(attemptId)),
        (events) =>
          events.find(
            (event) =>
              isResultType(event.type) && isObject(event.data) && event.data["resultHash"] === resultHash
          )?.version
      ).pipe(Effect.retry({ schedule: forwardRetry, while: (e) => e._tag === "EventStoreError" }))

    /**
     * After the reply: a late result noted in the payment's stream (once: the notes' ids
     * are the same whoever writes them), then the deferred resolved (the first resolution wins)
     * and the execution woken. Retried while the store fails; given up with an error log,
     * in which case the workflow still finds the result in the attempt's stream.
     */
    const forward = (registered: Registered, received: Received, version: number | undefined) =>
      Effect.gen(function* () {
        // A duplicate is weighed at the version its first delivery was recorded at: a
        // result received in time is not late, and one whose first forwarding was lost
        // (the process stopped after its 2xx) is noted now, on its resend.
        const at = version ?? (yield* recordedVersion(registered.attemptId, received.resultHash))
        if (at !== undefined) {
          yield* recordLate(registered, received, at, version === undefined).pipe(
            Effect.retry({ schedule: forwardRetry, while: (e) => e._tag === "EventStoreError" })
          )
        }
        // The engine dies on a store failure: resolving is idempotent, so any failure is retried.
        yield* resolve(registered, received).pipe(
          Effect.sandbox,
          Effect.retry({ schedule: forwardRetry, while: (cause) => !Cause.isInterruptedOnly(cause) }),
          Effect.unsandbox
        )
        return true
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logError(
            "could not forward a recorded callback result: its workflow will find it in the attempt's stream",
            cause
          ).pipe(Effect.annotateLogs({ attemptId: registered.attemptId }), Effect.as(false))
        ),
        Effect.withSpan("CallbackReceiver.forward", { captureStackTrace: false })
      )

    // Results this process forwarded or is forwarding (bounded): a resend of one of them is
    // not forwarded again. A forwarding given up is forgotten, so a resend tries again.
    const forwardedKeys = new Set<string>()
    const maxForwardedKeys = 10_000
    const startForward = (registered: Registered, received: Received, version: number | undefined) =>
      Effect.suspend(() => {
        const key = `${registered.attemptId}/${received.resultHash}`
        if (forwardedKeys.has(key)) return Effect.void
        forwardedKeys.add(key)
        if (forwardedKeys.size > maxForwardedKeys) {
          const oldest = forwardedKeys.values().next()
          if (oldest.done !== true) forwardedKeys.delete(oldest.value)
        }
        outstanding++
        idle.unsafeClose()
        // Waits while the line is full (the reply waits with it); interrupted, it was not offered.
        return Queue.offer(line, { registered, received, version, key }).pipe(
          Effect.onInterrupt(() =>
            Effect.zipRight(
              Effect.sync(() => forwardedKeys.delete(key)),
              settle
            )
          ),
          Effect.asVoid
        )
      })

    // The forwarders, on the receiver's own scope (not a request's): interrupted when it
    // closes, after the wait below; a result left in the line is found by its workflow.
    // A forwarding that ends in any other way than done (given up, or interrupted from
    // within) is forgotten and the forwarder goes on with the next.
    const forwarder = Effect.forever(
      Effect.flatMap(Queue.take(line), (job) =>
        Effect.exit(forward(job.registered, job.received, job.version)).pipe(
          Effect.flatMap((exit) =>
            Exit.isSuccess(exit) && exit.value
              ? Effect.void
              : Effect.sync(() => forwardedKeys.delete(job.key))
          ),
          Effect.onInterrupt(() => Effect.sync(() => forwardedKeys.delete(job.key))),
          Effect.ensuring(settle)
        )
      )
    )
    for (let i = 0; i < forwarders; i++) yield* Effect.forkScoped(forwarder)
    yield* Effect.addFinalizer(() =>
      idle.await.pipe(
        Effect.timeoutOption(options.shutdownTimeout ?? "10 seconds"),
        Effect.flatMap((done) =>
          Option.isNone(done)
            ? Effect.logWarning(
                "callback results still being forwarded at shutdown: their workflows will find them in their attempts' streams"
              )
            : Effect.void
        )
      )
    )

    /** The registration and what is known of the stream: noted in memory, else read. */
    const knownAttempt = (attemptId: string) =>
      Effect.gen(function* () {
        const noted = attempts.get(attemptId)
        if (noted !== undefined) return Option.some(noted)
        const events = yield* store.readStream(CallbackRegistration.attemptStream(attemptId))
        const registration = yield* registrationOf(events)
        if (Option.isNone(registration)) return Option.none()
        const known: CallbackRegistration.KnownAttempt = {
          registration: registration.value,
          version: events.at(-1)?.version ?? 0,
          resultHashes: hashesIn(events)
        }
        attempts.note(known)
        return Option.some(known)
      })

    const hashesIn = (events: ReadonlyArray<EventStore.RecordedEvent>): ReadonlyArray<string> =>
      events.flatMap((event) =>
        isResultType(event.type) && isObject(event.data) && typeof event.data["resultHash"] === "string"
          ? [event.data["resultHash"]]
          : []
      )

    /**
     * Appends the event unless a result with this hash is already in the stream: at the
     * version known, and on a conflict again after reading the stream. Its version in the
     * stream when appended, none when it was there already.
     */
    const appendOnce = (
      known: CallbackRegistration.KnownAttempt,
      resultHash: string,
      event: EventStore.NewEvent
    ) =>
      Effect.gen(function* () {
        const stream = CallbackRegistration.attemptStream(known.registration.attemptId)
        let version = known.version
        let hashes = known.resultHashes
        for (let round = 0; round < 5; round++) {
          if (hashes.includes(resultHash)) return Option.none<number>()
          const appended = yield* store.append(stream, EventStore.exactVersion(version), [event]).pipe(
            Effect.map((done) => Option.some(done.nextVersion)),
            Effect.catchTag("ConcurrencyConflict", () => Effect.succeed(Option.none<number>()))
          )
          if (Option.isSome(appended)) {
            attempts.note({
              registration: known.registration,
              version: appended.value,
              resultHashes: [...hashes, resultHash]
            })
            return appended
          }
          const events = yield* store.readStream(stream)
          version = events.at(-1)?.version ?? 0
          hashes = hashesIn(events)
          attempts.note({ registration: known.registration, version, resultHashes: hashes })
        }
        return yield* Effect.dieMessage("the attempt stream kept changing under the receiver")
      })

    const receive = (delivery: Delivery): Effect.Effect<Reply> =>
      Effect.gen(function* () {
        const attemptId = delivery.attemptId.toLowerCase()
        if (!uuid.test(attemptId))
          return yield* refuse(delivery.attemptId, "UnknownAttempt", delivery.remoteAddress)
        const found = yield* knownAttempt(attemptId)
        if (Option.isNone(found)) return yield* refuse(attemptId, "UnknownAttempt", delivery.remoteAddress)
        const known = found.value
        const registered = known.registration
        if (Option.isNone(delivery.token))
          return yield* refuse(attemptId, "MissingToken", delivery.remoteAddress)
        const valid =
          registered.tokenHash !== undefined &&
          (yield* CallbackRegistration.verifyToken(delivery.token.value, registered.tokenHash, sha256))
        if (!valid) return yield* refuse(attemptId, "WrongToken", delivery.remoteAddress)

        const parsed = Either.try(() => JSON.parse(delivery.body) as unknown)
        if (Either.isLeft(parsed) || !isObject(parsed.right)) {
          return yield* refuse(attemptId, "MalformedBody", delivery.remoteAddress)
        }
        const sanitised = ResultRedaction.sanitise(parsed.right)
        const resultHash = yield* CallbackRegistration.resultHash(sanitised.value, sha256)
        const receivedAt = yield* Clock.currentTimeMillis
        const decoded = decodeResult(sanitised.value)

        if (Either.isLeft(decoded)) {
          const reason = describeIssue(decoded.left)
          const event = yield* Effect.orDie(
            encodeEvent(
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
          yield* appendOnce(known, resultHash, event)
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
        const event = CallbackRegistration.resultReceivedEvent(received)
        const appended = yield* appendOnce(known, resultHash, event)
        const isNew = Option.isSome(appended)
        // Durable now: the reply need not wait for the rest. A duplicate is forwarded again
        // unless this process forwarded it already (harmless either way: a late note and a
        // resolution are written once), which covers a process that stopped after recording
        // it and before forwarding it.
        yield* startForward(registered, received, Option.getOrUndefined(appended))
        yield* Effect.logInfo("callback result recorded").pipe(
          Effect.annotateLogs({ attemptId, duplicate: !isNew, recovered: received.recovered })
        )
        return { _tag: "Acknowledged", status: 200, duplicate: !isNew } satisfies Reply
      }).pipe(
        Effect.retry({ schedule: storeRetry, while: (e) => e._tag === "EventStoreError" }),
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logError("could not record a callback delivery", cause), {
            _tag: "Unavailable",
            status: 503
          } satisfies Reply)
        ),
        Effect.withSpan("CallbackReceiver.receive", { captureStackTrace: false })
      )

    return { receive, refuse, forwarded: idle.await }
  })

/** The receiver as a layer. */
export const layer: Layer.Layer<CallbackReceiver, never, EventStore.EventStore | WorkflowEngine> =
  Layer.scoped(CallbackReceiver, make())

/** The receiver as a layer, with options. */
export const layerWith = (
  options: Options
): Layer.Layer<CallbackReceiver, never, EventStore.EventStore | WorkflowEngine> =>
  Layer.scoped(CallbackReceiver, make(options))
