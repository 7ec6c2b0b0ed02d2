/**
 * The bridge from terminal operations to the terminal-less lifecycles: every approved
 * financial outcome of a terminal operation (a sale, a refund, a pre-authorization, a
 * capture …) is recorded into its transaction's history (`txn-<guid>`), so a tip, a
 * deferred token, a reversal, a MOTO refund or a capture can follow it. It reads the log
 * from its own checkpoint (kept in the `projection-terminal-outcomes` stream) and records
 * idempotently: a history already open is left alone, so two processes catching up at
 * once, or a replay, record nothing twice. An outcome that moved no money (DECLINED,
 * CANCELLED, FAILED) opens no history; it is noted under its guid (`declined-<guid>`), so
 * an operation asked of it is refused at once, naming why.
 *
 * A worker runs it as the log grows (`follow`): a terminal transaction's history opens a
 * moment after its outcome, so the audit's conservation check, the timelines and the
 * operators' actions see every approved terminal transaction — not only those a later
 * operation asked for (`catchUpFor`, which still waits for an outcome the follower has not
 * reached yet).
 */
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as PaymentEvents from "../terminal/PaymentEvents.js"
import * as EventRegistry from "@tillflow/engine/EventRegistry"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Tenant from "@tillflow/engine/Tenant"
import * as OperationOutcome from "../terminal/OperationOutcome.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as TerminalResolution from "./TerminalResolution.js"
import * as TransactionHistory from "./TransactionHistory.js"

/** The stream of the recorder's checkpoints. */
export const checkpointStream = "projection-terminal-outcomes"

const CheckpointJson = Schema.Struct({ transactionId: Schema.BigInt, globalPosition: Schema.BigInt })

/** The recorder's checkpoint: the log is recorded up to this position. */
export const OutcomesRecordedUpTo = EventRegistry.define("TerminalOutcomesRecordedUpTo", CheckpointJson)

/** Options of the recorder. */
export interface Options {
  /**
   * The merchant category code, which decides a pre-authorization's capture window and
   * tolerance (it is not in the result). Without it pre-authorizations are not opened.
   */
  readonly mcc: Option.Option<string>
  /**
   * The MCC of a merchant of the deployment (issue 32), for an outcome of that merchant's
   * execution (the `tenant` its event's metadata names); without it, or for an outcome of
   * no merchant's, `mcc`.
   */
  readonly mccOf?: ((merchant: string) => Effect.Effect<Option.Option<string>>) | undefined
}

/** The MCC an outcome's pre-authorization is opened with: its merchant's, else the deployment's. */
const mccFor = (event: EventStore.RecordedEvent, options: Options): Effect.Effect<Option.Option<string>> => {
  const tenant = event.metadata["tenant"]
  return typeof tenant === "string" && options.mccOf !== undefined
    ? options.mccOf(tenant)
    : Effect.succeed(options.mcc)
}

/** What one event led to (`declined`: an outcome that moved no money, noted apart). */
export type Recorded = "recorded" | "already" | "skipped" | "declined"

/** The outcomes of a financial operation that moved no money. */
const notMoneyMoving: ReadonlySet<string> = new Set([
  PaymentEvents.PaymentDeclined.type,
  PaymentEvents.PaymentCancelled.type,
  PaymentEvents.PaymentFailed.type
])

/**
 * Notes an outcome that moved no money under its guid (`declined-<guid>`), once: an
 * operation on it is then refused at once, saying why, instead of waiting for a history.
 */
const noteDeclined = (
  event: EventStore.RecordedEvent
): Effect.Effect<Recorded, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const decoded = yield* Effect.either(PaymentEvents.events.decode(event))
    if (Either.isLeft(decoded)) return "skipped"
    const data = decoded.right.data as { readonly facts: OperationOutcome.Facts; readonly at: number }
    const facts = data.facts
    if (facts.efttransactionID === undefined || !financial.has(facts.operation)) return "skipped"
    const store = yield* EventStore.EventStore
    const noted = LifecycleEvent.TransactionDeclined.make(
      defined({
        guid: facts.efttransactionID,
        operation: facts.operation,
        finStatus: facts.finStatus ?? decoded.right.type,
        at: DateTime.unsafeMake(data.at),
        serialNumber: facts.serialNumber,
        transactionReference: facts.transactionReference
      })
    )
    const encoded = yield* LifecycleEvent.registry
      .encode(noted)
      .pipe(
        Effect.mapError((e) => new EventStore.EventStoreError({ operation: "encode", detail: e.message }))
      )
    return yield* store
      .append(LifecycleEvent.declinedStream(facts.efttransactionID), EventStore.NoStream, [encoded])
      .pipe(
        Effect.as("declined" as const),
        Effect.catchTag("ConcurrencyConflict", () => Effect.succeed("already" as const)),
        Effect.mapError(Guarded.storeFailure("append"))
      )
  })

