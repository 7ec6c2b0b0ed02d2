/**
 * An operator's resolution of a request whose outcome stayed unknown: a request on a
 * transaction (`txn-<guid>`) recorded `OperationInDoubt` — reconciliation could not tell —
 * and holds the transaction (one operation at a time) until someone who knows says what
 * became of it. `resolve` decides from the transaction's history and records an audited
 * `InDoubtResolved` (who, when, why, what the status endpoint said if it was asked) at the
 * version it read; the fold reads it as the request's ending: `applied` as its approval,
 * `notApplied` as nothing changed, either way releasing the transaction. Nothing is
 * deleted. Refused with `ResolutionRefused` naming the rule when that request is not in
 * doubt (`resolve-only-in-doubt`) or the operator or the reason is blank
 * (`operator-and-reason-required`).
 *
 * @example
 * const resolved = yield* InDoubtResolution.resolve({
 *   guid: "b7e3…",
 *   requestId: "terminal-5f2…",
 *   resolution: "notApplied",
 *   operator: "alice",
 *   reason: "the acquirer's report shows no capture"
 * })
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as EventStore from "@tillflow/engine/EventStore"
import * as Tenant from "@tillflow/engine/Tenant"
import type * as Money from "../model/Money.js"
import { defined } from "./internal/defined.js"
import * as Guarded from "./internal/guarded.js"
import * as Ops from "./internal/transactionOps.js"
import * as LifecycleError from "./LifecycleError.js"
import * as LifecycleEvent from "./LifecycleEvent.js"
import * as MoneyRules from "./MoneyRules.js"
import * as TransactionHistory from "./TransactionHistory.js"
import { VirtualTerminal } from "./VirtualTerminal.js"

/** The rule: only a request in doubt can be resolved by an operator. */
export const RESOLVE_ONLY_IN_DOUBT = "resolve-only-in-doubt"
/** The rule: a resolution names who made it and why. */
export const OPERATOR_AND_REASON_REQUIRED = "operator-and-reason-required"

/** What an operator says. */
export interface Input {
  /** The transaction (its gateway guid). */
  readonly guid: string
  /** The request in doubt (its `requestId` in the history). */
  readonly requestId: string
  readonly resolution: LifecycleEvent.Resolution
  /** Who resolves it. */
  readonly operator: string
  /** Why: what the operator knows. */
  readonly reason: string
  /** What the status endpoint said, if the operator asked it. */
  readonly statusEndpoint?: string | undefined
}

/** What was recorded. */
export interface Resolved {
  readonly guid: string
  readonly requestId: string
  readonly operation: LifecycleEvent.Operation
  readonly resolution: LifecycleEvent.Resolution
  readonly at: DateTime.Utc
  /** What the applied request moved, when it moves money. */
  readonly amount: Money.Money | undefined
}

const blank = (text: string | undefined): boolean => text === undefined || text.trim().length === 0

/** What an applied request moved, as its approval would have said. */
const movedBy = (
  state: TransactionHistory.State,
  pending: TransactionHistory.Pending
): Money.Money | undefined => {
  const requested = pending.requested
  switch (requested.type) {
    case "CaptureRequested":
      return requested.data.total
    case "HoldIncreaseRequested":
    case "HoldDecreaseRequested":
      return requested.data.delta
    case "ReversalRequested":
      return (
        requested.data.amount ??
        (requested.data.target === "hold"
          ? state.preAuthorization?.hold
          : requested.data.target === "capture"
            ? state.preAuthorization?.capture?.total
            : MoneyRules.left(state))
      )
    case "RefundRequested":
      return requested.data.amount
    case "TipAdjustmentRequested":
      return requested.data.tip
    default:
      return undefined
  }
}

