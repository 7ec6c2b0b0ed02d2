/**
 * The intake's operator resolution of a request in doubt: `InDoubtResolution.resolve` on
 * a transaction's history, `resolveAttempt` on a batch, MOTO sale attempt or device stream,
 * over the store in context, their refusals as the intake's errors — nothing in doubt, or no
 * operator or reason, is 400 naming the rule; an unknown transaction is 404.
 */
import { InDoubtResolution, Money } from "@tillflow/core"
import { EventStore } from "@tillflow/engine"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Intake from "../Intake.js"
import * as Errors from "../Intake.js"
import { unavailable } from "./Failures.js"

/** What the resolutions are. */
export type Resolutions = Pick<Intake.Service, "resolve" | "resolveAttempt">

/** The attempt a kind and key name. */
const attemptOf = (kind: Intake.AttemptKind, key: string): InDoubtResolution.Attempt =>
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
        ...(resolved.amount === undefined
          ? {}
          : { amount: Money.toMajorUnitsString(resolved.amount), currency: resolved.amount.currency })
      })),
      Effect.catchTags({
        ...refusal,
        TransactionNotRecorded: (missing) => Effect.fail(new Errors.NotFound({ message: missing.message }))
      }),
      Effect.withSpan("Intake.resolve")
    )
  const resolveAttempt = (kind: Intake.AttemptKind, key: string, input: Intake.ResolveAttempt) =>
    InDoubtResolution.resolveAttempt({ on: attemptOf(kind, key), ...input }).pipe(
      Effect.provideService(EventStore.EventStore, store),
      Effect.map((resolved): Intake.AttemptResolutionView => ({
        streamId: resolved.streamId,
        requestId: resolved.requestId,
        operation: resolved.operation,
        resolution: resolved.resolution,
        at: DateTime.formatIso(resolved.at),
        ...(resolved.guid === undefined ? {} : { guid: resolved.guid }),
        ...(resolved.amount === undefined
          ? {}
          : { amount: Money.toMajorUnitsString(resolved.amount), currency: resolved.amount.currency })
      })),
      Effect.catchTags(refusal),
      Effect.withSpan("Intake.resolveAttempt", { attributes: { kind } })
    )
  return { resolve, resolveAttempt }
})
