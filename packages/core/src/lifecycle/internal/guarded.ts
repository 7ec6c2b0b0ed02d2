/**
 * The one way every terminal-less operation runs, inside one activity: read the stream,
 * decide from its history (refuse with a typed error, recorded, before anything is sent),
 * record the request at the version that was read (a lost race re-reads and decides
 * again), send it, and record the outcome. A 5xx, a timeout or a network failure is an
 * unknown outcome: it is reconciled (or, for idempotent requests, resent), never blindly
 * repeated. Re-running the activity (a crashed worker) finds its own request in the stream
 * and resumes: a recorded outcome is returned, a request without one is reconciled.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as EventStore from "@tillflow/engine/EventStore"
import * as HashChain from "@tillflow/engine/HashChain"
import * as Tenant from "@tillflow/engine/Tenant"
import * as LifecycleError from "../LifecycleError.js"
import * as LifecycleEvent from "../LifecycleEvent.js"
import * as PolicyError from "../PolicyError.js"
import * as RemoteError from "../../model/RemoteError.js"

/** What reconciliation concluded about a request whose outcome was unknown. */
export type Reconciled<Res> =
  | { readonly _tag: "Applied"; readonly response: Res }
  | { readonly _tag: "NotApplied"; readonly message: string }
  | { readonly _tag: "Unknown"; readonly message: string }

/** Events to append after the outcome, to this stream or another (`noStream`: open it). */
export interface Append {
  readonly streamId: string
  readonly expected: "any" | "noStream"
  readonly events: ReadonlyArray<LifecycleEvent.Event>
}

/** What `applied` is told. */
export interface AppliedContext<S> {
  readonly state: S
  readonly requested: LifecycleEvent.Event
  readonly now: DateTime.Utc
  readonly reconciled: boolean
}

/** How an unknown outcome is settled. */
export type OnUnknown = "reconcile" | "resend" | "inDoubt"

/** One guarded operation. */
export interface Spec<S, Req, Res, Out, Refusal> {
  readonly operation: LifecycleEvent.Operation
  readonly streamId: string
  readonly requestId: string
  /** The type of the `…Requested` event of this operation. */
  readonly requestedType: LifecycleEvent.Event["type"]
  /** The types of its success outcomes. */
  readonly outcomeTypes: ReadonlyArray<LifecycleEvent.Event["type"]>
  /** Folds the stream into the state decisions read; a Left when there is nothing to act on. */
  readonly fold: (events: ReadonlyArray<LifecycleEvent.Decoded>) => Either.Either<S, Refusal>
  /** Refuses, or returns the `…Requested` event (its `requestId` and `at` set). */
  readonly decide: (state: S, now: DateTime.Utc) => Either.Either<LifecycleEvent.Event, Refusal>
  /**
   * A check that needs history from other streams (a terminal's batches), run before
   * `decide`: a refusal, or none.
   */
  readonly precheck?:
    | ((
        state: S,
        now: DateTime.Utc
      ) => Effect.Effect<Option.Option<Refusal>, StoreFailure, EventStore.EventStore>)
    | undefined
  /** The request to send, from the `…Requested` event. */
  readonly toRequest: (requested: LifecycleEvent.Event, state: S) => Req
  readonly send: (request: Req) => Effect.Effect<Res, RemoteError.RemoteError>
  readonly onUnknown: OnUnknown
  readonly reconcile?: (
    request: Req,
    context: {
      readonly state: S
      readonly requested: LifecycleEvent.Event
      readonly requestedAt: DateTime.Utc
    }
  ) => Effect.Effect<Reconciled<Res>>
  /** The events recording the outcome and the workflow's output. */
  readonly applied: (
    response: Res,
    context: AppliedContext<S>
  ) => Either.Either<{ readonly appends: ReadonlyArray<Append>; readonly output: Out }, Refusal>
  /** The output of an outcome already recorded (a re-run), with the request that led to it. */
  readonly output: (
    outcome: LifecycleEvent.Decoded,
    state: S,
    requested: LifecycleEvent.Event | undefined
  ) => Out
  /** Rewrites a definitive remote error (e.g. a partner key's 403) before it is recorded. */
  readonly mapRemote?: ((error: RemoteError.RemoteError) => RemoteError.RemoteError) | undefined
  /** What reconciliation's "not applied" is reported against (a reference or a guid). */
  readonly notChargedReference: string
}