/** Decides a resolution from the transaction's state: the event to record, or the refusal. */
export const decide = (
  state: TransactionHistory.State,
  input: Input,
  at: DateTime.Utc
): Either.Either<LifecycleEvent.Event, LifecycleError.ResolutionRefused> => {
  const refuse = (rule: string, message: string) =>
    Either.left(
      new LifecycleError.ResolutionRefused({ message, guid: state.guid, requestId: input.requestId, rule })
    )
  if (blank(input.operator) || blank(input.reason))
    return refuse(
      OPERATOR_AND_REASON_REQUIRED,
      `a resolution of ${input.requestId} on ${state.guid} needs the operator's name and a reason`
    )
  const pending = state.pending
  if (pending === undefined || pending.requestId !== input.requestId)
    return refuse(
      RESOLVE_ONLY_IN_DOUBT,
      `nothing to resolve: request ${input.requestId} on ${state.guid} is not in doubt` +
        (pending === undefined
          ? " (no request is pending)"
          : ` (the pending request is ${pending.requestId})`)
    )
  if (!pending.inDoubt)
    return refuse(
      RESOLVE_ONLY_IN_DOUBT,
      `nothing to resolve: ${pending.operation} request ${input.requestId} on ${state.guid} is still in flight, not in doubt`
    )
  const applied = input.resolution === "applied"
  const requested = pending.requested
  return Either.right(
    LifecycleEvent.InDoubtResolved.make(
      defined({
        requestId: input.requestId,
        at,
        operation: pending.operation,
        resolution: input.resolution,
        operator: input.operator.trim(),
        reason: input.reason.trim(),
        statusEndpoint: blank(input.statusEndpoint) ? undefined : input.statusEndpoint?.trim(),
        amount: applied ? movedBy(state, pending) : undefined,
        target: applied && requested.type === "ReversalRequested" ? requested.data.target : undefined,
        replaces:
          applied && requested.type === "TipAdjustmentRequested"
            ? TransactionHistory.standingTip(state)?.tip
            : undefined,
        serialNumber: state.serialNumber,
        merchant: state.merchant
      })
    )
  )
}

/** How many times a lost race is read and decided again. */
const maxRaces = 10

/**
 * Resolves a request in doubt (see the module description): read, decide, record at the
 * version read; a concurrent append reads and decides again.
 */
export const resolve = (
  input: Input
): Effect.Effect<
  Resolved,
  LifecycleError.ResolutionRefused | LifecycleError.TransactionNotRecorded | EventStore.EventStoreError,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const streamId = LifecycleEvent.transactionStream(input.guid)
    for (let race = 0; ; race++) {
      const { events, version } = yield* Guarded.read(store, streamId)
      const state = yield* Either.match(Ops.foldTransaction(input.guid, "reversal")(events), {
        onLeft: () =>
          Effect.fail(
            new LifecycleError.TransactionNotRecorded({
              message: `no transaction ${input.guid} in the event log: nothing to resolve`,
              guid: input.guid,
              rule: "history-required"
            })
          ),
        onRight: Effect.succeed
      })
      const at = yield* DateTime.now
      const event = yield* decide(state, input, at)
      const eventId = yield* Guarded.eventId(streamId, "resolve", input.requestId, String(version))
      // The transaction's merchant (its history's opening names it), whoever resolves it.
      const encoded = yield* LifecycleEvent.registry
        .encodeAll([{ ...event, eventId } as LifecycleEvent.Event])
        .pipe(
          Effect.flatMap((encoded) => stampFor(ownerOf(events), encoded)),
          Effect.mapError(Guarded.storeFailure("encode"))
        )
      const appended = yield* Effect.either(store.append(streamId, EventStore.exactVersion(version), encoded))
      if (Either.isRight(appended)) {
        const data = event.data as {
          readonly operation: LifecycleEvent.Operation
          readonly amount?: Money.Money
        }
        return {
          guid: input.guid,
          requestId: input.requestId,
          operation: data.operation,
          resolution: input.resolution,
          at,
          amount: data.amount
        }
      }
      const error = appended.left
      if (error._tag !== "ConcurrencyConflict" || race >= maxRaces)
        return yield* Effect.fail(Guarded.storeFailure("append")(error))
    }
  }).pipe(Effect.withSpan("InDoubtResolution.resolve"))