/** The operations whose declined outcome is an original something could be asked of. */
const financial: ReadonlySet<string> = new Set([
  "sale",
  "saleAndTokenizeCard",
  "refund",
  "preAuthorization",
  "moToPreAuthorization",
  "moToSale",
  "moToRefund"
])

/** Records the transaction of one event, if it is an approved financial outcome. */
export const recordEvent = (
  event: EventStore.RecordedEvent,
  options: Options
): Effect.Effect<Recorded, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    if (notMoneyMoving.has(event.type)) return yield* noteDeclined(event)
    if (event.type === LifecycleEvent.TerminalOutcomeResolved.type) {
      // An operator's resolution of a terminal operation left unresolved, applied: the
      // approval it stands for opens its history as the terminal's own would have.
      const decoded = yield* Effect.either(LifecycleEvent.registry.decode(event))
      if (Either.isLeft(decoded) || decoded.right.type !== "TerminalOutcomeResolved") return "skipped"
      const outcome = TerminalResolution.outcomeOf(decoded.right.data)
      return outcome === undefined
        ? "skipped"
        : yield* recordOutcome(event, outcome, decoded.right.data.at, options)
    }
    if (
      event.type !== PaymentEvents.PaymentAuthorised.type &&
      event.type !== PaymentEvents.PaymentPartiallyApproved.type
    ) {
      return "skipped"
    }
    const decoded = yield* Effect.either(PaymentEvents.events.decode(event))
    if (Either.isLeft(decoded)) return "skipped"
    const data = decoded.right.data as { readonly facts: OperationOutcome.Facts; readonly at: number }
    const outcome =
      decoded.right.type === PaymentEvents.PaymentPartiallyApproved.type
        ? new OperationOutcome.PartiallyApproved({ facts: data.facts })
        : new OperationOutcome.Approved({ facts: data.facts })
    return yield* recordOutcome(event, outcome, DateTime.unsafeMake(data.at), options)
  })

/** Opens the history of an approved outcome (a pre-authorization's, or a completed transaction's). */
const recordOutcome = (
  event: EventStore.RecordedEvent,
  outcome: OperationOutcome.Approved | OperationOutcome.PartiallyApproved,
  at: DateTime.Utc,
  options: Options
): Effect.Effect<Recorded, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const operation = outcome.facts.operation
    if (operation === "preAuthorization" || operation === "moToPreAuthorization") {
      const mcc = yield* mccFor(event, options)
      if (Option.isNone(mcc)) return "skipped"
      const authorised = TransactionHistory.preAuthorizationFromOutcome(outcome, {
        mcc: mcc.value,
        authorisedAt: at
      })
      if (Either.isLeft(authorised)) return "skipped"
      const opened = yield* TransactionHistory.openPreAuthorization(store, authorised.right).pipe(
        Effect.either
      )
      return opened._tag === "Right" && opened.right === true ? "recorded" : "already"
    }
    const completed = TransactionHistory.completedFromOutcome(outcome, { at })
    if (Either.isLeft(completed)) return "skipped"
    const recorded = yield* TransactionHistory.record(store, completed.right).pipe(Effect.either)
    return recorded._tag === "Right" && recorded.right === true ? "recorded" : "already"
    // The history opened is the outcome's tenant's, as the outcome is (its event's metadata).
  }).pipe(Tenant.within(Tenant.ofMetadata(event.metadata)))

/** The recorder's checkpoint (the start of the log when it never ran). */
export const checkpoint: Effect.Effect<
  { readonly checkpoint: EventStore.Checkpoint; readonly version: number },
  EventStore.EventStoreError,
  EventStore.EventStore
> = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const version = yield* store.streamVersion(checkpointStream)
  if (version === 0) return { checkpoint: EventStore.Checkpoint.start, version }
  const [last] = yield* store.readStream(checkpointStream, { fromVersion: version, maxCount: 1 })
  const decoded = Schema.decodeUnknownOption(CheckpointJson)(last?.data)
  return {
    checkpoint: Option.match(decoded, {
      onNone: () => EventStore.Checkpoint.start,
      onSome: (c) => new EventStore.Checkpoint(c)
    }),
    version
  }
})

/** Appends `position` as the recorder's checkpoint when it is past the stored one. */
const storeCheckpoint = (
  position: EventStore.Checkpoint
): Effect.Effect<void, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const stored = yield* checkpoint
    if (!Order.greaterThan(EventStore.checkpointOrder)(position, stored.checkpoint)) return
    yield* store
      .append(checkpointStream, EventStore.exactVersion(stored.version), [
        {
          type: OutcomesRecordedUpTo.type,
          data: Schema.encodeSync(CheckpointJson)({
            transactionId: position.transactionId,
            globalPosition: position.globalPosition
          })
        }
      ])
      .pipe(
        // Another process (or a `catchUp`) moved it meanwhile: the next save compares again.
        Effect.catchAll((error) => (error._tag === "EventStoreError" ? Effect.fail(error) : Effect.void))
      )
  })

