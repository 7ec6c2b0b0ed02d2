/**
 * The intake's operator resolution of a request in doubt: `InDoubtResolution.resolve` on
 * a transaction's history, `resolveAttempt` on a batch, MOTO sale attempt or device stream,
 * and a terminal operation left unresolved (kind `terminal`: `TerminalResolution.resolve`),
 * over the store in context, their refusals as the intake's errors — nothing in doubt, or no
 * operator or reason, is 400 naming the rule; an unknown transaction is 404.
 */
import { Currency, InDoubtResolution, LifecycleEvent, Money, TerminalResolution } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Intake from "../Intake.js"
import * as Errors from "../Intake.js"
import { unavailable } from "./Failures.js"

/** What the resolutions are. */
export type Resolutions = Pick<Intake.Service, "resolve" | "resolveAttempt">

/** The attempt a kind and key name. */
export const attemptOf = (
  kind: Exclude<Intake.AttemptKind, "terminal">,
  key: string
): InDoubtResolution.Attempt =>
  kind === "moto-sale"
    ? { _tag: "motoSale", transactionReference: key }
    : kind === "batch"
      ? { _tag: "batch", serialNumber: key }
      : { _tag: "device", serialNumber: key }

const refusal = {
  ResolutionRefused: (refused: { readonly message: string; readonly rule: string }) =>
    Effect.fail(new Errors.InvalidRequest({ message: `${refused.message} (rule ${refused.rule})` })),
  EventStoreError: (error: EventStore.EventStoreError) => Effect.fail(unavailable("event store")(error))
}

/** What an applied terminal operation moved, when the operator says so: major units, in a currency. */
const amountOf = (
  input: Intake.ResolveAttempt
): Effect.Effect<Money.Money | undefined, Errors.InvalidRequest> => {
  const invalid = (message: string) => Effect.fail(new Errors.InvalidRequest({ message }))
  if (input.amount === undefined && input.currency === undefined) return Effect.succeed(undefined)
  if (input.resolution !== "applied")
    return invalid("amount: a resolution as not applied moved nothing; send no amount")
  if (input.amount === undefined || input.currency === undefined)
    return invalid('amount and currency: confirm what the operation moved with both (e.g. "10.50" and "EUR")')
  if (!Currency.isCurrency(input.currency))
    return invalid(`currency: ${JSON.stringify(input.currency)} is not an ISO 4217 currency code (e.g. EUR)`)
  const parsed = Money.fromMajorUnitsString(input.amount, input.currency)
  return Either.isLeft(parsed) ? invalid(`amount: ${parsed.left.message}`) : Effect.succeed(parsed.right)
}

/** What a resolution moved, as the views write it: major units and the currency (nothing when none). */
export const movedView = (
  amount: Money.Money | undefined
): { readonly amount?: string; readonly currency?: string } =>
  amount === undefined ? {} : { amount: Money.toMajorUnitsString(amount), currency: amount.currency }

/** The resolutions over the store in context. */
export const make: Effect.Effect<Resolutions, never, EventStore.EventStore> = Effect.gen(function* () {
  const store = yield* EventStore.EventStore
  const resolve = (guid: string, input: Intake.ResolveInDoubt) =>
    InDoubtResolution.resolve({ guid, ...input }).pipe(
      Effect.provideService(EventStore.EventStore, store),
      Effect.map((resolved): Intake.ResolutionView => ({
        guid: resolved.guid,
        requestId: resolved.requestId,
        operation: resolved.operation,
        resolution: resolved.resolution,
        at: DateTime.formatIso(resolved.at),
        ...movedView(resolved.amount)
      })),
      Effect.catchTags({
        ...refusal,
        TransactionNotRecorded: (missing) => Effect.fail(new Errors.NotFound({ message: missing.message }))
      }),
      Effect.withSpan("Intake.resolve")
    )
  const resolveTerminal = (executionId: string, input: Intake.ResolveAttempt) =>
    Effect.gen(function* () {
      const amount = yield* amountOf(input)
      const resolved = yield* TerminalResolution.resolve({
        executionId,
        requestId: input.requestId,
        resolution: input.resolution,
        operator: input.operator,
        reason: input.reason,
        statusEndpoint: input.statusEndpoint,
        guid: input.guid,
        amount
      }).pipe(Effect.provideService(EventStore.EventStore, store), Effect.catchTags(refusal))
      return {
        streamId: LifecycleEvent.executionActionsStream(executionId),
        requestId: resolved.attemptId,
        operation: resolved.operation,
        resolution: resolved.resolution,
        at: DateTime.formatIso(resolved.at),
        ...(resolved.guid === undefined ? {} : { guid: resolved.guid }),
        ...movedView(resolved.amount)
      } satisfies Intake.AttemptResolutionView
    }).pipe(Effect.withSpan("Intake.resolveAttempt", { attributes: { kind: "terminal" } }))
  const resolveAttempt = (kind: Intake.AttemptKind, key: string, input: Intake.ResolveAttempt) =>
    kind === "terminal"
      ? resolveTerminal(key, input)
      : input.amount !== undefined || input.currency !== undefined
        ? Effect.fail(
            new Errors.InvalidRequest({
              message: `amount: only a terminal operation's resolution (kind terminal) states what it moved; a ${kind} resolution takes none`
            })
          )
        : resolveOther(kind, key, input)
  const resolveOther = (
    kind: Exclude<Intake.AttemptKind, "terminal">,
    key: string,
    input: Intake.ResolveAttempt
  ) =>
    InDoubtResolution.resolveAttempt({ on: attemptOf(kind, key), ...input }).pipe(
      Effect.provideService(EventStore.EventStore, store),
      Effect.map((resolved): Intake.AttemptResolutionView => ({
        streamId: resolved.streamId,
        requestId: resolved.requestId,
        operation: resolved.operation,
        resolution: resolved.resolution,
        at: DateTime.formatIso(resolved.at),
        ...(resolved.guid === undefined ? {} : { guid: resolved.guid }),
        ...movedView(resolved.amount)
      })),
      Effect.catchTags(refusal),
      Effect.withSpan("Intake.resolveAttempt", { attributes: { kind } })
    )
  return { resolve, resolveAttempt }
})
