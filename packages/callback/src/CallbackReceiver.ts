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
 * The 2xx waits for one thing only: the write of the result to the attempt's stream (one
 * statement when the attempt is known to this process, `CallbackRegistration.RegisteredAttempts`,
 * else a read of the stream before it). On tillflow's engine (`DurableEngine` in context)
 * that one write also resolves the workflow's deferred: the result and the
 * `DeferredResolved` are appended to their two streams by one `appendStreams`, all or
 * none, so no crash leaves a recorded result whose deferred was not resolved (a deferred
 * resolved already, by an earlier result, leaves the result to be appended alone). The
 * rest — noting a late result in the payment's stream, waking the execution, and on other
 * engines resolving the deferred — runs after the reply: the result waits in a bounded
 * line taken by a fixed number of forwarders on the receiver's scope (the line is awaited
 * on shutdown), so a burst of deliveries does not put its forwardings' statements ahead of
 * the next deliveries' writes. A crash between the two loses nothing: the result is in the
 * attempt's stream (and its resolution in the execution's), and the workflow looks there
 * before it goes on without a callback (`PaymentProtocol`); a resend of the same result
 * forwards it again.
 *
 * A JSON body that is not a result is stored too (`ResultUndecodable`) and acknowledged:
 * a payment outcome is never dropped; a body nested deeper than `maxDepth` is refused
 * before it is parsed. Every refusal is counted in `refusals` by reason; a bounded sample of
 * them (`refusalSample`) is recorded as security events, without the token. Nothing here
 * logs a token, a body or a card number.
 */
import { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { CallbackRegistration } from "@tillflow/core"
import { DurableEngine, EventStore, type HashChain, StoreRetry, TraceContext } from "@tillflow/engine"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import * as AttemptStream from "./internal/AttemptStream.js"
import * as Forward from "./internal/Forward.js"
import * as ForwardLine from "./internal/ForwardLine.js"
import * as Refusal from "./internal/Refusal.js"
import * as ResultBody from "./internal/ResultBody.js"
import * as TokenCheck from "./internal/TokenCheck.js"

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

/** What to answer, and why (for logs and tests; only a 400's `message` is sent, as the JSON error). */
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
      /** What is wrong with the body (a 400 only): no value from it, nothing about attempts or tokens. */
      readonly message?: string | undefined
    }
  | { readonly _tag: "Unavailable"; readonly status: 503 }

/** The receiver. */
export interface Service {
  /** Records one delivery and says what to answer; its result is forwarded after that. */
  readonly receive: (delivery: Delivery) => Effect.Effect<Reply>
  /** Waits until every result received so far has been forwarded (or given up on). */
  readonly forwarded: Effect.Effect<void>
  /** Counts (and, within the sample, records) a refusal decided by the transport (a body too large). */
  readonly refuse: (
    attemptId: string,
    reason: CallbackRegistration.RefusalReason,
    remoteAddress?: string | undefined,
    message?: string | undefined
  ) => Effect.Effect<Reply>
}

/** The receiver as a service. */
export class CallbackReceiver extends Context.Tag("tillflow/CallbackReceiver")<CallbackReceiver, Service>() {}

/** The largest body accepted (256 KiB): a result is a few KiB, inline receipts included. */
export const maxBodyBytes = 256 * 1024

/** The deepest nesting of arrays and objects a body may have (32); deeper is refused 400 before it is parsed. */
export const maxDepth = ResultBody.maxDepth

/**
 * Every refused delivery, by `reason` (`tillflow_callback_refusals_total`), counted by the
 * receiving process (the worker's `/metrics` renders it).
 *
 * @example
 * const unknown = yield* Metric.value(Metric.tagged(CallbackReceiver.refusals, "reason", "UnknownAttempt"))
 */
export const refusals = Refusal.counter

/** {@link refusals} at zero for every reason, so each series exists from the first scrape. */
export const initializeRefusals: Effect.Effect<void> = Effect.forEach(
  CallbackRegistration.RefusalReason.literals,
  (reason) => Metric.value(Metric.tagged(refusals, "reason", reason)),
  { discard: true }
)

/**
 * How many refusals are recorded as `CallbackRefused` events: at most 10 per reason per
 * hour in each process, the rest only counted. Per reason and not per attempt id, because
 * an unauthenticated caller picks a new id for each request; a window rather than the
 * first few for good, so that a later episode leaves a sample too. At most 50 events an
 * hour per process, whatever is sent.
 */
export const refusalSample: Refusal.SampleOptions = { perReason: 10, window: "1 hour" }

/** SHA-256 with `node:crypto`: synchronous, no thread-pool round trip as Web Crypto's digest. */
export const nodeSha256: HashChain.Sha256 = (text) =>
  Effect.sync(() => createHash("sha256").update(text, "utf8").digest("hex"))

// The tracer every runtime has unless one is installed (it keeps spans in memory only).
const defaultTracer = Effect.runSync(Effect.tracer)

/**
 * What a 503 says to the sender (the service's recovery loop sends a result again anyway;
 * a sender that reads bodies learns why and when), and its `Retry-After` in seconds.
 */
export const unavailableAnswer = {
  message: "the result could not be stored just now: send it again",
  retryAfterSeconds: 5
} as const