/**
 * Records every approved outcome of the log after the recorder's checkpoint, then moves
 * the checkpoint. Returns how many transactions it recorded.
 */
export const catchUp = (
  options: Options
): Effect.Effect<number, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const start = yield* checkpoint
    let position = start.checkpoint
    let recorded = 0
    let moved = false
    while (true) {
      const page = yield* store.readAll(position, { maxCount: 1000 })
      for (const event of page.events) {
        if (event.streamId === checkpointStream) continue
        moved = true
        if ((yield* recordEvent(event, options)) === "recorded") recorded++
      }
      position = page.next
      if (page.caughtUp) break
    }
    if (moved) yield* storeCheckpoint(position)
    return recorded
  }).pipe(Effect.withSpan("TerminalOutcomeRecorder.catchUp"))

/** Options of {@link follow}. */
export interface FollowOptions extends Options {
  /** How often the checkpoint is stored while outcomes are recorded (default 5 s). */
  readonly checkpointEvery?: Duration.DurationInput | undefined
  /** How often the log is polled when no notification wakes it (the store's default otherwise). */
  readonly pollInterval?: Duration.DurationInput | undefined
}

/**
 * Records every approved outcome as it reaches the log, from the recorder's checkpoint on,
 * for as long as the scope lasts: a fiber follows the log (`subscribe`) and records each
 * event (idempotently: another worker following too, or a `catchUp`, records nothing
 * twice); the checkpoint is stored every `checkpointEvery` when it moved, and when the scope
 * closes. A store error is logged and the follower resumes from its stored checkpoint, with
 * back-off; it never fails the worker.
 */
export const follow = (
  options: FollowOptions
): Effect.Effect<void, never, EventStore.EventStore | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    // Recorded up to here, not stored yet.
    const reached = yield* Ref.make(Option.none<EventStore.Checkpoint>())
    const save = Effect.gen(function* () {
      const position = yield* Ref.get(reached)
      if (Option.isNone(position)) return
      yield* storeCheckpoint(position.value)
      yield* Ref.update(reached, (now) =>
        Option.isSome(now) && now.value === position.value ? Option.none() : now
      )
    }).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning(`terminal outcomes: checkpoint not stored: ${error.message}`)
      )
    )
    const run = Effect.gen(function* () {
      const from = Option.getOrElse(yield* Ref.get(reached), () => EventStore.Checkpoint.start)
      const start = Order.max(EventStore.checkpointOrder)(from, (yield* checkpoint).checkpoint)
      yield* store
        .subscribe(start, options.pollInterval === undefined ? {} : { pollInterval: options.pollInterval })
        .pipe(
          Stream.runForEach((event) =>
            event.streamId === checkpointStream
              ? Effect.void
              : recordEvent(event, options).pipe(
                  Effect.zipRight(Ref.set(reached, Option.some(event.checkpoint)))
                )
          )
        )
    }).pipe(
      Effect.tapError((error) =>
        Effect.logWarning(`terminal outcomes: interrupted by the store: ${error.message}`)
      ),
      Effect.retry({
        schedule: Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("10 seconds")))
      }),
      Effect.orDie
    )
    const every = Duration.decode(options.checkpointEvery ?? "5 seconds")
    yield* Effect.forkScoped(run)
    yield* Effect.forkScoped(Effect.sleep(every).pipe(Effect.zipRight(save), Effect.forever))
    yield* Effect.addFinalizer(() => save)
  }).pipe(Effect.withSpan("TerminalOutcomeRecorder.follow"))

/**
 * How long `catchUpFor` waits for an original's history: a transaction older than the
 * original's outcome still open on the server (another writer, another database's) holds it
 * back from the global log for as long as it lasts.
 */
export const defaultHistoryWait: Duration.Duration = Duration.seconds(5)

/**
 * `catchUp`, and while the history of `guid` is not there yet, again every 100 ms for up to
 * `wait`. The global log shows an event only once every transaction older than its own has
 * ended, anywhere on the server, so an original approved a moment ago can still be hidden:
 * without the wait, a capture, a tip or a reversal asked right after it is refused as never
 * recorded. Without `guid`, one catch-up. An original the log shows declined (cancelled,
 * failed) is not waited for: the operation's refusal says so at once (`Guarded`).
 */
export const catchUpFor = (
  options: Options,
  guid: string | undefined,
  wait: Duration.DurationInput = defaultHistoryWait
): Effect.Effect<void, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const until = (yield* Clock.currentTimeMillis) + Duration.toMillis(Duration.decode(wait))
    while (true) {
      yield* catchUp(options)
      if (guid === undefined) return
      if ((yield* store.streamVersion(LifecycleEvent.transactionStream(guid))) > 0) return
      // The log shows it moved no money: its history will never open, the refusal says why.
      if ((yield* store.streamVersion(LifecycleEvent.declinedStream(guid))) > 0) return
      if ((yield* Clock.currentTimeMillis) >= until) return
      yield* Effect.sleep("100 millis")
    }
  })