/** The store failures an operation can meet, as one typed error. */
export type StoreFailure = EventStore.EventStoreError

/** Everything `run` itself can fail with, beside the spec's refusals. */
export type RunError =
  | RemoteError.RemoteError
  | PolicyError.NotCharged
  | LifecycleError.RequestAlreadyFailed
  | EventStore.EventStoreError

/** Maps any failure of the store or the codec to `EventStoreError`. */
export const storeFailure =
  (operation: string) =>
  (error: { readonly _tag: string; readonly message: string }): EventStore.EventStoreError =>
    error._tag === "EventStoreError"
      ? (error as EventStore.EventStoreError)
      : new EventStore.EventStoreError({ operation, detail: `${error._tag}: ${error.message}` })

/** Reads and decodes a lifecycle stream, with its version. */
export const read = (store: EventStore.Service, streamId: string) =>
  Effect.gen(function* () {
    const recorded = yield* store.readStream(streamId)
    const events = yield* LifecycleEvent.registry.decodeAll(recorded)
    const last = recorded[recorded.length - 1]
    return { events, version: last === undefined ? 0 : last.version }
  }).pipe(Effect.mapError(storeFailure("read")))

/** A stable event id (a name-based UUID) for an event a request leads to. */
export const eventId = (...parts: ReadonlyArray<string>): Effect.Effect<string> =>
  Effect.map(HashChain.sha256Hex(parts.join("\u0000")), (hex) => {
    const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16)
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
  })

/** The `requestId` of a lifecycle event, if it has one. */
export const requestIdOf = (event: LifecycleEvent.Decoded): string | undefined => {
  const data = event.data as { readonly requestId?: unknown }
  return typeof data.requestId === "string" ? data.requestId : undefined
}

/** A decoded event as the typed event it was built from. */
export const asEvent = (decoded: LifecycleEvent.Decoded): LifecycleEvent.Event =>
  ({ type: decoded.type, data: decoded.data }) as LifecycleEvent.Event

const errorMessage = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)
const errorTag = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : "Error"
const ruleOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "rule" in error && typeof error.rule === "string"
    ? error.rule
    : errorTag(error)

const verbs: Partial<Record<LifecycleEvent.Operation, string>> = {
  reversal: "reverse",
  motoReversal: "reverse",
  refund: "refund",
  motoRefund: "refund",
  capture: "capture",
  increase: "increase",
  decrease: "decrease",
  tipAdjustment: "tip",
  tokenization: "tokenize"
}

/**
 * A transaction without a history whose terminal outcome the log shows moved no money
 * (`TransactionDeclined`, noted by `TerminalOutcomeRecorder`): the refusal says so — the
 * rule `original-not-charged` — instead of that it was never recorded.
 */
const explainNotRecorded = <Refusal>(
  store: EventStore.Service,
  operation: LifecycleEvent.Operation,
  refusal: Refusal
): Effect.Effect<Refusal, EventStore.EventStoreError> =>
  Effect.gen(function* () {
    if (!(refusal instanceof LifecycleError.TransactionNotRecorded)) return refusal
    const [noted] = yield* read(store, LifecycleEvent.declinedStream(refusal.guid)).pipe(
      Effect.map(({ events }) => events)
    )
    if (noted?.type !== "TransactionDeclined") return refusal
    const d = noted.data
    const ended = d.finStatus === "DECLINED" ? "was declined (DECLINED)" : `ended ${d.finStatus}`
    return new LifecycleError.TransactionNotRecorded({
      message:
        `${operation} refused: ${d.operation} ${d.guid} ${ended} on its terminal` +
        `${d.serialNumber === undefined ? "" : ` ${d.serialNumber}`}: nothing was charged, so there is nothing to ${verbs[operation] ?? "act on"}`,
      guid: refusal.guid,
      rule: "original-not-charged"
    }) as unknown as Refusal
  })