/** The tenant the first of `events` that names one names (whose the stream, or the request, is). */
const ownerOf = (events: ReadonlyArray<LifecycleEvent.Decoded>): string | undefined => {
  for (const event of events) {
    const tenant = Tenant.ofMetadata(event.recorded.metadata)
    if (tenant !== undefined) return tenant
  }
  return undefined
}

/**
 * `encoded` stamped with `owner` (the merchant whose transaction or request it is), else with
 * the current tenant: a platform operator's resolution of a merchant's request is that
 * merchant's fact, as a merchant's audit and live feed read it.
 */
const stampFor = <E extends { readonly metadata?: { readonly [key: string]: unknown } | undefined }>(
  owner: string | undefined,
  encoded: ReadonlyArray<E>
): Effect.Effect<ReadonlyArray<E>> =>
  owner === undefined ? Tenant.stamp(encoded) : Tenant.stamp(encoded).pipe(Tenant.within(owner))

/** The requests in doubt on a transaction's state (at most one: one operation at a time). */
export const inDoubt = (state: TransactionHistory.State): Option.Option<TransactionHistory.Pending> =>
  state.pending?.inDoubt === true ? Option.some(state.pending) : Option.none()

// ---------------------------------------------------------------------------------------
// Requests in doubt outside a transaction's stream

/**
 * The other streams a request can stay in doubt on: a terminal's batch close
 * (`batch-<serial>`: it holds every later close of the terminal), a MOTO sale attempt
 * (`moto-sale-<reference>`: the gateway may have charged under a guid tillflow never saw),
 * a device command (`device-<serial>`: a reboot is never resent).
 */
export type Attempt =
  | { readonly _tag: "batch"; readonly serialNumber: string }
  | { readonly _tag: "motoSale"; readonly transactionReference: string }
  | { readonly _tag: "device"; readonly serialNumber: string }

/** The rule: an applied MOTO sale names the guid the gateway gave it (its history opens under it). */
export const APPLIED_MOTO_SALE_NEEDS_GUID = "applied-moto-sale-needs-guid"

/** What an operator says of a request in doubt on an attempt's stream. */
export interface AttemptInput extends Omit<Input, "guid"> {
  readonly on: Attempt
  /** An applied MOTO sale: the guid the gateway gave it (from its report or status endpoint). */
  readonly guid?: string | undefined
}

/** What was recorded on an attempt's stream. */
export interface AttemptResolved {
  readonly streamId: string
  readonly requestId: string
  readonly operation: LifecycleEvent.Operation
  readonly resolution: LifecycleEvent.Resolution
  readonly at: DateTime.Utc
  /** An applied MOTO sale: the transaction opened, and what it charged. */
  readonly guid: string | undefined
  readonly amount: Money.Money | undefined
}

/** The stream of an attempt. */
export const attemptStream = (on: Attempt): string =>
  on._tag === "batch"
    ? LifecycleEvent.batchStream(on.serialNumber)
    : on._tag === "device"
      ? LifecycleEvent.deviceStream(on.serialNumber)
      : LifecycleEvent.motoSaleStream(on.transactionReference)

/**
 * Whose a request on an attempt's stream is: the tenant (a merchant of the deployment) its
 * events name, none for the deployment's own merchant's, for a request the stream does not
 * hold, or for one written before tenants were stamped. What a merchant's credential must
 * match to resolve it.
 */
export const attemptOwner = (
  on: Attempt,
  requestId: string
): Effect.Effect<string | undefined, EventStore.EventStoreError, EventStore.EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const { events } = yield* Guarded.read(store, attemptStream(on))
    return ownerOf(events.filter((e) => Guarded.requestIdOf(e) === requestId))
  })

