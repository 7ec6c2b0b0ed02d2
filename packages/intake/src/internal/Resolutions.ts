/**
 * The intake's operator resolution of a request in doubt: `InDoubtResolution.resolve` on
 * the store in context, its refusals as the intake's errors — nothing in doubt, or no
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
export type Resolutions = Pick<Intake.Service, "resolve">

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
        ResolutionRefused: (refused) =>
          Effect.fail(new Errors.InvalidRequest({ message: `${refused.message} (rule ${refused.rule})` })),
        TransactionNotRecorded: (missing) => Effect.fail(new Errors.NotFound({ message: missing.message })),
        EventStoreError: (error) => Effect.fail(unavailable("event store")(error))
      }),
      Effect.withSpan("Intake.resolve")
    )
  return { resolve }
})