/** How many times a lost race is re-read and re-decided before giving up. */
const maxRaces = 25
/** How an idempotent request is resent after an unknown outcome. */
const resendDelays = [Duration.seconds(1), Duration.seconds(2), Duration.seconds(4)]

/** What every step of one run works with: the operation and the store. */
interface Runner<S, Req, Res, Out, Refusal> {
  readonly spec: Spec<S, Req, Res, Out, Refusal>
  readonly store: EventStore.Service
}

/**
 * What deciding and recording need of an operation: everything but how its request is
 * sent and answered. An operation sent elsewhere (a linked operation sent to a terminal,
 * through the payment protocol) is decided and recorded with this alone (`admit`, `conclude`).
 */
export type Decision<S, Out, Refusal> = Pick<
  Spec<S, unknown, unknown, Out, Refusal>,
  | "operation"
  | "streamId"
  | "requestId"
  | "requestedType"
  | "outcomeTypes"
  | "fold"
  | "decide"
  | "precheck"
  | "output"
>

/** The decision part of a runner. */
interface Recorder<S, Out, Refusal> {
  readonly spec: Decision<S, Out, Refusal>
  readonly store: EventStore.Service
}

/**
 * Appends, giving each event a stable id and treating an event already stored under it as
 * done; keeps a lost race (`ConcurrencyConflict`) apart from every other store failure.
 */
const appendRaw = <S, Out, Refusal>(
  { spec, store }: Recorder<S, Out, Refusal>,
  streamId: string,
  expected: EventStore.ExpectedVersion,
  events: ReadonlyArray<LifecycleEvent.Event>
): Effect.Effect<void, EventStore.ConcurrencyConflict | EventStore.EventStoreError> =>
  Effect.gen(function* () {
    const withIds = yield* Effect.forEach(events, (event, i) =>
      Effect.map(
        eventId(streamId, spec.operation, spec.requestId, event.type, String(i)),
        (id) => ({ ...event, eventId: id }) as LifecycleEvent.Event
      )
    )
    // Whose they are: the tenant the execution or request acts for (a merchant's audit reads by it).
    const encoded = yield* Effect.flatMap(LifecycleEvent.registry.encodeAll(withIds), Tenant.stamp)
    yield* store.append(streamId, expected, encoded)
  }).pipe(
    Effect.catchTag("DuplicateEventId", () => Effect.void),
    Effect.catchTag("ConcurrencyConflict", (conflict) =>
      expected._tag === "NoStream" ? Effect.void : Effect.fail(conflict)
    ),
    Effect.mapError((e) => (e._tag === "ConcurrencyConflict" ? e : storeFailure("append")(e)))
  )

/** Appends where no race is expected: a conflict is a store failure like any other. */
const appendOnce = <S, Out, Refusal>(
  runner: Recorder<S, Out, Refusal>,
  streamId: string,
  expected: EventStore.ExpectedVersion,
  events: ReadonlyArray<LifecycleEvent.Event>
): Effect.Effect<void, EventStore.EventStoreError> =>
  appendRaw(runner, streamId, expected, events).pipe(
    Effect.mapError((e) => (e._tag === "ConcurrencyConflict" ? storeFailure("append")(e) : e))
  )

// ---------------------------------------------------------------------------------------
// What the stream already holds of this request (a re-run)

/** A request found in the stream: answered (its output, or its recorded failure) or only requested. */
type Recorded<Out> =
  | { readonly _tag: "Answered"; readonly result: Either.Either<Out, LifecycleError.RequestAlreadyFailed> }
  | { readonly _tag: "Requested"; readonly requested: LifecycleEvent.Event }
  | { readonly _tag: "NotYet" }