const unavailable = (message: string) => (cause: unknown) =>
  Effect.as(Effect.logError(message, cause), { _tag: "Unavailable", status: 503 } satisfies Reply)

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
    const attemptStream = AttemptStream.make(store, attempts)
    // Without an installed tracer, a delivery and its forwarding create no spans (the
    // receiver's, the store's, the engine's: four or more per delivery, kept nowhere).
    const traced = (yield* Effect.tracer) !== defaultTracer
    const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      traced ? effect : Effect.withTracerEnabled(effect, false)
    const durable = Option.getOrUndefined(yield* Effect.serviceOption(DurableEngine.DurableEngine))
    const forward = Forward.make({ store, engine, attemptStream })
    const line = yield* ForwardLine.make(
      (registered, received, version, landed) => untraced(forward(registered, received, version, landed)),
      {
        capacity: Math.max(1, options.maxPendingForwards ?? 1024),
        concurrency: Math.max(1, options.forwardConcurrency ?? 16),
        shutdownTimeout: options.shutdownTimeout ?? "10 seconds"
      }
    )

    const refusal = Refusal.make(store, refusalSample)

    const refuse = (
      attemptId: string,
      reason: CallbackRegistration.RefusalReason,
      remoteAddress?: string | undefined,
      message?: string | undefined
    ): Effect.Effect<Reply> =>
      refusal
        .record(attemptId, reason, remoteAddress)
        .pipe(
          Effect.as({ _tag: "Refused", status: Refusal.status(reason), reason, message } satisfies Reply),
          Effect.catchAllCause(unavailable("could not record a refused callback"))
        )

    const receive = (delivery: Delivery): Effect.Effect<Reply> =>
      Effect.gen(function* () {
        const attemptId = delivery.attemptId.toLowerCase()
        const checked = yield* TokenCheck.check(attemptStream, sha256, attemptId, delivery.token)
        if (Either.isLeft(checked)) return yield* refuse(attemptId, checked.left, delivery.remoteAddress)
        const known = checked.right
        return yield* record(delivery, attemptId, known).pipe(
          // Inside the payment's trace (the attempt's registration carries it), by execution.
          Effect.withSpan("CallbackReceiver.record", {
            captureStackTrace: false,
            attributes: { executionId: known.registration.executionId, attemptId },
            ...Option.match(TraceContext.parentOf(known.registration.traceparent), {
              onNone: () => ({}),
              onSome: (parent) => ({ parent })
            })
          })
        )
      }).pipe(
        // Before the reply: the store's quick pace, then 503 (the terminal sends again).
        (receive) => StoreRetry.retry(receive, StoreRetry.quick),
        Effect.catchAllCause(unavailable("could not record a callback delivery")),
        Effect.withSpan("CallbackReceiver.receive", { captureStackTrace: false }),
        untraced
      )

    /** A delivery whose token was accepted: its body recorded (with its resolution) before the reply. */
    const record = (delivery: Delivery, attemptId: string, known: CallbackRegistration.KnownAttempt) =>
      Effect.gen(function* () {
        const body = yield* ResultBody.read(attemptId, delivery.body, sha256)
        switch (body._tag) {
          case "Malformed":
            return yield* refuse(attemptId, "MalformedBody", delivery.remoteAddress, body.message)
          case "Undecodable": {
            yield* attemptStream.appendOnce(known, body.resultHash, body.event)
            yield* Effect.logError("a delivered result does not decode; stored raw").pipe(
              Effect.annotateLogs({ attemptId, reason: body.reason })
            )
            return { _tag: "StoredUndecodable", status: 200 } satisfies Reply
          }
          case "Received": {
            const received = body.received
            // On tillflow's engine, the result and the deferred's resolution in one write.
            const resolution =
              durable === undefined ? undefined : yield* resolutionOf(durable, known.registration, received)
            const written = yield* attemptStream.appendOnce(
              known,
              received.resultHash,
              body.event,
              resolution?.append
            )
            const appended = written.appended
            const isNew = Option.isSome(appended)
            // Durable now: the reply need not wait for the rest. A duplicate is forwarded again
            // unless this process forwarded it already (harmless either way: a late note and a
            // resolution are written once), which covers a process that stopped after recording
            // it and before forwarding it (or a receiver that recorded it before resolving).
            yield* line.start(
              known.registration,
              received,
              Option.getOrUndefined(appended),
              written.alongside && resolution !== undefined ? resolution.landed : undefined
            )
            yield* Effect.logInfo("callback result recorded").pipe(
              Effect.annotateLogs({ attemptId, duplicate: !isNew, recovered: received.recovered })
            )
            return { _tag: "Acknowledged", status: 200, duplicate: !isNew } satisfies Reply
          }
        }
      })

    return { receive, refuse, forwarded: line.forwarded }
  })

/** A delivered result's resolution of its workflow's deferred, as tillflow's engine writes it. */
const resolutionOf = (
  durable: DurableEngine.Service,
  registered: CallbackRegistration.Registration,
  received: ResultBody.Received
) =>
  // Resolved with the result as the JSON it was decoded from (`resultDeferredJson`), as
  // `Forward` resolves it: the workflow decodes it as `resultDeferred`'s `DeliveredResult`.
  Effect.orDie(
    durable.resolution(CallbackRegistration.resultDeferredJson(registered.attemptId), {
      executionId: registered.executionId,
      exit: Exit.succeed({
        result: received.result,
        resultHash: received.resultHash,
        receivedAt: received.receivedAt
      })
    })
  )

/** The receiver as a layer. */
export const layer: Layer.Layer<CallbackReceiver, never, EventStore.EventStore | WorkflowEngine> =
  Layer.scoped(CallbackReceiver, make())

/** The receiver as a layer, with options. */
export const layerWith = (
  options: Options
): Layer.Layer<CallbackReceiver, never, EventStore.EventStore | WorkflowEngine> =>
  Layer.scoped(CallbackReceiver, make(options))