/** The events that end a request on an attempt's stream, besides a failure or a resolution. */
const attemptOutcomes: Record<Attempt["_tag"], ReadonlyArray<string>> = {
  batch: ["BatchClosed"],
  motoSale: ["MotoSaleApproved", "MotoSaleDeclined"],
  device: ["DeviceCommandAccepted"]
}
const attemptRequested: Record<Attempt["_tag"], string> = {
  batch: "BatchCloseRequested",
  motoSale: "MotoSaleRequested",
  device: "DeviceCommandRequested"
}
const attemptOperation: Record<Attempt["_tag"], LifecycleEvent.Operation> = {
  batch: "batchClose",
  motoSale: "motoSale",
  device: "deviceCommand"
}

/**
 * Decides a resolution on an attempt's stream: the events to record (the audited
 * `InDoubtResolved`, and for an applied MOTO sale the approval it stands for), or the refusal.
 */
export const decideAttempt = (
  events: ReadonlyArray<LifecycleEvent.Decoded>,
  input: AttemptInput,
  at: DateTime.Utc,
  /** The merchant's virtual terminal, on which an applied MOTO sale is booked. */
  virtualTerminal?: string
): Either.Either<ReadonlyArray<LifecycleEvent.Event>, LifecycleError.ResolutionRefused> => {
  const streamId = attemptStream(input.on)
  const refuse = (rule: string, message: string) =>
    Either.left(
      new LifecycleError.ResolutionRefused({ message, guid: streamId, requestId: input.requestId, rule })
    )
  if (blank(input.operator) || blank(input.reason))
    return refuse(
      OPERATOR_AND_REASON_REQUIRED,
      `a resolution of ${input.requestId} on ${streamId} needs the operator's name and a reason`
    )
  const mine = events.filter((e) => Guarded.requestIdOf(e) === input.requestId)
  const requested = mine.find((e) => e.type === attemptRequested[input.on._tag])
  const ended = mine.some(
    (e) =>
      attemptOutcomes[input.on._tag].includes(e.type) ||
      e.type === "OperationFailed" ||
      e.type === "InDoubtResolved"
  )
  if (requested === undefined || ended || !mine.some((e) => e.type === "OperationInDoubt"))
    return refuse(
      RESOLVE_ONLY_IN_DOUBT,
      `nothing to resolve: request ${input.requestId} on ${streamId} is not in doubt` +
        (requested === undefined
          ? " (no such request)"
          : ended
            ? " (it has ended)"
            : " (it is still in flight)")
    )
  const operation = attemptOperation[input.on._tag]
  const resolved = LifecycleEvent.InDoubtResolved.make(
    defined({
      requestId: input.requestId,
      at,
      operation,
      resolution: input.resolution,
      operator: input.operator.trim(),
      reason: input.reason.trim(),
      statusEndpoint: blank(input.statusEndpoint) ? undefined : input.statusEndpoint?.trim()
    })
  )
  if (input.on._tag !== "motoSale" || input.resolution === "notApplied") return Either.right([resolved])
  // An applied MOTO sale is booked as the approval it stands for (the ledger counts the
  // `MotoSaleApproved`, the resolution itself moves nothing): its history opens under the guid.
  if (blank(input.guid))
    return refuse(
      APPLIED_MOTO_SALE_NEEDS_GUID,
      `an applied MOTO sale ${input.requestId} needs the guid the gateway gave it: its history opens under it`
    )
  const sale = requested.data as { readonly amount: Money.Money; readonly serialNumber?: string }
  return Either.right([
    resolved,
    LifecycleEvent.MotoSaleApproved.make(
      defined({
        requestId: input.requestId,
        at,
        guid: (input.guid ?? "").trim(),
        amount: sale.amount,
        // The terminal the sale was sent on; a log written before requests named it: the virtual one.
        serialNumber: sale.serialNumber ?? virtualTerminal,
        reconciled: false
      })
    )
  ])
}