/** What the stream holds of this request, read before anything is decided. */
const recordedOf = <S, Out, Refusal>(
  spec: Decision<S, Out, Refusal>,
  events: ReadonlyArray<LifecycleEvent.Decoded>,
  state: S
): Recorded<Out> => {
  const mine = events.filter((e) => requestIdOf(e) === spec.requestId)
  const outcome = mine.find(
    (e) =>
      spec.outcomeTypes.includes(e.type) ||
      (e.type === "OperationFailed" && e.data.operation === spec.operation)
  )
  const requested = mine.find((e) => e.type === spec.requestedType)
  // An operator resolved it (`InDoubtResolution`): ended, never sent or reconciled again.
  const resolved = mine.find((e) => e.type === "InDoubtResolved")
  if (outcome === undefined && resolved?.type === "InDoubtResolved") {
    const { resolution, operator, reason } = resolved.data
    return {
      _tag: "Answered",
      result: Either.left(
        new LifecycleError.RequestAlreadyFailed({
          message: `request ${spec.requestId} (${spec.operation}) was resolved by ${operator} as ${resolution === "applied" ? "applied" : "not applied"}: ${reason}`,
          requestId: spec.requestId,
          operation: spec.operation,
          error: "InDoubtResolved"
        })
      )
    }
  }
  if (outcome !== undefined) {
    if (outcome.type === "OperationFailed")
      return {
        _tag: "Answered",
        result: Either.left(
          new LifecycleError.RequestAlreadyFailed({
            message: `request ${spec.requestId} (${spec.operation}) already failed: ${outcome.data.error}: ${outcome.data.message}`,
            requestId: spec.requestId,
            operation: spec.operation,
            error: outcome.data.error
          })
        )
      }
    return {
      _tag: "Answered",
      result: Either.right(
        spec.output(outcome, state, requested === undefined ? undefined : asEvent(requested))
      )
    }
  }
  return requested === undefined ? { _tag: "NotYet" } : { _tag: "Requested", requested: asEvent(requested) }
}

// ---------------------------------------------------------------------------------------
// Deciding from history

/**
 * Decides from the state read: the `…Requested` event to record, or a refusal, recorded
 * (best effort: the refusal is the answer either way) before it is failed with.
 */
const decide = <S, Out, Refusal>(runner: Recorder<S, Out, Refusal>, state: S) =>
  Effect.gen(function* () {
    const { spec } = runner
    const at = yield* DateTime.now
    const early = spec.precheck === undefined ? Option.none() : yield* spec.precheck(state, at)
    const decision = Option.isSome(early) ? Either.left(early.value) : spec.decide(state, at)
    if (Either.isRight(decision)) return decision.right
    const refusal = decision.left
    yield* appendOnce(runner, spec.streamId, EventStore.AnyVersion, [
      LifecycleEvent.OperationRefused.make({
        requestId: spec.requestId,
        at,
        operation: spec.operation,
        error: errorTag(refusal),
        rule: ruleOf(refusal),
        message: errorMessage(refusal)
      })
    ]).pipe(Effect.ignore)
    return yield* Effect.fail(refusal)
  })

// ---------------------------------------------------------------------------------------
// Recording the outcome

/** Records that the service refused (or never applied) the request, then fails with `error`. */
const failed = <S, Req, Res, Out, Refusal, E>(runner: Runner<S, Req, Res, Out, Refusal>, error: E) =>
  Effect.gen(function* () {
    const { spec } = runner
    const at = yield* DateTime.now
    const event = LifecycleEvent.OperationFailed.make({
      requestId: spec.requestId,
      at,
      operation: spec.operation,
      error: errorTag(error),
      message: errorMessage(error)
    })
    // A gateway's message could quote something the redaction guard refuses: keep the tag then.
    yield* appendOnce(runner, spec.streamId, EventStore.AnyVersion, [event]).pipe(
      Effect.catchAll(() =>
        appendOnce(runner, spec.streamId, EventStore.AnyVersion, [
          LifecycleEvent.OperationFailed.make({ ...event.data, message: errorTag(error) })
        ])
      )
    )
    return yield* Effect.fail(error)
  })

/** Records that the outcome stays unknown, then fails with `error`, saying why. */
const inDoubt = <S, Req, Res, Out, Refusal>(
  runner: Runner<S, Req, Res, Out, Refusal>,
  error: RemoteError.OutcomeUnknown,
  why: string
) =>
  Effect.gen(function* () {
    const { spec } = runner
    const at = yield* DateTime.now
    yield* appendOnce(runner, spec.streamId, EventStore.AnyVersion, [
      LifecycleEvent.OperationInDoubt.make({
        requestId: spec.requestId,
        at,
        operation: spec.operation,
        message: why
      })
    ])
    return yield* Effect.fail(
      new RemoteError.OutcomeUnknown({ ...error, message: `${error.message}; ${why}` })
    )
  })

/** Records the outcome of an applied request (`spec.applied`) and returns the output. */
const record = <S, Req, Res, Out, Refusal>(
  runner: Runner<S, Req, Res, Out, Refusal>,
  state: S,
  requested: LifecycleEvent.Event,
  response: Res,
  reconciled: boolean
) =>
  Effect.gen(function* () {
    const outcome = runner.spec.applied(response, { state, requested, now: yield* DateTime.now, reconciled })
    if (Either.isLeft(outcome)) return yield* Effect.fail(outcome.left)
    for (const append of outcome.right.appends) {
      yield* appendOnce(
        runner,
        append.streamId,
        append.expected === "noStream" ? EventStore.NoStream : EventStore.AnyVersion,
        append.events
      )
    }
    return outcome.right.output
  })

// ---------------------------------------------------------------------------------------
// Sending, and settling an unknown outcome

/** Settles an unknown outcome as the spec says: resent, reconciled, or left in doubt. */
const settleUnknown = <S, Req, Res, Out, Refusal>(
  runner: Runner<S, Req, Res, Out, Refusal>,
  state: S,
  requested: LifecycleEvent.Event,
  request: Req,
  error: RemoteError.OutcomeUnknown
): Effect.Effect<Out, Refusal | RunError> =>
  Effect.gen(function* () {
    const { spec } = runner
    switch (spec.onUnknown) {
      case "inDoubt":
        return yield* inDoubt(
          runner,
          error,
          "not resent: the request is not idempotent and cannot be reconciled"
        )
      case "resend": {
        for (const delay of resendDelays) {
          yield* Effect.sleep(delay)
          const again = yield* Effect.either(spec.send(request))
          if (Either.isRight(again)) return yield* record(runner, state, requested, again.right, false)
          if (again.left._tag !== "OutcomeUnknown")
            return yield* failed(runner, spec.mapRemote?.(again.left) ?? again.left)
        }
        return yield* inDoubt(
          runner,
          error,
          `still unknown after ${resendDelays.length} resends of an idempotent request`
        )
      }
      case "reconcile": {
        const requestedAt = (requested.data as { readonly at: DateTime.Utc }).at
        const verdict: Reconciled<Res> =
          spec.reconcile === undefined
            ? { _tag: "Unknown", message: "no way to reconcile this operation" }
            : yield* spec.reconcile(request, { state, requested, requestedAt })
        switch (verdict._tag) {
          case "Applied":
            return yield* record(runner, state, requested, verdict.response, true)
          case "NotApplied":
            return yield* failed(
              runner,
              new PolicyError.NotCharged({
                message: `${spec.operation} was not applied (${verdict.message}); a new request is safe`,
                transactionReference: spec.notChargedReference
              })
            )
          case "Unknown":
            return yield* inDoubt(runner, error, `reconciliation inconclusive: ${verdict.message}`)
        }
      }
    }
  })