/**
 * Resolves a request in doubt on a batch, MOTO sale attempt or device stream: read, decide,
 * record at the version read (a concurrent append reads and decides again). An applied MOTO
 * sale also opens its transaction's history (`txn-<guid>`, refused when that guid already has
 * one: `guid-already-recorded`).
 */
export const resolveAttempt = (
  input: AttemptInput
): Effect.Effect<
  AttemptResolved,
  LifecycleError.ResolutionRefused | EventStore.EventStoreError,
  EventStore.EventStore
> =>
  Effect.gen(function* () {
    const store = yield* EventStore.EventStore
    const streamId = attemptStream(input.on)
    for (let race = 0; ; race++) {
      const { events, version } = yield* Guarded.read(store, streamId)
      const at = yield* DateTime.now
      const virtualTerminal = Option.getOrUndefined(yield* VirtualTerminal)
      const decided = yield* decideAttempt(events, input, at, virtualTerminal)
      const approved = decided.find((e) => e.type === "MotoSaleApproved")
      const guid = approved === undefined ? undefined : (approved.data as { readonly guid: string }).guid
      if (guid !== undefined) {
        const existing = yield* Guarded.read(store, LifecycleEvent.transactionStream(guid))
        if (existing.events.length > 0)
          return yield* Effect.fail(
            new LifecycleError.ResolutionRefused({
              message: `transaction ${guid} already has a history: an applied MOTO sale opens its own`,
              guid: streamId,
              requestId: input.requestId,
              rule: "guid-already-recorded"
            })
          )
      }
      const withIds = yield* Effect.forEach(decided, (event, index) =>
        Effect.map(
          Guarded.eventId(streamId, "resolve", input.requestId, String(version), String(index)),
          (eventId) => ({ ...event, eventId }) as LifecycleEvent.Event
        )
      )
      // The request's merchant (its own events name it), whoever resolves it.
      const owner = ownerOf(events.filter((e) => Guarded.requestIdOf(e) === input.requestId))
      const encoded = yield* LifecycleEvent.registry.encodeAll(withIds).pipe(
        Effect.flatMap((encoded) => stampFor(owner, encoded)),
        Effect.mapError(Guarded.storeFailure("encode"))
      )
      const appended = yield* Effect.either(store.append(streamId, EventStore.exactVersion(version), encoded))
      if (Either.isLeft(appended)) {
        if (appended.left._tag !== "ConcurrencyConflict" || race >= maxRaces)
          return yield* Effect.fail(Guarded.storeFailure("append")(appended.left))
        continue
      }
      const { amount, serialNumber } =
        approved === undefined
          ? { amount: undefined, serialNumber: undefined }
          : (approved.data as { readonly amount: Money.Money; readonly serialNumber?: string })
      if (guid !== undefined && amount !== undefined) {
        const opened = LifecycleEvent.TransactionRecorded.make(
          defined({
            guid,
            kind: "moToSale" as const,
            amount,
            at,
            transactionReference: (input.on as { readonly transactionReference: string })
              .transactionReference,
            // Where the MOTO sale was booked: its batch ends its reversal window.
            serialNumber
          })
        )
        const eventId = yield* Guarded.eventId(
          LifecycleEvent.transactionStream(guid),
          "resolve",
          input.requestId
        )
        const openedEncoded = yield* LifecycleEvent.registry
          .encodeAll([{ ...opened, eventId } as LifecycleEvent.Event])
          .pipe(
            Effect.flatMap((encoded) => stampFor(owner, encoded)),
            Effect.mapError(Guarded.storeFailure("encode"))
          )
        yield* store
          .append(LifecycleEvent.transactionStream(guid), EventStore.NoStream, openedEncoded)
          .pipe(Effect.mapError(Guarded.storeFailure("append")))
      }
      return {
        streamId,
        requestId: input.requestId,
        operation: attemptOperation[input.on._tag],
        resolution: input.resolution,
        at,
        guid,
        amount
      }
    }
  }).pipe(Effect.withSpan("InDoubtResolution.resolveAttempt"))