/**
 * Sends a recorded request and records its outcome. A request recorded by an earlier run
 * (`resumed`) may have been sent already: it is settled as an unknown outcome, unless the
 * request is idempotent and can simply be sent again.
 */
const send = <S, Req, Res, Out, Refusal>(
  runner: Runner<S, Req, Res, Out, Refusal>,
  state: S,
  requested: LifecycleEvent.Event,
  resumed: boolean
) =>
  Effect.gen(function* () {
    const { spec } = runner
    const request = spec.toRequest(requested, state)
    if (resumed && spec.onUnknown !== "resend") {
      return yield* settleUnknown(
        runner,
        state,
        requested,
        request,
        new RemoteError.OutcomeUnknown({
          message: "an earlier run recorded this request without its outcome",
          reason: "Network"
        })
      )
    }
    const sent = yield* Effect.either(spec.send(request))
    if (Either.isRight(sent)) return yield* record(runner, state, requested, sent.right, false)
    const error = sent.left
    if (error._tag === "OutcomeUnknown") return yield* settleUnknown(runner, state, requested, request, error)
    return yield* failed(runner, spec.mapRemote?.(error) ?? error)
  })

// ---------------------------------------------------------------------------------------
// One round, and the run

/**
 * One round: read the stream, answer from what it holds of this request, else decide and
 * record the request at the version read, then send it. A lost race is returned (Left), to
 * be read and decided again.
 */
const round = <S, Req, Res, Out, Refusal>(
  runner: Runner<S, Req, Res, Out, Refusal>
): Effect.Effect<
  Either.Either<Out, EventStore.ConcurrencyConflict>,
  Refusal | RunError,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    const { spec } = runner
    const { events, version } = yield* read(runner.store, spec.streamId)
    const folded = spec.fold(events)
    if (Either.isLeft(folded))
      return yield* Effect.fail(yield* explainNotRecorded(runner.store, spec.operation, folded.left))
    const state = folded.right
    const recorded = recordedOf(spec, events, state)
    switch (recorded._tag) {
      case "Answered": {
        if (Either.isLeft(recorded.result)) return yield* Effect.fail(recorded.result.left)
        return Either.right(recorded.result.right)
      }
      case "Requested":
        return Either.right(yield* send(runner, state, recorded.requested, true))
      case "NotYet":
        break
    }
    const requested = yield* decide(runner, state)
    const appended = yield* Effect.either(
      appendRaw(runner, spec.streamId, EventStore.exactVersion(version), [requested])
    )
    if (Either.isRight(appended)) return Either.right(yield* send(runner, state, requested, false))
    const lost = appended.left
    if (lost._tag === "EventStoreError") return yield* Effect.fail(lost)
    return Either.left(lost)
  })

/** Runs one guarded operation (see the module description). */
export const run = <S, Req, Res, Out, Refusal>(
  spec: Spec<S, Req, Res, Out, Refusal>
): Effect.Effect<Out, Refusal | RunError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const runner: Runner<S, Req, Res, Out, Refusal> = { spec, store: yield* EventStore.EventStore }
    for (let race = 0; ; race++) {
      const settled = yield* round(runner)
      if (Either.isRight(settled)) return settled.right
      // Lost the race: someone appended since the read. Read again and decide again.
      if (race >= maxRaces) return yield* Effect.fail(storeFailure("append")(settled.left))
    }
  })

// ---------------------------------------------------------------------------------------
// An operation sent elsewhere: decided and recorded here, sent by its own protocol

/** What `admit` found or decided: the request to send, recorded (now or by an earlier run). */
export interface Admitted<S> {
  readonly state: S
  readonly requested: LifecycleEvent.Event
}

/**
 * The first half of `run` for an operation another protocol sends: reads the stream,
 * decides from its history (a refusal is recorded and failed with) and records the
 * `…Requested` event at the version read — a lost race reads and decides again. A request
 * this operation recorded already (a re-run) is admitted as it was.
 */
export const admit = <S, Out, Refusal>(
  spec: Decision<S, Out, Refusal>
): Effect.Effect<Admitted<S>, Refusal | EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const recorder: Recorder<S, Out, Refusal> = { spec, store: yield* EventStore.EventStore }
    for (let race = 0; ; race++) {
      const { events, version } = yield* read(recorder.store, spec.streamId)
      const folded = spec.fold(events)
      if (Either.isLeft(folded))
        return yield* Effect.fail(yield* explainNotRecorded(recorder.store, spec.operation, folded.left))
      const state = folded.right
      const mine = events.find((e) => requestIdOf(e) === spec.requestId && e.type === spec.requestedType)
      if (mine !== undefined) return { state, requested: asEvent(mine) }
      const requested = yield* decide(recorder, state)
      const appended = yield* Effect.either(
        appendRaw(recorder, spec.streamId, EventStore.exactVersion(version), [requested])
      )
      if (Either.isRight(appended)) return { state, requested }
      if (appended.left._tag === "EventStoreError") return yield* Effect.fail(appended.left)
      if (race >= maxRaces) return yield* Effect.fail(storeFailure("append")(appended.left))
    }
  })

/** How an operation sent elsewhere ended, as its history records it. */
export type Conclusion =
  | { readonly _tag: "Applied"; readonly appends: ReadonlyArray<Append> }
  | { readonly _tag: "Failed"; readonly error: string; readonly message: string }
  | { readonly _tag: "InDoubt"; readonly message: string }

/**
 * The second half of `run` for an operation another protocol sent: records its outcome
 * (`Applied`), that it was not applied (`Failed`), or that its outcome stays unknown
 * (`InDoubt`). Idempotent: the events' ids are stable, a second conclusion is a no-op.
 */
export const conclude = <S, Out, Refusal>(
  spec: Decision<S, Out, Refusal>,
  conclusion: Conclusion
): Effect.Effect<void, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const recorder: Recorder<S, Out, Refusal> = { spec, store: yield* EventStore.EventStore }
    const at = yield* DateTime.now
    switch (conclusion._tag) {
      case "Applied":
        for (const append of conclusion.appends) {
          yield* appendOnce(
            recorder,
            append.streamId,
            append.expected === "noStream" ? EventStore.NoStream : EventStore.AnyVersion,
            append.events
          )
        }
        return
      case "Failed":
        return yield* appendOnce(recorder, spec.streamId, EventStore.AnyVersion, [
          LifecycleEvent.OperationFailed.make({
            requestId: spec.requestId,
            at,
            operation: spec.operation,
            error: conclusion.error,
            message: conclusion.message
          })
        ])
      case "InDoubt":
        return yield* appendOnce(recorder, spec.streamId, EventStore.AnyVersion, [
          LifecycleEvent.OperationInDoubt.make({
            requestId: spec.requestId,
            at,
            operation: spec.operation,
            message: conclusion.message
          })
        ])
    }
  })

/** Polls for the verdict of a reconciliation until it is known or `deadline` passes. */
export const poll = <Res>(options: {
  readonly check: Effect.Effect<Option.Option<Reconciled<Res>>>
  readonly interval: Duration.DurationInput
  readonly deadline: DateTime.Utc
}): Effect.Effect<Reconciled<Res>> =>
  Effect.gen(function* () {
    while (true) {
      const verdict = yield* options.check
      if (Option.isSome(verdict)) return verdict.value
      const at = yield* DateTime.now
      if (DateTime.greaterThanOrEqualTo(at, options.deadline))
        return {
          _tag: "Unknown",
          message: `no final answer before ${DateTime.formatIso(options.deadline)}`
        } as const
      // Never past the deadline: the last check is made at it, not an interval after it.
      const untilDeadline = Duration.millis(DateTime.distance(at, options.deadline))
      yield* Effect.sleep(Duration.min(Duration.decode(options.interval), untilDeadline))
    }
  })
